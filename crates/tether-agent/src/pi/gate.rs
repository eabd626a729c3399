//! `[human] ask_before` for pi: a pi extension, written by tether for the run and loaded with
//! `-e`, whose `tool_call` handler runs `tether gate --run <id> -C <workspace>` before each of
//! pi's `bash` calls and blocks the call unless the gate allows it.
//!
//! `tether gate` checks the command like the built-in agent's `bash` (tether.toml's prefixes and
//! the active goals' lists), asks a human through the desk when it is held, and answers `allow`,
//! `deny` with the reason, or nothing for a command no prefix holds. The extension blocks on
//! `deny`, and also when the gate cannot be run or answers something it cannot read: it never
//! fails open. The gate runs in pi's process group, so a cancelled turn takes it with it.

use std::io;
use std::path::{Path, PathBuf};

/// The extension's file, next to the run's transcripts.
const FILE_NAME: &str = "pi-ask-before.mjs";

/// The extension; `__GATE__` becomes the gate's argv as a JSON array.
const EXTENSION: &str = r#"// tether's ask_before gate for pi, written by tether for this run.
import { spawn } from "node:child_process";

const GATE = __GATE__;

function ask(command) {
  return new Promise((resolve) => {
    const child = spawn(GATE[0], GATE.slice(1), { stdio: ["pipe", "pipe", "ignore"] });
    let out = "";
    child.stdout.on("data", (chunk) => { out += chunk; });
    child.on("error", (e) => resolve({ error: String(e) }));
    child.on("close", (code) => resolve({ out, code }));
    child.stdin.end(JSON.stringify({ tool_name: "Bash", tool_input: { command } }));
  });
}

export default function (pi) {
  pi.on("tool_call", async (event) => {
    if (event.toolName !== "bash") return undefined;
    const command = event.input && event.input.command;
    if (typeof command !== "string") return undefined;
    const { out, error } = await ask(command);
    if (error) {
      return { block: true, reason: `not run: tether's ask_before gate could not run (${error})` };
    }
    let decision;
    try {
      decision = JSON.parse(out);
    } catch (e) {
      return { block: true, reason: "not run: tether's ask_before gate gave no answer" };
    }
    const verdict = decision.hookSpecificOutput && decision.hookSpecificOutput.permissionDecision;
    if (verdict === undefined || verdict === "allow") return undefined;
    return { block: true, reason: decision.hookSpecificOutput.permissionDecisionReason || "not run" };
  });
}
"#;

/// Writes the extension for `gate` (tether's binary and its `gate` arguments) into `run_dir`.
pub(crate) fn write(run_dir: &Path, gate: &[String]) -> io::Result<PathBuf> {
    let path = run_dir.join(FILE_NAME);
    let argv = serde_json::to_string(gate).map_err(io::Error::other)?;
    std::fs::write(&path, EXTENSION.replace("__GATE__", &argv))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_extension_names_the_gate_as_json() {
        let dir = tempfile::tempdir().unwrap();
        let gate = ["/opt/te\"ther".to_owned(), "gate".to_owned()];
        let path = write(dir.path(), &gate).unwrap();
        let text = std::fs::read_to_string(path).unwrap();
        assert!(
            text.contains(r#"const GATE = ["/opt/te\"ther","gate"];"#),
            "{text}"
        );
        assert!(!text.contains("__GATE__"));
    }
}
