//! `tether.toml`: tether's configuration, loaded, validated and documented.
//!
//! [`load()`] finds the file (`<workspace>/tether.toml`, or `TETHER_CONFIG`), applies the
//! environment's overrides, and validates everything at once: every problem is collected as a
//! [`Problem`] with its line and key path, so `tether validate` can list them all. API keys are
//! only ever read from environment variables named in the file, and held as [`Secret`].
//! [`Workspace`] is where everything lives on disk: the config, the plan, `.tether/`.
//! What a configuration is read from is a [`Source`] (the text, the file, the variables that
//! configure), which a run records without its credentials ([`Recorded`]) and parses again.
//!
//! ```
//! use std::path::Path;
//! use tether_config::{MapEnv, parse};
//!
//! let env = MapEnv::new().with("ZULIP_STREAM", "my-repo");
//! let config = parse("[loop]\nmax_iterations = 50\n", Path::new("tether.toml"), &env)?;
//! assert_eq!(config.r#loop.max_iterations, 50);
//! assert_eq!(config.zulip.stream.as_deref(), Some("my-repo"));
//!
//! let err = parse("[loop]\nmax_iteratons = 50\n", Path::new("tether.toml"), &env).unwrap_err();
//! assert_eq!(
//!     err.problems()[0].to_string(),
//!     "tether.toml:2: loop.max_iteratons: unknown key; did you mean `max_iterations`?"
//! );
//! # Ok::<(), tether_config::ConfigError>(())
//! ```

#![deny(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod apart;
mod budget;
mod chat;
mod checks;
mod config;
mod env;
mod error;
mod file;
mod hidden;
mod isolation;
mod key_settings;
mod keys;
mod load;
mod missing;
mod model;
mod reader;
mod record;
mod schema;
mod secret;
mod sinks;
mod source;
mod suggest;
mod syntax;
mod template;
mod values;
mod workspace;

pub use budget::Price;
pub use chat::{NoticeKind, NotifyConfig, SlackConfig, TelegramConfig};
pub use config::{
    Channel, Config, ExecutorConfig, ExecutorKind, HumanConfig, HumanTimeout, LoopConfig,
    OnUsageLimit, Permissions, STORE_URL_VAR, ServerConfig, StoreConfig, ZulipConfig,
};
pub use env::{Env, MapEnv, ProcessEnv, keep_secrets, kept_secret};
pub use error::{ConfigError, Problem};
pub use file::MAX_CONFIG_BYTES;
pub use isolation::{RunConfig, SandboxConfig, SandboxMode};
pub use keys::settings;
pub use load::{
    CONFIG_ENV, FILE_NAME, Loaded, Parsed, check, load, load_store, parse, parse_with_warnings,
    read,
};
pub use missing::{MissingSetting, given, given_secret};
pub use model::{Api, JudgeConfig, LoopJudgeConfig, ModelConfig, PlanningConfig};
pub use record::{Change, Recorded};
pub use secret::Secret;
pub use sinks::{
    EmailConfig, EmailTls, EscalationTarget, NotifyCommandConfig, NtfyConfig, WebhookConfig,
    WebhookFormat,
};
pub use source::Source;
pub use template::TEMPLATE;
pub use tether_budget::Budget;
pub use workspace::{STATE_DIR, Workspace};
