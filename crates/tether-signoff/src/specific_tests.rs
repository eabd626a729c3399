#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;

use super::statement::{KEYWORDS, Said, said};
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
        ("pass", Keyword),
        ("None", Keyword),
        ("return None", Keyword),
        ("return 0;", Keyword),
        ("exit 1", Keyword),
        ("return -1;", Keyword),
        ("0.0", Keyword),
        ("1.", Keyword),
        ("while true; do", Keyword),
        ("return [];", Keyword),
        ("</div>", Keyword),
        ("<ul>", Keyword),
        ("<br />", Keyword),
        ("[package]", Header),
        ("[dependencies]", Header),
        ("[[bin]]", Header),
        ("[tool.poetry.dependencies]", Header),
        ("[remote \"origin\"]", Header),
        ("jobs:", Header),
        ("\"scripts\": {", Header),
        ("config = {", Header),
        ("const routes = [", Header),
        ("run: |", Header),
        // A literal a relation comes after is a key, however it is spaced.
        ("\"a\" ( :", Header),
        ("class Stats:", Header),
        ("import os", Import),
        ("from typing import List", Import),
        ("use std::collections::HashMap;", Import),
        ("use std::io;", Import),
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
fn a_lone_name_states_nothing_however_long() {
    for line in [
        "foo",
        "x",
        "x;",
        "name,",
        "foo()",
        "foo();",
        "return x",
        "return result;",
        "Ok(())",
        "raise NotImplementedError",
        "super().__init__()",
        "def run(self):",
        "fn run(&self) {",
        ".cards {",
        "self.count",
        "- python",
        "// TODO",
        "/* unused */",
        "<!-- placeholder -->",
        "# region",
        "an_identifier_far_longer_than_any_letter_count_would_ask_for",
    ] {
        assert_eq!(of(line), Some(Weakness::LoneName), "{line:?}");
    }
}

#[test]
fn only_punctuation_holds_no_letter() {
    for line in ["}", ");", "---", "*/", "]);", "=> {", "\"\""] {
        assert_eq!(of(line), Some(Weakness::NoLetters), "{line:?}");
    }
}

/// The short lines that prove a goal met before the run, and every honest line of the former
/// rule's cases: each states something.
#[test]
fn a_line_that_states_something_counts_however_short() {
    for line in [
        // What proves a goal met before the run.
        "echo $(($1 + $2))",
        "return a - b",
        "timeout = 30",
        "\"port\": 8080",
        "USER app",
        "node 20",
        "gap: 8px;",
        "jobs = 4",
        // The shortest honest ones.
        "x=1",
        "a-b",
        "a + b",
        "-x",
        "return -n",
        "count += 1",
        "i++",
        "n < 0",
        "22",
        "10",
        "0.5",
        "1.2.3",
        "3.12",
        "- \"3.12\"",
        "replicas: 3",
        "margin: 0;",
        "x = 0",
        "enabled: true",
        "\"tls\": false,",
        "CC = clang",
        "ttl = 60",
        "FROM alpine",
        "EXPOSE 8080",
        "listen 80;",
        "add(a, b)",
        "print(\"ok\")",
        "foo(1)",
        // A keyword as a key is a key.
        "default: true",
        "type: web",
        "private = false",
        // Longer ones.
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
        "# add two numbers",
        "Counts the words of a file.",
        "for f in *.txt; do",
        "<p>Hello</p>",
        "## Install the tool",
    ] {
        assert_eq!(of(line), None, "{line:?}");
    }
}

#[test]
fn markdown_headings_and_list_entries_are_judged_by_their_file() {
    let md = Path::new("docs/README.md");
    assert_eq!(
        weakness(md, "## Exit codes"),
        Some(Weakness::Boilerplate(Boilerplate::Header))
    );
    assert_eq!(
        weakness(md, "# words"),
        Some(Weakness::Boilerplate(Boilerplate::Header))
    );
    assert_eq!(weakness(md, "Exit code 2 means a bad argument."), None);
    // In code, a `#` line is a comment, and a comment states what its words say.
    assert_eq!(weakness(Path::new("a.py"), "# Install the tool"), None);
    for (path, line) in [
        ("requirements.txt", "flask"),
        ("requirements-dev.txt", "pytest"),
        (".gitignore", "*.log"),
        (".dockerignore", "node_modules"),
    ] {
        assert_eq!(weakness(Path::new(path), line), None, "{path}: {line}");
    }
    assert_eq!(
        weakness(Path::new(".gitignore"), "# build"),
        Some(Weakness::LoneName)
    );
    assert_eq!(
        weakness(Path::new(".gitignore"), "---"),
        Some(Weakness::NoLetters)
    );
    assert_eq!(
        weakness(Path::new("src/list.txt"), "flask"),
        Some(Weakness::LoneName)
    );
}

#[test]
fn the_word_lists_are_sorted_lower_case_and_short() {
    use super::statement::BARE;
    for list in [KEYWORDS, BARE] {
        assert!(list.windows(2).all(|w| w[0] < w[1]), "{list:?}");
        assert!(
            list.iter()
                .all(|w| w.len() <= 16 && *w == w.to_ascii_lowercase()),
            "{list:?}"
        );
    }
    assert_eq!(said("END"), Said::Nothing);
    assert_eq!(said("Return NULL;"), Said::Nothing);
    assert_eq!(said("endfunctionality"), Said::LoneName);
}

#[test]
fn the_weakness_told_is_the_nearest_to_counting() {
    let mut told = [
        Weakness::Common { files: 3 },
        Weakness::NoLetters,
        Weakness::LoneName,
        Weakness::Boilerplate(Boilerplate::Import),
    ];
    told.sort_by_key(|w| w.nearness());
    assert_eq!(
        told,
        [
            Weakness::NoLetters,
            Weakness::Boilerplate(Boilerplate::Import),
            Weakness::LoneName,
            Weakness::Common { files: 3 },
        ]
    );
}

mod properties {
    use proptest::prelude::*;

    use super::*;

    /// Tokens a line of code or configuration is made of, none holding white space.
    fn token() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-zA-Z_][a-zA-Z0-9_]{0,8}",
            "[0-9]{1,4}",
            "\"[a-z0-9]{0,4}\"",
            proptest::sample::select(KEYWORDS).prop_map(str::to_owned),
            proptest::sample::select(&["true", "null", "None", "0", "1", "\"\""][..])
                .prop_map(str::to_owned),
            proptest::sample::select(
                &[
                    "=", ":", ":=", "=>", "+", "-", "*", "/", "==", "<", ">", "!", "&&", "++", "(",
                    ")", "[", "]", "{", "}", ";", ",", ".", "::", "->", "#", "//", "$", "@"
                ][..]
            )
            .prop_map(str::to_owned),
        ]
    }

    /// `parts` joined into a line: each glued to the one before or after a space, but a word
    /// or number never glued to another (they would make one word).
    fn join(parts: &[(String, bool)]) -> String {
        let wordy = |s: &str| s.starts_with(|c: char| c.is_alphanumeric() || c == '_');
        let mut line = String::new();
        for (token, spaced) in parts {
            let ends_wordy = line.ends_with(|c: char| c.is_alphanumeric() || c == '_');
            if !line.is_empty() && (*spaced || (ends_wordy && wordy(token))) {
                line.push(' ');
            }
            line.push_str(token);
        }
        line
    }

    /// A line of tokens: few of them content, so that many such lines state nothing.
    fn line() -> impl Strategy<Value = String> {
        (
            prop::collection::vec((token(), any::<bool>()), 0..2),
            prop::collection::vec((nothing(), any::<bool>()), 0..8),
        )
            .prop_flat_map(|(mut parts, rest)| {
                parts.extend(rest);
                Just(parts).prop_shuffle()
            })
            .prop_map(|parts| join(&parts))
            .prop_filter("a line", |l| !l.is_empty())
    }

    /// Keywords, bare values and punctuation.
    fn nothing() -> impl Strategy<Value = String> {
        prop_oneof![
            proptest::sample::select(KEYWORDS).prop_map(str::to_owned),
            proptest::sample::select(&["true", "null", "None", "0", "1", "\"\""][..])
                .prop_map(str::to_owned),
            proptest::sample::select(
                &[
                    "=", ":", "=>", "+", "-", "*", "!", "++", "(", ")", "[", "]", "{", "}", ";",
                    ",", ".", "::", "#", "//"
                ][..]
            )
            .prop_map(str::to_owned),
        ]
    }

    /// Delimiters and block keywords: what says nothing.
    fn filler() -> impl Strategy<Value = String> {
        prop_oneof![
            proptest::sample::select(&["(", ")", "[", "]", "{", "}", ";", ","][..])
                .prop_map(str::to_owned),
            proptest::sample::select(KEYWORDS).prop_map(str::to_owned),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            max_global_rejects: 1 << 20,
            ..ProptestConfig::with_cases(512)
        })]

        /// No text, however hostile, panics the check, in any file.
        #[test]
        fn any_text_is_judged_without_panicking(line in "\\PC{0,80}", name in "[a-zA-Z._-]{0,12}") {
            let _ = weakness(Path::new(&name), &line);
            let _ = weakness(Path::new("README.md"), &line);
            let _ = weakness(Path::new(".gitignore"), &line);
        }

        /// Adding delimiters and block keywords to a line that states nothing never makes it
        /// state something — unless a keyword lands right before a `:` or `=`, where it is a
        /// key (`default: true`).
        #[test]
        fn filler_never_makes_a_weak_line_specific(
            line in line(),
            inserts in prop::collection::vec((any::<prop::sample::Index>(), filler()), 1..6),
        ) {
            prop_assume!(said(&line) != Said::Something);
            let mut words: Vec<String> = line.split(' ').map(str::to_owned).collect();
            for (at, filler) in inserts {
                let at = at.index(words.len() + 1);
                let before_relation = words
                    .get(at)
                    .is_some_and(|w| w.starts_with([':', '=']));
                let keyword = filler.chars().all(char::is_alphabetic);
                if !(keyword && before_relation) {
                    words.insert(at, filler);
                }
            }
            let padded = words.join(" ");
            prop_assert_ne!(said(&padded), Said::Something, "{:?} from {:?}", padded, line);
        }

        /// A line of only keywords, bare values and punctuation states nothing.
        #[test]
        fn keywords_and_punctuation_alone_state_nothing(
            parts in prop::collection::vec(
                (prop_oneof![
                    proptest::sample::select(KEYWORDS).prop_map(str::to_owned),
                    proptest::sample::select(&["true", "null", "None", "0", "1", "\"\""][..])
                        .prop_map(str::to_owned),
                    proptest::sample::select(&["(", ")", "{", "}", ";", ",", "-", "!", "::"][..])
                        .prop_map(str::to_owned),
                ], any::<bool>()),
                1..10,
            )
        ) {
            let line = join(&parts);
            // A keyword followed by `:` and a value is a key; there is no `:` here.
            prop_assert_eq!(said(&line), Said::Nothing, "{:?}", line);
        }

        /// A name alone, however long, states nothing; two names related by an operator, however
        /// short, state something.
        #[test]
        fn names_are_judged_by_what_relates_them(
            a in "[a-z][a-z0-9_]{0,40}",
            b in "[a-z][a-z0-9_]{0,3}",
            op in proptest::sample::select(&["=", "+", "-", "<", "==", ": "][..]),
        ) {
            let keyword = |w: &str| KEYWORDS.iter().chain(super::super::statement::BARE)
                .any(|k| k.eq_ignore_ascii_case(w));
            prop_assume!(!keyword(&a) && !keyword(&b));
            prop_assert_eq!(said(&a), Said::LoneName);
            prop_assert_eq!(said(&format!("{a}();")), Said::LoneName);
            prop_assert_eq!(said(&format!("{a}{op}{b}")), Said::Something);
        }
    }
}
