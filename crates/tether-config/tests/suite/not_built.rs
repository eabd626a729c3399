//! Settings this build recognises but cannot act on yet are refused, each with its line, why,
//! and what to use instead; what is always on may be listed.

use super::{config, problem};

#[test]
fn an_executor_kind_not_built_yet_is_refused_with_a_command_to_use_instead() {
    assert_eq!(
        problem("\n[executor]\nkind = \"pi\"\n"),
        "tether.toml:3: executor.kind: \"pi\" (pi) is not built yet: only \"builtin\" \
         (tether's own agent on [model]), \"claude\" (Claude Code), \"codex\" (Codex) and \
         \"command\" (any program) run today; to run pi now, set kind = \"command\" and command = [\"pi\", \
         \"-p\", \"{prompt}\"]"
    );
}

#[test]
fn codex_is_built_with_its_program_args_env_and_timeout() {
    let config = config(
        "[executor]\nkind = \"codex\"\nprogram = \"/opt/codex\"\nargs = [\"-m\", \"o3\"]\n\
         turn_timeout_secs = 600\nenv = { CODEX_HOME = \"/tmp/codex\" }\n",
    );
    assert_eq!(config.executor.kind, tether_config::ExecutorKind::Codex);
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
    assert_eq!(config.executor.kind, tether_config::ExecutorKind::Claude);
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
         \"codex\"), but kind is \"builtin\"; remove it"
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

#[test]
fn the_suggested_command_is_accepted() {
    let config =
        config("[executor]\nkind = \"command\"\ncommand = [\"claude\", \"-p\", \"{prompt}\"]\n");
    assert_eq!(config.executor.command, ["claude", "-p", "{prompt}"]);
}

#[test]
fn the_web_channel_is_refused_saying_terminal_and_cli_are_always_on() {
    assert_eq!(
        problem("[human]\nchannels = [\"terminal\", \"web\"]\n"),
        "tether.toml:2: human.channels: \"web\" is not built yet: there is no web dashboard in \
         this build; remove it (the terminal, when tether runs in one, and the CLI are always \
         on; \"zulip\" adds Zulip)"
    );
}

#[test]
fn the_channels_always_on_may_be_listed_or_left_out() {
    for list in ["[]", "[\"terminal\", \"cli\"]", "[\"cli\"]"] {
        config(&format!("[human]\nchannels = {list}\n"));
    }
}

#[test]
fn a_server_listen_address_is_refused_because_nothing_listens() {
    assert_eq!(
        problem("[server]\nlisten = \"127.0.0.1:0\"\n"),
        "tether.toml:2: server.listen: the web dashboard and its API are not built yet, so \
         nothing listens; remove `listen` (and the [server] table)"
    );
    // An invalid address is reported as such, once.
    assert!(problem("[server]\nlisten = \"localhost:80\"\n").contains("must be an IP address"));
    // An empty table sets nothing.
    config("[server]\n");
}
