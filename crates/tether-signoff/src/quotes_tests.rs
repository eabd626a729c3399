#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::fs;
use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use tether_tools::Workspace as Confined;

use super::{QuoteProblem, Quotes, normalize};
use crate::changed::{ChangedLines, FileLines, Unknown};
use crate::specific::{Boilerplate, Weakness};
use crate::verdict::Check;

fn check(path: &str, quote: &str) -> Check {
    Check {
        path: path.into(),
        quote: quote.into(),
        observation: "seen".into(),
        line: None,
    }
}

#[test]
fn normalizing_collapses_white_space_and_crlf() {
    assert_eq!(normalize("  a\r\n\tb   c \n"), "a b c");
}

const LIB: &str = "fn add(a: i32, b: i32) -> i32 {\r\n    let sum = a + b;\r\n\r\n    sum\r\n}\r\n";

fn workspace() -> (tempfile::TempDir, Confined) {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    fs::create_dir_all(ws.join(".tether/runs/r-1")).unwrap();
    fs::create_dir_all(ws.join(".git")).unwrap();
    fs::create_dir_all(ws.join("vendor/dep/.git")).unwrap();
    fs::write(ws.join("lib.rs"), LIB).unwrap();
    fs::write(
        ws.join("plan.md"),
        "## Goal: Add\n<!-- id: add -->\ndone_when: add returns the sum of both numbers\n",
    )
    .unwrap();
    fs::write(
        ws.join(".tether/runs/r-1/judge-add-1.jsonl"),
        "{\"quote\": \"the tests pass and everything is done\"}\n",
    )
    .unwrap();
    fs::write(
        ws.join(".tether/tether.db"),
        "SQLite format 3\0CREATE TABLE runs",
    )
    .unwrap();
    fs::write(ws.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    fs::write(
        ws.join("vendor/dep/.git/config"),
        "repositoryformatversion = 0\n",
    )
    .unwrap();
    fs::write(ws.join("blob.bin"), b"\x7fELF\0\0 the function add works\n").unwrap();
    fs::write(
        ws.join("latin1.txt"),
        b"caf\xe9 is where the function add works\n",
    )
    .unwrap();
    fs::write(
        dir.path().join("secret.txt"),
        "the secret of the workspace\n",
    )
    .unwrap();
    let confined = Confined::new(&ws).unwrap();
    (dir, confined)
}

/// Without a snapshot of the workspace as the run began: no line is known to be changed.
static NOT_GIT: ChangedLines = ChangedLines::unknown(Unknown::NoStart);

fn quotes<'a>(ws: &'a Confined) -> Quotes<'a> {
    Quotes::new(ws, &ws.root().join("plan.md"), &NOT_GIT)
}

fn message(q: &Quotes<'_>, path: &str, quote: &str) -> String {
    q.problem(&check(path, quote))
        .map(|p| p.to_string())
        .unwrap_or_default()
}

#[test]
fn whole_lines_pass_across_line_breaks_indentation_and_line_numbers() {
    let (_d, ws) = workspace();
    let q = quotes(&ws);
    for quote in [
        "let sum = a + b;",
        "fn add(a: i32, b: i32) -> i32 {\n let sum = a + b;",
        // Blank lines in the file do not break a run; lines may be joined by a space.
        "let sum = a + b;\n    sum\n}",
        "fn add(a: i32, b: i32) -> i32 { let sum = a + b;",
        "     1\tfn add(a: i32, b: i32) -> i32 {\n     2\t    let sum = a + b;",
    ] {
        assert_eq!(q.problem(&check("lib.rs", quote)), None, "{quote:?}");
    }
    assert!(
        q.unbacked(&[check("lib.rs", "let sum = a + b;")])
            .is_empty()
    );
}

#[test]
fn fragments_and_slight_quotes_prove_nothing() {
    let (_d, ws) = workspace();
    let q = quotes(&ws);
    for (quote, why) in [
        (")", "not a run of whole lines of `lib.rs`"),
        ("a + b", "not a run of whole lines of `lib.rs`"),
        (
            "add(a: i32, b: i32)",
            "not a run of whole lines of `lib.rs`",
        ),
        ("let sum = a + b", "not a run of whole lines"),
        ("i32 {\n let sum = a + b;", "not a run of whole lines"),
        // Whole lines, but nothing specific (and outside git, nothing is known to be changed).
        ("}", "holds no letter or digit"),
        ("sum", "it names one thing and states nothing about it"),
        (
            "sum\n}",
            "line 4 is not: it names one thing and states nothing about it",
        ),
    ] {
        let problem = message(&q, "lib.rs", quote);
        assert!(problem.contains(why), "{quote:?}: {problem}");
    }
}

#[test]
fn tethers_state_git_internals_the_plan_and_binary_files_cannot_back_a_sign_off() {
    let (_d, ws) = workspace();
    let q = quotes(&ws);
    for (path, quote, why) in [
        (
            ".tether/runs/r-1/judge-add-1.jsonl",
            "{\"quote\": \"the tests pass and everything is done\"}",
            "tether's own state",
        ),
        (
            ".tether/tether.db",
            "CREATE TABLE runs",
            "tether's own state",
        ),
        (".git/HEAD", "ref: refs/heads/main", "git's internals"),
        (
            "vendor/dep/.git/config",
            "repositoryformatversion = 0",
            "git's internals",
        ),
        (
            "plan.md",
            "done_when: add returns the sum of both numbers",
            "the plan file",
        ),
        (
            "./plan.md",
            "done_when: add returns the sum of both numbers",
            "the plan file",
        ),
        ("blob.bin", "the function add works", "binary"),
        ("latin1.txt", "is where the function add works", "not UTF-8"),
    ] {
        let problem = message(&q, path, quote);
        assert!(problem.contains(why), "{path}: {problem}");
        assert!(problem.contains("cannot be checked"), "{path}: {problem}");
    }
}

#[test]
fn invented_empty_missing_and_escaping_quotes_are_invalid() {
    let (dir, ws) = workspace();
    std::os::unix::fs::symlink(dir.path().join("secret.txt"), ws.root().join("link")).unwrap();
    let q = quotes(&ws);
    let cases = [
        (
            check("lib.rs", "let sum = a - b;"),
            "not a run of whole lines of `lib.rs`",
        ),
        (check("lib.rs", "  \n "), "empty quote"),
        (check("", "let sum = a + b;"), "names no file"),
        (check("gone.rs", "let sum = a + b;"), "cannot be checked"),
        (
            check("../secret.txt", "the secret of the workspace"),
            "outside the workspace",
        ),
        (
            check("link", "the secret of the workspace"),
            "outside the workspace",
        ),
        (check(".", "let sum = a + b;"), "not a regular file"),
    ];
    for (c, why) in cases {
        let problem = q.problem(&c).map(|p| p.to_string()).unwrap_or_default();
        assert!(problem.contains(why), "{c:?}: {problem}");
    }
    let problems = q.unbacked(&[
        check("lib.rs", "let sum = a + b;"),
        check("lib.rs", "let sum = a * b;"),
    ]);
    assert_eq!(
        problems,
        vec!["the quote \"let sum = a * b;\" is not a run of whole lines of `lib.rs`".to_owned()]
    );
    assert_eq!(
        q.unbacked(&[]),
        vec!["the accept cites no checks; at least one quoted line is required".to_owned()]
    );
}

#[test]
fn a_fifo_is_refused_without_blocking() {
    let (_d, ws) = workspace();
    let fifo = ws.root().join("pipe.rs");
    mkfifo(&fifo);
    let root = ws.root().to_owned();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let ws = Confined::new(&root).unwrap();
        let q = Quotes::new(&ws, &root.join("plan.md"), &NOT_GIT);
        let _ = tx.send(q.problem(&check("pipe.rs", "let sum = a + b;")));
    });
    let problem = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("the quote check blocked on a FIFO")
        .map(|p| p.to_string())
        .unwrap_or_default();
    assert!(problem.contains("not a regular file"), "{problem}");
}

#[test]
fn a_huge_file_is_not_read_into_memory() {
    // Six GiB, one line: the quoted text at its start, then a hole.
    let (_d, ws) = workspace();
    let path = ws.root().join("huge.rs");
    let mut file = fs::File::create(&path).unwrap();
    std::io::Write::write_all(&mut file, b"let sum = a + b;\n").unwrap();
    file.set_len(6 << 30).unwrap();
    let q = quotes(&ws);
    assert_eq!(
        message(&q, "huge.rs", "let sum = a + b;"),
        "the quote \"let sum = a + b;\" cannot be checked: `huge.rs` is too large to check"
    );
}

fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn a_held_quote_records_the_line_it_starts_on() {
    let (_dir, ws) = workspace();
    let quotes = quotes(&ws);
    let mut checks = vec![
        check("lib.rs", "fn add(a: i32, b: i32) -> i32 {"),
        check("lib.rs", "let sum = a + b;\n\n    sum"),
        check("lib.rs", "not in the file at all"),
    ];
    assert!(!quotes.unbacked(&checks).is_empty());
    quotes.locate_all(&mut checks);
    let lines: Vec<Option<usize>> = checks.iter().map(|c| c.line).collect();
    assert_eq!(lines, [Some(1), Some(2), None]);
    // The judge cannot claim a line: it is never read from its answer.
    let parsed: Check =
        serde_json::from_str(r#"{"path": "lib.rs", "quote": "x", "line": 99}"#).unwrap();
    assert_eq!(parsed.line, None);
}

/// A project after a run: each file as the run left it, and the lines it changed.
struct Project {
    _dir: tempfile::TempDir,
    ws: Confined,
    changed: ChangedLines,
}

/// Writes `files` into a fresh workspace; `changed` names, per file, the lines the run changed
/// (`None`: a new, untracked file).
fn project(files: &[(&str, &str)], changed: &[(&str, Option<&[usize]>)]) -> Project {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("ws");
    fs::create_dir_all(&root).unwrap();
    fs::write(root.join("plan.md"), "## Goal: G\n<!-- id: g -->\n").unwrap();
    for (path, text) in files {
        let target = root.join(path);
        fs::create_dir_all(target.parent().unwrap()).unwrap();
        fs::write(target, text).unwrap();
    }
    let map = changed
        .iter()
        .map(|(path, lines)| {
            let lines = match lines {
                None => FileLines::Whole,
                Some(lines) => FileLines::Ranges(lines.iter().map(|&n| n..=n).collect()),
            };
            (std::path::PathBuf::from(path), lines)
        })
        .collect();
    Project {
        ws: Confined::new(&root).unwrap(),
        _dir: dir,
        changed: ChangedLines::known(map),
    }
}

impl Project {
    fn quotes(&self) -> Quotes<'_> {
        Quotes::new(&self.ws, &self.ws.root().join("plan.md"), &self.changed)
    }
}

/// The six one-line fixes users saw refused by a rule counting letters, each quoted as the whole
/// line of the file that proves it.
const SHORT_FIXES: &[(&str, &str, usize, &str)] = &[
    (
        "calc.sh",
        "#!/bin/sh\necho $(($1 + $2))\n",
        2,
        "echo $(($1 + $2))",
    ),
    (
        "config.json",
        "{\n  \"host\": \"example.org\",\n  \"port\": 80,\n  \"tls\": false\n}\n",
        3,
        "\"port\": 80,",
    ),
    (
        "Makefile",
        "CC = clang\nCFLAGS = -O2\n\nall:\n\t$(CC) $(CFLAGS) -o app app.c\n",
        1,
        "CC = clang",
    ),
    (".nvmrc", "22\n", 1, "22"),
    (
        "src/lib.rs",
        "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n",
        2,
        "a + b",
    ),
    (
        "build.toml",
        "[build]\njobs = 4\nverbose = true\n",
        2,
        "jobs = 4",
    ),
];

#[test]
fn a_short_changed_line_counts_however_short() {
    for (path, text, line, quote) in SHORT_FIXES {
        let p = project(&[(path, text)], &[(path, Some(&[*line]))]);
        let q = p.quotes();
        assert_eq!(q.problem(&check(path, quote)), None, "{path}: {quote:?}");
        let mut checks = [check(path, quote)];
        q.locate_all(&mut checks);
        assert_eq!(checks[0].line, Some(*line), "{path}");
    }
}

/// A goal met before the run began (a person's fix, or an earlier run whose sign-off failed):
/// the same short lines, not changed by this run, or outside git where no line is known to be
/// changed, still count — each states something.
#[test]
fn the_same_short_lines_unchanged_or_outside_git_count_too() {
    for (path, text, line, quote) in SHORT_FIXES {
        // The run changed another file: this line was not changed by it.
        let p = project(
            &[(path, text), ("notes.md", "why\n")],
            &[("notes.md", None)],
        );
        let mut checks = [check(path, quote)];
        assert_eq!(p.quotes().unbacked(&checks), Vec::<String>::new(), "{path}");
        p.quotes().locate_all(&mut checks);
        assert_eq!(checks[0].line, Some(*line), "{path}");
        // The run changed nothing at all.
        let p = project(&[(path, text)], &[]);
        assert_eq!(p.quotes().problem(&check(path, quote)), None, "{path}");
        let outside = project(&[(path, text)], &[]);
        let q = Quotes::new(&outside.ws, &outside.ws.root().join("plan.md"), &NOT_GIT);
        assert_eq!(q.problem(&check(path, quote)), None, "{path}");
    }
}

const MAIN_PY: &str = "#!/usr/bin/env python3\n# SPDX-License-Identifier: MIT\n# Copyright (c) 2024 Example Corp\nimport os\n\nlogger = logging.getLogger(__name__)\n\ndef add(a, b):\n    return a + b\n\nif __name__ == \"__main__\":\n    main()\n";

const DEPLOY_SH: &str = "#!/bin/sh\nset -eu\nfor f in *.txt; do\n  case \"$f\" in\n    a*) echo a ;;\n  esac\ndone\nif [ -n \"$1\" ]; then\n  echo \"deploying $1\"\nfi\n";

fn untouched() -> Project {
    let mut files = vec![
        ("main.py", MAIN_PY),
        ("deploy.sh", DEPLOY_SH),
        (
            "lib.rs",
            "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n",
        ),
        ("ci.yml", "---\nname: ci\non: push\n"),
        (
            "LICENSE",
            "MIT License\n\nPermission is hereby granted, free of charge, to any person\n",
        ),
        ("calc.sh", "#!/bin/sh\necho $(($1 + $2))\n"),
        ("Cargo.toml", "[package]\nname = \"words\"\n"),
        (
            "stub.py",
            "def parse(text):\n    raise NotImplementedError\n",
        ),
    ];
    let others: Vec<(String, String)> = (0..3)
        .map(|i| {
            (
                format!("mod{i}.py"),
                format!("logger = logging.getLogger(__name__)\nVALUE = {i}\n"),
            )
        })
        .collect();
    files.extend(others.iter().map(|(p, t)| (p.as_str(), t.as_str())));
    project(&files, &[("calc.sh", Some(&[2]))])
}

#[test]
fn trivial_lines_of_files_the_run_did_not_touch_do_not_count() {
    let p = untouched();
    let q = p.quotes();
    let weak = |path: &str, quote: &str| match q.problem(&check(path, quote)) {
        Some(QuoteProblem::NotSpecific { why, .. }) => why.unchanged.map(|(_, w)| w),
        other => panic!("{path}: {quote:?}: {other:?}"),
    };
    use Boilerplate::*;
    for (path, quote, expected) in [
        ("lib.rs", "}", Weakness::NoLetters),
        ("deploy.sh", "fi", Weakness::Boilerplate(Keyword)),
        ("deploy.sh", "done", Weakness::Boilerplate(Keyword)),
        ("deploy.sh", "esac", Weakness::Boilerplate(Keyword)),
        ("deploy.sh", "set -eu", Weakness::Boilerplate(Directive)),
        ("main.py", "import os", Weakness::Boilerplate(Import)),
        ("ci.yml", "---", Weakness::NoLetters),
        ("Cargo.toml", "[package]", Weakness::Boilerplate(Header)),
        ("stub.py", "raise NotImplementedError", Weakness::LoneName),
        (
            "main.py",
            "# SPDX-License-Identifier: MIT",
            Weakness::Boilerplate(License),
        ),
        (
            "main.py",
            "# Copyright (c) 2024 Example Corp",
            Weakness::Boilerplate(License),
        ),
        (
            "main.py",
            "#!/usr/bin/env python3",
            Weakness::Boilerplate(Shebang),
        ),
        (
            "LICENSE",
            "Permission is hereby granted, free of charge, to any person",
            Weakness::Boilerplate(LicenseFile),
        ),
        (
            "main.py",
            "logger = logging.getLogger(__name__)",
            Weakness::Common { files: 3 },
        ),
        // Several weak lines: the reason told is that of the one nearest to counting.
        (
            "main.py",
            "import os\n\nlogger = logging.getLogger(__name__)",
            Weakness::Common { files: 3 },
        ),
        (
            "main.py",
            "if __name__ == \"__main__\":\n    main()",
            Weakness::Boilerplate(Directive),
        ),
    ] {
        assert_eq!(weak(path, quote), Some(expected), "{path}: {quote:?}");
    }
    let problem = message(&q, "main.py", "import os");
    assert_eq!(
        problem,
        "the quote \"import os\" of `main.py` does not count: line 4 was not changed by this run, \
         and it is an import line, which any file may hold; quote the lines this run changed \
         (calc.sh line 2) — a changed line counts however short — or a line specific to this \
         work: one that states something, however short (`timeout = 30`, `return a - b`) — not \
         a bare keyword, lone name, header, import or license line — and not found in 3 or more \
         other files"
    );
}

#[test]
fn specific_lines_the_run_did_not_change_still_count() {
    let p = untouched();
    let q = p.quotes();
    for (path, quote) in [
        ("main.py", "def add(a, b):"),
        ("main.py", "def add(a, b):\n    return a + b"),
        // One specific line is enough: a signature with its body and closing brace.
        (
            "lib.rs",
            "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}",
        ),
        ("deploy.sh", "echo \"deploying $1\""),
        (
            "deploy.sh",
            "if [ -n \"$1\" ]; then\n  echo \"deploying $1\"\nfi",
        ),
        // A line in fewer than 3 other files is not common; and it states a value, however
        // short.
        ("mod0.py", "VALUE = 0"),
    ] {
        assert_eq!(q.problem(&check(path, quote)), None, "{path}: {quote:?}");
    }
}

#[test]
fn a_quote_spanning_a_changed_line_counts_and_one_without_letters_does_not() {
    let text = "fn check(x: i32) -> bool {\n    x > 0\n}\n";
    let p = project(
        &[("src/check.rs", text)],
        &[("src/check.rs", Some(&[2, 3]))],
    );
    let q = p.quotes();
    assert_eq!(q.problem(&check("src/check.rs", "x > 0\n}")), None);
    assert_eq!(
        q.problem(&check(
            "src/check.rs",
            "fn check(x: i32) -> bool {\n    x > 0"
        )),
        None
    );
    let problem = message(&q, "src/check.rs", "}");
    assert!(
        problem.contains("the lines this run changed that it quotes hold no letter or digit"),
        "{problem}"
    );
}

#[test]
fn a_quote_found_twice_counts_where_the_run_changed_it() {
    let text = "def a\n  1\nend\ndef b\n  2\nend\n";
    let p = project(&[("two.rb", text)], &[("two.rb", Some(&[6]))]);
    let q = p.quotes();
    let mut checks = [check("two.rb", "end")];
    assert!(q.unbacked(&checks).is_empty());
    q.locate_all(&mut checks);
    assert_eq!(checks[0].line, Some(6));
}

#[test]
fn a_run_that_changed_nothing_says_so() {
    let p = project(&[("build.toml", "[build]\njobs = 4\n")], &[]);
    let problem = message(&p.quotes(), "build.toml", "[build]");
    assert!(
        problem.ends_with(
            "this run changed no line since it began, so quote a line specific to this \
             work: one that states something, however short (`timeout = 30`, \
             `return a - b`) — not a bare keyword, lone name, header, import or license line — \
             and not found in 3 or more other files"
        ),
        "{problem}"
    );
}

#[test]
fn what_a_refused_quote_says() {
    let p = untouched();
    let q = p.quotes();
    let outside = Quotes::new(&p.ws, &p.ws.root().join("plan.md"), &NOT_GIT);
    let problems = [
        message(&q, "lib.rs", "}"),
        message(&q, "main.py", "logger = logging.getLogger(__name__)"),
        message(&q, "deploy.sh", "done"),
        message(
            &q,
            "main.py",
            "import os\n\nlogger = logging.getLogger(__name__)",
        ),
        message(&q, "Cargo.toml", "[package]"),
        message(&outside, "stub.py", "raise NotImplementedError"),
    ];
    insta::assert_snapshot!(problems.join("\n\n"));
}

mod properties {
    use proptest::prelude::*;

    use super::{Project, check, project};

    fn counts(p: &Project, line: &str) -> bool {
        p.quotes().problem(&check("f.txt", line)).is_none()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// A changed line with a letter or digit always counts; and marking a line changed
        /// never makes a quote of it count less.
        #[test]
        fn changing_a_line_only_ever_helps(line in "[ -~]{1,40}") {
            let line = line.trim().to_owned();
            prop_assume!(!line.is_empty());
            let text = format!("{line}\n");
            let changed = project(&[("f.txt", &text)], &[("f.txt", Some(&[1]))]);
            let unchanged = project(&[("f.txt", &text), ("o.txt", "x\n")], &[("o.txt", None)]);
            let has_letter = line.chars().any(char::is_alphanumeric);
            let normalized = super::normalize(&line);
            prop_assert_eq!(counts(&changed, &normalized), has_letter);
            if counts(&unchanged, &normalized) {
                prop_assert!(counts(&changed, &normalized));
            }
        }
    }
}
