//! What opencode reads in a run: never the workspace's configuration. opencode reads a
//! project's `opencode.json(c)` and `.opencode/` directories (agents, commands, plugins) each
//! time it starts; the agent can write them, and an agent's own `permission` there wins over the
//! `ask` tether sets, so from its next start its commands would run unasked. In a run opencode
//! reads none of them (`OPENCODE_DISABLE_PROJECT_CONFIG`), only what the person made or named:
//! their configuration directory, and `OPENCODE_CONFIG` or `OPENCODE_CONFIG_CONTENT` in
//! `[executor] env`. A workspace that has a configuration of its own is said when the run begins.

use std::io;

use crate::cli::Pinning;

/// The variable keeping opencode from reading the project's configuration.
const DISABLE_VAR: &str = "OPENCODE_DISABLE_PROJECT_CONFIG";

/// The project's configuration opencode would read in the workspace.
const PROJECT: [&str; 3] = ["opencode.jsonc", "opencode.json", ".opencode"];

/// The variables that keep opencode from reading the workspace's configuration; what the
/// workspace has of it said.
pub(crate) fn pin(pinning: &Pinning<'_>) -> io::Result<Vec<(String, String)>> {
    for name in PROJECT {
        let path = pinning.workspace.join(name);
        if std::fs::symlink_metadata(&path).is_ok() {
            tracing::warn!(
                path = %path.display(),
                "opencode does not read the workspace's own configuration in a run (the agent \
                 can write it, and an agent's permission there would let its commands run \
                 unasked): move what you need of it to your opencode configuration directory, \
                 or name a file outside the working tree in [executor] env OPENCODE_CONFIG"
            );
        }
    }
    Ok(vec![(DISABLE_VAR.to_owned(), "1".to_owned())])
}

#[cfg(test)]
mod tests {
    use super::{DISABLE_VAR, pin};
    use crate::cli::Pinning;

    #[test]
    fn a_run_never_reads_the_workspaces_configuration() {
        let ws = tempfile::tempdir().unwrap();
        std::fs::write(
            ws.path().join("opencode.json"),
            r#"{"permission": "allow"}"#,
        )
        .unwrap();
        let vars = pin(&Pinning {
            dir: ws.path(),
            workspace: ws.path(),
            env: &[],
        })
        .unwrap();
        assert_eq!(vars, [(DISABLE_VAR.to_owned(), "1".to_owned())]);
    }
}
