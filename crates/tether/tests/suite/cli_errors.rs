//! Errors a person meets at the command line say what is wrong once, naming what to fix: an
//! empty answer, a duplicate key in tether.toml, a store that cannot be written; and the logs
//! written to a file or a pipe are plain text.

use std::fs;

use tether_store::{NewQuestion, QuestionStatus, Store};

use crate::common::tether;

#[test]
fn an_empty_answer_is_refused_and_the_question_stays_pending() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join(".tether/tether.db")).unwrap();
    let q = store
        .insert_question(&NewQuestion {
            question: "Ship it?".into(),
            ..NewQuestion::default()
        })
        .unwrap();
    for empty in ["", "  \n\t "] {
        let out = tether(dir.path(), &["answer", q.id.as_str(), empty]);
        assert_eq!(out.code, 2, "{}", out.stderr);
        assert_eq!(
            out.stderr,
            format!(
                "error: the answer is empty; give the text the agent should read (tether answer {} \"…\")\n",
                q.id
            )
        );
    }
    assert_eq!(
        store.question(&q.id).unwrap().status,
        QuestionStatus::Pending
    );
    let out = tether(dir.path(), &["answer", q.id.as_str(), "yes"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
}

#[test]
fn a_duplicate_key_in_tether_toml_names_the_key_and_its_lines() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("tether.toml"),
        "[loop]\nmax_iterations = 3\nmax_iterations = 4\n",
    )
    .unwrap();
    let out = tether(dir.path(), &["goal", "cancel", "x", "--reason", "r"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert_eq!(
        out.stderr,
        "error: [WS]/tether.toml has 1 problem:\n[WS]/tether.toml:3:1: loop.max_iterations: \
         duplicate key: already set on line 2; set it once\n"
    );
}

/// Whether this process may write a file whose permissions forbid it (root may): then
/// permissions cannot make the store read-only.
fn permissions_are_bypassed(dir: &std::path::Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    let probe = dir.join("probe");
    fs::write(&probe, "").unwrap();
    fs::set_permissions(&probe, fs::Permissions::from_mode(0o444)).unwrap();
    let writable = fs::OpenOptions::new().append(true).open(&probe).is_ok();
    fs::remove_file(&probe).unwrap();
    writable
}

#[test]
fn a_read_only_store_is_named_once_with_what_to_do() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    if permissions_are_bypassed(dir.path()) {
        // As root, the store's own unit test (tether-store error.rs) covers the message.
        return;
    }
    let out = tether(dir.path(), &["questions"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let state = dir.path().join(".tether");
    for entry in fs::read_dir(&state).unwrap() {
        let path = entry.unwrap().path();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o444)).unwrap();
    }
    fs::set_permissions(&state, fs::Permissions::from_mode(0o555)).unwrap();
    let out = tether(dir.path(), &["history"]);
    fs::set_permissions(&state, fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr
            .starts_with("error: cannot write to the tether store [WS]/.tether/tether.db ("),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("chmod -R u+w [WS]/.tether"),
        "{}",
        out.stderr
    );
    assert_eq!(out.stderr.matches("readonly").count(), 1, "{}", out.stderr);
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
}

#[test]
fn a_plan_path_that_is_a_directory_is_named_by_every_command() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join("docs")).unwrap();
    for (plan, label) in [(".", "."), ("docs", "docs")] {
        fs::write(
            dir.path().join("tether.toml"),
            format!("plan = \"{plan}\"\n"),
        )
        .unwrap();
        let out = tether(dir.path(), &["validate"]);
        assert_eq!(out.code, 2, "{}", out.stdout);
        assert!(
            out.stdout.starts_with(&format!(
                "{label}: error: not a regular file (a directory); the plan must be a regular file\n"
            )),
            "{}",
            out.stdout
        );
        for args in [&["plan"][..], &["plan", "approve", "--all"]] {
            let out = tether(dir.path(), args);
            assert_eq!(out.code, 2, "{args:?}: {}", out.stderr);
            let path = if plan == "." {
                "[WS]/.".to_owned()
            } else {
                format!("[WS]/{plan}")
            };
            assert_eq!(
                out.stderr,
                format!(
                    "error: {path}: not a regular file (a directory); the plan must be a regular file\n"
                ),
                "{args:?}"
            );
        }
    }
}

#[test]
fn logs_to_a_pipe_carry_no_colour_codes() {
    let dir = tempfile::tempdir().unwrap();
    // Without NO_COLOR (which the tests otherwise set, and which also turns colour off).
    let out = crate::common::cmd(dir.path(), &["status", "-vv"])
        .env_remove("NO_COLOR")
        .output()
        .unwrap();
    let out = crate::common::Out::new(dir.path(), &out);
    assert!(
        out.stderr.contains("DEBUG tether: workspace"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains('\x1b'), "{:?}", out.stderr);
}
