//! The scripted task of the cost benchmark: a small Python module with two bugs and one missing
//! behaviour, fixed by an agent whose every step is scripted, in `turns` turns of which eight
//! are the work and the rest read the project's notes.
//!
//! The work, turn by turn: read `stats.py`; run the tests; fix `mean`; claim the goal done
//! (premature: a test still fails); run the tests; fix `median`; claim it done (premature: the
//! tests pass but `median([])` does not raise `ValueError`); add the check and claim it done.
//! A turn is one call of a tool (two in the last) and a sentence that ends the agent's turn, so a
//! loop that judges every turn judges each of them. Where a claim is a tool call (tether's
//! `complete_goal`), its answer comes back at once, and after a claim turned down the agent goes
//! on with the next step in the same turn, as an agent holding the reason does; where a claim is
//! the end of a turn (`/goal`), the next turn starts from the evaluator's reason.
//!
//! The same steps are played whoever drives the agent: tether's goal loop (the claim is a
//! `complete_goal` call), or Claude Code's own `/goal` (the claim is the turn's last sentence,
//! and its evaluator decides). An agent starting with a fresh context re-reads `stats.py` before
//! its step, as a real agent re-reads what it works on; one that kept its context does not.

use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tether_model::scripted::Turn;
use tether_model::{Message, Request};

/// The module as the run finds it.
pub const STATS: &str = r#""""Small statistics helpers for the report generator."""


def mean(xs):
    """The arithmetic mean of xs."""
    return sum(xs) // len(xs)


def median(xs):
    """The middle value of xs (the mean of the two middle values for an even count)."""
    ordered = sorted(xs)
    return ordered[len(ordered) // 2]


def spread(xs):
    """The difference between the largest and the smallest value of xs."""
    return max(xs) - min(xs)


def clamp(x, low, high):
    """x, held between low and high."""
    return max(low, min(x, high))
"#;

/// The tests the verify command runs.
pub const TESTS: &str = r#"import unittest

from stats import clamp, mean, median, spread


class Stats(unittest.TestCase):
    def test_mean(self):
        self.assertEqual(mean([1, 2]), 1.5)

    def test_median_odd(self):
        self.assertEqual(median([3, 1, 2]), 2)

    def test_median_even(self):
        self.assertEqual(median([4, 1, 3, 2]), 2.5)

    def test_spread(self):
        self.assertEqual(spread([4, 1, 3]), 3)

    def test_clamp(self):
        self.assertEqual(clamp(7, 0, 5), 5)


if __name__ == "__main__":
    unittest.main()
"#;

/// What the goal asks, as `/goal`'s condition and the plan's `done_when`.
pub const CONDITION: &str = "`python3 -m unittest -q test_stats` passes, mean and median are \
                             correct, and median of an empty list raises ValueError";

/// The plan of tether's runs.
pub fn plan() -> String {
    format!(
        "# Plan: statistics\n\n## Goal: Correct statistics\n<!-- id: stats -->\nstatus: active\n\
         done_when: {CONDITION}\nverify: python3 -m unittest -q test_stats\nfailure_modes:\n\
         - median of an empty list raises IndexError\n- a test is weakened\n\n## Log\n"
    )
}

/// One of the project's notes, read by a padding turn: a page of prose of `index`'s own.
fn note(index: usize) -> String {
    let mut text = format!("# Note {index}: how the report generator uses the statistics\n\n");
    for line in 0..18 {
        text.push_str(&format!(
            "Paragraph {line} of note {index}: the generator groups the measurements by day, \
             calls the helpers of stats.py on each group, and prints one row per group.\n"
        ));
    }
    text
}

/// Writes the project into `dir` (already a workspace of its own): the module, its tests and
/// one note per padding turn.
pub fn write_project(dir: &Path, turns: usize) {
    std::fs::write(dir.join("stats.py"), STATS).unwrap();
    std::fs::write(dir.join("test_stats.py"), TESTS).unwrap();
    std::fs::create_dir_all(dir.join("notes")).unwrap();
    for index in 0..padding(turns) {
        std::fs::write(dir.join(format!("notes/note-{index}.md")), note(index)).unwrap();
    }
}

/// The turns of the work itself.
pub const WORK_TURNS: usize = 8;

/// The padding turns of a task of `turns` turns.
fn padding(turns: usize) -> usize {
    turns.saturating_sub(WORK_TURNS)
}

/// One tool call of a step, in terms every agent has.
#[derive(Debug, Clone)]
enum Action {
    Read(String),
    Test,
    Edit {
        old: &'static str,
        new: &'static str,
    },
    Claim,
}

const MEAN_OLD: &str = "return sum(xs) // len(xs)";
const MEAN_NEW: &str = "return sum(xs) / len(xs)";
const MEDIAN_OLD: &str = "    ordered = sorted(xs)\n    return ordered[len(ordered) // 2]";
const MEDIAN_NEW: &str = "    ordered = sorted(xs)\n    mid = len(ordered) // 2\n    \
                          if len(ordered) % 2 == 0:\n        \
                          return (ordered[mid - 1] + ordered[mid]) / 2\n    return ordered[mid]";
const EMPTY_OLD: &str = "    ordered = sorted(xs)\n    mid";
const EMPTY_NEW: &str = "    if not xs:\n        raise ValueError(\"median of an empty list\")\n    \
                         ordered = sorted(xs)\n    mid";
/// The line the judge quotes when it accepts.
pub const EMPTY_CHECK: &str = "        raise ValueError(\"median of an empty list\")";

/// The tool calls of turn `step` of a task of `turns` turns.
fn actions(step: usize, turns: usize) -> Vec<Action> {
    let pad = padding(turns);
    let stats = || Action::Read("stats.py".to_owned());
    match step {
        0 => vec![stats()],
        1 => vec![Action::Test],
        s if s < 2 + pad => vec![Action::Read(format!("notes/note-{}.md", s - 2))],
        s => match s - pad {
            2 => vec![Action::Edit {
                old: MEAN_OLD,
                new: MEAN_NEW,
            }],
            3 | 6 => vec![Action::Claim],
            4 => vec![Action::Test],
            5 => vec![Action::Edit {
                old: MEDIAN_OLD,
                new: MEDIAN_NEW,
            }],
            _ => vec![
                Action::Edit {
                    old: EMPTY_OLD,
                    new: EMPTY_NEW,
                },
                Action::Claim,
            ],
        },
    }
}

/// Whether turn `step` is the last of the task.
fn is_last(step: usize, turns: usize) -> bool {
    step + 1 >= padding(turns) + WORK_TURNS
}

/// How an agent names its tools and how it claims a goal done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agent {
    /// tether's built-in agent: `read`, `bash`, `edit`, `complete_goal`.
    Builtin,
    /// Claude Code under tether: `Read`, `Bash`, `Edit`, and tether's `complete_goal` over MCP.
    ClaudeTether,
    /// Claude Code's own `/goal`: a claim is the turn's closing sentence.
    ClaudeGoal,
}

/// The workspace's absolute path, for Claude Code's tools.
fn absolute(dir: &Path, path: &str) -> String {
    dir.join(path).display().to_string()
}

impl Agent {
    /// The call of `action` (`None`: a claim this agent makes in words).
    fn call(self, dir: &Path, action: &Action) -> Option<Turn> {
        let claude = self != Agent::Builtin;
        Some(match action {
            Action::Read(path) if claude => {
                Turn::tool("Read", json!({"file_path": absolute(dir, path)}))
            }
            Action::Read(path) => Turn::tool("read", json!({"path": path})),
            Action::Test => Turn::tool(
                if claude { "Bash" } else { "bash" },
                json!({"command": "python3 -m unittest -q test_stats", "description": "Run the tests"}),
            ),
            Action::Edit { old, new } if claude => Turn::tool(
                "Edit",
                json!({"file_path": absolute(dir, "stats.py"), "old_string": old, "new_string": new}),
            ),
            Action::Edit { old, new } => Turn::tool(
                "edit",
                json!({"path": "stats.py", "old_text": old, "new_text": new}),
            ),
            Action::Claim if self == Agent::ClaudeGoal => return None,
            Action::Claim => Turn::tool(
                "complete_goal",
                json!({"id": "stats", "evidence": "the tests pass and median checks for an empty list",
                       "paths": ["stats.py"]}),
            ),
        })
    }
}

/// What the scripted agent has done so far, shared with the benchmark.
#[derive(Debug, Default)]
pub struct Progress {
    /// The turn the agent is on.
    pub step: usize,
    /// Re-reads made by agents that started with a fresh context.
    pub rereads: usize,
}

/// The scripted agent of a task of `turns` turns in `dir`, playing `agent`.
pub fn agent_script(
    agent: Agent,
    dir: &Path,
    turns: usize,
    progress: Arc<Mutex<Progress>>,
) -> impl FnMut(&Request) -> Turn + Send + 'static {
    let dir = dir.to_path_buf();
    move |request: &Request| {
        if is_evaluator(request) {
            return evaluate(request);
        }
        let mut progress = progress.lock().unwrap();
        next_agent_turn(agent, &dir, turns, &mut progress, request)
    }
}

fn next_agent_turn(
    agent: Agent,
    dir: &Path,
    turns: usize,
    progress: &mut Progress,
    request: &Request,
) -> Turn {
    let step = progress.step;
    let started = turn_start(request);
    let fresh = !request.messages[..started]
        .iter()
        .any(|m| matches!(m, Message::Assistant { .. }));
    let mut planned = Vec::new();
    if fresh && step > 0 {
        planned.push(Action::Read("stats.py".to_owned()));
    }
    // A claim tether turns down comes back as the tool's result, and the agent goes on with
    // the next step in the same turn; `/goal` hears of it only after the turn ends.
    let mut steps = vec![step];
    if agent != Agent::ClaudeGoal && is_claim(step, turns) && !is_last(step, turns) {
        steps.push(step + 1);
    }
    planned.extend(steps.iter().flat_map(|&s| actions(s, turns)));
    let done = request.messages[started..]
        .iter()
        .filter(|m| matches!(m, Message::Tool { .. }))
        .count();
    if done == 1 && fresh && step > 0 {
        progress.rereads += 1;
    }
    match planned.get(done).and_then(|action| agent.call(dir, action)) {
        Some(turn) if step < padding(turns) + WORK_TURNS => turn,
        _ => {
            progress.step += steps.len();
            let step = steps[steps.len() - 1];
            let last = is_last(step, turns);
            Turn::text(match (agent, last) {
                (Agent::ClaudeGoal, _) if is_claim(step, turns) => {
                    "The tests pass and the goal is met.".to_owned()
                }
                (_, true) => "The goal is met.".to_owned(),
                _ => format!("Step {} done; continuing.", step + 1),
            })
        }
    }
}

/// Whether turn `step` claims the goal done.
fn is_claim(step: usize, turns: usize) -> bool {
    actions(step, turns)
        .iter()
        .any(|a| matches!(a, Action::Claim))
}

/// Where the agent's current turn starts: after the last message of the person (or the loop
/// speaking for them).
fn turn_start(request: &Request) -> usize {
    request
        .messages
        .iter()
        .rposition(|m| matches!(m, Message::User { .. }))
        .map_or(0, |i| i + 1)
}

/// Whether `request` is Claude Code's `/goal` evaluator (its stop-condition hook).
pub fn is_evaluator(request: &Request) -> bool {
    request
        .system
        .as_deref()
        .is_some_and(|s| s.contains("stop-condition hook"))
}

/// `/goal`'s evaluator, deciding from the transcript as it is told to: met once the empty-list
/// check was written and claimed.
fn evaluate(request: &Request) -> Turn {
    let written = request.messages.iter().any(|m| match m {
        Message::Assistant { tool_calls, .. } => tool_calls
            .iter()
            .any(|c| c.raw_arguments.contains("raise ValueError")),
        _ => false,
    });
    let verdict = if written {
        json!({"ok": true, "reason": "the transcript shows the tests pass and the check for an empty list"})
    } else {
        json!({"ok": false, "reason": "the transcript shows no passing test run and no check for an empty list"})
    };
    Turn::text(verdict.to_string())
}

/// tether's judge: reads `stats.py`, then accepts if the empty-list check is there, quoting
/// it, and rejects otherwise.
pub fn judge_script() -> impl FnMut(&Request) -> Turn + Send + 'static {
    |request: &Request| match request.last_tool_result() {
        None => Turn::tool("read", json!({"path": "stats.py"})),
        Some((_, content)) if content.contains("raise ValueError") => Turn::text(verdict(
            json!({"verdict": "accept", "summary": "mean and median are correct; an empty list raises",
                   "checks": [{"path": "stats.py", "quote": EMPTY_CHECK,
                               "observation": "median refuses an empty list"}],
                   "missing": []}),
        )),
        Some(_) => Turn::text(verdict(
            json!({"verdict": "reject", "summary": "median of an empty list raises IndexError",
                   "checks": [], "missing": ["median of an empty list raises ValueError"]}),
        )),
    }
}

fn verdict(value: Value) -> String {
    format!("Read it.\n```json\n{value}\n```")
}
