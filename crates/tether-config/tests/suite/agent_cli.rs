//! The agent CLI kinds (Claude Code, Codex, pi) take a program, extra arguments, environment
//! variables and a turn timeout; other kinds refuse those settings.

use super::{config, problem};

#[test]
fn pi_is_built_with_the_agent_cli_settings() {
    let config = config(
        "[executor]\nkind = \"pi\"\nprogram = \"/opt/pi\"\nargs = [\"--model\", \"m\"]\n\
         env = { PI_CODING_AGENT_DIR = \"/home/me/.pi/agent\" }\n",
    );
    assert_eq!(config.executor.kind, tether_config::ExecutorKind::Cli("pi"));
    assert_eq!(config.executor.program.as_deref(), Some("/opt/pi"));
    assert_eq!(config.executor.args, ["--model", "m"]);
    assert_eq!(config.executor.env.len(), 1);
}

#[test]
fn codex_is_built_with_its_program_args_env_and_timeout() {
    let config = config(
        "[executor]\nkind = \"codex\"\nprogram = \"/opt/codex\"\nargs = [\"-m\", \"o3\"]\n\
         turn_timeout_secs = 600\nenv = { CODEX_HOME = \"/tmp/codex\" }\n",
    );
    assert_eq!(
        config.executor.kind,
        tether_config::ExecutorKind::Cli("codex")
    );
    assert_eq!(config.executor.program.as_deref(), Some("/opt/codex"));
    assert_eq!(config.executor.args, ["-m", "o3"]);
    assert_eq!(config.executor.turn_timeout_secs, Some(600));
    assert_eq!(
        config.executor.env,
        [("CODEX_HOME".to_owned(), "/tmp/codex".to_owned())]
    );
}

#[test]
fn claude_is_built_with_its_program_args_env_and_timeout() {
    let config = config(
        "[executor]\nkind = \"claude\"\nprogram = \"/opt/claude\"\nargs = [\"--model\", \
         \"sonnet\"]\nturn_timeout_secs = 600\nenv = { A = \"1\", B = \"two\" }\n",
    );
    assert_eq!(
        config.executor.kind,
        tether_config::ExecutorKind::Cli("claude")
    );
    assert_eq!(config.executor.program.as_deref(), Some("/opt/claude"));
    assert_eq!(config.executor.args, ["--model", "sonnet"]);
    assert_eq!(config.executor.turn_timeout_secs, Some(600));
    assert_eq!(
        config.executor.env,
        [
            ("A".to_owned(), "1".to_owned()),
            ("B".to_owned(), "two".to_owned())
        ]
    );
    assert_eq!(
        super::config("[executor]\nkind = \"claude\"\n")
            .executor
            .program,
        None
    );
}

#[test]
fn agent_cli_settings_are_refused_for_other_kinds_and_when_malformed() {
    assert_eq!(
        problem("[executor]\nkind = \"builtin\"\nprogram = \"claude\"\n"),
        "tether.toml:3: executor.program: only used by an agent CLI kind (\"claude\", \
         \"codex\", \"pi\", \"acp\"), but kind is \"builtin\"; remove it"
    );
    assert_eq!(
        problem("[executor]\nkind = \"claude\"\nenv = { A = 1 }\n"),
        "tether.toml:3: executor.env.A: must be a string, got an integer"
    );
    assert_eq!(
        problem("[executor]\nkind = \"claude\"\nenv = \"A=1\"\n"),
        "tether.toml:3: executor.env: must be a table of strings, e.g. env = { ANTHROPIC_MODEL = \
         \"sonnet\" }"
    );
    assert_eq!(
        problem("[executor]\nkind = \"claude\"\nturn_timeout_secs = 0\n"),
        "tether.toml:3: executor.turn_timeout_secs: must be between 1 and 2592000, got 0"
    );
}
