//! What `tether demo` runs: a tiny shell project and the scripted model's part.
//!
//! The model is scripted — it answers from the list below, not from any AI — but everything
//! else is real: the files, the tools (the agent really writes, runs and edits), the Ralph loop,
//! the store and the transcripts. The script writes a greeting with a bug, watches the test fail
//! in the next iteration, fixes it in the third, sees the test pass, and keeps its promise.

use serde_json::json;
use tether_model::scripted::{Script, Turn};

/// The promise the demo's loop waits for.
pub const PROMISE: &str = "TESTS PASS";

/// The demo's prompt.
pub const PROMPT: &str = "Make `sh test.sh` pass: write greet.sh as TODO.md describes.";

/// The project's files before the loop starts.
pub const FILES: [(&str, &str); 2] = [
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
];

/// The scripted model's answers, in order, across the loop's three iterations.
pub fn script() -> Script {
    Script::turns([
        // Iteration 1: look around, write a first (wrong) version.
        Turn::tool("ls", json!({})),
        Turn::tool("read", json!({"path": "TODO.md"})),
        Turn::tool(
            "write",
            json!({"path": "greet.sh", "content": "echo \"Hello $1\"\n"}),
        ),
        Turn::text("Wrote greet.sh. Next: run the test."),
        // Iteration 2: the test fails.
        Turn::tool("bash", json!({"command": "sh test.sh"})),
        Turn::text("test.sh fails: the greeting lacks the comma and the exclamation mark."),
        // Iteration 3: fix, verify, keep the promise.
        Turn::tool(
            "edit",
            json!({"path": "greet.sh", "old_text": "echo \"Hello $1\"", "new_text": "echo \"Hello, $1!\""}),
        ),
        Turn::tool("bash", json!({"command": "sh test.sh"})),
        Turn::text(format!(
            "greet.sh prints the right greeting and test.sh passes.\n<promise>{PROMISE}</promise>"
        )),
    ])
}
