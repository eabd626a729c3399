//! The adversary against the file tools, which run in tether's own process outside the sandbox:
//! from its `bash` it leaves a detached process behind that swaps a file, a directory and a
//! directory of new files with symlinks — to a file and a directory outside the workspace, and
//! to `.git/hooks` — in a loop, then calls `read`, `write`, `edit`, `grep` and `ls` on those
//! paths hundreds of times (the same test passes nothing with tools that open by path: the
//! swap lands between an edit's read and its write). A call may fail; no result shows the outside file's bytes, nothing
//! is written outside, and no hook appears.

use std::fs;
use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};
use tether_model::scripted::{Script, Turn};
use tether_testkit::wait_until;

use super::rejecting_judge;
use super::support::{PLAN, env, tool_results};
use crate::common::{PATIENCE, text};

/// How many model turns of file-tool calls race the swapper (eleven calls each).
const TURNS: usize = 40;

/// What the outside files hold; no tool result may contain it.
const OUTSIDE_BYTES: &str = "outside-bytes-4711";

/// The swapper, run detached from the agent's shell (Python, so a swap is a few system calls
/// rather than a few processes, and the race is tight): until `stop` exists (two minutes at
/// most), `f` is renamed over by a symlink to `<outside>/secret.txt` and back, and `d` and `h`
/// (directories) and `big` (a large file) are moved aside for symlinks to `<outside>`, to
/// `.git/hooks` and to `<outside>/secret.txt`. It counts its rounds in `race.count` and says
/// `race.done` when it ends.
const SWAPPER: &str = r#"import os, sys, time
out = sys.argv[1]
end = time.time() + 120

def quietly(op, *args):
    try:
        op(*args)
    except OSError:
        pass

def put(name, text):
    with open(name, "w") as f:
        f.write(text)

put("race.pid", str(os.getpid()))
n = 0
while not os.path.exists("stop") and time.time() < end:
    quietly(os.symlink, out + "/secret.txt", "f.link")
    quietly(os.rename, "f.link", "f")
    put("f.new", "inside\n")
    quietly(os.rename, "f.new", "f")
    for d, target in (("d", out), ("h", ".git/hooks"), ("big", out + "/secret.txt")):
        quietly(os.rename, d, d + ".real")
        quietly(os.symlink, target, d + ".link")
        quietly(os.rename, d + ".link", d)
        quietly(os.unlink, d)
        quietly(os.rename, d + ".real", d)
    n += 1
    if n == 1:
        put("race.started", "started\n")
put("race.count", "%d\n" % n)
put("race.done", "done\n")
"#;

/// How large `big` is: editing it takes long enough (reading, matching, writing) for a swap to
/// land between an edit's read and its write, as it would with a tool that opened by path.
const BIG_BYTES: usize = 8 << 20;

/// One turn of calls on the swapped paths.
fn calls(round: usize) -> Turn {
    let calls: [(&str, Value); 11] = [
        (
            "edit",
            json!({"path": "big", "old_text": "inside-marker", "new_text": "inside-marker!"}),
        ),
        ("read", json!({"path": "f"})),
        ("read", json!({"path": "d/f"})),
        (
            "write",
            json!({"path": "h/pre-commit", "content": "#!/bin/sh\ntouch pwned\n"}),
        ),
        (
            "write",
            json!({"path": format!("d/new-{}.txt", round % 4), "content": "pwned\n"}),
        ),
        ("write", json!({"path": "f", "content": "inside\n"})),
        (
            "edit",
            json!({"path": "f", "old_text": "inside", "new_text": "inside!"}),
        ),
        (
            "edit",
            json!({"path": "d/f", "old_text": "inside", "new_text": "inside!"}),
        ),
        ("grep", json!({"pattern": "outside.bytes", "path": "d"})),
        ("ls", json!({"path": "d"})),
        ("read", json!({"path": "h/pre-commit"})),
    ];
    let mut turn = Turn::text("Working.");
    for (tool, args) in calls {
        turn = turn.and_tool(tool, args);
    }
    turn
}

fn read(dir: &Path, name: &str) -> String {
    fs::read_to_string(dir.join(name)).unwrap_or_default()
}

#[test]
fn a_swapping_process_left_behind_never_gets_a_file_tool_outside_or_into_git_hooks() {
    let outside = tempfile::tempdir().unwrap();
    // Open to the unprivileged run, so that a tool following a swapped link could read and
    // write here: only the tools' own refusal keeps them out.
    fs::set_permissions(outside.path(), fs::Permissions::from_mode(0o777)).unwrap();
    for name in ["secret.txt", "f"] {
        let path = outside.path().join(name);
        fs::write(&path, format!("{OUTSIDE_BYTES}\n")).unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o666)).unwrap();
    }
    let start = format!(
        "setsid -f python3 race.py '{}' > /dev/null 2>&1 < /dev/null\n\
         for i in $(seq 200); do [ -e race.started ] && break; sleep 0.05; done\n\
         cat race.started",
        outside.path().display()
    );
    let stop = "touch stop\n\
                for i in $(seq 200); do [ -e race.done ] && break; sleep 0.05; done\n\
                echo \"swapper rounds: $(cat race.count)\"";
    let mut turns = vec![
        Turn::tool("write", json!({"path": "race.py", "content": SWAPPER})),
        Turn::tool("bash", json!({"command": start})),
    ];
    turns.extend((0..TURNS).map(calls));
    turns.push(Turn::tool("bash", json!({"command": stop})));
    turns.push(Turn::text("Done."));
    let agent = Script::turns(turns).then_repeat(Turn::text("Done."));
    let e = env(PLAN, agent, rejecting_judge(), "");
    let root = e.path();
    let git = Command::new("git")
        .args(["init", "-q"])
        .current_dir(root)
        .status()
        .unwrap();
    assert!(git.success());
    fs::write(root.join("f"), "inside\n").unwrap();
    fs::create_dir_all(root.join("d")).unwrap();
    fs::write(root.join("d/f"), "inside\n").unwrap();
    fs::create_dir_all(root.join("h")).unwrap();
    let filler = "filler line\n".repeat(BIG_BYTES / 12);
    fs::write(root.join("big"), format!("{filler}inside-marker\n")).unwrap();
    let hooks_before = fs::read_dir(root.join(".git/hooks")).unwrap().count();

    let out = e
        .start(&["run", "--approve", "--max-iterations", "1"])
        .wait();
    // Whatever happened to the run, the swapper stops.
    fs::write(root.join("stop"), "").unwrap();
    wait_until("the swapper to end", PATIENCE, || {
        root.join("race.done").exists().then_some(())
    })
    .unwrap();

    let results = tool_results(&e.agent);
    assert_eq!(
        read(root, "race.started").trim(),
        "started",
        "{}",
        text(&out.stderr)
    );
    let rounds: usize = read(root, "race.count").trim().parse().unwrap_or(0);
    let done = results
        .iter()
        .filter(|r| r.starts_with("wrote ") || r.starts_with("edited ") || r.contains("\tinside"))
        .count();
    assert!(
        rounds > 0 && done > 0 && e.agent.request_count() >= TURNS + 3,
        "the swapper ran ({rounds} rounds) while the tools were called and some calls worked \
         ({done}): {}",
        text(&out.stderr)
    );
    let seen: Vec<&String> = results
        .iter()
        .filter(|r| r.contains(OUTSIDE_BYTES) || r.contains("d/secret.txt"))
        .collect();
    assert!(seen.is_empty(), "a tool showed the outside file: {seen:#?}");
    for name in ["secret.txt", "f"] {
        assert_eq!(
            read(outside.path(), name),
            format!("{OUTSIDE_BYTES}\n"),
            "{name} outside was written"
        );
    }
    assert_eq!(
        fs::read_dir(outside.path()).unwrap().count(),
        2,
        "a file was made outside"
    );
    assert!(
        !root.join(".git/hooks/pre-commit").exists(),
        "a hook was planted"
    );
    assert_eq!(
        fs::read_dir(root.join(".git/hooks")).unwrap().count(),
        hooks_before
    );
}
