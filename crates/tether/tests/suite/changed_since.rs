//! "Changed by this run" means changed since the run began, in every kind of workspace people
//! start in: a repository with commits, one with no commit yet, a directory that is no
//! repository, and a dirty tree. The agent's honest one-line fix (`echo $(($1 + $2))`, too
//! short to count unless the run changed it) is signed off on that line in each; a judge
//! quoting only a trivial line the person changed before the run (`fi`) is refused. And a
//! sparse file of several GiB is left out of the snapshots (named to the judge) instead of
//! being hashed. The agent and the judge are scripted on their own fake model servers.

use std::fs;

use serde_json::json;
use tether_model::scripted::{Script, Turn};
use tether_store::Verdict;

use super::goal_run::support::{Env, env, verdict};
use crate::common::{sh, text};

const PLAN: &str = "# Plan: calc

## Goal: Add numbers
<!-- id: add -->
status: active
done_when: `sh calc.sh 2 3` prints 5
verify: test \"$(sh calc.sh 2 3)\" = 5
failure_modes:
- calc.sh prints 5 whatever it is given

## Log
";

/// `calc.sh` before the run: it subtracts.
const CALC: &str = "#!/bin/sh\nif [ \"$#\" -ne 2 ]; then\n  exit 2\n  fi\necho $(($1 - $2))\n";

const COMMIT: &str =
    "git add -A && git -c user.name=Ana -c user.email=ana@example.com commit -qm start";

/// A workspace with `calc.sh`, made into `kind` by `setup`; the agent fixes `calc.sh` and asks
/// for the sign-off; the judge accepts quoting `quote` of `calc.sh`.
fn workspace(setup: &str, quote: &str) -> Env {
    let agent = Script::turns([
        Turn::tool(
            "edit",
            json!({"path": "calc.sh", "old_text": "$1 - $2", "new_text": "$1 + $2"}),
        ),
        Turn::tool(
            "complete_goal",
            json!({"id": "add", "evidence": "calc.sh adds", "paths": ["calc.sh"]}),
        ),
        Turn::text("Fixed calc.sh."),
    ]);
    let judge = Script::turns([
        Turn::tool("read", json!({"path": "calc.sh"})),
        verdict("accept", "calc.sh", quote, &[]),
    ]);
    let e = env(PLAN, agent, judge, "");
    fs::write(e.path().join("calc.sh"), CALC).unwrap();
    fs::write(e.path().join(".gitignore"), ".tether/\n").unwrap();
    sh(e.path(), setup);
    e
}

/// What the judge was first asked.
fn judge_request(e: &Env) -> String {
    e.judge.requests()[0].raw_body.clone()
}

#[test]
fn the_honest_one_line_fix_is_signed_off_in_every_kind_of_workspace() {
    for (kind, setup) in [
        (
            "a repository with commits",
            format!("git init -q && {COMMIT}"),
        ),
        ("a repository with no commit", "git init -q".to_owned()),
        ("a directory that is no repository", "true".to_owned()),
    ] {
        let e = workspace(&setup, "echo $(($1 + $2))");
        let out = e.run(&["run", "--approve", "--max-iterations", "2"]);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{kind}: {stderr}");
        let [record] = e.verdicts("add").try_into().unwrap();
        assert_eq!(
            record.decision.verdict,
            Verdict::Accept,
            "{kind}: {}",
            record.decision.reason
        );
        let asked = judge_request(&e);
        assert!(
            asked.contains("## Lines changed since the run began")
                && asked.contains("- calc.sh: line 5"),
            "{kind}: {asked}"
        );
    }
}

#[test]
fn a_trivial_line_the_person_changed_before_the_run_backs_no_accept() {
    // Committed with `  fi`, then the person's own edit, before the run: `fi`.
    let setup = format!("git init -q && {COMMIT} && sed -i 's/^  fi$/fi/' calc.sh");
    let e = workspace(&setup, "fi");
    let out = e.run(&["run", "--approve", "--max-iterations", "1"]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    let [record] = e.verdicts("add").try_into().unwrap();
    assert_eq!(record.decision.verdict, Verdict::Reject);
    let reason = &record.decision.reason;
    assert!(
        reason.contains(
            "the quote \"fi\" of `calc.sh` does not count: line 4 was not changed by this run"
        ) && reason.contains("quote the lines this run changed (calc.sh line 5)"),
        "{reason}"
    );
}

#[test]
fn a_sparse_file_of_gigabytes_is_left_out_of_the_snapshots_and_named() {
    let e = workspace(&format!("git init -q && {COMMIT}"), "echo $(($1 + $2))");
    let big = fs::File::create(e.path().join("disk.img")).unwrap();
    big.set_len(6 << 30).unwrap();
    let out = e.run(&["run", "--approve", "--max-iterations", "2"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let asked = judge_request(&e);
    assert!(
        asked.contains("disk.img (6144 MiB, over the 16 MiB a snapshot holds)"),
        "{asked}"
    );
    assert_eq!(e.verdicts("add")[0].decision.verdict, Verdict::Accept);
}
