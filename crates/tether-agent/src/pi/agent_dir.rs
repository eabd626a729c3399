//! The pi configuration directory of a run, so pi gets tether's MCP server without anyone
//! editing the user's own configuration.
//!
//! pi reads its MCP servers from `<agent dir>/mcp.json`, the agent directory being
//! `PI_CODING_AGENT_DIR` (default `~/.pi/agent`). tether gives each run its own agent directory,
//! `.tether/runs/<run>/pi-agent/`, holding a symbolic link to every entry of the user's agent
//! directory (models, credentials, settings, extensions, skills, …) except `mcp.json`, and an
//! `mcp.json` of its own naming tether's server only, its tools declared to the model directly
//! (`"exposure": "direct"`) with a timeout long enough for a human to answer. pi then runs with
//! the user's models and settings, and tether's tools, and the user's files stay as they were
//! (pi itself may still write through a link, as it would when run by hand).

use std::io;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

/// The variable naming pi's agent directory.
pub(crate) const VAR: &str = "PI_CODING_AGENT_DIR";

/// The run's agent directory, next to its transcripts.
pub(crate) const DIR_NAME: &str = "pi-agent";

/// The MCP configuration file of an agent directory.
const MCP_JSON: &str = "mcp.json";

/// The user's own agent directory: `configured` (`PI_CODING_AGENT_DIR` in `[executor.env]`),
/// else tether's own `PI_CODING_AGENT_DIR`, else `~/.pi/agent`.
pub(crate) fn user_dir(configured: Option<String>) -> Option<PathBuf> {
    configured
        .map(PathBuf::from)
        .or_else(|| std::env::var_os(VAR).map(PathBuf::from))
        .or_else(|| std::env::var_os("HOME").map(|home| Path::new(&home).join(".pi/agent")))
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

/// Makes `<run_dir>/pi-agent`: a link to each entry of `user` but `mcp.json` (entries already
/// linked are kept), and an `mcp.json` with `server` as the only server, named `name`.
pub(crate) fn prepare(
    run_dir: &Path,
    user: Option<&Path>,
    name: &str,
    server: &Value,
) -> io::Result<PathBuf> {
    let dir = run_dir.join(DIR_NAME);
    std::fs::create_dir_all(&dir)?;
    if let Some(user) = user.filter(|u| u.is_dir()) {
        link_entries(user, &dir)?;
    }
    let config = json!({ "mcpServers": { name: server } });
    std::fs::write(dir.join(MCP_JSON), format!("{config:#}\n"))?;
    Ok(dir)
}

fn link_entries(user: &Path, dir: &Path) -> io::Result<()> {
    for entry in std::fs::read_dir(user)? {
        let entry = entry?;
        let name = entry.file_name();
        if name == MCP_JSON {
            continue;
        }
        let link = dir.join(&name);
        if link.symlink_metadata().is_ok() {
            continue;
        }
        std::os::unix::fs::symlink(entry.path(), &link)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_run_gets_the_users_files_and_its_own_mcp_servers() {
        let user = tempfile::tempdir().unwrap();
        let run = tempfile::tempdir().unwrap();
        std::fs::write(user.path().join("models.json"), "{}").unwrap();
        std::fs::write(
            user.path().join("mcp.json"),
            r#"{"mcpServers":{"mine":{}}}"#,
        )
        .unwrap();
        std::fs::create_dir(user.path().join("extensions")).unwrap();
        let server = server_entry("/bin/tether", &["mcp".to_owned()], 60);
        for _ in 0..2 {
            let dir = prepare(run.path(), Some(user.path()), "tether", &server).unwrap();
            assert_eq!(dir, run.path().join("pi-agent"));
            for linked in ["models.json", "extensions"] {
                assert_eq!(
                    std::fs::read_link(dir.join(linked)).unwrap(),
                    user.path().join(linked)
                );
            }
            let mcp: Value =
                serde_json::from_str(&std::fs::read_to_string(dir.join("mcp.json")).unwrap())
                    .unwrap();
            assert_eq!(mcp, json!({"mcpServers": {"tether": server}}));
        }
        assert_eq!(
            std::fs::read_to_string(user.path().join("mcp.json")).unwrap(),
            r#"{"mcpServers":{"mine":{}}}"#,
            "the user's own file is untouched"
        );
    }

    #[test]
    fn without_a_user_directory_only_the_mcp_servers_are_there() {
        let run = tempfile::tempdir().unwrap();
        let missing = run.path().join("nowhere");
        let server = server_entry("tether", &[], 1);
        let dir = prepare(run.path(), Some(&missing), "tether", &server).unwrap();
        let names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["mcp.json"]);
    }
}
