//! What `tether demo` runs: a tiny shell project with a plan of one goal, and the scripted
//! models' parts — the agent's and the judge's.
//!
//! The models are scripted — they answer from the lists below, not from any AI — but everything
//! else is real: the files, the tools (the agent really writes, runs and edits), the question to
//! a human, the verify command, the judge's read of the file and tether's check of its quote, the
//! goal loop, the store and the transcripts. The agent writes a greeting with a bug and asks for
//! the sign-off; verify fails, so the judge is not even asked. Next iteration it runs the test,
//! asks a human one question, fixes the bug, ticks the subtask and asks again; verify passes, the
//! judge reads the file and cites the line, and the goal is signed off.

use serde_json::json;
use tether_model::scripted::{Script, Turn};

/// The plan file's content.
pub const PLAN: &str = "# Plan: a friendly greeting

## Goal: Greet by name
<!-- id: greet -->
status: active
done_when: `sh greet.sh NAME` prints `Hello, NAME!` and `sh test.sh` passes
verify: sh test.sh
failure_modes:
- test.sh is edited to pass without checking the output
- greet.sh hard-codes World instead of using its argument

- [ ] write greet.sh

## Log
";

/// The project's files before the run starts.
pub const FILES: [(&str, &str); 3] = [
    (
        "TODO.md",
        "# greet\n\n`sh greet.sh NAME` prints `Hello, NAME!`. `sh test.sh` checks it.\n",
    ),
    (
        "test.sh",
        "out=$(sh greet.sh World)\n\
         if [ \"$out\" = \"Hello, World!\" ]; then echo \"ok: $out\"\n\
         else echo \"FAIL: expected 'Hello, World!', got '$out'\"; exit 1; fi\n",
    ),
    ("plan.md", PLAN),
];

/// The question the agent asks.
pub const QUESTION: &str = "TODO.md and test.sh both want `Hello, NAME!` (comma, exclamation \
    mark). Shall I make greet.sh print exactly that, or keep the shorter `Hello NAME`?";

/// The answer given for the human with `--yes` (or without a terminal).
pub const AUTO_ANSWER: &str = "Yes: exactly `Hello, NAME!`, as TODO.md says.";

/// The line the judge quotes from greet.sh.
pub const QUOTED: &str = "echo \"Hello, $1!\"";

/// The agent's scripted answers, in order, across the run's two iterations.
pub fn agent() -> Script {
    Script::turns([
        // Iteration 1: look around, write a first (wrong) version, ask for the sign-off.
        Turn::tool("ls", json!({})),
        Turn::tool("read", json!({"path": "TODO.md"})),
        Turn::tool(
            "write",
            json!({"path": "greet.sh", "content": "echo \"Hello $1\"\n"}),
        ),
        Turn::tool(
            "complete_goal",
            json!({"id": "greet", "evidence": "wrote greet.sh", "paths": ["greet.sh"]}),
        ),
        Turn::text("Wrote greet.sh, but the sign-off was rejected: test.sh fails. Fixing next."),
        // Iteration 2: see the failure, ask, fix, tick the subtask, sign off.
        Turn::tool("bash", json!({"command": "sh test.sh"})),
        Turn::tool(
            "ask_human",
            json!({"question": QUESTION, "context": "test.sh: FAIL: expected 'Hello, World!', got 'Hello World'", "confidence": 30}),
        ),
        Turn::tool(
            "edit",
            json!({"path": "greet.sh", "old_text": "echo \"Hello $1\"", "new_text": QUOTED}),
        ),
        Turn::tool("bash", json!({"command": "sh test.sh"})),
        Turn::tool(
            "edit",
            json!({"path": "plan.md", "old_text": "- [ ] write greet.sh", "new_text": "- [x] write greet.sh"}),
        ),
        Turn::tool(
            "complete_goal",
            json!({"id": "greet", "evidence": "sh test.sh prints: ok: Hello, World!", "paths": ["greet.sh", "test.sh"]}),
        ),
        Turn::text("greet.sh prints the greeting the human confirmed; the goal is signed off."),
    ])
}

/// The judge's scripted answers: it reads greet.sh and test.sh, then cites a line of greet.sh.
pub fn judge() -> Script {
    let verdict = json!({
        "verdict": "accept",
        "summary": "greet.sh prints Hello, NAME! from its argument and test.sh checks the output",
        "checks": [
            {"path": "greet.sh", "quote": QUOTED, "observation": "uses its argument, with the comma and the exclamation mark"},
            {"path": "test.sh", "quote": "if [ \"$out\" = \"Hello, World!\" ]; then echo \"ok: $out\"", "observation": "the test compares the real output"}
        ],
        "missing": []
    });
    Script::turns([
        Turn::tool("read", json!({"path": "greet.sh"})),
        Turn::tool("read", json!({"path": "test.sh"})),
        Turn::text(format!(
            "Both failure modes are ruled out: test.sh is unchanged and compares the output, and \
             greet.sh uses $1.\n```json\n{verdict}\n```"
        )),
    ])
}
