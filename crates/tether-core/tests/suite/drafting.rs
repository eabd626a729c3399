//! Plan mode's drafting session with the built-in agent on a scripted model, over a real
//! workspace: the agent reads, may write only the plan (checked), is sent back once when its
//! draft is short of the format, and the plan is restored on cancel.

use std::fs;
use std::sync::{Arc, Mutex};

use serde_json::json;
use tether_agent::{AgentEvent, BuiltinAgent, TurnObserver};
use tether_config::Workspace;
use tether_core::planning::{Baseline, Draft, Drafter, PlanRef, PlanTarget, drafting_tools};
use tether_model::scripted::{ScriptedModel, Turn};
use tether_model::{Message, Request};
use tether_testkit::recording_script;
use tokio_util::sync::CancellationToken;

const EXISTING: &str = "# Plan: greet\n\n## Goal: Keep it working\n<!-- id: keep -->\n\
status: active\ndone_when: sh test.sh exits 0\n\n## Log\n- plan started\n";

fn goal(id: &str, modes: usize) -> String {
    let mut g = format!(
        "## Goal: Verbose flag {id}\n<!-- id: {id} -->\nstatus: active\n\
         done_when: `sh greet.sh -v bob` prints a debug line\nverify: sh test.sh\nfailure_modes:\n"
    );
    for i in 0..modes {
        g.push_str(&format!("- failure mode {i}\n"));
    }
    g.push_str("\n- [ ] parse -v\n- [ ] print the line\n\n");
    g
}

/// EXISTING with `goals` inserted before the log.
fn with_goals(goals: &str) -> String {
    EXISTING.replace("## Log\n", &format!("{goals}## Log\n"))
}

#[derive(Default)]
struct Seen(Mutex<Vec<String>>);

impl TurnObserver for Seen {
    fn event(&self, event: AgentEvent) {
        if let AgentEvent::ToolCall { summary, .. } = event {
            self.0.lock().unwrap().push(summary);
        }
    }
}

struct Session {
    dir: tempfile::TempDir,
    drafter: Drafter,
    requests: Arc<Mutex<Vec<Request>>>,
    seen: Seen,
}

fn session(plan: Option<&str>, turns: Vec<Turn>) -> Session {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("greet.sh"), "echo \"Hello, $1!\"\n").unwrap();
    if let Some(text) = plan {
        fs::write(dir.path().join("plan.md"), text).unwrap();
    }
    let ws = Workspace::at(dir.path());
    let plan = PlanRef::new(&ws, &tether_config::Config::default());
    let baseline = Baseline::read(&plan).unwrap();
    let tools = drafting_tools(
        ws.root(),
        PlanTarget {
            plan: plan.clone(),
            baseline: baseline.clone(),
        },
    )
    .unwrap();
    let (script, requests) = recording_script(turns);
    let agent = BuiltinAgent::new(
        Arc::new(ScriptedModel::new(script)),
        tools,
        "scripted".into(),
    )
    .with_system(tether_core::prompts::drafting::SYSTEM);
    let drafter = Drafter::new(
        Arc::new(agent),
        plan,
        baseline,
        ws.state_dir().join("drafts/test"),
        "Add a --verbose flag to greet.sh",
    );
    Session {
        dir,
        drafter,
        requests,
        seen: Seen::default(),
    }
}

impl Session {
    fn plan(&self) -> String {
        fs::read_to_string(self.dir.path().join("plan.md")).unwrap()
    }
    async fn draft(&mut self) -> Draft {
        self.drafter
            .draft(&self.seen, CancellationToken::new())
            .await
            .unwrap()
    }
    /// The tool results the model saw, in order.
    fn tool_results(&self) -> Vec<(String, bool)> {
        let requests = self.requests.lock().unwrap();
        let mut out = Vec::new();
        for r in requests.iter() {
            if let Some(Message::Tool {
                content, is_error, ..
            }) = r.messages.last()
            {
                out.push((content.clone(), *is_error));
            }
        }
        out
    }
    /// The first user message of each turn.
    fn prompts(&self) -> Vec<String> {
        let requests = self.requests.lock().unwrap();
        requests
            .iter()
            .filter(|r| r.messages.len() == 1)
            .map(|r| match &r.messages[0] {
                Message::User { text } => text.clone(),
                other => panic!("{other:?}"),
            })
            .collect()
    }
}

#[tokio::test]
async fn reads_then_writes_the_plan_keeping_what_was_there() {
    let new_plan = with_goals(&goal("verbose", 2));
    let mut s = session(
        Some(EXISTING),
        vec![
            Turn::tool("ls", json!({})),
            Turn::tool("read", json!({"path": "greet.sh"})),
            Turn::tool("write_plan", json!({"content": new_plan})),
            Turn::text("Drafted `verbose`."),
        ],
    );
    let draft = s.draft().await;
    assert_eq!(draft.problems, Vec::<String>::new());
    assert_eq!(draft.new_ids(), ["verbose"]);
    assert_eq!(draft.final_message, "Drafted `verbose`.");
    assert_eq!(s.plan(), new_plan);
    let results = s.tool_results();
    assert!(results[1].0.contains("Hello, $1!"), "{results:?}");
    assert_eq!(
        results[2],
        (
            "wrote plan.md: 2 goal(s): `keep`, `verbose`".to_owned(),
            false
        )
    );
    // The agent was told its job and given only read-only tools and the plan tools.
    let requests = s.requests.lock().unwrap();
    assert_eq!(
        requests[0].system.as_deref(),
        Some(tether_core::prompts::drafting::SYSTEM)
    );
    let tools: Vec<&str> = requests[0].tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(tools, ["read", "grep", "ls", "write_plan", "edit_plan"]);
    drop(requests);
    assert_eq!(s.prompts().len(), 1, "no send-back for a fit draft");
    assert!(
        s.dir
            .path()
            .join(".tether/drafts/test/turn-1.jsonl")
            .is_file()
    );
}

#[tokio::test]
async fn a_broken_plan_is_refused_with_its_problems_and_then_fixed() {
    let broken = with_goals(&goal("verbose", 2).replace("status: active", "status: started"));
    let fixed = with_goals(&goal("verbose", 2));
    let mut s = session(
        Some(EXISTING),
        vec![
            Turn::tool("write_plan", json!({"content": broken})),
            Turn::tool("write_plan", json!({"content": fixed})),
            Turn::text("Fixed the status."),
        ],
    );
    let draft = s.draft().await;
    assert!(draft.problems.is_empty(), "{:?}", draft.problems);
    let results = s.tool_results();
    assert!(results[0].1, "the broken plan is an error result");
    insta::assert_snapshot!(results[0].0, @r"
    nothing was written: the new plan.md would not parse:
    - line 10: `started` is not a status; expected one of open, active, done, cancelled
    Fix these and call the tool again.
    ");
    assert_eq!(s.plan(), fixed);
}

#[tokio::test]
async fn other_files_cannot_be_written_and_nothing_may_be_dropped() {
    let dropped = "# Plan: greet\n\n".to_owned() + &goal("verbose", 2) + "## Log\n";
    let mut s = session(
        Some(EXISTING),
        vec![
            Turn::tool(
                "write",
                json!({"path": "greet.sh", "content": "rm -rf /\n"}),
            ),
            Turn::tool("bash", json!({"command": "touch owned"})),
            Turn::tool(
                "edit",
                json!({"path": "greet.sh", "old_text": "Hello", "new_text": "Bye"}),
            ),
            Turn::tool("write_plan", json!({"content": dropped})),
            Turn::tool(
                "edit_plan",
                json!({"old_text": "## Log\n", "new_text": goal("verbose", 3) + "## Log\n"}),
            ),
            Turn::text("Drafted."),
        ],
    );
    let draft = s.draft().await;
    assert!(draft.problems.is_empty(), "{:?}", draft.problems);
    assert_eq!(
        fs::read_to_string(s.dir.path().join("greet.sh")).unwrap(),
        "echo \"Hello, $1!\"\n"
    );
    assert!(!s.dir.path().join("owned").exists());
    let results = s.tool_results();
    for (i, tool) in ["write", "bash", "edit"].iter().enumerate() {
        assert!(results[i].1);
        assert!(
            results[i].0.starts_with(&format!(
                "`{tool}` is not available while goals are drafted"
            )),
            "{}",
            results[i].0
        );
    }
    assert_eq!(
        results[3],
        (
            "nothing was written: the new plan.md drops what the plan had before: goal `keep`, \
             log entry `plan started`. Keep the existing goals and every log entry as they are, \
             and add your goals."
                .to_owned(),
            true
        )
    );
    assert!(!results[4].1, "{}", results[4].0);
    assert_eq!(s.plan(), with_goals(&goal("verbose", 3)));
    let seen = s.seen.0.lock().unwrap();
    assert_eq!(seen[0], "write: refused (plan mode is read-only)");
}

#[tokio::test]
async fn a_short_draft_is_sent_back_once() {
    let short = with_goals(
        &goal("verbose", 1).replace("done_when: `sh greet.sh -v bob` prints a debug line\n", ""),
    );
    let mut s = session(
        Some(EXISTING),
        vec![
            Turn::tool("write_plan", json!({"content": short})),
            Turn::text("Drafted."),
            Turn::tool(
                "edit_plan",
                json!({"old_text": "status: active\nverify", "new_text": "status: active\ndone_when: it prints\nverify"}),
            ),
            Turn::tool(
                "edit_plan",
                json!({"old_text": "- failure mode 0\n", "new_text": "- failure mode 0\n- verify passes without -v\n"}),
            ),
            Turn::text("Fixed."),
        ],
    );
    let draft = s.draft().await;
    assert!(draft.problems.is_empty(), "{:?}", draft.problems);
    let prompts = s.prompts();
    assert_eq!(prompts.len(), 2);
    let back = prompts[1].split("\n---\n").nth(1).unwrap();
    insta::assert_snapshot!(back, @r"
    An earlier attempt at this left the plan short of the format:
    - goal `verbose` (line 8) has no `done_when:` line
    - goal `verbose` (line 8) has 1 failure mode; give 2 or 3 under `failure_modes:`
    Fix these in the plan file, then answer with the goals you drafted.
    ");

    // Only once: a draft still short after the send-back is returned with its problems.
    let mut s = session(Some(EXISTING), vec![Turn::text("I drafted nothing.")]);
    let draft = s.draft().await;
    assert_eq!(s.prompts().len(), 2);
    assert_eq!(
        draft.problems,
        ["plan.md has no new goal; add at least one `## Goal:` section for the objective"]
    );
    assert_eq!(s.plan(), EXISTING);
}

#[tokio::test]
async fn a_new_plan_gets_ids_and_cancel_removes_it() {
    let text = "# Plan: greet\n\n".to_owned()
        + &goal("x", 2)
            .replace("<!-- id: x -->\n", "")
            .replace("Verbose flag x", "Verbose flag")
        + "## Log\n";
    let mut s = session(
        None,
        vec![
            Turn::tool("write_plan", json!({"content": text})),
            Turn::text("ok"),
        ],
    );
    assert!(s.prompts().is_empty());
    let draft = s.draft().await;
    assert!(s.prompts()[0].contains("plan.md does not exist yet"));
    assert!(draft.problems.is_empty(), "{:?}", draft.problems);
    assert_eq!(draft.new_ids(), ["verbose-flag"]);
    assert_eq!(draft.assigned.len(), 1);
    assert!(
        s.plan()
            .contains("## Goal: Verbose flag\n<!-- id: verbose-flag -->\n")
    );
    s.drafter.restore().unwrap();
    assert!(!s.dir.path().join("plan.md").exists());
}

#[tokio::test]
async fn a_revision_goes_back_with_the_request_and_cancel_restores() {
    let mut s = session(
        Some(EXISTING),
        vec![
            Turn::tool(
                "write_plan",
                json!({"content": with_goals(&goal("verbose", 2))}),
            ),
            Turn::text("Drafted."),
            Turn::tool(
                "write_plan",
                json!({"content": with_goals(&(goal("verbose", 2) + &goal("docs", 2)))}),
            ),
            Turn::text("Split."),
        ],
    );
    s.draft().await;
    let draft = s
        .drafter
        .revise(
            "Split the README work into its own goal.",
            &s.seen,
            CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(draft.new_ids(), ["verbose", "docs"]);
    let prompts = s.prompts();
    assert!(prompts[1].contains("The goals you drafted: `verbose`."));
    assert!(prompts[1].contains("\nSplit the README work into its own goal.\n"));

    // A hand edit is checked without the agent.
    fs::write(
        s.dir.path().join("plan.md"),
        with_goals(&goal("verbose", 0)),
    )
    .unwrap();
    let draft = s.drafter.current().unwrap();
    assert_eq!(draft.problems.len(), 1, "{:?}", draft.problems);

    s.drafter.restore().unwrap();
    assert_eq!(s.plan(), EXISTING);
}

#[test]
fn drafting_starts_only_from_a_plan_that_parses() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("plan.md"),
        EXISTING.replace("active", "later"),
    )
    .unwrap();
    let plan = PlanRef::new(
        &Workspace::at(dir.path()),
        &tether_config::Config::default(),
    );
    let err = Baseline::read(&plan).unwrap_err();
    assert!(
        err.to_string()
            .contains("plan.md:5: `later` is not a status"),
        "{err}"
    );
}
