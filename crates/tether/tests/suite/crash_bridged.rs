//! What the agent does through the bridge belongs to its run, crash after crash: a goal run of
//! three goals whose `command` agent signs each off with `tether goal complete` and, for the
//! second, asks with `tether ask` (the test answers with `tether answer` from outside), is killed
//! with SIGKILL again and again — at kill points drawn with a fixed seed among its journal's
//! events, and whenever it waits for the question — and resumed each time. It ends done, the
//! plan intact, each goal signed off once, and the question posted once (on ntfy and in the
//! store): the agent asking again after a crash is given the stored answer. The report lists the
//! sign-offs and the question under the run, and `tether history` files the question there.

use std::fs;
use std::path::Path;
use std::process::{Child, Stdio};

use serde_json::json;
use tether_config::Api;
use tether_model::Request;
use tether_model::scripted::{Script, Turn};
use tether_store::{Event, QuestionStatus, Run, RunStatus, Seq, Store, Verdict};
use tether_testkit::model_server::FakeModelServer;
use tether_testkit::{FakeNtfyServer, wait_until};

use super::goal_run::support::verdict;
use super::secrets::support::Running;
use crate::common::{PATIENCE, cmd, model_table, runtime, text};

/// How many times the run is killed.
const KILLS: usize = 15;

/// The seed of the kill points.
const SEED: u64 = 0x7e7_4e2;

/// The question the agent asks for the second goal.
const QUESTION: &str = "Which word goes in two.txt?";

const TOPIC: &str = "crash-questions";

const PLAN: &str = "# Plan: three files

## Goal: One
<!-- id: one -->
status: active
done_when: one.txt says the one goal is done
verify: grep -q 'the one goal is done' one.txt
failure_modes:
- the file says something else

## Goal: Two
<!-- id: two -->
status: active
done_when: two.txt says the two goal is done, with the word a person chose
verify: grep -q 'the two goal is done' two.txt
failure_modes:
- the word is not the person's

## Goal: Three
<!-- id: three -->
status: active
done_when: three.txt says the three goal is done
verify: grep -q 'the three goal is done' three.txt
failure_modes:
- the file says something else

## Log
";

/// The agent, one program per turn: the first goal the plan does not show done, its file
/// written (for the second, with the word a person picks through `tether ask`), then `tether
/// goal complete` — both through the bridge.
fn agent_script() -> String {
    let tether = env!("CARGO_BIN_EXE_tether");
    format!(
        r#"cat > /dev/null
next=
for g in one two three; do
  if ! awk -v id="$g" '$0 ~ ("<!-- id: " id " -->") {{ on = 1; next }} /^## / {{ on = 0 }} on && /^status: done/ {{ found = 1 }} END {{ exit !found }}' plan.md; then
    next=$g
    break
  fi
done
if [ -z "$next" ]; then echo "every goal is signed off"; exit 0; fi
line="the $next goal is done"
if [ "$next" = two ]; then
  word=$('{tether}' ask '{QUESTION}' --option alpha --option beta) || exit 1
  line="$line ($word)"
fi
echo "$line" > "$next.txt"
'{tether}' goal complete "$next" --evidence "EVIDENCE-$next: $next.txt says: $line" --path "$next.txt" > /dev/null 2>&1
echo "worked on $next"
"#
    )
}

/// The judge: reads the goal's file (named by the agent's evidence), then accepts quoting it.
fn judge(root: &Path) -> Script {
    let root = root.to_owned();
    Script::from_fn(move |req: &Request| {
        let said = serde_json::to_string(req).unwrap_or_default();
        let goal = ["one", "two", "three"]
            .into_iter()
            .find(|g| said.contains(&format!("EVIDENCE-{g}")))
            .unwrap_or("one");
        let file = format!("{goal}.txt");
        match req.last_tool_result() {
            None => Turn::tool("read", json!({"path": file})),
            Some(_) => {
                let line = fs::read_to_string(root.join(&file)).unwrap_or_default();
                verdict("accept", &file, line.trim(), &[])
            }
        }
    })
}

/// A small generator with a fixed seed (xorshift), for the kill points.
struct Draws(u64);

impl Draws {
    /// A number in `1..=max`.
    fn next(&mut self, max: u64) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        usize::try_from(self.0 % max + 1).unwrap()
    }
}

/// The workspace's store, once it exists.
fn store(root: &Path) -> Option<Store> {
    let db = root.join(".tether/tether.db");
    db.exists().then(|| Store::open(&db).ok()).flatten()
}

fn latest(store: &Store) -> Option<Run> {
    store.latest_run().ok().flatten()
}

/// How many events the run has recorded.
fn recorded(root: &Path) -> usize {
    store(root)
        .and_then(|s| {
            let run = latest(&s)?;
            s.events(&run.id, Seq(0), usize::MAX).ok().map(|e| e.len())
        })
        .unwrap_or(0)
}

/// The question, while it waits for an answer, and whether ntfy recorded its push.
fn waiting(root: &Path) -> Option<(String, bool)> {
    let store = store(root)?;
    let q = store
        .pending_questions()
        .ok()?
        .into_iter()
        .find(|q| q.question == QUESTION)?;
    let pushed = store
        .posts(&q.id)
        .is_ok_and(|posts| posts.iter().any(|p| p.channel == "ntfy"));
    Some((q.id.to_string(), pushed))
}

/// Answers the question from outside, when it waits.
fn answer_if_waiting(root: &Path) {
    if let Some((id, _)) = waiting(root) {
        let out = cmd(root, &["answer", &id, "alpha"]).output().unwrap();
        assert!(
            out.status.success() || text(&out.stderr).contains("already answered"),
            "{}",
            text(&out.stderr)
        );
    }
}

fn tether(root: &Path, args: &[&str]) -> Child {
    cmd(root, args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

#[test]
fn killed_again_and_again_the_bridged_work_stays_the_runs_and_the_question_is_posted_once() {
    let rt = runtime();
    let ntfy = rt.block_on(FakeNtfyServer::start()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let judge = rt.block_on(FakeModelServer::start(judge(root))).unwrap();
    fs::write(root.join("plan.md"), PLAN).unwrap();
    fs::write(root.join("agent.sh"), agent_script()).unwrap();
    fs::write(
        root.join("tether.toml"),
        format!(
            "[executor]\nkind = \"command\"\ncommand = [\"sh\", \"agent.sh\"]\n\n{}\n\
             [human]\nchannels = [\"ntfy\"]\n\n[ntfy]\nserver = \"{}\"\ntopic = \"{TOPIC}\"\n",
            model_table("judge", Api::OpenAiChat, &judge, "judge-model"),
            ntfy.url()
        ),
    )
    .unwrap();

    let mut draws = Draws(SEED);
    let mut kills = 0;
    while kills < KILLS && !latest_is(root, RunStatus::Completed) {
        answer_if_waiting(root);
        let target = recorded(root) + draws.next(3);
        let mut child = if kills == 0 {
            tether(root, &["run", "--approve", "--max-iterations", "60"])
        } else {
            tether(root, &["resume"])
        };
        // The kill point: the drawn event, or the question waiting (its push recorded: a kill
        // between ntfy's push and its record would push it again, at least once by design).
        wait_until("a kill point", PATIENCE, || {
            let ended = child.try_wait().unwrap().is_some();
            let at_target = recorded(root) >= target;
            let question = waiting(root);
            let settled = question.as_ref().is_none_or(|(_, pushed)| *pushed);
            (ended || (settled && (at_target || question.is_some()))).then_some(())
        })
        .unwrap();
        let _ = child.kill();
        child.wait().unwrap();
        kills += 1;
    }
    // The last resume runs to the end; the question is answered if it waits.
    let resumed = if latest_is(root, RunStatus::Completed) {
        None
    } else {
        let mut resume = cmd(root, &["resume"]);
        resume.stdin(Stdio::null());
        let running = Running::start(resume);
        wait_until("the run to end", PATIENCE, || {
            answer_if_waiting(root);
            latest_is_ended(root).then_some(())
        })
        .unwrap();
        Some(running.wait())
    };
    let said = resumed
        .as_ref()
        .map(|o| format!("{}{}", text(&o.stdout), text(&o.stderr)))
        .unwrap_or_default();

    let store = store(root).unwrap();
    let run = latest(&store).unwrap();
    assert_eq!(
        run.state.status,
        RunStatus::Completed,
        "{kills} kills: {said}"
    );
    assert!(kills >= 10, "killed {kills} times");
    // The plan: every goal done, signed off once.
    let plan = fs::read_to_string(root.join("plan.md")).unwrap();
    let doc = tether_plan::PlanDoc::parse("plan.md", &plan);
    for goal in ["one", "two", "three"] {
        let g = doc.plan().goal(goal).unwrap();
        assert_eq!(g.status().as_str(), "done", "{goal}: {plan}");
        // Never twice (a kill between a sign-off's two patches, the status then the log line,
        // may leave the line out).
        assert!(
            plan.matches(&format!("{goal} signed off")).count() <= 1,
            "{plan}"
        );
        let verdicts = store.verdicts_for_goal("plan.md", goal).unwrap();
        let accepted: Vec<_> = verdicts
            .iter()
            .filter(|v| v.decision.verdict == Verdict::Accept)
            .collect();
        assert_eq!(accepted.len(), 1, "{goal}: {verdicts:#?}");
        // Claimed through the bridge, filed under the run.
        assert_eq!(
            accepted[0].decision.run_id.as_ref(),
            Some(&run.id),
            "{goal}"
        );
    }
    assert!(plan.contains("# Plan: three files") && plan.contains("## Log"));
    // The question: asked once, answered once, posted once; the repeats given back.
    let asked: Vec<_> = store
        .questions_for_run(&run.id)
        .unwrap()
        .into_iter()
        .filter(|q| q.question == QUESTION)
        .collect();
    assert_eq!(asked.len(), 1, "{asked:#?}");
    assert_eq!(asked[0].status, QuestionStatus::Answered);
    assert_eq!(asked[0].answer.as_deref(), Some("alpha"));
    assert!(
        fs::read_to_string(root.join("two.txt"))
            .unwrap()
            .contains("(alpha)")
    );
    let pushes = ntfy
        .messages(TOPIC)
        .into_iter()
        .filter(|m| {
            m["message"]
                .as_str()
                .is_some_and(|t| t.starts_with(QUESTION))
        })
        .count();
    assert_eq!(pushes, 1, "{:#?}", ntfy.messages(TOPIC));
    let events = store.events(&run.id, Seq(0), usize::MAX).unwrap();
    let repeated = events
        .iter()
        .filter(|e| matches!(e.event, Some(Event::QuestionRepeated { .. })))
        .count();
    assert!(
        repeated >= 1,
        "the agent asked again after a crash at least once"
    );
    // The report and the history show them under the run.
    let report = text(&cmd(root, &["report"]).output().unwrap().stdout);
    for goal in ["one", "two", "three"] {
        assert!(report.contains(&format!("### {goal}: accept")), "{report}");
    }
    assert!(!report.contains("No sign-off was attempted"), "{report}");
    assert!(
        report.contains(&format!("- {QUESTION} → **alpha** (tester via cli)")),
        "{report}"
    );
    let history = text(&cmd(root, &["history"]).output().unwrap().stdout);
    assert!(
        history.contains(&format!("[run {}]: {QUESTION}", run.id)),
        "{history}"
    );
}

fn latest_is(root: &Path, status: RunStatus) -> bool {
    store(root)
        .and_then(|s| latest(&s))
        .is_some_and(|r| r.state.status == status)
}

/// Whether the latest run stopped (for good, or for a person).
fn latest_is_ended(root: &Path) -> bool {
    store(root)
        .and_then(|s| latest(&s))
        .is_some_and(|r| r.state.status.is_stopped())
}
