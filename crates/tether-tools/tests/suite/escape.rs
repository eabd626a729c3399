//! Every file tool refuses paths that leave the workspace — `..`, absolute paths outside, a
//! symlink out, a symlinked parent directory, a dangling link — with a clear message, and
//! nothing outside is read, listed or written.

use serde_json::json;

use super::{Fixture, tree};

/// A workspace with links out: `out` (a directory outside), `tmp` (`/tmp`), `dangling` (a
/// missing file outside), and `inner/up` (a link to the directory above the workspace).
fn fixture() -> Fixture {
    let fx = Fixture::new();
    fx.file("inner/keep.txt", "keep\n");
    fx.link("out", &fx.outside);
    fx.link("tmp", "/tmp");
    fx.link("dangling", fx.outside.join("created-through-link.txt"));
    fx.link("inner/up", fx.root.join("..").canonicalize().unwrap());
    fx
}

/// Paths that lead out of the workspace, for every tool.
fn escapes(fx: &Fixture) -> Vec<String> {
    vec![
        "../outside/secret.txt".into(),
        "../x".into(),
        "/etc/passwd".into(),
        fx.outside.join("secret.txt").display().to_string(),
        "out/secret.txt".into(),
        "out".into(),
        "inner/up/outside/secret.txt".into(),
        "tmp/tether-escape-probe.txt".into(),
        "missing/../../outside/secret.txt".into(),
    ]
}

fn assert_refused(tool: &str, path: &str, msg: &str) {
    assert!(
        msg.contains(&format!("`{path}` is outside the workspace")),
        "{tool} {path}: expected an outside-the-workspace message, got:\n{msg}"
    );
}

#[tokio::test]
async fn read_refuses_every_escape() {
    let fx = fixture();
    for path in escapes(&fx) {
        let msg = fx.err("read", json!({"path": path})).await;
        assert_refused("read", &path, &msg);
        assert!(!msg.contains("secret\n"), "{msg}");
    }
}

#[tokio::test]
async fn write_refuses_every_escape_and_writes_nothing_outside() {
    let fx = fixture();
    let before = tree(&fx.outside);
    let mut paths = escapes(&fx);
    paths.extend([
        "out/new.txt".to_owned(),
        "out/newdir/deeper/new.txt".to_owned(),
        "inner/up/new.txt".to_owned(),
        fx.outside.join("brand-new.txt").display().to_string(),
    ]);
    for path in &paths {
        let msg = fx
            .err("write", json!({"path": path, "content": "pwned"}))
            .await;
        assert_refused("write", path, &msg);
    }
    let msg = fx
        .err("write", json!({"path": "dangling", "content": "pwned"}))
        .await;
    assert_refused("write", "dangling", &msg);
    assert_eq!(
        tree(&fx.outside),
        before,
        "something was written outside the workspace"
    );
    assert!(!std::path::Path::new("/tmp/tether-escape-probe.txt").exists());
    assert!(!fx.root.join("../x").exists());
}

#[tokio::test]
async fn edit_refuses_every_escape_and_changes_nothing_outside() {
    let fx = fixture();
    let before = tree(&fx.outside);
    for path in escapes(&fx) {
        let args = json!({"path": path, "old_text": "secret", "new_text": "pwned"});
        let msg = fx.err("edit", args).await;
        assert_refused("edit", &path, &msg);
    }
    assert_eq!(tree(&fx.outside), before);
}

#[tokio::test]
async fn grep_refuses_every_escape_and_does_not_follow_links_out() {
    let fx = fixture();
    for path in escapes(&fx) {
        let msg = fx
            .err("grep", json!({"pattern": "secret", "path": path}))
            .await;
        assert_refused("grep", &path, &msg);
        assert!(!msg.contains("secret.txt:1"), "{msg}");
    }
    let whole = fx.ok("grep", json!({"pattern": "secret"})).await;
    assert!(whole.starts_with("no matches for `secret`"), "{whole}");
}

#[tokio::test]
async fn ls_refuses_every_escape_and_does_not_enter_links_out() {
    let fx = fixture();
    for path in escapes(&fx) {
        let msg = fx.err("ls", json!({"path": path})).await;
        assert_refused("ls", &path, &msg);
    }
    let listing = fx.ok("ls", json!({"depth": 5})).await;
    assert!(
        listing.contains(&format!("out -> {}\n", fx.outside.display())),
        "{listing}"
    );
    assert!(!listing.contains("secret.txt"), "{listing}");
}

#[tokio::test]
async fn links_that_stay_inside_work_through_every_tool() {
    let fx = fixture();
    fx.link("alias", "inner");
    assert_eq!(
        fx.ok("read", json!({"path": "alias/keep.txt"})).await,
        "     1\tkeep\n"
    );
    fx.ok(
        "write",
        json!({"path": "alias/new.txt", "content": "new\n"}),
    )
    .await;
    assert_eq!(fx.read("inner/new.txt"), "new\n");
    fx.ok(
        "edit",
        json!({"path": "alias/new.txt", "old_text": "new", "new_text": "newer"}),
    )
    .await;
    assert_eq!(fx.read("inner/new.txt"), "newer\n");
    let found = fx
        .ok("grep", json!({"pattern": "newer", "path": "alias"}))
        .await;
    assert_eq!(found, "inner/new.txt:1: newer\n");
    let listing = fx.ok("ls", json!({"path": "alias"})).await;
    assert!(listing.contains("inner/keep.txt\n"), "{listing}");
}
