//! A question asked about a run on the side (`tether side`, the dashboard's "Ask about this
//! run"), answered by the side model: `[side]`, else `[model]`. It is the built-in agent with
//! the read-only workspace tools (`read`, `grep`, `ls`, confined to the repository) and the side
//! system prompt — the seam plan mode's drafting agent uses too — for one turn bounded in model
//! calls ([`MAX_STEPS`]) and in time ([`TIMEOUT`]). It is told the run's task and latest
//! iterations ([`tether_core::side::notes`]) and the question.
//!
//! It never reaches the run's agent and never pauses or preempts the loop: it only reads the
//! store and the repository, and records the question and its answer in the run's journal
//! ([`tether_store::control::side_question`]), an event the loop does not act on. Its usage is
//! recorded there and not charged to the run's budget. A run of any state can be asked about,
//! one of another machine of a team store too.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use tether_agent::{
    Access, AgentEvent, BuiltinAgent, Context, ExecError, Executor, TurnObserver, TurnRequest,
};
use tether_config::{Config, ConfigError, Env, ModelConfig, Workspace};
use tether_model::{Endpoint, HttpOptions, ModelError, Usage};
use tether_store::control::{ControlError, SideAnswered};
use tether_store::launch::{BoxFuture, LaunchError, SideAsker, SideReply};
use tether_store::{Run, RunId, Seq, Store, StoreError};
use tether_tools::{SetupError, ToolSet};
use tokio_util::sync::CancellationToken;

/// The most model calls one side question may take.
pub const MAX_STEPS: u32 = 16;

/// How long one side question may take, model calls and tools together.
pub const TIMEOUT: Duration = Duration::from_secs(300);

/// A side question could not be answered.
#[derive(Debug, thiserror::Error)]
pub enum SideError {
    /// The question is empty: ask something.
    #[error("the question is empty")]
    Empty,
    /// The question is longer than a side question may be: ask it shorter.
    #[error("the question is {bytes} bytes long; a side question may be at most {limit}")]
    TooLong {
        /// Its length, trimmed, in bytes.
        bytes: usize,
        /// The most it may be.
        limit: usize,
    },
    /// Neither `[side]` nor `[model]` names a model: add one.
    #[error(
        "no model answers side questions: add a [side] table (api, base_url, model) to \
         tether.toml, or a [model] table, which it falls back on"
    )]
    NoModel,
    /// The model's key is not in the environment: set the variable.
    #[error(transparent)]
    Key(#[from] ConfigError),
    /// The model's client could not be made from its settings: fix `[side]` (or `[model]`).
    #[error("the side model's endpoint")]
    Client(#[source] ModelError),
    /// The repository cannot be read by the tools (its root is gone or unreadable).
    #[error("the side model's tools")]
    Tools(#[from] SetupError),
    /// The store could not be read or written: try again once it is back.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The side model gave no answer (its call failed, it ran out of steps or time): ask again,
    /// perhaps more narrowly.
    #[error("the side model gave no answer: {0}")]
    Unanswered(String),
    /// Its transcript could not be written.
    #[error("writing the side question's transcript {}", path.display())]
    Transcript {
        /// The transcript.
        path: PathBuf,
        /// The OS error.
        #[source]
        cause: std::io::Error,
    },
}

impl SideError {
    /// Whether a person must fix something (a setting, the question) rather than tether.
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            SideError::Empty
                | SideError::TooLong { .. }
                | SideError::NoModel
                | SideError::Key(_)
                | SideError::Client(_)
        )
    }
}

impl From<ControlError> for SideError {
    fn from(e: ControlError) -> Self {
        match e {
            ControlError::Store(e) => SideError::Store(e),
            // Recording names the run found: it cannot be unknown.
            other => SideError::Unanswered(other.to_string()),
        }
    }
}

/// A side question answered and recorded.
#[derive(Debug, Clone, PartialEq)]
pub struct Answered {
    /// The run asked about.
    pub run: RunId,
    /// The question.
    pub question: String,
    /// The side model's answer, as it gave it (escape it before it reaches a terminal).
    pub answer: String,
    /// The model that answered (`openai-chat qwen3-coder`).
    pub model: String,
    /// The model calls made.
    pub calls: u32,
    /// Their tokens.
    pub usage: Usage,
    /// Their cost in US dollars, from the model's price.
    pub cost_usd: Option<f64>,
}

/// A side question ready to be put to the model: its agent and its prompt.
pub struct Prepared {
    run: RunId,
    question: String,
    agent: BuiltinAgent,
    describe: String,
    price: Option<tether_config::Price>,
    prompt: String,
    transcript: PathBuf,
}

/// Prepares `question` about `run` with `config`'s side model, reading the run's record from
/// `store` and, with the tools, the repository the run works in (this one for a run of another
/// machine, or whose worktree is gone).
pub fn prepare(
    config: &Config,
    (ws, env): (&Workspace, &dyn Env),
    store: &Store,
    run: &Run,
    question: &str,
) -> Result<Prepared, SideError> {
    let question = question.trim();
    if question.is_empty() {
        return Err(SideError::Empty);
    }
    // Recorded whole in the run's journal and shown on every surface: bounded before.
    let limit = tether_core::prompts::side::QUESTION_LIMIT;
    if question.len() > limit {
        return Err(SideError::TooLong {
            bytes: question.len(),
            limit,
        });
    }
    let model = config.side_model().ok_or(SideError::NoModel)?;
    let root = root_of(ws, run);
    let notes = tether_core::side::notes(store, run, &root)?;
    let prompt = tether_core::prompts::side::request(&notes, question);
    let (agent, describe) = agent(model, env, &root)?;
    let transcript =
        ws.state_dir()
            .join("side")
            .join(format!("{}-{}.jsonl", run.id, tether_store::now_ms()));
    Ok(Prepared {
        run: run.id.clone(),
        question: question.to_owned(),
        agent,
        describe,
        price: model.price,
        prompt,
        transcript,
    })
}

/// The repository the side model reads: the run's own when it is on this machine and still
/// there (a worktree of its own, a workspace of this store), else this one.
fn root_of(ws: &Workspace, run: &Run) -> PathBuf {
    if !tether_store::control::is_elsewhere(run)
        && !run.workspace.as_os_str().is_empty()
        && run.workspace.is_dir()
    {
        run.workspace.clone()
    } else {
        ws.root().to_owned()
    }
}

/// The built-in agent on `model`, with the read-only tools over `root` and the side prompt.
fn agent(
    model: &ModelConfig,
    env: &dyn Env,
    root: &std::path::Path,
) -> Result<(BuiltinAgent, String), SideError> {
    let key = model.api_key(env)?;
    let client = tether_model::connect(Endpoint::from_config(model, key), HttpOptions::default())
        .map_err(SideError::Client)?;
    let tools = ToolSet::read_only(root)?;
    let describe = format!("{} {}", model.api.as_str(), model.model);
    let agent = BuiltinAgent::new(client, tools, describe.clone())
        .with_system(tether_core::prompts::side::SYSTEM)
        .with_max_steps(MAX_STEPS);
    Ok((agent, describe))
}

impl Prepared {
    /// Puts the question to the side model: its answer, within [`TIMEOUT`], or why there is
    /// none. `on_tool` is told each of its tool calls (a one-line summary, and whether the tool
    /// refused it). Stops when `cancel` fires.
    pub async fn answer(
        self,
        cancel: CancellationToken,
        on_tool: &(dyn Fn(&str, bool) + Send + Sync),
    ) -> Result<Answered, SideError> {
        let observer = Watch {
            calls: AtomicU32::new(0),
            on_tool,
        };
        let request = TurnRequest {
            iteration: 0,
            prompt: self.prompt,
            context: Context::Fresh,
            transcript: self.transcript.clone(),
            access: Access::ReadOnly,
        };
        let turn = self.agent.run_turn(request, &observer, cancel.clone());
        let outcome = match tokio::time::timeout(TIMEOUT, turn).await {
            Err(_) => {
                cancel.cancel();
                return Err(SideError::Unanswered(format!(
                    "no answer within {} s",
                    TIMEOUT.as_secs()
                )));
            }
            Ok(Err(ExecError::Transcript { path, source })) => {
                return Err(SideError::Transcript {
                    path,
                    cause: source,
                });
            }
            Ok(Err(ExecError::TooManySteps(n))) => {
                return Err(SideError::Unanswered(format!(
                    "it made {n} model calls without answering"
                )));
            }
            Ok(Err(ExecError::Model(e))) => {
                return Err(SideError::Unanswered(format!(
                    "its model call failed: {}",
                    chain(&*e)
                )));
            }
            Ok(Err(e)) => return Err(SideError::Unanswered(chain(&e))),
            Ok(Ok(outcome)) => outcome,
        };
        let usage = Usage {
            input_tokens: outcome.input_tokens,
            cached_input_tokens: outcome.cached_input_tokens,
            cache_write_input_tokens: outcome.cache_write_input_tokens,
            output_tokens: outcome.output_tokens,
        };
        let calls = observer.calls.load(Ordering::Relaxed);
        let answer = outcome.final_message.trim().to_owned();
        if answer.is_empty() {
            return Err(SideError::Unanswered("its answer was empty".to_owned()));
        }
        Ok(Answered {
            run: self.run,
            question: self.question,
            answer,
            model: self.describe,
            calls,
            usage,
            cost_usd: self
                .price
                .filter(|_| calls > 0)
                .map(|price| price.cost(usage.counts())),
        })
    }
}

/// Records `answered`, asked by `by`, in its run's journal: the event's seq.
pub fn record(store: &Store, run: &Run, answered: &Answered, by: &str) -> Result<Seq, SideError> {
    let seq = tether_store::control::side_question(
        store,
        run,
        SideAnswered {
            question: answered.question.clone(),
            answer: answered.answer.clone(),
            by: by.to_owned(),
            model: answered.model.clone(),
            calls: answered.calls,
            input_tokens: answered.usage.input_tokens,
            cached_input_tokens: answered.usage.cached_input_tokens,
            cache_write_input_tokens: answered.usage.cache_write_input_tokens,
            output_tokens: answered.usage.output_tokens,
            cost_usd: answered.cost_usd,
        },
    )?;
    Ok(seq)
}

/// Counts the side model's calls and tells its tool calls.
struct Watch<'a> {
    calls: AtomicU32,
    on_tool: &'a (dyn Fn(&str, bool) + Send + Sync),
}

impl TurnObserver for Watch<'_> {
    fn event(&self, event: AgentEvent) {
        match event {
            AgentEvent::ModelCall { .. } => {
                self.calls.fetch_add(1, Ordering::Relaxed);
            }
            AgentEvent::ToolCall {
                summary, is_error, ..
            } => {
                (self.on_tool)(&tether_human::visible::one_line(&summary), is_error);
            }
            _ => {}
        }
    }
}

/// Every error in a chain, joined by `: `.
fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        s.push_str(": ");
        s.push_str(&cause.to_string());
        source = cause.source();
    }
    s
}

/// Answers the dashboard's side questions for workspace `ws` (`tether serve`): its
/// configuration and store read afresh for each question, `env` holding the keys.
#[derive(Clone)]
pub struct Answerer {
    ws: Workspace,
    env: Arc<dyn Env + Send + Sync>,
}

impl Answerer {
    /// Side questions about the runs of `ws`'s store.
    pub fn new(ws: Workspace, env: Arc<dyn Env + Send + Sync>) -> Self {
        Answerer { ws, env }
    }

    /// Reads the configuration, the store and the run; prepares the question.
    fn prepare(&self, id: &RunId, question: &str) -> Result<(Prepared, Run), LaunchError> {
        let loaded = tether_config::load(crate::schema(), self.ws.root(), &*self.env)
            .map_err(|e| LaunchError::Invalid(chain(&e)))?;
        let store = crate::store::open_of(&self.ws, &loaded.config.store)
            .map_err(|e| LaunchError::Failed(chain(&e)))?;
        let run =
            tether_store::control::find_run(&store, Some(id.as_str())).map_err(|e| match e {
                ControlError::Store(e) => LaunchError::Failed(chain(&e)),
                other => LaunchError::NotFound(other.to_string()),
            })?;
        let prepared = prepare(
            &loaded.config,
            (&self.ws, &*self.env),
            &store,
            &run,
            question,
        )
        .map_err(refused)?;
        Ok((prepared, run))
    }

    /// Records the answer in the run's journal.
    fn record(&self, run: &Run, answered: &Answered, by: &str) -> Result<Seq, LaunchError> {
        let store =
            crate::store::open(&self.ws, &*self.env).map_err(|e| LaunchError::Failed(chain(&e)))?;
        record(&store, run, answered, by).map_err(refused)
    }
}

/// A side error as the dashboard answers it.
fn refused(e: SideError) -> LaunchError {
    if e.is_usage() {
        LaunchError::Invalid(chain(&e))
    } else {
        LaunchError::Failed(chain(&e))
    }
}

/// Runs `work` (the store's and the configuration's blocking reads) off the async threads.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, LaunchError> + Send + 'static,
) -> Result<T, LaunchError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| LaunchError::Failed(e.to_string()))?
}

impl SideAsker for Answerer {
    fn ask(
        &self,
        id: RunId,
        question: String,
        by: String,
    ) -> BoxFuture<'_, Result<SideReply, LaunchError>> {
        Box::pin(async move {
            let this = self.clone();
            let (prepared, run) = blocking(move || this.prepare(&id, &question)).await?;
            let log = |summary: &str, is_error: bool| {
                tracing::info!(is_error, "side model: {summary}");
            };
            let answered = prepared
                .answer(CancellationToken::new(), &log)
                .await
                .map_err(refused)?;
            let (this, model, answer) = (
                self.clone(),
                answered.model.clone(),
                answered.answer.clone(),
            );
            let seq = blocking(move || this.record(&run, &answered, &by)).await?;
            Ok(SideReply { answer, model, seq })
        })
    }
}
