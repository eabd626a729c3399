//! An agent is found where it is installed, not configured: an ACP agent installed the way npm
//! installs one — its package under `<prefix>/lib/node_modules/`, a `bin/` link into it — in a
//! directory the sandbox otherwise covers (`/tmp`), started with nothing in tether.toml but its
//! `kind` and `program`, keeps a Ralph loop's promise.

use std::fs;
use std::os::unix::fs::{PermissionsExt as _, symlink};

use crate::common::{run, text};

#[test]
fn an_acp_agent_installed_by_npm_outside_the_workspace_starts_from_its_program_alone() {
    let prefix = tempfile::tempdir().unwrap();
    let package = prefix.path().join("lib/node_modules/scripted-acp");
    fs::create_dir_all(&package).unwrap();
    let script = package.join("agent.py");
    fs::write(
        &script,
        format!(
            "#!/usr/bin/env -S python3 -u\n{}",
            tether_testkit::SCRIPTED_ACP_AGENT
        ),
    )
    .unwrap();
    fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
    fs::create_dir_all(prefix.path().join("bin")).unwrap();
    let program = prefix.path().join("bin/scripted-acp");
    symlink("../lib/node_modules/scripted-acp/agent.py", &program).unwrap();
    let ws = tempfile::tempdir().unwrap();
    fs::write(ws.path().join("acp-mode"), "promise").unwrap();
    fs::write(
        ws.path().join("tether.toml"),
        format!(
            "[executor]\nkind = \"acp\"\nprogram = {:?}\n",
            program.display().to_string()
        ),
    )
    .unwrap();
    let out = run(
        ws.path(),
        &[
            "ralph",
            "do it",
            "--completion-promise",
            "DONE",
            "--max-iterations",
            "2",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("promise kept in iteration 1"));
}
