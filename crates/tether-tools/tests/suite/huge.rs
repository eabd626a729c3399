//! Every read of a file the agent controls is bounded, whatever the file holds: a sparse file of
//! several GiB that is one line (it costs no disk) must not be taken into memory by `read`,
//! `edit` or `grep`, the agent's or the judge's. Each returns what fits with what it left out,
//! or refuses, saying why.

use std::fs::{self, File};
use std::io::{Read as _, Write as _};
use std::path::Path;

use serde_json::json;
use tether_tools::{ToolContext, ToolSet};

use super::{CALL_LIMIT, Fixture};

/// Six GiB, all but the first 8 KiB a hole.
const HUGE: u64 = 6 << 30;

/// The text the huge file starts with: enough that it does not look binary.
const START: usize = 8192;

/// Makes `path` a sparse file of [`HUGE`] bytes, one line: [`START`] letters, then zeros.
fn huge(path: &Path) {
    let mut file = File::create(path).unwrap();
    file.write_all(&[b'a'; START]).unwrap();
    file.set_len(HUGE).unwrap();
}

fn with_huge() -> Fixture {
    let fx = Fixture::new();
    huge(&fx.root.join("huge.txt"));
    fx
}

/// The file is still the huge one, untouched: its size and its start.
fn untouched(path: &Path) {
    assert_eq!(fs::metadata(path).unwrap().len(), HUGE);
    let mut start = vec![0; START + 1];
    File::open(path).unwrap().read_exact(&mut start).unwrap();
    assert!(start[..START].iter().all(|b| *b == b'a') && start[START] == 0);
}

/// What `read` says of the huge file: the start of its one line, how much of it was left out,
/// and the file's size with how far `read` went.
fn assert_huge_read(out: &str) {
    let line = format!(
        "     1\t{}… [{} more bytes]\n",
        "a".repeat(2000),
        256 * 1024 * 1024 - 2000
    );
    let note = format!(
        "[`huge.txt` is {HUGE} bytes and `read` goes through its first 256 MiB only: what \
         follows them cannot be shown, and line 1 may go on past them]\n"
    );
    assert_eq!(out, format!("{line}{note}"));
}

#[tokio::test]
async fn read_of_a_huge_one_line_file_shows_its_start_and_says_its_size() {
    let fx = with_huge();
    assert_huge_read(&fx.ok("read", json!({"path": "huge.txt"})).await);
    let past = fx
        .err("read", json!({"path": "huge.txt", "offset": 2}))
        .await;
    assert_eq!(
        past,
        format!(
            "`offset` 2 is past what `read` goes through of `huge.txt`: the file is {HUGE} \
             bytes, and `read` reads its first 256 MiB only, which hold 1 line"
        )
    );
    untouched(&fx.root.join("huge.txt"));
}

#[tokio::test]
async fn edit_of_a_huge_file_is_refused_and_changes_nothing() {
    let fx = with_huge();
    let refused = fx
        .err(
            "edit",
            json!({"path": "huge.txt", "old_text": "aaaa", "new_text": "b"}),
        )
        .await;
    assert_eq!(
        refused,
        format!(
            "`huge.txt` is {HUGE} bytes, more than the 16777216 bytes `edit` changes; nothing \
             was changed. Change a file this large with a command (`sed -i`, a script), or \
             replace it whole with `write`"
        )
    );
    untouched(&fx.root.join("huge.txt"));
}

#[tokio::test]
async fn grep_skips_a_huge_file_and_says_so() {
    let fx = with_huge();
    fx.file("small.txt", "aaaa\n");
    let out = fx.ok("grep", json!({"pattern": "a+"})).await;
    assert_eq!(
        out,
        "small.txt:1: aaaa\n[1 file over 10485760 bytes not searched]\n"
    );
}

#[tokio::test]
async fn grep_goes_through_a_long_line_of_matches_once() {
    // Nine MiB on one line, every byte a match: one result, found in one pass.
    let fx = Fixture::new();
    fx.file("long.txt", vec![b'a'; 9 << 20]);
    fx.file("after.txt", "x\nab\n");
    let out = fx.ok("grep", json!({"pattern": "a"})).await;
    let long = format!(
        "long.txt:1: {}… [{} more characters]\n",
        "a".repeat(300),
        (9 << 20) - 300
    );
    assert_eq!(out, format!("after.txt:2: ab\n{long}"));
}

#[tokio::test]
async fn the_judges_read_only_tools_are_bounded_alike() {
    let fx = with_huge();
    let judge = ToolSet::read_only(&fx.root).unwrap();
    let ctx = ToolContext::default();
    let call = |tool: &'static str, args| {
        let (judge, ctx) = (&judge, &ctx);
        async move {
            tokio::time::timeout(CALL_LIMIT, judge.call(tool, args, ctx))
                .await
                .unwrap()
                .unwrap()
                .output
        }
    };
    let read = call("read", json!({"path": "huge.txt"})).await;
    assert!(!read.is_error);
    assert_huge_read(&read.content);
    let grep = call("grep", json!({"pattern": "a"})).await;
    assert_eq!(
        grep.content,
        "no matches for `a` in `.`\n[1 file over 10485760 bytes not searched]\n"
    );
}
