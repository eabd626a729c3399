#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::fs;
use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use tether_tools::Workspace as Confined;

use super::{Quotes, normalize};
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

fn quotes<'a>(ws: &'a Confined) -> Quotes<'a> {
    Quotes::new(ws, &ws.root().join("plan.md"))
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
        (")", "too slight"),
        ("a + b", "too slight"),
        ("}", "too slight"),
        (
            "add(a: i32, b: i32)",
            "not a run of whole lines of `lib.rs`",
        ),
        ("let sum = a + b", "not a run of whole lines"),
        ("i32 {\n let sum = a + b;", "not a run of whole lines"),
    ] {
        let problem = q.problem(&check("lib.rs", quote)).unwrap_or_default();
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
        let problem = q.problem(&check(path, quote)).unwrap_or_default();
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
        let problem = q.problem(&c).unwrap_or_default();
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
        let q = Quotes::new(&ws, &root.join("plan.md"));
        let _ = tx.send(q.problem(&check("pipe.rs", "let sum = a + b;")));
    });
    let problem = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("the quote check blocked on a FIFO")
        .unwrap_or_default();
    assert!(problem.contains("not a regular file"), "{problem}");
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
    let quotes = Quotes::new(&ws, &ws.root().join("plan.md"));
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
