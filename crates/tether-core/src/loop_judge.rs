//! The loop judge: an optional small, cheap model (`[loop_judge]`) that reads each iteration's
//! final message (at most 4 KB) and the active goals' titles and says whether the loop should
//! go on or a person is needed (`{"verdict": "continue" | "blocked", "reason": "…"}`).
//!
//! It is advisory and fails **open**: an error, a timeout or an answer that is not that JSON
//! means "continue" (logged), and three failures in a row switch it off for the rest of the
//! run. "blocked" makes the driver ask a person with the reason (or pause when nobody can be
//! asked). It can never end a run or sign a goal off; only the sign-off judge reads the
//! repository and decides "done".

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Duration;

use serde_json::Value;
use tether_config::{Env, LoopJudgeConfig, Price};
use tether_model::{Endpoint, HttpOptions, Message, ModelClient, Request, Usage};
use tokio_util::sync::CancellationToken;

use crate::prompts::loop_judge as prompts;

/// The loop judge cannot be set up; fix `[loop_judge]` or its key.
#[derive(Debug, thiserror::Error)]
pub enum LoopJudgeSetupError {
    /// Its key's variable is unset.
    #[error("[loop_judge]: {0}")]
    Key(#[from] tether_config::ConfigError),
    /// Its HTTP client could not be built.
    #[error("[loop_judge]: {0}")]
    Client(tether_model::ModelError),
}

/// Failures in a row that switch the loop judge off for the run.
pub const FAILURES_TO_SWITCH_OFF: u32 = 3;

/// What the loop judge said about an iteration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reading {
    /// Go on.
    Continue,
    /// A person is needed, for this reason.
    Blocked(String),
}

/// One call's result: the reading, or why there is none (the loop then goes on), with what the
/// call used.
#[derive(Debug, Clone, PartialEq)]
pub struct Called {
    /// The reading, or why the call failed.
    pub reading: Result<Reading, String>,
    /// Tokens used (zero when the call failed before an answer).
    pub usage: Usage,
    /// Their cost, from the price table.
    pub cost_usd: Option<f64>,
}

/// The loop judge of one process. Cheap to clone; clones share the failure count.
#[derive(Clone)]
pub struct LoopJudge {
    model: Arc<dyn ModelClient>,
    timeout: Duration,
    price: Option<Price>,
    failures: Arc<AtomicU32>,
    off: Arc<AtomicBool>,
}

impl std::fmt::Debug for LoopJudge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoopJudge")
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl LoopJudge {
    /// A loop judge calling `model`, each call allowed `timeout`.
    pub fn new(model: Arc<dyn ModelClient>, timeout: Duration, price: Option<Price>) -> Self {
        LoopJudge {
            model,
            timeout,
            price,
            failures: Arc::new(AtomicU32::new(0)),
            off: Arc::new(AtomicBool::new(false)),
        }
    }

    /// The loop judge `[loop_judge]` describes; its key read from the variable it names.
    pub fn from_config(
        config: &LoopJudgeConfig,
        env: &dyn Env,
    ) -> Result<LoopJudge, LoopJudgeSetupError> {
        let key = config.endpoint.api_key(env)?;
        let endpoint = Endpoint::from_config(&config.endpoint, key);
        // Advisory and failing open: a failed call is not worth delaying the loop for.
        let options = HttpOptions {
            retry: tether_model::RetryPolicy::none(),
            ..HttpOptions::default()
        };
        let client =
            tether_model::connect(endpoint, options).map_err(LoopJudgeSetupError::Client)?;
        Ok(LoopJudge::new(
            client,
            Duration::from_secs(config.timeout_secs),
            config.endpoint.price,
        ))
    }

    /// Whether it was switched off for the run.
    pub fn is_off(&self) -> bool {
        self.off.load(Ordering::Relaxed)
    }

    /// Reads iteration `n`: its `final_message` against the active `goals`.
    pub async fn read(
        &self,
        n: u32,
        goals: &[String],
        final_message: &str,
        cancel: &CancellationToken,
    ) -> Called {
        let request = Request::new(vec![Message::user(prompts::request(
            n,
            goals,
            final_message,
        ))])
        .with_system(prompts::SYSTEM)
        // One call per iteration, never extended: only the system prompt is worth caching.
        .with_conversation_cache(false);
        let call = self.model.complete(&request, cancel.clone());
        let (reading, usage) = match tokio::time::timeout(self.timeout, call).await {
            Err(_) => (
                Err(format!("no answer within {} s", self.timeout.as_secs())),
                Usage::default(),
            ),
            Ok(Err(e)) => (Err(format!("the call failed: {e}")), Usage::default()),
            Ok(Ok(response)) => (parse(&response.text), response.usage),
        };
        let cost_usd = self
            .price
            .filter(|_| usage.total() > 0)
            .map(|p| p.cost(usage.counts()));
        Called {
            reading,
            usage,
            cost_usd,
        }
    }

    /// Counts a failure; `true` when it is the one that switches the judge off.
    pub fn failed(&self) -> bool {
        let n = self.failures.fetch_add(1, Ordering::Relaxed) + 1;
        if n >= FAILURES_TO_SWITCH_OFF && !self.off.swap(true, Ordering::Relaxed) {
            return true;
        }
        false
    }

    /// Counts a reading: the failures in a row start again.
    pub fn answered(&self) {
        self.failures.store(0, Ordering::Relaxed);
    }
}

/// Reads the strict JSON answer (a fenced block is tolerated); anything else is an error.
pub fn parse(text: &str) -> Result<Reading, String> {
    let trimmed = text.trim();
    let body = trimmed
        .strip_prefix("```json")
        .or_else(|| trimmed.strip_prefix("```"))
        .and_then(|rest| rest.strip_suffix("```"))
        .unwrap_or(trimmed)
        .trim();
    let value: Value =
        serde_json::from_str(body).map_err(|e| format!("not the JSON asked for: {e}"))?;
    let reason = value
        .get("reason")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .trim()
        .to_owned();
    match value.get("verdict").and_then(Value::as_str) {
        Some("continue") => Ok(Reading::Continue),
        Some("blocked") if !reason.is_empty() => Ok(Reading::Blocked(reason)),
        Some("blocked") => Err("\"blocked\" without a reason".to_owned()),
        _ => Err("no verdict of \"continue\" or \"blocked\"".to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn strict_json_is_read_and_anything_else_is_an_error() {
        assert_eq!(
            parse(r#"{"verdict": "continue", "reason": "fine"}"#),
            Ok(Reading::Continue)
        );
        assert_eq!(
            parse("```json\n{\"verdict\": \"blocked\", \"reason\": \"needs a key\"}\n```"),
            Ok(Reading::Blocked("needs a key".into()))
        );
        assert!(parse(r#"{"verdict": "blocked"}"#).is_err());
        assert!(parse(r#"{"verdict": "done", "reason": "x"}"#).is_err());
        assert!(parse("continue").is_err());
        assert!(parse("").is_err());
    }

    #[test]
    fn three_failures_in_a_row_switch_it_off_once() {
        let judge = LoopJudge::new(
            Arc::new(tether_model::scripted::ScriptedModel::new(
                tether_model::scripted::Script::turns([]),
            )),
            Duration::from_secs(1),
            None,
        );
        assert!(!judge.failed());
        judge.answered();
        assert!(!judge.failed());
        assert!(!judge.failed());
        assert!(judge.failed(), "the third in a row");
        assert!(judge.is_off());
        assert!(!judge.failed(), "told once");
    }

    proptest! {
        #[test]
        fn no_answer_panics_the_parser(text in "\\PC{0,80}") {
            let _ = parse(&text);
        }
    }
}
