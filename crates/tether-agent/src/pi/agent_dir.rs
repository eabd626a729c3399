//! The pi agent directory of a run, so pi gets tether's MCP server without anyone editing the
//! user's own configuration.
//!
//! pi reads its MCP servers from `<agent dir>/mcp.json`, the agent directory being
//! `PI_CODING_AGENT_DIR` (default `~/.pi/agent`). Each run's pi works in an agent directory of
//! the run's own ([`crate::cli::RunConfigDir`]: the sandbox's, or `.tether/runs/<run>/pi-agent/`
//! without one), seeded with copies of the user's models, settings and login and links to the
//! directories pi only reads (extensions, skills, prompts, themes), and an `mcp.json` of its own
//! naming tether's server only, its tools declared to the model directly (`"exposure":
//! "direct"`) with a timeout long enough for a human to answer. pi then runs with the user's
//! models and settings, and tether's tools; what it writes stays in the run, but for a login it
//! refreshed, which flows back.

use std::io;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

/// The variable naming pi's agent directory.
pub(crate) const VAR: &str = "PI_CODING_AGENT_DIR";

/// The run's agent directory, next to its transcripts, when the sandbox gives none.
pub(crate) const DIR_NAME: &str = "pi-agent";

/// The MCP configuration file of an agent directory.
const MCP_JSON: &str = "mcp.json";

/// The user's own agent directory, and whether a variable names it: `configured`
/// (`PI_CODING_AGENT_DIR` in `[executor.env]`), else tether's own `PI_CODING_AGENT_DIR`, else
/// `~/.pi/agent`.
pub(crate) fn user_dir(configured: Option<String>) -> Option<(PathBuf, bool)> {
    configured
        .map(PathBuf::from)
        .or_else(|| std::env::var_os(VAR).map(PathBuf::from))
        .map(|dir| (dir, true))
        .or_else(|| {
            std::env::var_os("HOME").map(|home| (Path::new(&home).join(".pi/agent"), false))
        })
}

/// pi's `mcp.json` entry for tether's server: `command` with `args`, its tools declared
/// directly, each call allowed `timeout_secs`.
pub(crate) fn server_entry(command: &str, args: &[String], timeout_secs: u64) -> Value {
    json!({
        "command": command,
        "args": args,
        "exposure": "direct",
        "timeout": timeout_secs,
    })
}

/// Writes the agent directory `dir`'s `mcp.json`: `server` as the only server, named `name`.
pub(crate) fn write_mcp(dir: &Path, name: &str, server: &Value) -> io::Result<()> {
    let config = json!({ "mcpServers": { name: server } });
    let path = dir.join(MCP_JSON);
    // The run's directory may hold a link the agent put there: replaced, never followed.
    match std::fs::remove_file(&path) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)?;
    io::Write::write_all(&mut file, format!("{config:#}\n").as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_run_gets_tethers_server_only_and_a_link_there_is_replaced() {
        let run = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        let theirs = elsewhere.path().join("mcp.json");
        std::fs::write(&theirs, r#"{"mcpServers":{"mine":{}}}"#).unwrap();
        std::os::unix::fs::symlink(&theirs, run.path().join("mcp.json")).unwrap();
        let server = server_entry("/bin/tether", &["mcp".to_owned()], 60);
        write_mcp(run.path(), "tether", &server).unwrap();
        let mcp: Value =
            serde_json::from_str(&std::fs::read_to_string(run.path().join("mcp.json")).unwrap())
                .unwrap();
        assert_eq!(mcp, json!({"mcpServers": {"tether": server}}));
        assert_eq!(
            std::fs::read_to_string(&theirs).unwrap(),
            r#"{"mcpServers":{"mine":{}}}"#,
            "the file the link named is untouched"
        );
    }
}
