//! What can go wrong around a sign-off, typed by what the caller can do.
//!
//! Everything the agent or a person can fix by acting differently — an unknown id, an
//! unapproved contract, a failing verify, an unavailable judge — is an outcome, not an error
//! (see [`super::SignoffOutcome`]). These errors are for the rest: a store or file system that
//! fails, a cancellation, a judge that cannot be set up.

use std::io;
use std::path::PathBuf;

use tether_config::ConfigError;
use tether_model::ModelError;
use tether_store::StoreError;

use tether_plan::file::PlanFileError;

/// A sign-off (or cancel) could not be carried out. Nothing was recorded unless the variant says
/// so.
#[derive(Debug, thiserror::Error)]
pub enum SignoffError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A log or transcript file could not be written.
    #[error("{what} {}: {cause}", path.display())]
    Io {
        /// What was being written.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// The OS error.
        cause: io::Error,
    },
    /// The verify command could not be started (no `sh`, the workspace is gone).
    #[error("could not start the verify command `{command}`: {cause}")]
    VerifyStart {
        /// The command.
        command: String,
        /// The OS error.
        cause: io::Error,
    },
    /// The attempt was cancelled (Ctrl+C, `tether cancel`) before a decision; nothing was
    /// recorded.
    #[error("the sign-off was cancelled before a decision")]
    Cancelled,
    /// The plan file could not be patched (it changed or broke meanwhile). `note` says what
    /// was done already and what to do by hand.
    #[error("goal `{goal_id}`: the plan could not be updated ({note}): {cause}")]
    PlanNotPatched {
        /// The goal.
        goal_id: String,
        /// What was recorded already, and what to do by hand.
        note: &'static str,
        /// Why.
        cause: PlanFileError,
    },
}

/// A judge could not be set up from the configuration.
#[derive(Debug, thiserror::Error)]
pub enum JudgeSetupError {
    /// No `[judge]` table, and `--no-judge` was not asked for.
    #[error(
        "no judge is configured: add a [judge] table to tether.toml (api, base_url, model, \
         api_key_env; a different model from [model]), or pass --no-judge to sign off on the \
         verify command alone"
    )]
    NotConfigured,
    /// The judge is the executor's own model and `same_model` is not set.
    #[error(
        "the judge would be the executor's own model ({model}), but the judge must be \
         independent; pick another model in [judge], or set `judge.same_model = true`"
    )]
    SameModel {
        /// The model.
        model: String,
    },
    /// The judge's API key is missing.
    #[error("the judge's API key: {0}")]
    Key(ConfigError),
    /// The judge's endpoint is unusable (bad URL, TLS).
    #[error("setting up the judge's model client: {0}")]
    Client(ModelError),
}

// By hand rather than `#[from]`: the cause is in the message, so it is not also a `source`
// (an error chain would print it twice).
impl From<ConfigError> for JudgeSetupError {
    fn from(e: ConfigError) -> Self {
        JudgeSetupError::Key(e)
    }
}
