use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use super::*;

fn executor() -> CodexExecutor {
    let settings = CliSettings {
        program: "codex".into(),
        args: vec!["-m".into(), "gpt-5-codex".into()],
        env: Vec::new(),
        turn_timeout: Duration::from_secs(60),
        workspace: PathBuf::from("/ws"),
        tether: PathBuf::from("/bin/te\"ther"),
        env_remove: Vec::new(),
        mcp_extra: Vec::new(),
    };
    CodexExecutor::new(settings, Arc::new(|| Some("r-1".to_owned())))
}

#[test]
fn a_turn_runs_codex_exec_with_tethers_server_and_the_prompt_on_stdin() {
    let argv = executor().turn_argv(Access::Work);
    insta::assert_debug_snapshot!(argv);
}

#[test]
fn a_read_only_turn_runs_in_codexs_read_only_sandbox() {
    let argv = executor().turn_argv(Access::ReadOnly);
    let at = argv.iter().position(|a| a == "-s").unwrap();
    assert_eq!(argv[at + 1], "read-only");
}
