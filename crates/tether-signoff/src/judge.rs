//! Stage 2 of sign-off: one session with an independent judge model.
//!
//! The judge gets its own system prompt and the read-only tools (`read`, `grep`, `ls`, confined
//! to the workspace, escaping symlinks refused), reads what it needs, and ends with its verdict.
//! The session is a small loop of its own rather than the built-in agent, because the judge
//! needs its own system prompt and a transcript of every request and response. It is bounded in
//! steps (before the last one it is told to stop calling tools and give its verdict; the tools
//! stay offered, since some APIs refuse a conversation holding tool calls without them) and in
//! time (`[judge] timeout_secs` for the whole session).

use std::fs::{self, File};
use std::io::{BufWriter, Write as _};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tether_config::{Env, JudgeConfig, ModelConfig, Price};
use tether_model::{Endpoint, HttpOptions, Message, ModelClient, ModelError, Request, Usage};
use tether_tools::{ToolContext, ToolSet};
use tokio_util::sync::CancellationToken;

use super::{JudgeSetupError, SignoffError};
use crate::prompts;

/// The default cap on model calls in one judge session.
pub const DEFAULT_MAX_STEPS: u32 = 24;

/// An independent model that judges sign-off attempts. Cheap to clone.
#[derive(Clone)]
pub struct Judge {
    model: Arc<dyn ModelClient>,
    model_name: String,
    timeout: Duration,
    max_steps: u32,
    price: Option<Price>,
}

/// What one judge session's model calls used.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SessionUsage {
    /// The model calls made.
    pub calls: u32,
    /// Their tokens.
    pub usage: Usage,
    /// Their cost, from the judge's price (`None` without one).
    pub cost_usd: Option<f64>,
}

impl std::fmt::Debug for Judge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Judge")
            .field("model", &self.model_name)
            .field("timeout", &self.timeout)
            .field("max_steps", &self.max_steps)
            .finish_non_exhaustive()
    }
}

impl Judge {
    /// A judge calling `model` (named `model_name` in verdicts), whose whole session may take
    /// `timeout`.
    pub fn new(
        model: Arc<dyn ModelClient>,
        model_name: impl Into<String>,
        timeout: Duration,
    ) -> Self {
        Judge {
            model,
            model_name: model_name.into(),
            timeout,
            max_steps: DEFAULT_MAX_STEPS,
            price: None,
        }
    }

    /// Prices the judge's calls (`price_per_mtok`), so their cost counts against budgets.
    #[must_use]
    pub fn with_price(mut self, price: Option<Price>) -> Self {
        self.price = price;
        self
    }

    /// The judge `[judge]` describes. Refused when it is the executor's own model
    /// (`executor_model`, the `[model]` table) unless `same_model = true`; the key is read
    /// from the variable `api_key_env` names.
    pub fn from_config(
        config: &JudgeConfig,
        executor_model: Option<&ModelConfig>,
        env: &dyn Env,
    ) -> Result<Judge, JudgeSetupError> {
        if !config.same_model
            && let Some(executor) = executor_model
            && config.endpoint.same_model_as(executor)
        {
            return Err(JudgeSetupError::SameModel {
                model: config.endpoint.model.clone(),
            });
        }
        let key = config.endpoint.api_key(env)?;
        let endpoint = Endpoint::from_config(&config.endpoint, key);
        let client = tether_model::connect(endpoint, HttpOptions::default())
            .map_err(JudgeSetupError::Client)?;
        Ok(Judge::new(
            client,
            config.endpoint.model.clone(),
            Duration::from_secs(config.timeout_secs),
        )
        .with_price(config.endpoint.price))
    }

    /// Caps the model calls of one session (at least 1).
    #[must_use]
    pub fn with_max_steps(mut self, max_steps: u32) -> Self {
        self.max_steps = max_steps.max(1);
        self
    }

    /// The model's name, as recorded in verdicts.
    pub fn model_name(&self) -> &str {
        &self.model_name
    }

    /// How long one session may take.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Runs one session over the workspace at `root` on `prompt`, saving the transcript to
    /// `transcript`. `Ok(Ok(final message))`, or `Ok(Err(why the judge is unavailable))`;
    /// `Err` only for a cancellation or a transcript that cannot be written. `used` is told
    /// what the calls used, whatever the outcome.
    pub(crate) async fn session(
        &self,
        root: &Path,
        prompt: String,
        transcript: &Path,
        cancel: &CancellationToken,
        used: &mut SessionUsage,
    ) -> Result<Result<String, String>, SignoffError> {
        let mut log = Transcript::create(transcript)?;
        log.line(
            &json!({"type": "judge", "model": self.model_name, "max_steps": self.max_steps,
                         "timeout_secs": self.timeout.as_secs()}),
        )?;
        let result = tokio::time::timeout(
            self.timeout,
            self.converse(root, prompt, &mut log, cancel, used),
        )
        .await;
        used.cost_usd = self
            .price
            .filter(|_| used.calls > 0)
            .map(|price| price.cost(used.usage.counts()));
        let result = match result {
            Ok(Err(SessionError::Cancelled)) => return Err(SignoffError::Cancelled),
            Ok(Err(SessionError::Transcript(e))) => return Err(e),
            Ok(Err(SessionError::Unavailable(why))) => Err(why),
            Ok(Ok(text)) => Ok(text),
            Err(_) => Err(format!(
                "no verdict within {} (judge.timeout_secs)",
                seconds(self.timeout)
            )),
        };
        if let Err(why) = &result {
            log.line(&json!({"type": "unavailable", "reason": why}))?;
        }
        log.finish()?;
        Ok(result)
    }

    async fn converse(
        &self,
        root: &Path,
        prompt: String,
        log: &mut Transcript,
        cancel: &CancellationToken,
        used: &mut SessionUsage,
    ) -> Result<String, SessionError> {
        let tools = ToolSet::read_only(root)
            .map_err(|e| SessionError::Unavailable(format!("its tools: {e}")))?;
        let specs = tools.specs();
        let ctx = ToolContext::new(cancel.clone());
        let mut messages = vec![Message::user(prompt)];
        for step in 1..=self.max_steps {
            if step == self.max_steps && step > 1 {
                messages.push(Message::user(prompts::LAST_STEP));
            }
            let request = Request::new(messages.clone())
                .with_system(prompts::SYSTEM)
                .with_tools(specs.clone());
            log.line(&json!({"type": "request", "step": step, "request": request}))?;
            let response = match self.model.complete(&request, cancel.clone()).await {
                Ok(r) => r,
                Err(ModelError::Cancelled) => return Err(SessionError::Cancelled),
                Err(e) => {
                    log.line(&json!({"type": "error", "step": step, "error": e.to_string()}))?;
                    return Err(SessionError::Unavailable(format!(
                        "the model call failed: {e}"
                    )));
                }
            };
            used.calls += 1;
            used.usage += response.usage;
            log.line(&json!({"type": "response", "step": step, "response": response}))?;
            messages.push(response.to_message());
            if response.tool_calls.is_empty() {
                return Ok(response.text);
            }
            for call in &response.tool_calls {
                if cancel.is_cancelled() {
                    return Err(SessionError::Cancelled);
                }
                let message = match call.arguments_error() {
                    Some(problem) => Message::tool_error(&call.id, problem),
                    None => match tools.call(&call.name, call.arguments.clone(), &ctx).await {
                        Ok(done) if done.output.is_error => {
                            Message::tool_error(&call.id, done.output.content)
                        }
                        Ok(done) => Message::tool_result(&call.id, done.output.content),
                        // A tool that cannot go on ends the session, as it ends an agent's turn.
                        Err(fatal) => {
                            return Err(SessionError::Unavailable(format!("its tools: {fatal}")));
                        }
                    },
                };
                messages.push(message);
            }
        }
        Err(SessionError::Unavailable(format!(
            "it made {} model calls without giving a verdict",
            self.max_steps
        )))
    }
}

/// `600 s`, or `0.25 s` below a second.
fn seconds(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{:.2} s", d.as_secs_f64())
    }
}

enum SessionError {
    Cancelled,
    Unavailable(String),
    Transcript(SignoffError),
}

impl From<SignoffError> for SessionError {
    fn from(e: SignoffError) -> Self {
        SessionError::Transcript(e)
    }
}

/// The session's JSON-lines transcript: every request and response, as they happen.
struct Transcript {
    file: BufWriter<File>,
    path: PathBuf,
}

impl Transcript {
    fn create(path: &Path) -> Result<Self, SignoffError> {
        let err = |cause| SignoffError::Io {
            what: "writing the judge's transcript",
            path: path.to_owned(),
            cause,
        };
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir).map_err(err)?;
        }
        Ok(Transcript {
            file: BufWriter::new(File::create(path).map_err(err)?),
            path: path.to_owned(),
        })
    }

    fn line(&mut self, value: &Value) -> Result<(), SignoffError> {
        writeln!(self.file, "{value}")
            .and_then(|()| self.file.flush())
            .map_err(|cause| SignoffError::Io {
                what: "writing the judge's transcript",
                path: self.path.clone(),
                cause,
            })
    }

    fn finish(mut self) -> Result<(), SignoffError> {
        self.file.flush().map_err(|cause| SignoffError::Io {
            what: "writing the judge's transcript",
            path: self.path.clone(),
            cause,
        })
    }
}
