//! Defaults, and that every key is read into the typed config.

use std::path::{Path, PathBuf};

use tether_config::{
    Api, Budget, Channel, Config, ExecutorConfig, ExecutorKind, HumanConfig, HumanTimeout,
    IterationContext, JudgeConfig, LoopConfig, LoopJudgeConfig, MapEnv, ModelConfig,
    PlanningConfig, Price, Secret, ServerConfig, TokenCounts,
};

use super::config;
use super::test_table::{PagerSettings, schema};

#[test]
fn empty_file_gives_the_documented_defaults() {
    let config = config("");
    assert_eq!(config, Config::defaults(&schema()));
    assert_eq!(config.plan, PathBuf::from("plan.md"));
    assert_eq!(config.model, None);
    assert_eq!(config.judge, None);
    assert_eq!(
        config.r#loop,
        LoopConfig {
            max_iterations: 20,
            budget: Budget::default(),
            escalate_after_rejects: 3,
            spin_guard: 2,
            oscillation_repeats: 3,
            reminder_after: 3,
            clean_end_reminders: 2,
            verify_timeout_secs: 600,
            max_consecutive_failures: 3,
            context: IterationContext::Fresh,
        }
    );
    assert_eq!(
        config.human,
        HumanConfig {
            name: None,
            threshold: 2,
            channels: vec![Channel::TERMINAL, Channel::CLI],
            timeout: None,
            ask_before: vec![],
            remind_after_secs: None,
            escalate_after_secs: None,
            escalate_to: vec![],
        }
    );
    assert_eq!(PagerSettings::of(&config), PagerSettings::default());
    assert_eq!(PagerSettings::of(&config).token_env, "PAGER_TOKEN");
    assert_eq!(config.executor.kind, ExecutorKind::Builtin);
    assert!(config.executor.command.is_empty());
}

#[test]
fn comments_and_empty_tables_keep_defaults() {
    let text = "# nothing\n[loop]\n[human]\n[pager]\n[executor]\n[server]\n";
    assert_eq!(config(text), Config::defaults(&schema()));
}

#[test]
fn every_key_is_read() {
    let text = r#"
plan = "docs/plan.md"

[model]
api = "openai-responses"
base_url = "https://api.openai.com/v1"
model = "gpt-5"
api_key_env = "OPENAI_API_KEY"
price_per_mtok = { input = 3, cached = 0.3, output = 15.0 }

[planning]
model = "gpt-5-pro"

[judge]
api = "anthropic"
base_url = "https://api.anthropic.com"
model = "claude-opus-4-5"
api_key_env = "ANTHROPIC_API_KEY"
same_model = true
timeout_secs = 120

[loop_judge]
api = "openai-chat"
base_url = "http://127.0.0.1:8080/v1"
model = "small"
price_per_mtok = { input = 0.1, output = 0.4 }
timeout_secs = 20

[side]
api = "anthropic"
base_url = "https://api.anthropic.com"
model = "claude-haiku-4-5"
api_key_env = "SIDE_KEY"

[loop]
max_iterations = 0
max_tokens = "400k"
max_cost_usd = 5
max_duration = "8h"
escalate_after_rejects = 4
spin_guard = 5
oscillation_repeats = 4
reminder_after = 6
clean_end_reminders = 7
verify_timeout_secs = 30
max_consecutive_failures = 9
context = "continue"

[human]
threshold = 4
channels = ["pager", "terminal"]
timeout_secs = 14400
on_timeout = "Pick the safer option."
ask_before = ["git push", "cargo publish"]

[pager]
url = "https://pager.example/hook"
room = "my-repo"
token_env = "MY_PAGER_KEY"
level = 5
notify = ["failed"]

[executor]
kind = "command"
command = ["my-agent", "--print", ""]
"#;
    let env = MapEnv::new().with("MY_PAGER_KEY", "pk");
    let config = super::config_with(text, &env);
    let expected = Config {
        plan: PathBuf::from("docs/plan.md"),
        model: Some(ModelConfig {
            api: Api::OpenAiResponses,
            base_url: "https://api.openai.com/v1".into(),
            model: "gpt-5".into(),
            api_key_env: Some("OPENAI_API_KEY".into()),
            price: Some(Price {
                input: 3.0,
                cache_read: 0.3,
                cache_write: 3.0,
                output: 15.0,
            }),
        }),
        judge: Some(JudgeConfig {
            endpoint: ModelConfig {
                api: Api::Anthropic,
                base_url: "https://api.anthropic.com".into(),
                model: "claude-opus-4-5".into(),
                api_key_env: Some("ANTHROPIC_API_KEY".into()),
                price: None,
            },
            same_model: true,
            timeout_secs: 120,
            agree: tether_config::Agree::All,
            panel: Vec::new(),
        }),
        planning: Some(PlanningConfig {
            model: Some("gpt-5-pro".into()),
            ..PlanningConfig::default()
        }),
        loop_judge: Some(LoopJudgeConfig {
            endpoint: ModelConfig {
                api: Api::OpenAiChat,
                base_url: "http://127.0.0.1:8080/v1".into(),
                model: "small".into(),
                api_key_env: None,
                price: Some(Price {
                    input: 0.1,
                    cache_read: 0.1,
                    cache_write: 0.1,
                    output: 0.4,
                }),
            },
            timeout_secs: 20,
        }),
        side: Some(ModelConfig {
            api: Api::Anthropic,
            base_url: "https://api.anthropic.com".into(),
            model: "claude-haiku-4-5".into(),
            api_key_env: Some("SIDE_KEY".into()),
            price: None,
        }),
        r#loop: LoopConfig {
            max_iterations: 0,
            budget: Budget {
                tokens: Some(400_000),
                cost_usd: Some(5.0),
                duration_secs: Some(8 * 3600),
                iterations: None,
            },
            escalate_after_rejects: 4,
            spin_guard: 5,
            oscillation_repeats: 4,
            reminder_after: 6,
            clean_end_reminders: 7,
            verify_timeout_secs: 30,
            max_consecutive_failures: 9,
            context: IterationContext::Continue,
        },
        human: HumanConfig {
            threshold: 4,
            channels: vec![Channel::named("pager"), Channel::TERMINAL],
            timeout: Some(HumanTimeout {
                secs: 14400,
                on_timeout: "Pick the safer option.".into(),
            }),
            ask_before: vec!["git push".into(), "cargo publish".into()],
            ..HumanConfig::default()
        },
        notify: tether_config::NotifyConfig::default(),
        integrations: config.integrations.clone(),
        executor: ExecutorConfig {
            kind: ExecutorKind::Command,
            command: vec!["my-agent".into(), "--print".into(), String::new()],
            ..ExecutorConfig::default()
        },
        server: ServerConfig::default(),
        store: tether_config::StoreConfig::default(),
        sandbox: tether_config::SandboxConfig::default(),
        run: tether_config::RunConfig::default(),
        schedule: tether_config::ScheduleConfig::default(),
    };
    assert_eq!(config, expected);
    assert_eq!(
        PagerSettings::of(&config),
        PagerSettings {
            url: Some(Secret::new("https://pager.example/hook")),
            room: Some("my-repo".into()),
            token_env: "MY_PAGER_KEY".into(),
            token: Some(Secret::new("pk")),
            level: 5,
            notify: Some(vec![tether_config::NoticeKind::Failed]),
        }
    );
    assert_eq!(
        config.key_vars(),
        [
            "OPENAI_API_KEY",
            "ANTHROPIC_API_KEY",
            "SIDE_KEY",
            "MY_PAGER_KEY"
        ]
    );
}

#[test]
fn a_human_timeout_without_an_answer_gets_the_default_answer() {
    let config = config("[human]\ntimeout_secs = 60\n");
    assert_eq!(
        config.human.timeout,
        Some(HumanTimeout {
            secs: 60,
            on_timeout: "Proceed with your best judgement and note the assumption in the plan log."
                .into(),
        })
    );
}

#[test]
fn judge_defaults_to_cross_model_and_ten_minutes() {
    let config = config(
        "[judge]\napi = \"anthropic\"\nbase_url = \"https://api.anthropic.com\"\nmodel = \"m\"\n",
    );
    let judge = config.judge.unwrap();
    assert!(!judge.same_model);
    assert_eq!(judge.timeout_secs, 600);
    assert_eq!(judge.endpoint.api_key_env, None);
}

#[test]
fn every_executor_kind_and_every_api_is_accepted() {
    for (name, kind) in schema().executor_kinds() {
        assert_eq!(kind.as_str(), name);
        let extra = match kind {
            ExecutorKind::Command => "command = [\"x\"]\n",
            ExecutorKind::Acp => "program = \"my-acp-agent\"\n",
            _ => "",
        };
        let config = config(&format!("[executor]\nkind = \"{name}\"\n{extra}"));
        assert_eq!(config.executor.kind, kind);
    }
    for (name, api) in Api::CHOICES {
        let text = format!("[model]\napi = \"{name}\"\nbase_url = \"http://h\"\nmodel = \"m\"\n");
        assert_eq!(config(&text).model.unwrap().api, api);
        assert_eq!(api.as_str(), name);
    }
    for (name, channel) in schema().channels() {
        assert_eq!(channel.as_str(), name);
        let text = format!("[human]\nchannels = [\"{name}\"]\n");
        assert_eq!(config(&text).human.channels, [channel]);
    }
    assert_eq!(
        schema()
            .channels()
            .into_iter()
            .map(|(name, _)| name)
            .collect::<Vec<_>>(),
        ["terminal", "cli", "web", "pager"]
    );
}

#[test]
fn an_empty_channel_list_is_allowed() {
    assert!(config("[human]\nchannels = []\n").human.channels.is_empty());
}

#[test]
fn dotted_keys_and_inline_tables_equal_table_headers() {
    let dotted = config("loop.spin_guard = 7\nhuman = { threshold = 4 }\n");
    let tables = config("[loop]\nspin_guard = 7\n[human]\nthreshold = 4\n");
    assert_eq!(dotted, tables);
    assert_eq!(dotted.r#loop.spin_guard, 7);
}

#[test]
fn integers_may_use_other_radixes_and_underscores() {
    let config = config("[loop]\nmax_iterations = 0x10\nverify_timeout_secs = 1_200\n");
    assert_eq!(config.r#loop.max_iterations, 16);
    assert_eq!(config.r#loop.verify_timeout_secs, 1200);
}

#[test]
fn the_plan_path_resolves_against_the_workspace_root() {
    let config = config("plan = \"docs/plan.md\"\n");
    assert_eq!(
        config.plan_path(Path::new("/ws")),
        PathBuf::from("/ws/docs/plan.md")
    );
}

#[test]
fn notify_is_read() {
    use tether_config::{NoticeKind, NotifyConfig};
    let text = "[notify]\non = [\"done\", \"paused\", \"signed_off\"]\ndesktop = false\n\
                rejected_after = 5\n";
    assert_eq!(
        config(text).notify,
        NotifyConfig {
            on: vec![NoticeKind::Done, NoticeKind::Paused, NoticeKind::SignedOff],
            desktop: false,
            rejected_after: 5,
        }
    );
}

#[test]
fn bad_budgets_and_prices_name_their_key_and_line() {
    let text = "[model]\napi = \"openai-chat\"\nbase_url = \"http://x\"\nmodel = \"m\"\n\
                price_per_mtok = { input = -1 }\n[loop]\nmax_tokens = \"lots\"\n\
                max_duration = \"2 hours\"\nmax_cost_usd = \"five\"\n";
    let err = tether_config::parse(&schema(), text, Path::new("tether.toml"), &MapEnv::new())
        .unwrap_err();
    let problems: Vec<String> = err.problems().iter().map(ToString::to_string).collect();
    assert_eq!(
        problems,
        [
            "tether.toml:5: model.price_per_mtok.input: must be a number of at least 0 (such as 3 or 0.3)",
            "tether.toml:5: model.price_per_mtok: needs `input` and `output` (US dollars per million tokens)",
            "tether.toml:7: loop.max_tokens: `lots` is not a token count (such as 400000, 400k or 1.5M)",
            "tether.toml:8: loop.max_duration: `2 hours` is not a duration (such as 45s, 90m, 2h, 1h30m or 2d)",
            "tether.toml:9: loop.max_cost_usd: `five` is not an amount of US dollars (such as 5, $5 or $0.50)",
        ]
    );
}

#[test]
fn a_price_gives_a_calls_cost() {
    let price = Price {
        input: 3.0,
        cache_read: 0.3,
        cache_write: 3.75,
        output: 15.0,
    };
    // 1M input of which 400k read from the cache and 200k written to it, 100k output:
    // 0.4M × $3 + 0.4M × $0.3 + 0.2M × $3.75 + 0.1M × $15.
    let cost = price.cost(TokenCounts {
        input: 1_000_000,
        cache_read: 400_000,
        cache_write: 200_000,
        output: 100_000,
    });
    assert!((cost - (1.2 + 0.12 + 0.75 + 1.5)).abs() < 1e-9, "{cost}");
    // Reads and writes are parts of the input, never more than it.
    let over = price.cost(TokenCounts {
        input: 100,
        cache_read: 80,
        cache_write: 80,
        output: 0,
    });
    assert!(
        (over - (80.0 * 0.3 + 20.0 * 3.75) / 1e6).abs() < 1e-12,
        "{over}"
    );
}

#[test]
fn price_keys_cache_read_cache_write_and_the_old_cached() {
    let price = |table: &str| {
        config(&format!(
            "[model]\napi = \"anthropic\"\nbase_url = \"http://m\"\nmodel = \"m\"\n\
             price_per_mtok = {table}\n"
        ))
        .model
        .unwrap()
        .price
        .unwrap()
    };
    let full = price("{ input = 3, cache_read = 0.3, cache_write = 3.75, output = 15 }");
    assert_eq!(
        (full.input, full.cache_read, full.cache_write, full.output),
        (3.0, 0.3, 3.75, 15.0)
    );
    let old = price("{ input = 3, cached = 0.3, output = 15 }");
    assert_eq!((old.cache_read, old.cache_write), (0.3, 3.0));
    let bare = price("{ input = 3, output = 15 }");
    assert_eq!((bare.cache_read, bare.cache_write), (3.0, 3.0));
}

#[test]
fn bad_cache_prices_name_their_key_and_line() {
    let text = "[model]\napi = \"anthropic\"\nbase_url = \"http://x\"\nmodel = \"m\"\n\
                price_per_mtok = { input = 3, output = 15, cache_write = \"a lot\" }\n\
                [judge]\napi = \"anthropic\"\nbase_url = \"http://y\"\nmodel = \"j\"\n\
                price_per_mtok = { input = 5, output = 25, cached = 0.5, cache_read = 0.5, \
                cache_rd = 1 }\n";
    let err = tether_config::parse(&schema(), text, Path::new("tether.toml"), &MapEnv::new())
        .unwrap_err();
    let problems: Vec<String> = err.problems().iter().map(ToString::to_string).collect();
    assert_eq!(
        problems,
        [
            "tether.toml:5: model.price_per_mtok.cache_write: must be a number of at least 0 (such as 3 or 0.3)",
            "tether.toml:10: judge.price_per_mtok.cache_rd: unknown key; price_per_mtok takes `input`, `cache_read`, `cache_write` and `output` (`cached` is the old spelling of `cache_read`)",
            "tether.toml:10: judge.price_per_mtok.cached: give `cache_read` alone: `cached` is its old spelling",
        ]
    );
}

#[test]
fn planning_overrides_the_model_and_stands_alone_only_when_complete() {
    let with_model = config(
        "[model]\napi = \"openai-chat\"\nbase_url = \"http://m\"\nmodel = \"small\"\n\
         api_key_env = \"K\"\n[planning]\nmodel = \"big\"\n",
    );
    let planning = with_model.planning_model().unwrap();
    assert_eq!(
        (planning.model.as_str(), planning.base_url.as_str()),
        ("big", "http://m")
    );
    assert_eq!(planning.api_key_env.as_deref(), Some("K"));
    assert!(with_model.key_vars().contains(&"K".to_owned()));
    let err = tether_config::parse(
        &schema(),
        "[planning]\nmodel = \"big\"\n",
        Path::new("tether.toml"),
        &MapEnv::new(),
    )
    .unwrap_err();
    let keys: Vec<String> = err.problems().iter().map(|p| p.key.clone()).collect();
    assert_eq!(keys, ["planning.api", "planning.base_url"]);
    assert_eq!(config("").planning_model(), None);
}

#[test]
fn side_is_its_own_endpoint_and_defaults_to_the_model() {
    let model = "[model]\napi = \"openai-chat\"\nbase_url = \"http://m\"\nmodel = \"worker\"\n";
    let alone = config(model);
    assert_eq!(alone.side, None);
    assert_eq!(alone.side_model().map(|m| m.model.as_str()), Some("worker"));
    let both = config(&format!(
        "{model}[side]\napi = \"anthropic\"\nbase_url = \"http://s\"\nmodel = \"asker\"\n\
         api_key_env = \"SIDE_K\"\n"
    ));
    let side = both.side_model().unwrap();
    assert_eq!(
        (side.api, side.base_url.as_str(), side.model.as_str()),
        (Api::Anthropic, "http://s", "asker")
    );
    assert!(both.key_vars().contains(&"SIDE_K".to_owned()));
    assert_eq!(config("").side_model(), None);
    let err = tether_config::parse(
        &schema(),
        "[side]\nmodel = \"asker\"\n",
        Path::new("tether.toml"),
        &MapEnv::new(),
    )
    .unwrap_err();
    let keys: Vec<String> = err.problems().iter().map(|p| p.key.clone()).collect();
    assert_eq!(keys, ["side.api", "side.base_url"]);
}
