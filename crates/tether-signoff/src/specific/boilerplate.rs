//! Lines recognised by their form: imports, license lines, shebangs, standard preambles,
//! section headers and lone tags. Each is named by its kind, which the judge and a person are
//! told when a quote of one is refused.

use super::files::FileKind;

/// The kinds of boilerplate line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Boilerplate {
    /// Only block keywords, bare values and punctuation (`fi`, `end`, `done`, `esac`,
    /// `} else {`, `return true;`, `exit 1`), or a tag alone (`</div>`, `<ul>`).
    Keyword,
    /// A section or document header with nothing else (`[package]`, `## Usage` in Markdown), or
    /// a key with no value on its line (`jobs:`, `"scripts": {`).
    Header,
    /// An import, `use`, `#include`, `require`, `using`, `package` or module declaration.
    Import,
    /// A license, copyright or SPDX line.
    License,
    /// A shebang (`#!/bin/sh`).
    Shebang,
    /// A standard preamble or entry line (`set -euo pipefail`, `"use strict";`,
    /// `#pragma once`, `if __name__ == "__main__":`, `fn main() {`).
    Directive,
    /// A line of a license file (`LICENSE`, `COPYING`, `NOTICE`).
    LicenseFile,
}

impl std::fmt::Display for Boilerplate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Boilerplate::Keyword => "a bare keyword, value or tag",
            Boilerplate::Header => "a section header or a key with no value",
            Boilerplate::Import => "an import line",
            Boilerplate::License => "a license or copyright line",
            Boilerplate::Shebang => "a shebang",
            Boilerplate::Directive => "a standard preamble line",
            Boilerplate::LicenseFile => "a line of a license file",
        })
    }
}

/// The kind of boilerplate `line` (normalized) of a file of kind `file` is by its form, if it
/// is.
pub(super) fn by_form(file: FileKind, line: &str) -> Option<Boilerplate> {
    if file == FileKind::License {
        return Some(Boilerplate::LicenseFile);
    }
    let lower = line.to_lowercase();
    if lower.starts_with("#!") {
        return Some(Boilerplate::Shebang);
    }
    if DIRECTIVES.contains(&lower.as_str()) || lower.starts_with("<?xml ") {
        return Some(Boilerplate::Directive);
    }
    if is_license(&lower) {
        return Some(Boilerplate::License);
    }
    if is_import(&lower) {
        return Some(Boilerplate::Import);
    }
    if is_section(&lower) || (file == FileKind::Markdown && is_heading(&lower)) {
        return Some(Boilerplate::Header);
    }
    if is_tag(&lower) {
        return Some(Boilerplate::Keyword);
    }
    None
}

/// `[package]`, `[[bin]]`, `[tool.poetry]`, `[remote "origin"]`: a TOML, INI or git-config
/// section header (no `,`, `=` or call inside, so `[1, 2]` and `[f(x)]` are not).
fn is_section(lower: &str) -> bool {
    let Some(inner) = lower.strip_prefix('[').and_then(|l| l.strip_suffix(']')) else {
        return false;
    };
    let inner = inner
        .strip_prefix('[')
        .and_then(|l| l.strip_suffix(']'))
        .unwrap_or(inner);
    !inner.trim().is_empty()
        && inner
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | ' ' | '"' | '\'' | '/'))
}

/// `# Title`, `## Usage`: a Markdown heading.
fn is_heading(lower: &str) -> bool {
    let hashes = lower.chars().take_while(|&c| c == '#').count();
    (1..=6).contains(&hashes) && lower[hashes..].starts_with(' ')
}

/// `</div>`, `<ul>`, `<br/>`, `<template>`: a tag alone, without attributes.
fn is_tag(lower: &str) -> bool {
    lower
        .strip_prefix('<')
        .and_then(|rest| rest.strip_suffix('>'))
        .map(|name| name.strip_prefix('/').unwrap_or(name))
        .map(|name| name.strip_suffix('/').unwrap_or(name).trim_end())
        .is_some_and(|name| {
            name.starts_with(|c: char| c.is_alphabetic())
                && name
                    .chars()
                    .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ':' | '.'))
        })
}

/// Whole lines (compared in lower case, white space collapsed) that are standard preambles.
const DIRECTIVES: &[&str] = &[
    "set -e",
    "set -u",
    "set -x",
    "set -eu",
    "set -ex",
    "set -eux",
    "set -euo pipefail",
    "set -euxo pipefail",
    "set -o errexit",
    "set -o nounset",
    "set -o pipefail",
    "\"use strict\";",
    "'use strict';",
    "\"use strict\"",
    "'use strict'",
    "# -*- coding: utf-8 -*-",
    "# coding: utf-8",
    "# encoding: utf-8",
    "# frozen_string_literal: true",
    "<?php",
    "?>",
    "<!doctype html>",
    "<html>",
    "<head>",
    "<body>",
    "#pragma once",
    "#endif",
    "#else",
    "if __name__ == \"__main__\":",
    "if __name__ == '__main__':",
    "main()",
    "unittest.main()",
    "@echo off",
    "#[cfg(test)]",
    "#[test]",
    "mod tests {",
    "fn main() {",
    "def main():",
    "func main() {",
    "int main() {",
    "int main(void) {",
    "int main(int argc, char *argv[]) {",
    "int main(int argc, char **argv) {",
    "public static void main(string[] args) {",
    "export default {",
    "module.exports = {",
];

/// A license, copyright or SPDX line, comment markers left aside.
fn is_license(lower: &str) -> bool {
    if lower.contains("spdx-license-identifier") || lower.contains("spdx-filecopyrighttext") {
        return true;
    }
    let text = lower.trim_start_matches(|c: char| {
        matches!(
            c,
            '#' | '/' | '*' | '-' | ';' | '<' | '!' | '"' | '\'' | '%'
        ) || c.is_whitespace()
    });
    [
        "copyright ",
        "copyright:",
        "(c) ",
        "© ",
        "licensed under ",
        "all rights reserved",
        "this program is free software",
        "this file is part of ",
        "permission is hereby granted",
        "you may not use this file except in compliance",
        "distributed under the license is distributed",
    ]
    .iter()
    .any(|start| text.starts_with(start))
}

/// An import-like line in a common language.
fn is_import(lower: &str) -> bool {
    let mut words = lower.split_whitespace();
    let first = words.next().unwrap_or("");
    // `source = open(path)`, `package = "x"`: an assignment to a variable of that name.
    if words
        .next()
        .is_some_and(|w| w.starts_with('=') || w.starts_with(":="))
    {
        return false;
    }
    match first {
        // Python, JavaScript/TypeScript, Java, Go, Kotlin, Swift, Haskell, Dart.
        "import" => true,
        // Python `from x import y`; JavaScript `export … from '…'` below.
        "from" => lower.contains(" import "),
        // Rust, PHP, Perl.
        "use" | "pub" | "pub(crate)" => {
            lower.starts_with("use ")
                || lower.starts_with("pub use ")
                || lower.starts_with("pub(crate) use ")
                || is_module_declaration(lower)
        }
        "mod" => is_module_declaration(lower),
        // C, C++, Objective-C.
        "#include" | "#import" | "#include_next" => true,
        // Ruby, Lua, PHP.
        "require" | "require_relative" | "require_once" | "include_once" => true,
        // C#, C++.
        "using" => lower.ends_with(';'),
        // Go, Java, Kotlin, Scala.
        "package" => true,
        "extern" => lower.starts_with("extern crate "),
        // Shell.
        "source" => true,
        // CSS, SCSS.
        "@import" | "@use" | "@forward" => true,
        "library(" | "library" => true,
        "const" | "let" | "var" => lower.contains("= require(") || lower.contains("=require("),
        "export" => lower.contains(" from '") || lower.contains(" from \""),
        _ => first.starts_with("library(") || first.starts_with("require("),
    }
}

/// `mod name;` or `pub mod name;`: a module declared, its code elsewhere.
fn is_module_declaration(lower: &str) -> bool {
    let rest = lower
        .strip_prefix("pub(crate) ")
        .or_else(|| lower.strip_prefix("pub "))
        .unwrap_or(lower);
    rest.strip_prefix("mod ")
        .and_then(|name| name.strip_suffix(';'))
        .is_some_and(|name| !name.contains(' '))
}
