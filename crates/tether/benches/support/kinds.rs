//! The agent CLIs the bench drives: how each runs directly against the fake model server, and
//! with tether's MCP server the way tether's executor runs it. A kind without a setup (its
//! executor is not built yet) is skipped.

use std::path::Path;

use serde_json::json;
use tether_config::Api;
use tether_testkit::model_server::FakeModelServer;

/// One agent CLI: how to run it directly and how tether.toml names it.
pub struct Kind {
    /// `[executor] kind`.
    pub name: &'static str,
    /// The variable holding the CLI's path.
    pub var: &'static str,
    /// Its settings for a workspace: the environment pointing it at the server, the direct
    /// command line, and the command line with tether's MCP server as tether gives it.
    pub setup: Option<SetupFn>,
}

/// Builds a [`Setup`] for a workspace, a CLI program and the server.
pub type SetupFn = fn(&Path, &str, &FakeModelServer) -> Setup;

pub struct Setup {
    /// The environment pointing the CLI at the server.
    pub env: Vec<(String, String)>,
    /// The direct command line.
    pub direct: Vec<String>,
    /// The command line with tether's MCP server, as tether gives it.
    pub with_mcp: Vec<String>,
    /// Variables set for the run with tether's MCP server only.
    pub with_mcp_env: Vec<(String, String)>,
    /// `[executor] args` (after tether's own).
    pub args: Vec<String>,
    /// Variables tether's executor sets itself, left out of `[executor] env`.
    pub own_env: Vec<&'static str>,
}

pub const KINDS: [Kind; 3] = [
    Kind {
        name: "claude",
        var: "TETHER_TEST_CLAUDE",
        setup: Some(claude),
    },
    Kind {
        name: "codex",
        var: "TETHER_TEST_CODEX",
        setup: Some(codex),
    },
    Kind {
        name: "pi",
        var: "TETHER_TEST_PI",
        setup: Some(pi),
    },
];

fn claude(ws: &Path, program: &str, server: &FakeModelServer) -> Setup {
    let config = ws.join(".claude-config");
    std::fs::create_dir_all(&config).unwrap();
    let env = [
        ("ANTHROPIC_BASE_URL", server.base_url(Api::Anthropic)),
        ("ANTHROPIC_API_KEY", "sk-fake".to_owned()),
        ("CLAUDE_CONFIG_DIR", config.display().to_string()),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".to_owned()),
        ("DISABLE_AUTOUPDATER", "1".to_owned()),
        ("DISABLE_TELEMETRY", "1".to_owned()),
    ];
    let env: Vec<(String, String)> = env.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
    let direct: Vec<String> = [program, "-p", "--verbose", "--output-format", "stream-json"]
        .map(str::to_owned)
        .to_vec();
    // What tether's executor adds (see the README's Claude Code section).
    let mcp = ws.join("bench-mcp.json");
    let server_config = json!({"mcpServers": {"tether": {
        "command": env!("CARGO_BIN_EXE_tether"),
        "args": ["mcp", "-C", ws.display().to_string()],
        "alwaysLoad": true,
    }}});
    std::fs::write(&mcp, server_config.to_string()).unwrap();
    let mut with_mcp = direct.clone();
    with_mcp.extend(
        [
            "--strict-mcp-config",
            "--permission-mode",
            "acceptEdits",
            "--disallowedTools",
            &tether_agent::CLAUDE_UNATTENDED.join(","),
            "--allowedTools",
            &tether_agent::CLAUDE_TOOLS.join(","),
            "--mcp-config",
            &mcp.display().to_string(),
            "--settings",
            &claude_gate(ws, program),
        ]
        .map(str::to_owned),
    );
    Setup {
        env,
        direct,
        with_mcp,
        with_mcp_env: Vec::new(),
        args: Vec::new(),
        own_env: Vec::new(),
    }
}

/// Codex on the fake server through a `CODEX_HOME` of the bench's; with tether's MCP server
/// given by `-c` overrides, as tether's executor gives it.
fn codex(ws: &Path, program: &str, server: &FakeModelServer) -> Setup {
    let home = ws.join(".codex-home");
    std::fs::create_dir_all(&home).unwrap();
    let config = format!(
        "model = \"fake-model\"\nmodel_provider = \"fake\"\n\
         check_for_update_on_startup = false\n\
         [model_providers.fake]\nname = \"Fake\"\nbase_url = {base:?}\n\
         env_key = \"FAKE_API_KEY\"\nwire_api = \"responses\"\n\
         request_max_retries = 0\nstream_max_retries = 0\n",
        base = server.base_url(Api::OpenAiResponses),
    );
    std::fs::write(home.join("config.toml"), config).unwrap();
    let workspace = ws.display().to_string();
    let exec = [
        program,
        "exec",
        "--json",
        "--skip-git-repo-check",
        "--color",
        "never",
        "-C",
        &workspace,
        "-s",
        "workspace-write",
    ]
    .map(str::to_owned)
    .to_vec();
    let quote = |s: &str| serde_json::Value::from(s).to_string();
    let mut with_mcp = exec.clone();
    for value in [
        format!(
            "mcp_servers.tether.command={}",
            quote(env!("CARGO_BIN_EXE_tether"))
        ),
        format!(
            "mcp_servers.tether.args=[{},{},{}]",
            quote("mcp"),
            quote("-C"),
            quote(&workspace)
        ),
        "mcp_servers.tether.default_tools_approval_mode=\"approve\"".to_owned(),
        "mcp_servers.tether.enabled=true".to_owned(),
        "features.goals=false".to_owned(),
    ] {
        with_mcp.extend(["-c".to_owned(), value]);
    }
    let mut direct = exec;
    direct.push("-".to_owned());
    with_mcp.push("-".to_owned());
    Setup {
        env: vec![
            ("CODEX_HOME".to_owned(), home.display().to_string()),
            ("FAKE_API_KEY".to_owned(), "sk-fake".to_owned()),
        ],
        direct,
        with_mcp,
        with_mcp_env: Vec::new(),
        args: Vec::new(),
        own_env: Vec::new(),
    }
}

/// The inline settings tether gives a working Claude Code turn: its `ask_before` hook.
fn claude_gate(ws: &Path, program: &str) -> String {
    let settings = tether_agent::CliSettings {
        program: program.to_owned(),
        args: Vec::new(),
        env: Vec::new(),
        turn_timeout: std::time::Duration::from_secs(600),
        workspace: ws.to_owned(),
        tether: env!("CARGO_BIN_EXE_tether").into(),
        env_remove: Vec::new(),
        mcp_extra: Vec::new(),
        sandbox: None,
        read_only_sandbox: None,
        scratch: None,
        bridge: None,
        config_dir: None,
    };
    let cli = tether_agent::cli::Cli::new(
        tether_agent::cli::find("claude").unwrap(),
        settings,
        std::sync::Arc::new(|| None),
    );
    tether_agent::claude_gate_settings(&cli)
}

/// pi on the fake server as a provider of the user's own pi directory; with tether's MCP server,
/// an agent directory beside it whose `mcp.json` names tether's server (as tether writes one).
fn pi(ws: &Path, program: &str, server: &FakeModelServer) -> Setup {
    let user = ws.join(".pi-user");
    std::fs::create_dir_all(&user).unwrap();
    let models = json!({"providers": {"fake": {
        "baseUrl": server.base_url(Api::OpenAiChat),
        "api": "openai-completions",
        "apiKey": "sk-fake",
        "models": [{"id": "fake-model", "contextWindow": 128000, "maxTokens": 4096}],
    }}});
    std::fs::write(user.join("models.json"), models.to_string()).unwrap();
    std::fs::write(user.join("settings.json"), r#"{"retry":{"enabled":false}}"#).unwrap();
    let with_tether = ws.join(".pi-bench-agent");
    std::fs::create_dir_all(&with_tether).unwrap();
    for file in ["models.json", "settings.json"] {
        std::fs::copy(user.join(file), with_tether.join(file)).unwrap();
    }
    let mcp = json!({"mcpServers": {"tether": {
        "command": env!("CARGO_BIN_EXE_tether"),
        "args": ["mcp", "-C", ws.display().to_string()],
        "exposure": "direct",
        "timeout": 604800,
    }}});
    std::fs::write(with_tether.join("mcp.json"), mcp.to_string()).unwrap();
    let args = ["--model", "fake/fake-model"].map(str::to_owned).to_vec();
    let mut direct: Vec<String> = [program, "--mode", "json", "-p", "--no-session"]
        .map(str::to_owned)
        .to_vec();
    direct.extend(args.iter().cloned());
    Setup {
        env: vec![
            ("PI_CODING_AGENT_DIR".to_owned(), user.display().to_string()),
            ("PI_OFFLINE".to_owned(), "1".to_owned()),
            ("PI_SKIP_VERSION_CHECK".to_owned(), "1".to_owned()),
        ],
        with_mcp: direct.clone(),
        with_mcp_env: vec![(
            "PI_CODING_AGENT_DIR".to_owned(),
            with_tether.display().to_string(),
        )],
        direct,
        args,
        own_env: vec!["PI_SKIP_VERSION_CHECK"],
    }
}
