//! FIFOs (and other non-regular files) in the workspace never block a tool: `read`, `edit` and
//! `write` refuse them at once, `grep` skips them, whether named directly, through a symlink or
//! met while walking a directory.

use nix::sys::stat::Mode;
use serde_json::json;
use tether_tools::ToolSet;

use super::Fixture;

fn with_fifo() -> Fixture {
    let fx = Fixture::new();
    fx.file("src/lib.rs", "// TODO: one\n");
    nix::unistd::mkfifo(&fx.root.join("src/pipe"), Mode::S_IRWXU).unwrap();
    fx.link("link-to-pipe", "src/pipe");
    fx
}

#[tokio::test]
async fn read_of_a_fifo_is_an_error_at_once() {
    let fx = with_fifo();
    for path in ["src/pipe", "link-to-pipe"] {
        let msg = fx.err("read", json!({"path": path})).await;
        assert_eq!(
            msg,
            format!(
                "cannot read `{path}`: it is a FIFO (named pipe), not a regular file; the file \
                 tools read and write regular files only"
            )
        );
    }
}

#[tokio::test]
async fn edit_and_write_refuse_a_fifo() {
    let fx = with_fifo();
    let msg = fx
        .err(
            "edit",
            json!({"path": "src/pipe", "old_text": "a", "new_text": "b"}),
        )
        .await;
    assert!(msg.contains("it is a FIFO (named pipe)"), "{msg}");
    let msg = fx
        .err("write", json!({"path": "src/pipe", "content": "x"}))
        .await;
    assert!(msg.contains("it is a FIFO (named pipe)"), "{msg}");
}

#[tokio::test]
async fn grep_skips_a_fifo_and_ls_lists_it() {
    let fx = with_fifo();
    let found = fx.ok("grep", json!({"pattern": "TODO"})).await;
    assert!(found.contains("src/lib.rs:1: // TODO: one"), "{found}");
    let named = fx
        .call("grep", json!({"pattern": "TODO", "path": "src/pipe"}))
        .await;
    assert!(
        !named.output.content.contains("TODO:"),
        "{}",
        named.output.content
    );
    let listed = fx.ok("ls", json!({"path": "src"})).await;
    assert!(listed.contains("pipe"), "{listed}");
}

#[tokio::test]
async fn the_judges_read_only_tools_refuse_a_fifo_too() {
    let fx = with_fifo();
    let judge = ToolSet::read_only(&fx.root).unwrap();
    let ctx = tether_tools::ToolContext::default();
    let read = tokio::time::timeout(
        super::CALL_LIMIT,
        judge.call("read", json!({"path": "src/pipe"}), &ctx),
    )
    .await
    .expect("the judge's read of a FIFO returns")
    .unwrap();
    assert!(read.output.is_error);
    assert!(
        read.output.content.contains("FIFO"),
        "{}",
        read.output.content
    );
}
