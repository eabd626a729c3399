//! `tether doctor`: each failure a person setting tether up can meet is reported on its line with
//! the fix — a missing agent CLI, one too old, an MCP server that cannot start, an invalid config,
//! a key variable unset or refused (never printed) — and a healthy setup, with the real Claude
//! Code (`TETHER_TEST_CLAUDE`), fake model servers and the fake Zulip and Telegram servers, passes
//! every check; pi (`TETHER_TEST_PI`) is checked the same way. A misconfigured notice sink is
//! named by its setting.

use std::fs;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use serde_json::Value;
use tether_config::Api;
use tether_model::scripted::Script;
use tether_testkit::model_server::FakeModelServer;
use tether_testkit::zulip_server::FakeZulipServer;
use tether_testkit::{FakeSlackServer, FakeTelegramServer};

use tether_testkit::wait_until;

use crate::common::{Out, PATIENCE, cmd, model_table, runtime};

/// A workspace with `toml` as its tether.toml.
fn workspace(toml: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("tether.toml"), toml).unwrap();
    dir
}

/// An executable script at `dir/name`.
fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
    path
}

fn doctor(dir: &Path, args: &[&str]) -> Out {
    let mut all = vec!["doctor"];
    all.extend_from_slice(args);
    Out::new(dir, &cmd(dir, &all).output().unwrap())
}

/// The line of check `name` and the indented lines under it.
fn check(out: &Out, name: &str) -> String {
    let mut lines = out.stdout.lines().skip_while(|l| {
        !l.split_once(' ')
            .is_some_and(|(_, rest)| rest.starts_with(&format!("{name}: ")))
    });
    let first = lines
        .next()
        .unwrap_or_else(|| panic!("no {name} check in:\n{}", out.stdout));
    let mut all = vec![first];
    all.extend(lines.take_while(|l| l.starts_with(' ')));
    all.join("\n")
}

#[test]
fn a_missing_cli_is_reported_with_the_fix() {
    let dir = workspace("[executor]\nkind = \"claude\"\nprogram = \"/nonexistent/claude\"\n");
    let out = doctor(dir.path(), &[]);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    let line = check(&out, "executor");
    assert!(
        line.starts_with(
            "✗ executor: Claude Code does not run: `/nonexistent/claude --version` could not start"
        ) && line.contains("fix: install it with `npm install -g @anthropic-ai/claude-code"),
        "{line}"
    );
    // The other checks still run.
    assert!(check(&out, "mcp").starts_with("✓ mcp:"), "{}", out.stdout);
}

#[test]
fn the_built_in_agent_without_a_model_is_told_every_agent_it_could_use_instead() {
    let dir = workspace("");
    let out = doctor(dir.path(), &[]);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert_eq!(
        check(&out, "executor"),
        "✗ executor: the built-in agent has no model: tether.toml has no [model]\n  fix: add a \
         [model] table (api, base_url, model, api_key_env), or set [executor] kind to the agent \
         you use (claude, codex, pi, qwen, opencode, gemini, copilot, command, acp)"
    );
}

#[test]
fn a_cli_too_old_is_reported_with_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let old = script(dir.path(), "claude", "echo '1.0.3 (Claude Code)'");
    let toml = format!(
        "[executor]\nkind = \"claude\"\nprogram = {:?}\n",
        old.display().to_string()
    );
    fs::write(dir.path().join("tether.toml"), toml).unwrap();
    let out = doctor(dir.path(), &[]);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    let line = check(&out, "executor");
    assert!(
        line.starts_with(
            "✗ executor: Claude Code 1.0.3 ([WS]/claude) is too old: tether needs 2.0.0 or newer"
        ) && line.contains("fix: update it with `npm install -g @anthropic-ai/claude-code"),
        "{line}"
    );
}

#[test]
fn an_mcp_server_that_cannot_start_is_reported_with_the_fix() {
    let dir = workspace("[executor]\nkind = \"command\"\ncommand = [\"true\"]\n");
    // An older tether, without the `mcp` command, as an MCP configuration might name it.
    let old = script(
        dir.path(),
        "old-tether",
        "echo \"error: unrecognized subcommand '$1'\" >&2; exit 2",
    );
    let out = doctor(dir.path(), &["--tether", old.to_str().unwrap()]);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    let line = check(&out, "mcp");
    assert!(
        line.starts_with(
            "✗ mcp: `[WS]/old-tether mcp -C [WS]` exited before answering (exit status: 2)"
        ) && line.contains("its stderr: error: unrecognized subcommand 'mcp'")
            && line.contains("fix: run `[WS]/old-tether mcp -C [WS]` yourself to see why it fails"),
        "{line}"
    );
    let missing = doctor(dir.path(), &["--tether", "/nonexistent/tether"]);
    let line = check(&missing, "mcp");
    assert!(
        line.starts_with("✗ mcp: `/nonexistent/tether mcp -C [WS]` could not start"),
        "{line}"
    );
}

#[test]
fn an_mcp_server_that_never_answers_is_stopped_with_everything_it_started() {
    let dir = workspace("[executor]\nkind = \"command\"\ncommand = [\"true\"]\n");
    let hung = script(
        dir.path(),
        "hung-tether",
        "sleep 600 &\necho $! > \"$(dirname \"$0\")/child.pid\"\nwait",
    );
    let out = doctor(dir.path(), &["--tether", hung.to_str().unwrap()]);
    assert_eq!(out.code, 1);
    let line = check(&out, "mcp");
    assert!(
        line.starts_with("✗ mcp: `[WS]/hung-tether mcp -C [WS]` did not answer within 10 s"),
        "{line}"
    );
    // Its whole process group was killed: the `sleep` it left behind is gone.
    let pid = fs::read_to_string(dir.path().join("child.pid")).unwrap();
    let proc = PathBuf::from(format!("/proc/{}", pid.trim()));
    wait_until("the server's child to be gone", PATIENCE, || {
        let state = fs::read_to_string(proc.join("stat")).unwrap_or_default();
        // Gone, or a zombie waiting for init to reap it.
        (state.is_empty() || state.contains(") Z ")).then_some(())
    })
    .unwrap();
}

#[test]
fn an_invalid_config_is_reported_with_file_and_line() {
    let dir = workspace("[loop]\nmax_iteratons = 5\n");
    let out = doctor(dir.path(), &[]);
    assert_eq!(out.code, 1);
    let line = check(&out, "config");
    assert!(
        line.contains(
            "[WS]/tether.toml:2: loop.max_iteratons: unknown key; did you mean `max_iterations`?"
        ) && line.contains("fix: correct these lines"),
        "{line}"
    );
    assert!(check(&out, "executor").starts_with("- executor: not checked"));
}

#[test]
fn keys_unset_or_refused_are_reported_without_their_values() {
    let rt = runtime();
    let server = rt
        .block_on(
            FakeModelServer::builder(Script::turns([]))
                .require_key("sk-right")
                .start(),
        )
        .unwrap();
    let toml = format!(
        "{}api_key_env = \"DOCTOR_MODEL_KEY\"\n{}api_key_env = \"DOCTOR_JUDGE_KEY\"\n",
        model_table("model", Api::OpenAiChat, &server, "m"),
        model_table("judge", Api::Anthropic, &server, "j"),
    );
    let dir = workspace(&toml);
    let output = cmd(dir.path(), &["doctor"])
        .env("DOCTOR_JUDGE_KEY", "sk-wrong-judge-key")
        .env_remove("DOCTOR_MODEL_KEY")
        .output()
        .unwrap();
    let out = Out::new(dir.path(), &output);
    assert_eq!(out.code, 1);
    let model = check(&out, "model");
    assert!(
        model.starts_with("✗ model: [model] reads its key from DOCTOR_MODEL_KEY, which is not set")
            && model.contains("fix: export DOCTOR_MODEL_KEY=…"),
        "{model}"
    );
    let judge = check(&out, "judge");
    assert!(
        judge.contains("refused the key (HTTP 401; key from DOCTOR_JUDGE_KEY)")
            && judge.contains("fix: put a valid key for this endpoint in DOCTOR_JUDGE_KEY"),
        "{judge}"
    );
    let all = format!("{}{}", out.stdout, out.stderr);
    assert!(!all.contains("sk-wrong-judge-key"), "{all}");
}

#[test]
fn a_misconfigured_notice_sink_is_reported_naming_the_setting_without_secrets() {
    let toml = "[human]\nchannels = [\"cli\", \"ntfy\", \"webhook\"]\n\
                [ntfy]\ntoken_env = \"DOCTOR_NTFY_TOKEN\"\n\
                [webhook]\nurl_env = \"DOCTOR_HOOK_URL\"\n";
    let dir = workspace(toml);
    let output = cmd(dir.path(), &["doctor"])
        .env("DOCTOR_HOOK_URL", "ftp://hooks.example/secret-path-42")
        .env_remove("DOCTOR_NTFY_TOKEN")
        .output()
        .unwrap();
    let out = Out::new(dir.path(), &output);
    assert_eq!(out.code, 1);
    let notices = check(&out, "notices");
    assert!(
        notices.starts_with("✗ notices: the ntfy sink is off: it needs `[ntfy] topic`")
            && notices.contains("set DOCTOR_NTFY_TOKEN, named by `[ntfy] token_env`")
            && notices.contains("`[webhook] url_env`: its variable does not hold an http")
            && notices.contains("fix: set what each line names"),
        "{notices}"
    );
    let all = format!("{}{}", out.stdout, out.stderr);
    assert!(!all.contains("secret-path-42"), "{all}");
}

/// ntfy with its topic written in tether.toml while the agent has the network: the agent could
/// follow the topic and press its own questions' buttons, so doctor fails the answers check,
/// saying why for each place it names the topic and how to protect it. With the topic from a
/// variable (or no network) only a person answers there.
#[test]
fn an_ntfy_topic_the_agent_reads_with_the_network_is_reported_with_the_fix() {
    let toml = "[human]\nchannels = [\"ntfy\"]\nescalate_after = \"1h\"\n\
                escalate_to = [\"ntfy:oncall\"]\n\
                [ntfy]\ntopic = \"tether-q7k2\"\n[sandbox]\nnetwork = true\n";
    let dir = workspace(toml);
    let out = doctor(dir.path(), &[]);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    insta::assert_snapshot!(check(&out, "answers"));

    let hidden = workspace(
        "[human]\nchannels = [\"ntfy\"]\n[ntfy]\ntopic_env = \"DOCTOR_NTFY_TOPIC\"\n\
         [sandbox]\nnetwork = true\n",
    );
    let output = cmd(hidden.path(), &["doctor"])
        .env("DOCTOR_NTFY_TOPIC", "secret-topic-42")
        .output()
        .unwrap();
    let out = Out::new(hidden.path(), &output);
    assert_eq!(
        check(&out, "answers"),
        "✓ answers: only a person answers on ntfy (its topic comes from DOCTOR_NTFY_TOPIC, \
         which the agent never gets)"
    );
    assert!(!out.stdout.contains("secret-topic-42"), "{}", out.stdout);
    let offline = workspace("[human]\nchannels = [\"ntfy\"]\n[ntfy]\ntopic = \"tether-q7k2\"\n");
    assert_eq!(
        check(&doctor(offline.path(), &[]), "answers"),
        "✓ answers: only a person answers on ntfy (the agent has no network to follow its topic)"
    );
}

/// The real Claude Code; a test without it fails (./test.sh installs it).
fn claude() -> String {
    let path = std::env::var("TETHER_TEST_CLAUDE").unwrap_or_else(|_| {
        panic!("TETHER_TEST_CLAUDE is not set: run ./test.sh, which installs Claude Code")
    });
    assert!(
        Path::new(&path).exists(),
        "TETHER_TEST_CLAUDE={path} does not exist"
    );
    path
}

#[test]
fn a_healthy_setup_passes_every_check() {
    let rt = runtime();
    let model = rt
        .block_on(
            FakeModelServer::builder(Script::turns([]))
                .require_key("sk-model")
                .start(),
        )
        .unwrap();
    let judge = rt
        .block_on(
            FakeModelServer::builder(Script::turns([]))
                .require_key("sk-judge")
                .start(),
        )
        .unwrap();
    let zulip = rt.block_on(FakeZulipServer::start()).unwrap();
    let telegram = rt.block_on(FakeTelegramServer::start()).unwrap();
    let slack = rt.block_on(FakeSlackServer::start()).unwrap();
    let toml = format!(
        "[executor]\nkind = \"claude\"\nprogram = {:?}\n{}api_key_env = \"DOCTOR_MODEL_KEY\"\n\
         {}api_key_env = \"DOCTOR_JUDGE_KEY\"\n\
         [human]\nchannels = [\"cli\", \"zulip\", \"slack\", \"telegram\", \"notify_command\"]\n\
         [telegram]\napi_url = \"{}\"\n[slack]\nchannel = \"{}\"\napi_url = \"{}\"\n\
         [notify_command]\nprogram = \"true\"\n",
        claude(),
        model_table("model", Api::OpenAiChat, &model, "agent-model"),
        model_table("judge", Api::Anthropic, &judge, "judge-model"),
        telegram.api_url(),
        FakeSlackServer::CHANNEL,
        slack.api_url(),
    );
    let dir = workspace(&toml);
    let run = |args: &[&str]| {
        let mut all = vec!["doctor"];
        all.extend_from_slice(args);
        cmd(dir.path(), &all)
            .env("DOCTOR_MODEL_KEY", "sk-model")
            .env("DOCTOR_JUDGE_KEY", "sk-judge")
            .env("ZULIP_SERVER_URL", zulip.server_url())
            .env("ZULIP_BOT_EMAIL", zulip.bot_email())
            .env("ZULIP_BOT_API_KEY", zulip.api_key())
            .env("ZULIP_STREAM", zulip.stream())
            .env("TELEGRAM_BOT_TOKEN", telegram.token())
            .env("TELEGRAM_CHAT_ID", FakeTelegramServer::GROUP.to_string())
            .env("SLACK_BOT_TOKEN", slack.bot_token())
            .env("SLACK_APP_TOKEN", slack.app_token())
            .output()
            .unwrap()
    };
    let output = run(&[]);
    let out = Out::new(dir.path(), &output)
        .redact(&regex_lite::escape(&claude()), "[CLAUDE]")
        .redact(r"Claude Code \d+\.\d+\.\d+", "Claude Code [VERSION]")
        .redact(r"127\.0\.0\.1:\d+", "127.0.0.1:[PORT]")
        .redact(r"\(\d+ ms\)", "([N] ms)")
        .redact(r"Landlock ABI \d+", "Landlock ABI [N]");
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    insta::assert_snapshot!(out.stdout);
    for secret in [
        "sk-model",
        "sk-judge",
        zulip.api_key(),
        telegram.token(),
        slack.bot_token(),
        slack.app_token(),
    ] {
        assert!(!out.stdout.contains(secret) && !out.stderr.contains(secret));
    }
    // The model servers were asked for their models list, with the key, and nothing else.
    for server in [&model, &judge] {
        let paths: Vec<String> = server.requests().into_iter().map(|r| r.path).collect();
        assert_eq!(paths, ["/v1/models"]);
    }
    let json: Value = serde_json::from_slice(&run(&["--json"]).stdout).unwrap();
    assert_eq!(json["ok"], true, "{json}");
    let names: Vec<&str> = json["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            assert_eq!(c["status"], "pass", "{c}");
            c["name"].as_str().unwrap()
        })
        .collect();
    assert_eq!(
        names,
        [
            "config", "store", "executor", "sandbox", "mcp", "model", "judge", "zulip", "slack",
            "telegram", "notices", "answers"
        ]
    );
}

#[test]
fn pi_is_checked_like_any_agent_cli() {
    let pi = std::env::var("TETHER_TEST_PI")
        .unwrap_or_else(|_| panic!("TETHER_TEST_PI is not set: run ./test.sh, which installs pi"));
    let dir = workspace(&format!("[executor]\nkind = \"pi\"\nprogram = {pi:?}\n"));
    let out = doctor(dir.path(), &[]).redact(&regex_lite::escape(&pi), "[PI]");
    let line = check(&out, "executor");
    assert!(
        regex_lite::Regex::new(r"^✓ executor: pi \d+\.\d+\.\d+ \(\[PI\]\)$")
            .unwrap()
            .is_match(&line),
        "{line}"
    );
    // Too old: the same check, pi's own minimum and install command.
    let old = script(dir.path(), "pi", "echo 0.1.0");
    let toml = format!(
        "[executor]\nkind = \"pi\"\nprogram = {:?}\n",
        old.display().to_string()
    );
    fs::write(dir.path().join("tether.toml"), toml).unwrap();
    let line = check(&doctor(dir.path(), &[]), "executor");
    assert!(
        line.starts_with("✗ executor: pi 0.1.0 ([WS]/pi) is too old: tether needs")
            && line.contains("fix: update it with `npm install -g @earendil-works/pi-coding-agent"),
        "{line}"
    );
}

/// A workspace running Codex (not installed: the key check needs only its configuration) with
/// its home at `[WS]/codex-home` holding `config`, then `extra` in tether.toml.
fn codex_workspace(config: &str, extra: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("codex-home");
    fs::create_dir(&home).unwrap();
    fs::write(home.join("config.toml"), config).unwrap();
    let toml = format!(
        "{extra}[executor]\nkind = \"codex\"\nprogram = \"/nonexistent/codex\"\n\
         [executor.env]\nCODEX_HOME = {:?}\n",
        home.display().to_string()
    );
    fs::write(dir.path().join("tether.toml"), toml).unwrap();
    dir
}

const OPENROUTER: &str = "model_provider = \"openrouter\"\n[model_providers.openrouter]\n\
    base_url = \"https://openrouter.ai/api/v1\"\nenv_key = \"OPENROUTER_API_KEY\"\n";

/// `tether doctor`'s agent key check with `set` (variable, value) in its environment and
/// `OPENROUTER_API_KEY` otherwise unset.
fn key_check(dir: &Path, set: &[(&str, &str)]) -> String {
    let mut doctor = cmd(dir, &["doctor"]);
    doctor.env_remove("OPENROUTER_API_KEY");
    for (var, value) in set {
        doctor.env(var, value);
    }
    check(&Out::new(dir, &doctor.output().unwrap()), "agent key")
}

#[test]
fn codexs_unset_key_variable_is_named_with_the_setting_that_passes_another() {
    let dir = codex_workspace(OPENROUTER, "");
    insta::assert_snapshot!("codex_key_unset", key_check(dir.path(), &[]));
    let set = key_check(dir.path(), &[("OPENROUTER_API_KEY", "sk-or-doctor-1")]);
    assert_eq!(
        set,
        "✓ agent key: Codex's provider `openrouter` reads its key from OPENROUTER_API_KEY: \
         set, passed to the agent"
    );
    // An override in [executor] args names the provider, as for the run.
    let toml = dir.path().join("tether.toml");
    let args = "[executor]\nargs = [\"-c\", \"model_provider=openai\"]\n";
    let text = fs::read_to_string(&toml).unwrap();
    fs::write(&toml, text.replace("[executor]\n", args)).unwrap();
    insta::assert_snapshot!("codex_key_builtin", key_check(dir.path(), &[]));
}

#[test]
fn codexs_key_variable_that_is_tethers_own_is_named_as_kept_from_the_agent() {
    let dir = codex_workspace(
        OPENROUTER,
        "[judge]\napi = \"openai-chat\"\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"j\"\n\
         api_key_env = \"OPENROUTER_API_KEY\"\n",
    );
    let line = key_check(dir.path(), &[("OPENROUTER_API_KEY", "sk-or-doctor-2")]);
    insta::assert_snapshot!("codex_key_tethers_own", line);
    assert!(!line.contains("sk-or-doctor-2"));
}

#[test]
fn an_unreadable_codex_config_is_noted_and_codexs_defaults_assumed() {
    let dir = codex_workspace("model_provider = [\n", "");
    let line = key_check(dir.path(), &[]);
    assert!(
        line.starts_with("✓ agent key: Codex's provider `openai` uses Codex's login")
            && line.contains(
                "\n    note: Codex's configuration was not read ([WS]/codex-home/config.toml \
                 does not parse: "
            )
            && line.ends_with("assuming Codex's defaults"),
        "{line}"
    );
}

#[test]
fn pis_provider_key_variable_from_models_json_is_checked() {
    let dir = tempfile::tempdir().unwrap();
    let agent = dir.path().join("pi-agent");
    fs::create_dir(&agent).unwrap();
    fs::write(
        agent.join("models.json"),
        r#"{"providers": {"proxy": {"baseUrl": "http://proxy", "apiKey": "$DOCTOR_PROXY_KEY"}}}"#,
    )
    .unwrap();
    fs::write(
        agent.join("settings.json"),
        r#"{"defaultProvider": "proxy"}"#,
    )
    .unwrap();
    let toml = format!(
        "[executor]\nkind = \"pi\"\nprogram = \"/nonexistent/pi\"\n\
         [executor.env]\nPI_CODING_AGENT_DIR = {:?}\n",
        agent.display().to_string()
    );
    fs::write(dir.path().join("tether.toml"), toml).unwrap();
    let line = key_check(dir.path(), &[]);
    assert!(
        line.starts_with(
            "✗ agent key: pi's provider `proxy` reads its key from DOCTOR_PROXY_KEY, which is not set"
        ) && line.contains("fix: export DOCTOR_PROXY_KEY=…"),
        "{line}"
    );
}

/// An agent CLI installed outside the places the sandbox grants (its launcher reads a file
/// beside its install tree) fails its first read there: `tether doctor`, and the run, name the
/// path and `[sandbox] readable`.
#[test]
fn a_cli_that_cannot_read_its_own_files_in_the_sandbox_is_named_with_the_setting() {
    let dir = tempfile::tempdir().unwrap();
    let install = tempfile::tempdir_in("/tmp").unwrap();
    fs::create_dir_all(install.path().join("cli/bin")).unwrap();
    fs::create_dir_all(install.path().join("lib")).unwrap();
    fs::write(install.path().join("lib/real.js"), "2.1.0 (Claude Code)").unwrap();
    let claude = script(
        &install.path().join("cli/bin"),
        "claude",
        "cat \"$(dirname \"$0\")/../../lib/real.js\" || exit 1",
    );
    let toml = format!(
        "[executor]\nkind = \"claude\"\nprogram = {:?}\n",
        claude.display().to_string()
    );
    fs::write(dir.path().join("tether.toml"), toml).unwrap();
    let out = doctor(dir.path(), &[]);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    let line = check(&out, "executor");
    assert!(
        line.contains("Claude Code cannot read")
            && line.contains("lib/real.js in the sandbox")
            && line.contains("[sandbox] readable"),
        "{line}"
    );
    let run = cmd(
        dir.path(),
        &[
            "ralph",
            "x",
            "--completion-promise",
            "DONE",
            "--max-iterations",
            "1",
        ],
    )
    .output()
    .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(
        said.contains("lib/real.js in the sandbox") && said.contains("[sandbox] readable"),
        "{said}"
    );
}

#[test]
fn an_opencode_agent_allowing_its_own_commands_fails_the_check_when_ask_before_is_set() {
    let opencode = std::env::var("TETHER_TEST_OPENCODE").unwrap_or_else(|_| {
        panic!("TETHER_TEST_OPENCODE is not set: run ./test.sh, which installs opencode")
    });
    let person = tempfile::tempdir().unwrap();
    let toml = format!(
        "[human]\nask_before = [\"git push\"]\n[executor]\nkind = \"opencode\"\nprogram = {opencode:?}\n\
         [executor.env]\nOPENCODE_CONFIG_DIR = {:?}\n",
        person.path().display().to_string()
    );
    let dir = workspace(&toml);
    let out = doctor(dir.path(), &[]);
    assert!(
        check(&out, "executor").starts_with("✓ executor: opencode "),
        "{}",
        out.stdout
    );
    let allowing = r#"{"agent": {"build": {"permission": {"bash": "allow"}}}}"#;
    // The workspace's own configuration is never read in a run: nothing to fail.
    std::fs::write(dir.path().join("opencode.json"), allowing).unwrap();
    let out = doctor(dir.path(), &[]);
    assert!(
        check(&out, "executor").starts_with("✓ executor: opencode "),
        "{}",
        out.stdout
    );
    std::fs::write(person.path().join("opencode.json"), allowing).unwrap();
    let out = doctor(dir.path(), &[]);
    let line = check(&out, "executor");
    assert!(
        line.starts_with("✗ executor: opencode ")
            && line.contains("opencode.json: agent.build.permission.bash is \"allow\""),
        "{line}"
    );
}

#[test]
fn judges_all_of_the_agents_own_family_are_warned_of_and_each_panel_judge_is_probed() {
    let rt = runtime();
    let claude = rt
        .block_on(FakeModelServer::start(Script::turns([])))
        .unwrap();
    let gpt = rt
        .block_on(FakeModelServer::start(Script::turns([])))
        .unwrap();
    let agent = "[executor]\nkind = \"claude\"\nprogram = \"/nonexistent/claude\"\n";
    let judge = model_table("judge", Api::OpenAiChat, &claude, "claude-haiku-4-5");
    let dir = workspace(&format!("{agent}{judge}"));
    let out = doctor(dir.path(), &[]);
    let line = check(&out, "judge");
    assert!(
        line.contains(
            "warning: every judge is of the agent's own model family (Anthropic's Claude, from \
             the claude CLI's own models)"
        ),
        "{line}"
    );
    assert!(line.contains("add one as a [[judge.panel]]"), "{line}");

    // A judge of another vendor on the panel: no warning, and that judge is probed too.
    let panel = model_table("[judge.panel]", Api::OpenAiChat, &gpt, "gpt-5-mini");
    let dir = workspace(&format!("{agent}{judge}{panel}"));
    let out = doctor(dir.path(), &[]);
    assert!(!check(&out, "judge").contains("warning"), "{}", out.stdout);
    let probed = check(&out, "judge.panel");
    assert!(probed.contains("gpt-5-mini at"), "{probed}");
    assert!(probed.contains("answers"), "{probed}");

    // An agent whose family is not known is never warned about.
    let dir = workspace(&format!(
        "[executor]\nkind = \"command\"\ncommand = [\"true\"]\n{judge}"
    ));
    assert!(!check(&doctor(dir.path(), &[]), "judge").contains("warning"));
}
