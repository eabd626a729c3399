//! Is a line the run did not change specific enough to back a sign-off? The line-by-line half
//! of the rule (the other half, lines common to many files, is in `common.rs`).
//!
//! A line that could stand in any file proves nothing about this work: a closing brace, `fi`,
//! `import os`, a license header, a shebang. [`weakness`] names what makes an unchanged line
//! too weak, or `None` when it may back a sign-off as far as its own text goes.

use std::path::Path;

/// The fewest letters and digits a line the run did not change must hold to back a sign-off.
pub const MIN_SUBSTANCE: usize = 8;

/// Why a line the run did not change proves nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Weakness {
    /// It holds no letter or digit (`}`, `);`, `---`).
    NoLetters,
    /// It is boilerplate of this kind.
    Boilerplate(Boilerplate),
    /// It holds fewer than [`MIN_SUBSTANCE`] letters and digits.
    Slight {
        /// How many it holds.
        substance: usize,
    },
    /// The same line is in this many other files of the repository (at least
    /// [`crate::common::COMMON_FILES`]).
    Common {
        /// How many other files hold it (as far as the bounded scan went).
        files: usize,
    },
}

impl std::fmt::Display for Weakness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Weakness::NoLetters => f.write_str("it holds no letter or digit"),
            Weakness::Boilerplate(kind) => write!(f, "it is {kind}, which any file may hold"),
            Weakness::Slight { substance } => write!(
                f,
                "it holds {substance} letter(s) or digit(s), and an unchanged line needs at \
                 least {MIN_SUBSTANCE}"
            ),
            Weakness::Common { files } => write!(
                f,
                "the same line is in {files} other files of the repository, so it shows nothing \
                 specific to this work"
            ),
        }
    }
}

/// The kinds of boilerplate line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Boilerplate {
    /// Only block keywords and bare literals (`fi`, `end`, `done`, `esac`, `} else {`,
    /// `return true;`), or a closing tag (`</div>`).
    Keyword,
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
            Boilerplate::Keyword => "a bare keyword or closing line",
            Boilerplate::Import => "an import line",
            Boilerplate::License => "a license or copyright line",
            Boilerplate::Shebang => "a shebang",
            Boilerplate::Directive => "a standard preamble line",
            Boilerplate::LicenseFile => "a line of a license file",
        })
    }
}

/// Words that make a line boilerplate when it holds nothing else (besides punctuation).
const KEYWORDS: &[&str] = &[
    "begin",
    "break",
    "case",
    "catch",
    "continue",
    "default",
    "do",
    "done",
    "elif",
    "else",
    "elsif",
    "end",
    "endcase",
    "endfor",
    "endforeach",
    "endfunction",
    "endif",
    "endmodule",
    "endswitch",
    "endwhile",
    "esac",
    "except",
    "false",
    "fi",
    "finally",
    "if",
    "loop",
    "next",
    "nil",
    "none",
    "null",
    "pass",
    "return",
    "self",
    "then",
    "this",
    "true",
    "try",
    "undefined",
    "wend",
];

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

/// The letters and digits of a line.
pub fn substance(line: &str) -> usize {
    line.chars().filter(|c| c.is_alphanumeric()).count()
}

/// What makes `line` (normalized: white space collapsed, trimmed) of the file `path` too weak to
/// back a sign-off when the run did not change it, judging by its own text; `None` when it may.
pub fn weakness(path: &Path, line: &str) -> Option<Weakness> {
    let substance = substance(line);
    if substance == 0 {
        return Some(Weakness::NoLetters);
    }
    if let Some(kind) = boilerplate(path, line) {
        return Some(Weakness::Boilerplate(kind));
    }
    (substance < MIN_SUBSTANCE).then_some(Weakness::Slight { substance })
}

/// The kind of boilerplate `line` is, if it is.
pub fn boilerplate(path: &Path, line: &str) -> Option<Boilerplate> {
    let lower = line.to_lowercase();
    if is_license_file(path) {
        return Some(Boilerplate::LicenseFile);
    }
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
    if is_keywords(&lower) || is_closing_tag(&lower) {
        return Some(Boilerplate::Keyword);
    }
    None
}

/// `LICENSE`, `LICENCE.md`, `COPYING`, `NOTICE.txt`, `UNLICENSE`.
fn is_license_file(path: &Path) -> bool {
    let Some(stem) = path.file_stem().and_then(|s| s.to_str()) else {
        return false;
    };
    let stem = stem.to_ascii_uppercase();
    ["LICENSE", "LICENCE", "COPYING", "NOTICE", "UNLICENSE"]
        .iter()
        .any(|name| stem == *name || stem.starts_with(&format!("{name}-")))
}

/// A line made only of keywords from [`KEYWORDS`] and punctuation.
fn is_keywords(lower: &str) -> bool {
    let mut words = lower
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .peekable();
    words.peek().is_some() && words.all(|w| KEYWORDS.contains(&w))
}

/// `</div>`, `</template>`: a closing tag alone.
fn is_closing_tag(lower: &str) -> bool {
    lower
        .strip_prefix("</")
        .and_then(|rest| rest.strip_suffix('>'))
        .is_some_and(|name| {
            !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ':' | '.'))
        })
}

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

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::{Boilerplate, Weakness, weakness};

    fn of(line: &str) -> Option<Weakness> {
        weakness(Path::new("src/x.txt"), line)
    }

    #[test]
    fn boilerplate_lines_are_named_by_kind() {
        use Boilerplate::*;
        for (line, kind) in [
            ("fi", Keyword),
            ("done", Keyword),
            ("esac", Keyword),
            ("end", Keyword),
            ("} else {", Keyword),
            ("return true;", Keyword),
            ("</div>", Keyword),
            ("import os", Import),
            ("from typing import List", Import),
            ("use std::collections::HashMap;", Import),
            ("pub mod quotes;", Import),
            ("#include <stdio.h>", Import),
            ("require 'json'", Import),
            ("const fs = require('fs');", Import),
            ("using System;", Import),
            ("package main", Import),
            ("import { readFile } from 'fs';", Import),
            ("export { add } from './add.js';", Import),
            ("# SPDX-License-Identifier: MIT", License),
            ("// Copyright (c) 2024 Example Corp", License),
            ("Licensed under the Apache License, Version 2.0", License),
            ("#!/usr/bin/env python3", Shebang),
            ("set -euo pipefail", Directive),
            ("\"use strict\";", Directive),
            ("if __name__ == \"__main__\":", Directive),
            ("#pragma once", Directive),
            ("<?xml version=\"1.0\" encoding=\"UTF-8\"?>", Directive),
        ] {
            assert_eq!(
                of(line),
                Some(Weakness::Boilerplate(kind)),
                "{line:?} should be {kind:?}"
            );
        }
        assert_eq!(
            weakness(
                Path::new("LICENSE"),
                "Permission to use this software for anything"
            ),
            Some(Weakness::Boilerplate(LicenseFile))
        );
    }

    #[test]
    fn specific_lines_are_not_boilerplate() {
        for line in [
            "return a + b",
            "def add(a, b):",
            "assert add(2, 3) == 5",
            "echo \"Hello, $1!\"",
            "if total > limit: raise ValueError(\"over the limit\")",
            "important = True",
            "fromage = cheese()",
            "using_cache = compute_with(cache_size)",
            "package_name = \"tether\"",
            "sourced_items = len(items)",
            "source = open(path).read()",
            "package = load_package(name)",
            "import_count := len(imports)",
            "pub fn add(a: i32, b: i32) -> i32 {",
            "module.exports = { add, subtract };",
            "// the copyright year is read from the build",
        ] {
            assert_eq!(of(line), None, "{line:?}");
        }
    }

    #[test]
    fn punctuation_and_short_lines_are_too_slight() {
        assert_eq!(of("}"), Some(Weakness::NoLetters));
        assert_eq!(of("---"), Some(Weakness::NoLetters));
        assert_eq!(of("a + b"), Some(Weakness::Slight { substance: 2 }));
        assert_eq!(of("\"port\": 80,"), Some(Weakness::Slight { substance: 6 }));
        assert_eq!(of("CC = clang"), Some(Weakness::Slight { substance: 7 }));
        assert_eq!(of("workers = 4"), None);
    }
}
