//! Every read is bounded: a sparse file of 6 GiB that is one line (it costs no disk) is read,
//! edited and searched by the agent and read by the judge. None of it goes into tether's memory:
//! `read` shows the start of the line and says the file's size, `edit` refuses the file, `grep`
//! skips it, and the run goes on to its end instead of tether aborting.

use std::fs::File;
use std::io::Write as _;

use serde_json::json;
use tether_model::scripted::{Script, Turn};

use super::support::{PLAN, env, fix_add, tool_results};
use crate::common::text;

/// Six GiB.
const HUGE: u64 = 6 << 30;

/// What `read` says past the line it shows.
fn read_note() -> String {
    format!("[`huge.txt` is {HUGE} bytes and `read` goes through its first 256 MiB only")
}

#[test]
fn a_huge_file_read_edited_and_searched_by_the_agent_and_read_by_the_judge_brings_nothing_down() {
    let agent = Script::turns([
        Turn::tool("read", json!({"path": "huge.txt"})),
        Turn::tool(
            "edit",
            json!({"path": "huge.txt", "old_text": "aaaa", "new_text": "b"}),
        ),
        Turn::tool("grep", json!({"pattern": "a+", "path": "huge.txt"})),
        fix_add(),
        Turn::tool(
            "complete_goal",
            json!({"id": "add", "evidence": "see huge.txt", "paths": ["huge.txt"]}),
        ),
        Turn::text("Done."),
    ])
    .then_repeat(Turn::text("Nothing left to do."));
    let judge = Script::turns([Turn::tool("read", json!({"path": "huge.txt"}))]).then_repeat(
        Turn::text(
            "```json\n{\"verdict\":\"reject\",\"summary\":\"not shown\",\"checks\":[],\"missing\":[\"a test\"]}\n```",
        ),
    );
    let e = env(PLAN, agent, judge, "");
    let mut file = File::create(e.path().join("huge.txt")).unwrap();
    file.write_all(&[b'a'; 8192]).unwrap();
    file.set_len(HUGE).unwrap();
    drop(file);

    let out = e
        .start(&["run", "--approve", "--max-iterations", "1"])
        .wait();

    let stderr = text(&out.stderr);
    assert!(
        out.status.code().is_some(),
        "tether was ended by a signal: {:?}\n{stderr}",
        out.status
    );
    let results = tool_results(&e.agent);
    let has = |needle: &str| results.iter().any(|r| r.contains(needle));
    assert!(has(&read_note()), "{results:#?}\n{stderr}");
    assert!(
        has(&format!(
            "`huge.txt` is {HUGE} bytes, more than the 16777216 bytes `edit` changes; nothing \
             was changed"
        )),
        "{results:#?}"
    );
    assert!(
        has("[1 file over 10485760 bytes not searched]"),
        "{results:#?}"
    );
    let judged = tool_results(&e.judge);
    assert!(
        judged.iter().any(|r| r.contains(&read_note())),
        "the judge read it: {judged:#?}\n{stderr}"
    );
    assert_eq!(
        std::fs::metadata(e.path().join("huge.txt")).unwrap().len(),
        HUGE
    );
    e.assert_never_succeeded("huge file", &out);
}
