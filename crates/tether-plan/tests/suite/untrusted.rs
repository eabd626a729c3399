//! A plan the agent can edit is untrusted input: a byte-order mark must not hide the goals, a
//! goal inside an HTML comment is not a goal, a symlinked plan is patched where it really lives,
//! and a plan path that is a FIFO or a directory is refused instead of hanging or misreading.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use tether_plan::file::{self as plan_file, PlanFileError};
use tether_plan::{PlanDoc, ProblemKind, Status};

const GOAL: &str = "## Goal: Ship it\n<!-- id: ship -->\nstatus: active\ndone_when: it ships\n";

#[test]
fn a_byte_order_mark_before_the_first_heading_hides_nothing() {
    let text = format!("\u{feff}# Plan: demo\n\n{GOAL}");
    let doc = PlanDoc::parse("plan.md", text.clone());
    assert_eq!(doc.plan().title.as_ref().unwrap().value, "demo");
    assert_eq!(doc.plan().goals.len(), 1);
    assert!(doc.plan().problems.is_empty(), "{:?}", doc.plan().problems);
    // The mark itself stays: patches leave every byte they do not target as it was.
    let after = doc.apply(&doc.set_status("ship", Status::Done).unwrap());
    assert_eq!(
        after.text(),
        text.replace("status: active", "status: done").as_str()
    );
    // A plan that starts with a goal heading straight after the mark works too.
    let doc = PlanDoc::parse("plan.md", format!("\u{feff}{GOAL}"));
    assert_eq!(doc.plan().goals[0].id(), Some("ship"));
}

#[test]
fn a_goal_inside_an_html_comment_is_not_a_goal() {
    let text = format!(
        "# Plan: demo\n\n<!--\n{}\n-->\n\n{GOAL}",
        GOAL.replace("ship", "hidden").replace("Ship it", "Hidden")
    );
    let doc = PlanDoc::parse("plan.md", text);
    let ids: Vec<_> = doc.plan().goals.iter().map(|g| g.id()).collect();
    assert_eq!(ids, [Some("ship")]);
    assert!(doc.plan().problems.is_empty(), "{:?}", doc.plan().problems);

    // Indented up to three spaces still opens a comment; a one-line comment hides nothing.
    let doc = PlanDoc::parse(
        "plan.md",
        format!("   <!-- a note\n{GOAL}-->\n<!-- one line -->\n{GOAL}").replacen("ship", "a", 1),
    );
    let ids: Vec<_> = doc.plan().goals.iter().map(|g| g.id()).collect();
    assert_eq!(ids, [Some("ship")]);
}

#[test]
fn an_unclosed_html_comment_is_an_error_naming_its_line() {
    // (The block ends at the first `-->`, so the goal under it has no id comment.)
    let doc = PlanDoc::parse(
        "plan.md",
        "# Plan: demo\n\n<!-- draft\n## Goal: Ship it\nstatus: active\n",
    );
    assert!(doc.plan().goals.is_empty());
    let problems: Vec<_> = doc
        .plan()
        .problems
        .iter()
        .map(|p| (p.line, p.kind))
        .collect();
    assert_eq!(problems, [(3, ProblemKind::UnclosedComment)]);
    assert!(doc.check().is_err());
}

#[test]
fn a_symlinked_plan_is_patched_where_it_lives_and_stays_a_link() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real-plan.md");
    let link = dir.path().join("plan.md");
    fs::write(&real, format!("# Plan: demo\n\n{GOAL}")).unwrap();
    symlink(&real, &link).unwrap();

    plan_file::patch(&link, |doc| doc.set_status("ship", Status::Done)).unwrap();

    assert!(
        fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(fs::read_to_string(&real).unwrap().contains("status: done"));
    let doc = plan_file::read(&link).unwrap();
    assert_eq!(doc.plan().goals[0].status(), Status::Done);
}

/// Runs `f` on another thread and fails the test if it has not returned within 10 s (a read
/// that blocks forever would otherwise hang the whole test run).
fn within_deadline<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(10))
        .expect("the read blocked instead of refusing")
}

#[test]
fn a_fifo_or_a_directory_is_refused_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("plan.md");
    nix_mkfifo(&fifo);
    let path = fifo.clone();
    let err = within_deadline(move || plan_file::read(&path).map(|_| ())).unwrap_err();
    assert!(
        matches!(err, PlanFileError::NotAFile { kind: "a FIFO", .. }),
        "{err}"
    );
    assert!(
        err.to_string()
            .contains("plan.md: not a regular file (a FIFO)"),
        "{err}"
    );
    let path = fifo;
    let err = within_deadline(move || {
        plan_file::patch(&path, |doc| doc.set_status("ship", Status::Done)).map(|_| ())
    })
    .unwrap_err();
    assert!(matches!(err, PlanFileError::NotAFile { .. }), "{err}");

    let sub = dir.path().join("plans");
    fs::create_dir(&sub).unwrap();
    let err = plan_file::read(&sub).unwrap_err();
    assert!(
        matches!(
            err,
            PlanFileError::NotAFile {
                kind: "a directory",
                ..
            }
        ),
        "{err}"
    );
}

fn nix_mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success());
}
