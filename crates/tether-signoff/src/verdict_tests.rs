#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::fs;

use tether_tools::Workspace as Confined;

use super::{Check, Decision, normalize, parse, quote_problem, unbacked};

fn check(path: &str, quote: &str) -> Check {
    Check {
        path: path.into(),
        quote: quote.into(),
        observation: "seen".into(),
    }
}

#[test]
fn a_fenced_verdict_after_prose_parses() {
    let msg = "I read the code.\n\n```json\n{\"verdict\":\"accept\",\"summary\":\" ok \",\
               \"checks\":[{\"path\":\"a.rs\",\"quote\":\"fn a()\",\"observation\":\"there\"}],\
               \"missing\":[]}\n```\n";
    let v = parse(msg).unwrap();
    assert_eq!(v.decision, Decision::Accept);
    assert_eq!(v.summary.as_deref(), Some("ok"));
    assert_eq!(
        v.checks,
        vec![Check {
            path: "a.rs".into(),
            quote: "fn a()".into(),
            observation: "there".into()
        }]
    );
}

#[test]
fn the_last_object_wins_and_nested_objects_stay_inside() {
    let msg = "draft: {\"verdict\":\"accept\",\"checks\":[]}\nfinal: {\"verdict\":\"reject\",\
               \"checks\":[{\"path\":\"x\",\"quote\":\"{\",\"observation\":\"o\"}],\
               \"missing\":[\"tests\", \" \"]} trailing {not json";
    let v = parse(msg).unwrap();
    assert_eq!(v.decision, Decision::Reject);
    assert_eq!(v.missing, vec!["tests".to_owned()]);
    assert_eq!(v.checks.len(), 1);
}

#[test]
fn a_verdict_object_is_preferred_over_a_later_example() {
    let msg = "{\"verdict\":\"reject\",\"missing\":[\"a\"]}\nFor example {\"path\":\"p\"}";
    assert_eq!(parse(msg).unwrap().decision, Decision::Reject);
}

#[test]
fn garbage_is_no_verdict() {
    for (msg, why) in [
        ("I think it is done.", "no JSON object"),
        ("{\"verdict\": \"maybe\"}", "not `accept` or `reject`"),
        ("{\"verdict\": 1}", "expected shape"),
        ("{\"checks\": []}", "expected shape"),
        ("```json\n{\"verdict\": \"accept\",\n```", "no JSON object"),
    ] {
        let err = parse(msg).unwrap_err();
        assert!(err.contains(why), "{msg:?}: {err}");
    }
}

#[test]
fn normalizing_collapses_white_space_and_crlf() {
    assert_eq!(normalize("  a\r\n\tb   c \n"), "a b c");
}

fn workspace() -> (tempfile::TempDir, Confined) {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join("ws")).unwrap();
    fs::write(
        dir.path().join("ws/lib.rs"),
        "fn add(a: i32, b: i32) -> i32 {\r\n    a + b\r\n}\r\n",
    )
    .unwrap();
    fs::write(dir.path().join("secret.txt"), "the secret\n").unwrap();
    let ws = Confined::new(dir.path().join("ws")).unwrap();
    (dir, ws)
}

#[test]
fn real_quotes_pass_across_line_breaks_indentation_and_line_numbers() {
    let (_d, ws) = workspace();
    for quote in [
        "a + b",
        "fn add(a: i32, b: i32) -> i32 {\n a + b\n}",
        "     1\tfn add(a: i32, b: i32) -> i32 {\n     2\t    a + b",
    ] {
        assert_eq!(
            quote_problem(&check("lib.rs", quote), &ws),
            None,
            "{quote:?}"
        );
    }
    assert!(unbacked(&[check("lib.rs", "a + b")], &ws).is_empty());
}

#[test]
fn invented_empty_missing_and_escaping_quotes_are_invalid() {
    let (dir, ws) = workspace();
    std::os::unix::fs::symlink(dir.path().join("secret.txt"), dir.path().join("ws/link")).unwrap();
    let cases = [
        (check("lib.rs", "a - b"), "does not occur in `lib.rs`"),
        (check("lib.rs", "  \n "), "empty quote"),
        (check("", "a + b"), "names no file"),
        (check("gone.rs", "a + b"), "cannot be checked"),
        (
            check("../secret.txt", "the secret"),
            "outside the workspace",
        ),
        (check("link", "the secret"), "outside the workspace"),
        (check(".", "a + b"), "not a file"),
    ];
    for (c, why) in cases {
        let problem = quote_problem(&c, &ws).unwrap_or_default();
        assert!(problem.contains(why), "{c:?}: {problem}");
    }
    let problems = unbacked(&[check("lib.rs", "a + b"), check("lib.rs", "a * b")], &ws);
    assert_eq!(
        problems,
        vec!["the quote \"a * b\" does not occur in `lib.rs`".to_owned()]
    );
    assert_eq!(
        unbacked(&[], &ws),
        vec!["the accept cites no checks; at least one quoted line is required".to_owned()]
    );
}
