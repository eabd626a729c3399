//! What `tether demo` tells around its run: what it is, what happened event by event, and how
//! it ended — the demo's narration, as text any front end shows.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use tether_config::Workspace;
use tether_core::goal::GoalEnd;
use tether_store::{Event, RunId, Seq, Store, StoreError, Verdict};

use super::PLAN_FILE;

/// Appends a line to the text being told (writing to a `String` cannot fail).
macro_rules! say {
    ($out:expr, $($arg:tt)*) => {{
        let _ = writeln!($out, $($arg)*);
    }};
}

/// What the demo is, said before it runs (`terminal`: a person answers its question there).
pub fn intro(dir: &Path, terminal: bool) -> String {
    let mut out = String::new();
    say!(
        out,
        "tether demo — a goal loop in a fresh workspace: {}",
        dir.display()
    );
    say!(
        out,
        "The agent and the judge are SCRIPTED models (no AI is called): they answer from fixed \
         lists. The files, the tools, the question, the verify command, the judge's quote check, \
         the loop, the store and the transcripts are real.\n"
    );
    say!(
        out,
        "plan.md has one goal, `greet`: `sh greet.sh NAME` prints `Hello, NAME!`; verify: sh \
         test.sh. Its contract is approved."
    );
    if terminal {
        say!(
            out,
            "The agent will ask you one question on this terminal (any answer works: the script \
             does not read it; --yes answers for you).\n"
        );
    } else {
        say!(
            out,
            "The agent's one question is answered automatically (--yes, or no terminal).\n"
        );
    }
    out
}

/// What happened in the demo's `run`, event by event.
pub fn timeline(store: &Store, run: &RunId) -> Result<String, StoreError> {
    let mut out = String::new();
    for e in store.events(run, Seq(0), usize::MAX)? {
        match e.event {
            Some(Event::IterationStarted { n }) => say!(out, "iteration {n}"),
            Some(Event::ToolCalled { summary, .. }) => say!(out, "  tool     {summary}"),
            Some(Event::QuestionAsked { question_id }) => {
                let q = store.question(&question_id)?;
                say!(out, "  asked    {}", q.question);
            }
            Some(Event::QuestionAnswered { question_id, .. }) => {
                let q = store.question(&question_id)?;
                let who = q.responder.unwrap_or_default();
                say!(out, "  answer   {} — {who}", q.answer.unwrap_or_default());
            }
            Some(Event::GoalVerdict {
                goal_id,
                verdict,
                reason,
            }) => say!(out, "  sign-off {goal_id}: {} — {reason}", verdict.as_str()),
            Some(Event::RuleFired { rule, reason }) => {
                say!(out, "  rule     {rule}: {reason}");
            }
            Some(Event::IterationCompleted { summary, .. }) => {
                say!(out, "  said     {summary}");
            }
            Some(Event::IterationFailed { error, .. }) => say!(out, "  failed   {error}"),
            _ => {}
        }
    }
    Ok(out)
}

/// How the demo's `run` in `ws` ended, its sign-off attempts, and where to look next; whether
/// the goal was signed off.
pub fn summary(
    ws: &Workspace,
    store: &Store,
    run: &RunId,
    end: &GoalEnd,
) -> Result<(String, bool), StoreError> {
    let mut out = String::from("\n");
    let signed_off = match end {
        GoalEnd::AllDone { iteration, .. } => {
            say!(
                out,
                "The goal `greet` was signed off in iteration {iteration}."
            );
            true
        }
        GoalEnd::Stopped(stopped) => {
            say!(out, "The run ended without the sign-off: {stopped:?}");
            false
        }
        other => {
            say!(out, "The run ended without the sign-off: {other:?}");
            false
        }
    };
    for v in store.verdicts_for_goal(PLAN_FILE, "greet")? {
        let d = &v.decision;
        let judge = d.judge_model.as_deref().unwrap_or("no judge");
        say!(
            out,
            "  attempt {}: {} (verify exit {}, {judge})",
            d.attempt,
            d.verdict.as_str(),
            d.verify_exit
                .map_or_else(|| "-".to_owned(), |c| c.to_string()),
        );
        if d.verdict == Verdict::Accept
            && let Some(checks) = d.checks.as_array()
        {
            for c in checks {
                say!(
                    out,
                    "    cited {}: {}   (found in the file by tether)",
                    c["path"].as_str().unwrap_or_default(),
                    c["quote"].as_str().unwrap_or_default()
                );
            }
        }
    }
    let greet = std::fs::read_to_string(ws.root().join("greet.sh")).unwrap_or_default();
    let files: PathBuf = ws.runs_dir().join(run.to_string());
    say!(out, "greet.sh is now:  {}", greet.trim());
    say!(
        out,
        "transcripts, verify and judge logs: {}/",
        files.display()
    );
    say!(
        out,
        "look around:      tether -C {} plan   (also: status, history)",
        ws.root().display()
    );
    Ok((out, signed_off))
}
