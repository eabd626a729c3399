//! `tether.toml`: tether's configuration, loaded, validated and documented.
//!
//! [`load()`] finds the file (`<workspace>/tether.toml`, or `TETHER_CONFIG`), applies the
//! environment's overrides, and validates everything at once against a [`Schema`]: every
//! problem is collected as a [`Problem`] with its line and key path, so `tether validate` can
//! list them all. API keys are only ever read from environment variables named in the file, and
//! held as [`Secret`]. [`Workspace`] is where everything lives on disk: the config, the plan,
//! `.tether/`. What a configuration is read from is a [`Source`] (the text, the file, the
//! variables that configure), which a run records without its credentials ([`Recorded`]) and
//! parses again.
//!
//! The schema is the core tables (the models, the loop, `[human]`, `[notify]`, the executor,
//! the store, the sandbox…) and the tables integrations declare: tether-config names no
//! channel, sink or agent. An integration declares its table once ([`TableDecl`]: its keys with
//! their descriptions and template lines, which name a secret's variable or are a credential,
//! which a variable overrides) with the function reading it through a [`TableReader`] into its
//! own type; its caller assembles the [`Schema`] from its registries. From the declarations
//! tether-config reads and checks each table, writes the template `tether init` writes
//! ([`Schema::template`]), lists the spellings of `human.channels` and `human.escalate_to`, and
//! keeps the variables of every declared secret from the agent ([`Config::key_vars`]); the
//! integration reads its settings back typed ([`Config::integration`]).
//!
//! ```
//! use std::path::Path;
//! use tether_config::{MapEnv, Schema, parse};
//!
//! let schema = Schema::core();
//! let env = MapEnv::new().with("TETHER_STORE_URL", "postgres://db.example/tether");
//! let text = "[loop]\nmax_iterations = 50\n";
//! let config = parse(&schema, text, Path::new("tether.toml"), &env)?;
//! assert_eq!(config.r#loop.max_iterations, 50);
//! assert_eq!(config.store.url.as_deref(), Some("postgres://db.example/tether"));
//!
//! let text = "[loop]\nmax_iteratons = 50\n";
//! let err = parse(&schema, text, Path::new("tether.toml"), &env).unwrap_err();
//! assert_eq!(
//!     err.problems()[0].to_string(),
//!     "tether.toml:2: loop.max_iteratons: unknown key; did you mean `max_iterations`?"
//! );
//! # Ok::<(), tether_config::ConfigError>(())
//! ```

#![deny(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod apart;
mod assembled;
mod budget;
mod checks;
mod config;
mod declare;
mod env;
mod error;
mod escalation;
mod file;
mod hidden;
mod integrations;
mod isolation;
mod key_settings;
mod keys;
mod load;
mod missing;
mod model;
mod notify;
mod reader;
mod record;
mod schedule;
mod schema;
mod secret;
mod source;
mod suggest;
mod syntax;
mod table_reader;
mod template;
pub mod values;
mod workspace;

#[cfg(test)]
extern crate self as tether_config;
#[cfg(test)]
pub(crate) mod test_table;

pub use assembled::Schema;
pub use budget::{Price, TokenCounts};
pub use config::{
    Channel, Config, ExecutorConfig, ExecutorKind, HumanConfig, HumanTimeout, IterationContext,
    LoopConfig, OnUsageLimit, Permissions, STORE_URL_VAR, ServerConfig, StoreConfig,
};
pub use declare::{
    AgentDecl, EscalationArg, KeyDecl, KeyKind, ReadTable, Role, Settings, TableDecl,
};
pub use env::{Env, MapEnv, ProcessEnv, keep_secrets, kept_secret};
pub use error::{ConfigError, Problem};
pub use escalation::EscalationTarget;
pub use file::MAX_CONFIG_BYTES;
pub use integrations::Integrations;
pub use isolation::{RunConfig, SandboxConfig, SandboxMode};
pub use load::{
    CONFIG_ENV, FILE_NAME, Loaded, Parsed, check, load, load_store, parse, parse_with_warnings,
    read,
};
pub use missing::{MissingSetting, given, given_secret};
pub use model::{Agree, Api, JudgeConfig, LoopJudgeConfig, ModelConfig, PlanningConfig};
pub use notify::{NoticeKind, NotifyConfig};
pub use record::{Change, Recorded};
pub use schedule::ScheduleConfig;
pub use secret::Secret;
pub use source::Source;
pub use table_reader::TableReader;
pub use tether_budget::Budget;
pub use workspace::{STATE_DIR, Workspace};
