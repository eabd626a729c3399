//! The typed configuration: one struct per `tether.toml` table, with its defaults.
//!
//! These types hold only validated values; they are built by the schema walk in `schema.rs`,
//! never deserialized directly, so every problem can be reported with its line.

use std::path::{Path, PathBuf};

use std::borrow::Cow;

use crate::Settings;
use crate::integrations::Integrations;
use crate::model::{JudgeConfig, LoopJudgeConfig, ModelConfig, PlanningConfig};
use crate::notify::NotifyConfig;

/// A whole, validated `tether.toml` with the environment's overrides applied: the core tables
/// as fields, the tables integrations declare in [`Config::integrations`], read back typed by
/// each integration ([`Config::integration`]).
///
/// Its `Debug` never shows a key: keys are held as [`crate::Secret`].
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// The plan file, relative to the workspace root (or absolute).
    pub plan: PathBuf,
    /// The built-in agent's model; `None` when `[model]` is absent.
    pub model: Option<ModelConfig>,
    /// The sign-off judge; `None` when `[judge]` is absent.
    pub judge: Option<JudgeConfig>,
    /// The loop judge; `None` when `[loop_judge]` is absent.
    pub loop_judge: Option<LoopJudgeConfig>,
    /// The model answering side questions (`tether side`); `None` when `[side]` is absent
    /// (then [`Config::side_model`] is `[model]`).
    pub side: Option<ModelConfig>,
    /// Plan mode's model over `[model]`; `None` when `[planning]` is absent.
    pub planning: Option<PlanningConfig>,
    /// Loop budgets and stop rules (`[loop]`).
    pub r#loop: LoopConfig,
    /// How and when a human is asked (`[human]`).
    pub human: HumanConfig,
    /// What a run tells its channels unprompted (`[notify]`).
    pub notify: NotifyConfig,
    /// The settings of the tables integrations declare (a channel's, a sink's), by table, as
    /// the schema it was read with lists them.
    pub integrations: Integrations,
    /// Who does the work (`[executor]`).
    pub executor: ExecutorConfig,
    /// The dashboard (`[server]`).
    pub server: ServerConfig,
    /// Where runs, questions and verdicts are kept (`[store]` plus `TETHER_STORE_URL`).
    pub store: StoreConfig,
    /// The sandbox children run in (`[sandbox]`).
    pub sandbox: crate::SandboxConfig,
    /// Where a run works and what it leaves (`[run]`).
    pub run: crate::RunConfig,
    /// How `tether schedule run` keeps schedules (`[schedule]`).
    pub schedule: crate::ScheduleConfig,
}

impl Config {
    /// Default for `plan`.
    pub const DEFAULT_PLAN: &'static str = "plan.md";

    /// The endpoint plan mode drafts with: `[planning]` over `[model]` (or `[model]` alone).
    pub fn planning_model(&self) -> Option<ModelConfig> {
        match &self.planning {
            Some(planning) => planning.over(self.model.as_ref()),
            None => self.model.clone(),
        }
    }

    /// The endpoint side questions (`tether side`) are answered with: `[side]`, else `[model]`;
    /// `None` when neither is set.
    pub fn side_model(&self) -> Option<&ModelConfig> {
        self.side.as_ref().or(self.model.as_ref())
    }

    /// The plan file's path, resolved against the workspace root.
    pub fn plan_path(&self, workspace_root: &Path) -> PathBuf {
        workspace_root.join(&self.plan)
    }

    /// The configuration with every core default and the defaults of `schema`'s declared
    /// tables: what an empty file says with nothing in the environment.
    pub fn defaults(schema: &crate::Schema) -> Config {
        Config {
            integrations: Integrations::defaults(schema),
            ..Config::default()
        }
    }

    /// The settings an integration declared and read, typed: its table's as read with this
    /// configuration, or its defaults when the configuration was read without its table.
    pub fn integration<T: Settings + Clone + Default>(&self) -> Cow<'_, T> {
        match self.integrations.get::<T>() {
            Some(settings) => Cow::Borrowed(settings),
            None => Cow::Owned(T::default()),
        }
    }

    /// The names of the environment variables holding tether's own keys (the model's, the
    /// judge's, a channel's or a sink's), each once: to be removed from the environment of
    /// commands an agent runs, so a key never reaches a transcript or a model.
    ///
    /// They are what the settings naming a key's variable name: the core tables' (listed in
    /// `key_settings.rs`) and every key a declared table declares as a secret's variable, so
    /// none can be forgotten here.
    pub fn key_vars(&self) -> Vec<String> {
        let mut vars: Vec<String> = Vec::new();
        for named in crate::key_settings::named(self) {
            if let Some(var) = named.var
                && !vars.iter().any(|v| v == var)
            {
                vars.push(var.to_owned());
            }
        }
        vars
    }

    /// The setting that names `var` as one of tether's own keys (`[model] api_key_env`), if
    /// one does.
    pub fn key_setting(&self, var: &str) -> Option<String> {
        crate::key_settings::named(self)
            .into_iter()
            .find(|named| named.var == Some(var))
            .map(|named| format!("[{}] {}", named.table, named.key))
    }
}

/// The core tables' defaults, read against no declared table: no integration's settings (each
/// reads as its own defaults) and none of its secrets' variables. A configuration read against
/// a schema with nothing said is [`Config::defaults`].
impl Default for Config {
    fn default() -> Self {
        Self {
            plan: PathBuf::from(Self::DEFAULT_PLAN),
            model: None,
            judge: None,
            loop_judge: None,
            side: None,
            planning: None,
            r#loop: LoopConfig::default(),
            human: HumanConfig::default(),
            notify: NotifyConfig::default(),
            integrations: Integrations::default(),
            executor: ExecutorConfig::default(),
            server: ServerConfig::default(),
            store: StoreConfig::default(),
            sandbox: crate::SandboxConfig::default(),
            run: crate::RunConfig::default(),
            schedule: crate::ScheduleConfig::default(),
        }
    }
}

/// Budgets and stop rules of the loops (`[loop]`).
#[derive(Debug, Clone, PartialEq)]
pub struct LoopConfig {
    /// Iteration budget; `0` means unlimited. At most [`LoopConfig::MAX_ITERATIONS_CEILING`].
    pub max_iterations: u32,
    /// The budgets in the other units (`max_tokens`, `max_cost_usd`, `max_duration`); its
    /// `iterations` is never set here (that is `max_iterations`).
    pub budget: tether_budget::Budget,
    /// Rejections of one goal in a row after which a person is asked how to go on; `0` never
    /// asks.
    pub escalate_after_rejects: u32,
    /// Spins (no tool call, no file change) in a row that pause the run as blocked.
    pub spin_guard: u32,
    /// Identical failing verify outputs in a row that trigger the oscillation nudge.
    pub oscillation_repeats: u32,
    /// Iterations changing files but not the plan before the upkeep reminder.
    pub reminder_after: u32,
    /// Clean-end reminders before the run pauses for a human.
    pub clean_end_reminders: u32,
    /// Timeout of one `verify` command, in seconds.
    pub verify_timeout_secs: u64,
    /// Consecutive failed agent iterations that stop a Ralph loop.
    pub max_consecutive_failures: u32,
    /// What the agent keeps between the iterations of a goal run.
    pub context: IterationContext,
}

impl LoopConfig {
    /// The hard ceiling on `max_iterations` (and on `--max-iterations`).
    pub const MAX_ITERATIONS_CEILING: u32 = 20_000;
}

impl Default for LoopConfig {
    fn default() -> Self {
        Self {
            max_iterations: 20,
            budget: tether_budget::Budget::default(),
            escalate_after_rejects: 3,
            spin_guard: 2,
            oscillation_repeats: 3,
            reminder_after: 3,
            clean_end_reminders: 2,
            verify_timeout_secs: 600,
            max_consecutive_failures: 3,
            context: IterationContext::default(),
        }
    }
}

/// What the agent keeps between the iterations of a goal run (`loop.context`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum IterationContext {
    /// Every iteration starts from a fresh context: the prompt, the plan and the repository.
    #[default]
    Fresh,
    /// The agent continues its session of the last iteration, told only what is new; a fresh
    /// context when that session cannot be taken up.
    Continue,
}

impl IterationContext {
    /// Every choice with its spelling in `tether.toml`.
    pub const CHOICES: [(&'static str, IterationContext); 2] = [
        ("fresh", IterationContext::Fresh),
        ("continue", IterationContext::Continue),
    ];
}

/// A way a human can answer a question, as `human.channels` spells it.
///
/// The terminal and the CLI are always on, listed or not: the terminal whenever tether runs in
/// one (stdin and stderr are terminals), the CLI always. `web` is on whenever a dashboard serves
/// the workspace (`tether serve`, or the one every loop starts). Every other channel is an
/// integration's: the name of the table it declares ([`crate::TableDecl::channel`]), so the
/// spellings `human.channels` takes are the schema's ([`crate::Schema::channels`]), never a list
/// written here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Channel(&'static str);

impl Channel {
    /// A prompt in the terminal tether runs in; always on when there is one.
    pub const TERMINAL: Channel = Channel("terminal");
    /// `tether questions` / `tether answer` from any shell; always on.
    pub const CLI: Channel = Channel("cli");
    /// The dashboard's answer form; on whenever a dashboard serves the workspace.
    pub const WEB: Channel = Channel("web");
    /// The channels that are tether's own, not an integration's.
    pub const OWN: [Channel; 3] = [Channel::TERMINAL, Channel::CLI, Channel::WEB];

    /// The channel spelled `name`: an integration's, by its table's name.
    pub const fn named(name: &'static str) -> Channel {
        Channel(name)
    }

    /// The spelling in `tether.toml`.
    pub fn as_str(self) -> &'static str {
        self.0
    }
}

/// Where runs, questions and verdicts are kept (`[store]`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StoreConfig {
    /// A team store shared by several machines: a PostgreSQL URL without a password
    /// (`TETHER_STORE_URL` overrides `[store] url`, and may carry one). `None`: the workspace's
    /// own `.tether/tether.db`.
    pub url: Option<String>,
}

/// The variable naming a team store, overriding `[store] url`.
pub const STORE_URL_VAR: &str = "TETHER_STORE_URL";

/// The dashboard (`[server]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    /// Where the dashboard of `tether run` / `tether ralph` listens, and `tether serve`'s
    /// default: an IP address and port (port 0 picks a free one).
    pub listen: std::net::SocketAddr,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            listen: std::net::SocketAddr::from(([127, 0, 0, 1], 0)),
        }
    }
}

/// What happens when nobody answers a question in time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HumanTimeout {
    /// Seconds to wait for an answer.
    pub secs: u64,
    /// The answer given to the agent when the time is up.
    pub on_timeout: String,
}

/// How and when a human is asked (`[human]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HumanConfig {
    /// Who the person at this machine is, as their acts are recorded (approvals, answers typed
    /// here, sign-offs and cancels by hand); `None`: git's `user.name`, else `$USER`.
    pub name: Option<String>,
    /// Interaction threshold, 0 (never ask) to 5 (confirm everything).
    pub threshold: u8,
    /// Channels a question is offered on, without duplicates, in file order.
    pub channels: Vec<Channel>,
    /// `None` (the default) waits forever.
    pub timeout: Option<HumanTimeout>,
    /// Command prefixes that need a human's yes before they run.
    pub ask_before: Vec<String>,
    /// Seconds after which the channels of a question still waiting are reminded of it.
    pub remind_after_secs: Option<u64>,
    /// Seconds after which a question still waiting is offered on `escalate_to` too.
    pub escalate_after_secs: Option<u64>,
    /// The sinks a question is escalated to.
    pub escalate_to: Vec<crate::EscalationTarget>,
}

impl HumanConfig {
    /// The answer used when `timeout_secs` is set without `on_timeout`.
    pub const DEFAULT_ON_TIMEOUT: &'static str =
        "Proceed with your best judgement and note the assumption in the plan log.";
}

impl Default for HumanConfig {
    fn default() -> Self {
        Self {
            name: None,
            threshold: 2,
            channels: vec![Channel::TERMINAL, Channel::CLI],
            timeout: None,
            ask_before: Vec::new(),
            remind_after_secs: None,
            escalate_after_secs: None,
            escalate_to: Vec::new(),
        }
    }
}

/// Which agent does the work: tether's own, a command, an ACP agent, or an agent CLI tether
/// drives — spelled as its descriptor registers it ([`crate::AgentDecl`], handed to the
/// schema with [`crate::Schema::with_agents`]), so no list of agent CLIs is written here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ExecutorKind {
    /// tether's own agent on `[model]`.
    #[default]
    Builtin,
    /// Any CLI, given by `executor.command`.
    Command,
    /// Any agent speaking the Agent Client Protocol (`executor.program`), its permission
    /// requests decided by `executor.permissions`.
    Acp,
    /// An agent CLI tether drives (Claude Code, Codex, pi), with tether's tools served over
    /// MCP: its spelling in `tether.toml` (`claude`).
    Cli(&'static str),
}

impl ExecutorKind {
    /// The kinds that are tether's own, with their spellings: the agent CLIs' come between
    /// `builtin` and these two ([`crate::Schema::executor_kinds`]).
    pub const OWN: [(&'static str, ExecutorKind); 3] = [
        ("builtin", ExecutorKind::Builtin),
        ("command", ExecutorKind::Command),
        ("acp", ExecutorKind::Acp),
    ];

    /// The spelling in `tether.toml`.
    pub fn as_str(self) -> &'static str {
        match self {
            ExecutorKind::Builtin => "builtin",
            ExecutorKind::Command => "command",
            ExecutorKind::Acp => "acp",
            ExecutorKind::Cli(kind) => kind,
        }
    }

    /// Whether the kind is an external agent CLI driven by tether (`program`, `args`, `env`
    /// and `turn_timeout_secs` apply): a registered agent CLI or an ACP agent.
    pub fn is_agent_cli(self) -> bool {
        matches!(self, ExecutorKind::Cli(_) | ExecutorKind::Acp)
    }
}

/// Who does the work (`[executor]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecutorConfig {
    /// The driver.
    pub kind: ExecutorKind,
    /// The program and its arguments: non-empty exactly when `kind` is
    /// [`ExecutorKind::Command`], empty otherwise.
    pub command: Vec<String>,
    /// The agent CLI's program (an external agent kind only; default: its name on `PATH`).
    pub program: Option<String>,
    /// Extra arguments given to the agent CLI (e.g. `--model`), after tether's own.
    pub args: Vec<String>,
    /// Extra environment variables for the agent CLI, by name.
    pub env: Vec<(String, String)>,
    /// How long one turn of the agent CLI may take, in seconds (default: a day).
    pub turn_timeout_secs: Option<u64>,
    /// How an ACP agent's permission requests are decided (kind `acp` only).
    pub permissions: Permissions,
    /// What the loop does when the agent hits a usage or rate limit.
    pub on_usage_limit: OnUsageLimit,
    /// The longest the loop waits out usage limits in a row, in seconds, before it pauses the
    /// run instead.
    pub max_usage_wait_secs: u64,
    /// The first wait for a limit without a reset time, in seconds; it doubles with each limit
    /// in a row (up to half an hour).
    pub usage_backoff_secs: u64,
}

impl ExecutorConfig {
    /// Default for `executor.max_usage_wait_secs`: a day, longer than a subscription's
    /// five-hour window.
    pub const DEFAULT_MAX_USAGE_WAIT_SECS: u64 = 24 * 3600;
    /// Default for `executor.usage_backoff_secs`.
    pub const DEFAULT_USAGE_BACKOFF_SECS: u64 = 60;
}

impl Default for ExecutorConfig {
    fn default() -> Self {
        Self {
            kind: ExecutorKind::default(),
            command: Vec::new(),
            program: None,
            args: Vec::new(),
            env: Vec::new(),
            turn_timeout_secs: None,
            permissions: Permissions::default(),
            on_usage_limit: OnUsageLimit::default(),
            max_usage_wait_secs: Self::DEFAULT_MAX_USAGE_WAIT_SECS,
            usage_backoff_secs: Self::DEFAULT_USAGE_BACKOFF_SECS,
        }
    }
}

/// How an ACP agent's permission requests are decided (`executor.permissions`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Permissions {
    /// A call matching `ask_before` (global or the active goals') is put to a person; every
    /// other call is allowed.
    #[default]
    AskBefore,
    /// Every call is allowed (`ask_before` still holds the matching ones).
    Allow,
    /// Every call that changes something is put to a person (reads are allowed).
    AskAll,
}

impl Permissions {
    /// Every choice with its spelling in `tether.toml`.
    pub const CHOICES: [(&'static str, Permissions); 3] = [
        ("ask_before", Permissions::AskBefore),
        ("allow", Permissions::Allow),
        ("ask_all", Permissions::AskAll),
    ];
}

/// What the loop does when the agent hits a usage or rate limit (`executor.on_usage_limit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum OnUsageLimit {
    /// Wait until the limit resets (or back off), then run the same iteration again.
    #[default]
    Wait,
    /// Pause the run with the limit as the reason; `tether resume` continues it.
    Stop,
}

impl OnUsageLimit {
    /// Every choice with its spelling in `tether.toml`.
    pub const CHOICES: [(&'static str, OnUsageLimit); 2] =
        [("wait", OnUsageLimit::Wait), ("stop", OnUsageLimit::Stop)];
}
