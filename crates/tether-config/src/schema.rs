//! Walks a parsed `tether.toml` against the schema (see `assembled.rs`) and builds a [`Config`]: the
//! core tables here, the declared ones by their own read functions (`integrations.rs`).
//!
//! Every rule that concerns one core table lives here; rules across tables are in `checks.rs`.
//! Invalid values leave the default in place and add a problem, so one walk finds them all.

use std::ops::Range;
use std::path::PathBuf;

use toml::de::DeTable;

use crate::config::{ExecutorKind, HumanConfig, HumanTimeout, StoreConfig};
use crate::env::{Env, non_empty};
use crate::integrations::Lacking;
use crate::model::{Agree, Api, JudgeConfig, LoopJudgeConfig, ModelConfig, PlanningConfig};
use crate::reader::{Reader, Table, entry, path_of};
use crate::{Config, escalation, integrations, keys, notify, values};

/// `(min, max)` of every integer setting. `max_iterations` 0 means unlimited.
pub(crate) mod range {
    pub(crate) const JUDGE_TIMEOUT_SECS: (i64, i64) = (1, 86_400);
    pub(crate) const MAX_ITERATIONS: (i64, i64) = (0, 20_000);
    pub(crate) const SPIN_GUARD: (i64, i64) = (1, 100);
    pub(crate) const OSCILLATION_REPEATS: (i64, i64) = (2, 100);
    pub(crate) const REMINDER_AFTER: (i64, i64) = (1, 100);
    pub(crate) const CLEAN_END_REMINDERS: (i64, i64) = (1, 100);
    pub(crate) const VERIFY_TIMEOUT_SECS: (i64, i64) = (1, 86_400);
    pub(crate) const MAX_CONSECUTIVE_FAILURES: (i64, i64) = (1, 100);
    pub(crate) const ESCALATE_AFTER_REJECTS: (i64, i64) = (0, 1000);
    pub(crate) const THRESHOLD: (i64, i64) = (0, 5);
    pub(crate) const HUMAN_TIMEOUT_SECS: (i64, i64) = (1, 2_592_000);
}

/// Where things were found, for the checks that span tables.
#[derive(Default)]
pub(crate) struct Marks {
    pub(crate) judge: Option<Range<usize>>,
    pub(crate) channels: Option<Range<usize>>,
    /// What each declared channel's table lacks.
    pub(crate) lacking: Lacking,
}

/// Reads the whole document. Problems go to `r`; the config holds defaults where values were
/// invalid.
pub(crate) fn read(doc: &DeTable, r: &mut Reader, env: &dyn Env) -> (Config, Marks) {
    let root = Table {
        path: "",
        entries: doc,
        span: None,
    };
    let mut config = Config::default();
    let mut marks = Marks::default();
    r.unknown_keys(
        &root,
        &r.schema.top_level(),
        Some("put the key in an environment variable named by `model.api_key_env`"),
    );
    if let Some(plan) = r.string(&root, "plan", values::non_empty) {
        config.plan = PathBuf::from(plan);
    }
    if let Some(t) = r.table(&root, "model") {
        config.model = read_endpoint(r, &t, keys::MODEL);
    }
    if let Some(t) = r.table(&root, "planning") {
        config.planning = Some(read_planning(r, &t, config.model.is_some()));
    }
    if let Some(t) = r.table(&root, "judge") {
        marks.judge.clone_from(&t.span);
        config.judge = read_judge(r, &t);
    }
    if let Some(t) = r.table(&root, "loop_judge") {
        config.loop_judge = read_loop_judge(r, &t);
    }
    if let Some(t) = r.table(&root, "side") {
        config.side = read_endpoint(r, &t, keys::SIDE);
    }
    if let Some(t) = r.table(&root, "loop") {
        read_loop(r, &t, &mut config.r#loop);
    }
    if let Some(t) = r.table(&root, "human") {
        marks.channels = entry(&t, "channels").map(|(_, v)| v.span());
        read_human(r, &t, &mut config.human);
    }
    if let Some(t) = r.table(&root, "notify") {
        notify::read_notify(r, &t, &mut config.notify);
    }
    (config.integrations, marks.lacking) = integrations::read(doc, r, env);
    if let Some(t) = r.table(&root, "executor") {
        read_executor(r, &t, &mut config.executor);
    }
    if let Some(t) = r.table(&root, "server") {
        r.unknown_keys(&t, keys::SERVER, None);
        if let Some(listen) = r.string(&t, "listen", socket_addr) {
            config.server.listen = listen.parse().unwrap_or(config.server.listen);
        }
    }
    if let Some(t) = r.table(&root, "sandbox") {
        let home = env.var("HOME");
        crate::isolation::read_sandbox(r, &t, home.as_deref(), &mut config.sandbox);
    }
    if let Some(t) = r.table(&root, "run") {
        crate::isolation::read_run(r, &t, &mut config.run);
    }
    if let Some(t) = r.table(&root, "schedule") {
        crate::schedule::read_schedule(r, &t, &mut config.schedule);
    }
    config.store = read_store(doc, r, env);
    (config, marks)
}

/// Reads `[store]` (if present) and applies `TETHER_STORE_URL`: also on its own, for commands
/// that need only to know where the store is.
pub(crate) fn read_store(doc: &DeTable, r: &mut Reader, env: &dyn Env) -> StoreConfig {
    let root = Table {
        path: "",
        entries: doc,
        span: None,
    };
    let mut store = StoreConfig::default();
    if let Some(t) = r.table(&root, "store") {
        r.unknown_keys(&t, keys::STORE, None);
        store.url = r.string(&t, "url", values::store_url);
    }
    if let Some(url) = non_empty(env, crate::config::STORE_URL_VAR) {
        store.url = Some(url);
    }
    store
}

fn int<T: TryFrom<i64>>(r: &mut Reader, t: &Table, key: &str, (min, max): (i64, i64)) -> Option<T> {
    r.int(t, key, min, max)
}

/// `[model]`, or the endpoint part of `[judge]`.
fn read_endpoint(r: &mut Reader, t: &Table, allowed: &[&str]) -> Option<ModelConfig> {
    let api = r.choice(t, "api", &Api::CHOICES);
    let base_url = r.string(t, "base_url", values::http_url);
    let model = r.string(t, "model", values::non_empty);
    let api_key_env = r.string(t, "api_key_env", values::env_var_name);
    let advice = match (&api_key_env, api) {
        (Some(var), _) => format!(
            "set the environment variable {var} instead (named by `{}`)",
            path_of(t.path, "api_key_env")
        ),
        (None, api) => {
            let var = api.map_or("OPENAI_API_KEY", Api::conventional_key_env);
            format!(
                "put the key in the environment variable {var} and set `{} = \"{var}\"`",
                path_of(t.path, "api_key_env")
            )
        }
    };
    r.unknown_keys(t, allowed, Some(&advice));
    let price = crate::budget::read_price(r, t);
    let required = ["api", "base_url", "model"];
    for key in required {
        if entry(t, key).is_none() {
            r.missing(t, key, &required);
        }
    }
    Some(ModelConfig {
        api: api?,
        base_url: base_url?,
        model: model?,
        api_key_env,
        price,
    })
}

/// `[planning]`: `[model]`'s keys, each optional; all three of `api`, `base_url` and `model`
/// are needed when there is no `[model]` to fall back on.
fn read_planning(r: &mut Reader, t: &Table, has_model: bool) -> PlanningConfig {
    r.unknown_keys(
        t,
        keys::PLANNING,
        Some("set the key's environment variable and name it with `planning.api_key_env`"),
    );
    let planning = PlanningConfig {
        api: r.choice(t, "api", &Api::CHOICES),
        base_url: r.string(t, "base_url", values::http_url),
        model: r.string(t, "model", values::non_empty),
        api_key_env: r.string(t, "api_key_env", values::env_var_name),
        price: crate::budget::read_price(r, t),
    };
    if !has_model {
        for key in ["api", "base_url", "model"] {
            if entry(t, key).is_none() {
                let message = "missing; without a [model], [planning] needs `api`, `base_url` \
                               and `model`";
                r.missing_with(t, key, message);
            }
        }
    }
    planning
}

fn read_loop_judge(r: &mut Reader, t: &Table) -> Option<LoopJudgeConfig> {
    let endpoint = read_endpoint(r, t, keys::LOOP_JUDGE);
    let timeout_secs = int(r, t, "timeout_secs", range::JUDGE_TIMEOUT_SECS);
    Some(LoopJudgeConfig {
        endpoint: endpoint?,
        timeout_secs: timeout_secs.unwrap_or(LoopJudgeConfig::DEFAULT_TIMEOUT_SECS),
    })
}

/// `[judge]` with its panel (`[[judge.panel]]`): `None` when it or any panel entry is wrong.
fn read_judge(r: &mut Reader, t: &Table) -> Option<JudgeConfig> {
    let judge = read_one_judge(r, t, keys::JUDGE);
    let agree = r.choice(t, "agree", &Agree::CHOICES);
    let panel: Vec<Option<JudgeConfig>> = r
        .tables(t, "panel", "judge.panel")
        .iter()
        .map(|entry| read_one_judge(r, entry, keys::JUDGE_PANEL))
        .collect();
    let panel = panel.into_iter().collect::<Option<Vec<_>>>()?;
    Some(JudgeConfig {
        agree: agree.unwrap_or_default(),
        panel,
        ..judge?
    })
}

/// One judge's keys (`allowed` are its table's).
fn read_one_judge(r: &mut Reader, t: &Table, allowed: &[&str]) -> Option<JudgeConfig> {
    let endpoint = read_endpoint(r, t, allowed);
    let same_model = r.bool(t, "same_model");
    let timeout_secs = int(r, t, "timeout_secs", range::JUDGE_TIMEOUT_SECS);
    Some(JudgeConfig {
        same_model: same_model.unwrap_or(JudgeConfig::DEFAULT_SAME_MODEL),
        timeout_secs: timeout_secs.unwrap_or(JudgeConfig::DEFAULT_TIMEOUT_SECS),
        ..JudgeConfig::single(endpoint?)
    })
}

fn read_loop(r: &mut Reader, t: &Table, out: &mut crate::LoopConfig) {
    r.unknown_keys(t, keys::LOOP, None);
    let set = |value: Option<u32>, slot: &mut u32| {
        if let Some(v) = value {
            *slot = v;
        }
    };
    set(
        int(r, t, "max_iterations", range::MAX_ITERATIONS),
        &mut out.max_iterations,
    );
    set(
        int(r, t, "spin_guard", range::SPIN_GUARD),
        &mut out.spin_guard,
    );
    let repeats = int(r, t, "oscillation_repeats", range::OSCILLATION_REPEATS);
    set(repeats, &mut out.oscillation_repeats);
    set(
        int(r, t, "reminder_after", range::REMINDER_AFTER),
        &mut out.reminder_after,
    );
    let clean = int(r, t, "clean_end_reminders", range::CLEAN_END_REMINDERS);
    set(clean, &mut out.clean_end_reminders);
    if let Some(v) = int(r, t, "verify_timeout_secs", range::VERIFY_TIMEOUT_SECS) {
        out.verify_timeout_secs = v;
    }
    let failures = int(
        r,
        t,
        "max_consecutive_failures",
        range::MAX_CONSECUTIVE_FAILURES,
    );
    set(failures, &mut out.max_consecutive_failures);
    let escalate = int(
        r,
        t,
        "escalate_after_rejects",
        range::ESCALATE_AFTER_REJECTS,
    );
    set(escalate, &mut out.escalate_after_rejects);
    if let Some(context) = r.choice(t, "context", &crate::IterationContext::CHOICES) {
        out.context = context;
    }
    crate::budget::read_loop_budget(r, t, &mut out.budget);
}

fn read_human(r: &mut Reader, t: &Table, out: &mut HumanConfig) {
    r.unknown_keys(t, keys::HUMAN, None);
    if let Some(name) = r.string(t, "name", values::person_name) {
        out.name = Some(name.trim().to_owned());
    }
    if let Some(v) = int(r, t, "threshold", range::THRESHOLD) {
        out.threshold = v;
    }
    if let Some(channels) = r.choice_list(t, "channels", &r.schema.channels()) {
        out.channels = channels;
    }
    let secs: Option<u64> = int(r, t, "timeout_secs", range::HUMAN_TIMEOUT_SECS);
    let on_timeout = r.string(t, "on_timeout", values::non_empty);
    if let Some(secs) = secs {
        out.timeout = Some(HumanTimeout {
            secs,
            on_timeout: on_timeout.unwrap_or_else(|| HumanConfig::DEFAULT_ON_TIMEOUT.to_owned()),
        });
    }
    if entry(t, "timeout_secs").is_none()
        && let Some((_, v)) = entry(t, "on_timeout")
    {
        r.report(
            Some(v.span()),
            "human.on_timeout",
            "has no effect without `human.timeout_secs` (absent = wait forever); \
             set timeout_secs or remove on_timeout",
        );
    }
    if let Some(prefixes) = r.string_list(t, "ask_before", values::non_empty) {
        out.ask_before = prefixes;
    }
    let schema = r.schema;
    escalation::read_escalation(r, t, schema, out);
}

fn read_executor(r: &mut Reader, t: &Table, out: &mut crate::ExecutorConfig) {
    r.unknown_keys(t, keys::EXECUTOR, None);
    let kind = r.choice(t, "kind", &r.schema.executor_kinds());
    let kind_given = entry(t, "kind").is_some();
    if let Some(kind) = kind {
        out.kind = kind;
    }
    let command = r.string_list(t, "command", |_| Ok(()));
    let command_span = entry(t, "command").map(|(_, v)| v.span());
    match (kind_given, kind, command_span) {
        // kind is invalid: which rule applies is unknown.
        (true, None, _) => {}
        (_, Some(ExecutorKind::Command), None) => r.missing_with(
            t,
            "command",
            "missing; kind = \"command\" needs the program and its arguments, \
             e.g. command = [\"my-agent\", \"--print\"]",
        ),
        (_, Some(ExecutorKind::Command), Some(span)) => match command {
            Some(argv) if argv.first().is_some_and(|p| !p.trim().is_empty()) => {
                out.command = argv;
            }
            Some(argv) if argv.is_empty() => r.report(
                Some(span),
                "executor.command",
                "must not be empty: it names the program and its arguments",
            ),
            Some(_) => r.report(
                Some(span),
                "executor.command",
                "item 1: the program must not be empty",
            ),
            None => {}
        },
        (_, _, Some(span)) => {
            let kind = out.kind.as_str();
            r.report(
                Some(span),
                "executor.command",
                format!(
                    "only used when kind = \"command\", but kind is {kind:?}; \
                     remove it or set kind = \"command\""
                ),
            );
        }
        (_, _, None) => {}
    }
    read_agent_cli(r, t, out);
    read_acp(r, t, out);
    if let Some(choice) = r.choice(t, "on_usage_limit", &crate::OnUsageLimit::CHOICES) {
        out.on_usage_limit = choice;
    }
    if let Some(secs) = r.int(t, "max_usage_wait_secs", 60, 30 * 24 * 3600) {
        out.max_usage_wait_secs = secs;
    }
    if let Some(secs) = r.int(t, "usage_backoff_secs", 1, 3600) {
        out.usage_backoff_secs = secs;
    }
}

/// `program`, `args`, `env` and `turn_timeout_secs`: the settings of an agent CLI kind.
fn read_agent_cli(r: &mut Reader, t: &Table, out: &mut crate::ExecutorConfig) {
    out.program = r.string(t, "program", |p| {
        if p.trim().is_empty() {
            Err("must not be empty: it names the agent's program".to_owned())
        } else {
            Ok(())
        }
    });
    out.args = r.string_list(t, "args", |_| Ok(())).unwrap_or_default();
    out.turn_timeout_secs = r.int(t, "turn_timeout_secs", 1, 30 * 24 * 3600);
    out.env = read_env(r, t);
    if out.kind.is_agent_cli() {
        return;
    }
    let agents: Vec<String> = r
        .schema
        .executor_kinds()
        .into_iter()
        .filter(|(_, kind)| kind.is_agent_cli())
        .map(|(name, _)| format!("{name:?}"))
        .collect();
    for key in ["program", "args", "env", "turn_timeout_secs"] {
        if let Some((_, value)) = entry(t, key) {
            let kind = out.kind.as_str();
            r.report(
                Some(value.span()),
                path_of("executor", key),
                format!(
                    "only used by an agent CLI kind ({}), but kind is {kind:?}; remove it",
                    agents.join(", ")
                ),
            );
        }
    }
}

/// `permissions` and the program an ACP agent needs.
fn read_acp(r: &mut Reader, t: &Table, out: &mut crate::ExecutorConfig) {
    if let Some(choice) = r.choice(t, "permissions", &crate::Permissions::CHOICES) {
        out.permissions = choice;
    }
    if out.kind == ExecutorKind::Acp {
        if out.program.is_none() && entry(t, "program").is_none() {
            r.missing_with(
                t,
                "program",
                "missing; kind = \"acp\" needs the agent's program, e.g. program = \
                 \"claude-agent-acp\" or program = \"gemini\" with args = [\"--acp\"]",
            );
        }
    } else if let Some((_, value)) = entry(t, "permissions") {
        let kind = out.kind.as_str();
        r.report(
            Some(value.span()),
            "executor.permissions",
            format!("only used when kind = \"acp\", but kind is {kind:?}; remove it"),
        );
    }
}

/// `executor.env`: a table of strings.
fn read_env(r: &mut Reader, t: &Table) -> Vec<(String, String)> {
    let Some((key, value)) = entry(t, "env") else {
        return Vec::new();
    };
    let toml::de::DeValue::Table(entries) = value.get_ref() else {
        r.report(
            Some(value.span()),
            "executor.env",
            "must be a table of strings, e.g. env = { ANTHROPIC_MODEL = \"sonnet\" }",
        );
        return Vec::new();
    };
    let env = Table {
        path: "executor.env",
        entries,
        span: Some(key.span()),
    };
    let mut out = Vec::new();
    for name in entries.keys() {
        let name = name.get_ref().to_string();
        if let Some(v) = r.string(&env, &name, |_| Ok(())) {
            out.push((name, v));
        }
    }
    out
}

fn socket_addr(value: &str) -> Result<(), String> {
    value
        .parse::<std::net::SocketAddr>()
        .map(|_| ())
        .map_err(|_| {
            format!(
                "must be an IP address and port such as 127.0.0.1:0 or [::1]:8080 \
                 (port 0 picks a free port), got {value:?}"
            )
        })
}
