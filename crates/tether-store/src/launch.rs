//! What a front end asks of the process that drives its runs: start a run ([`NewRun`]) or
//! resume a stopped one, through the [`Launcher`] that process hands it, and why a request was
//! refused ([`LaunchError`]). The dashboard (`tether-web`) asks; the runtime (`tether-runtime`,
//! in `tether serve`) composes and drives the run. Both depend on this crate and neither on the
//! other, so the dashboard never knows how a run is put together, and no front end that builds
//! runs links the dashboard.
//!
//! Like [`crate::control`]'s pause, cancel and message, these are requests any process may make
//! of runs; unlike them, they are not events: the launcher answers them in its own process. So
//! does a [`SideAsker`], which answers a question about a run on the side.

use std::future::Future;
use std::pin::Pin;

use serde::Deserialize;

use crate::RunId;

/// A future the launcher hands back: boxed, sendable, borrowing the launcher (the same type as
/// `futures_util::future::BoxFuture`).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The most iterations a run started through a [`Launcher`] may ask for (the loops' ceiling).
pub const MAX_ITERATIONS: u32 = 20_000;

/// A run to start.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(try_from = "Requested")]
pub enum NewRun {
    /// A Ralph loop: the same prompt, each iteration in a fresh context, until the completion
    /// promise or the budget.
    Ralph {
        /// The prompt.
        prompt: String,
        /// The text of the `<promise>` that ends the loop; none: the loop runs to its budget.
        completion_promise: Option<String>,
        /// The iteration budget (default: `[loop] max_iterations`).
        max_iterations: Option<u32>,
        /// Work in a git worktree of its own, on a branch `tether/<run>` (default: `[run]
        /// worktree`); the checkout is never written.
        worktree: bool,
    },
    /// A goal run on the plan's active goals.
    Goal {
        /// The iteration budget (default: `[loop] max_iterations`).
        max_iterations: Option<u32>,
        /// Work in a git worktree of its own, committing each signed-off goal on its branch
        /// (default: `[run] worktree`).
        worktree: bool,
        /// How many goals work at once, each in a worktree of its own (a run of many goals;
        /// default: `[run] parallel`).
        parallel: Option<u32>,
    },
}

/// The most goals a run started through a [`Launcher`] works on at once.
pub const MAX_PARALLEL: u32 = 64;

/// What a [`Launcher`] started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Started {
    /// A run.
    Run(RunId),
    /// A run of many goals (see [`crate::Fleet`]); each goal's run is a run of its own.
    Fleet(RunId),
}

impl Started {
    /// Its id.
    pub fn id(&self) -> &RunId {
        match self {
            Started::Run(id) | Started::Fleet(id) => id,
        }
    }

    /// Its page on the dashboard.
    pub fn url(&self) -> String {
        match self {
            Started::Run(id) => format!("/runs/{id}"),
            Started::Fleet(id) => format!("/fleets/{id}"),
        }
    }
}

/// A run to start as a request spells it: one flat object (read field by field, so a field
/// that does not fit is named), checked against its kind into a [`NewRun`].
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Requested {
    kind: Kind,
    #[serde(default)]
    prompt: Option<String>,
    #[serde(default)]
    completion_promise: Option<String>,
    #[serde(default)]
    max_iterations: Option<u32>,
    #[serde(default)]
    worktree: bool,
    #[serde(default)]
    parallel: Option<u32>,
}

/// The loops a request can start.
#[derive(Deserialize)]
#[serde(rename_all = "lowercase")]
enum Kind {
    Ralph,
    Goal,
}

impl TryFrom<Requested> for NewRun {
    type Error = String;

    fn try_from(r: Requested) -> Result<NewRun, String> {
        match r.kind {
            Kind::Ralph => Ok(NewRun::Ralph {
                prompt: r.prompt.ok_or(
                    "a ralph run needs its `prompt`: the text every iteration starts with",
                )?,
                completion_promise: r.completion_promise,
                max_iterations: r.max_iterations,
                worktree: r.worktree,
            })
            .and_then(|run| match r.parallel {
                Some(_) => Err("`parallel` is a goal run's: a ralph run has one prompt".to_owned()),
                None => Ok(run),
            }),
            Kind::Goal if r.prompt.is_some() || r.completion_promise.is_some() => Err(
                "`prompt` and `completion_promise` are a ralph run's; a goal run works on the \
                 plan's active goals"
                    .to_owned(),
            ),
            Kind::Goal => Ok(NewRun::Goal {
                max_iterations: r.max_iterations,
                worktree: r.worktree,
                parallel: r.parallel,
            }),
        }
    }
}

impl NewRun {
    /// What is wrong with the request, if anything (before any launcher sees it).
    pub fn problem(&self) -> Option<String> {
        let max = match self {
            NewRun::Ralph {
                prompt,
                completion_promise,
                max_iterations,
                ..
            } => {
                if prompt.trim().is_empty() {
                    return Some("the prompt is empty".to_owned());
                }
                if completion_promise
                    .as_deref()
                    .is_some_and(|p| p.trim().is_empty())
                {
                    return Some(
                        "the completion promise is empty; leave it out to run to the budget"
                            .to_owned(),
                    );
                }
                max_iterations
            }
            NewRun::Goal {
                max_iterations,
                parallel,
                ..
            } => {
                match parallel {
                    Some(0) => return Some("parallel 0: give 1 or more goals at once".to_owned()),
                    Some(n) if *n > MAX_PARALLEL => {
                        return Some(format!(
                            "parallel {n} is above the ceiling of {MAX_PARALLEL} goals at once"
                        ));
                    }
                    _ => {}
                }
                max_iterations
            }
        };
        match max {
            Some(0) => Some(
                "max_iterations 0 (no limit) cannot be asked for from the dashboard; give a budget"
                    .to_owned(),
            ),
            Some(m) if *m > MAX_ITERATIONS => Some(format!(
                "max_iterations {m} is above the ceiling of {MAX_ITERATIONS}"
            )),
            _ => None,
        }
    }
}

/// Why a run was not started or resumed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LaunchError {
    /// The request cannot be run as given (a plan with no active goal, a budget out of range):
    /// fix the request or the workspace. 400.
    #[error("{0}")]
    Invalid(String),
    /// Not now: contracts not approved, a run still driven by another process, a run that has
    /// ended. A person has to act first. 409.
    #[error("{0}")]
    Refused(String),
    /// No such run. 404.
    #[error("{0}")]
    NotFound(String),
    /// tether could not set the run up (its executor, its sandbox, its store). 500.
    #[error("{0}")]
    Failed(String),
    /// The run's configuration file differs from the configuration it recorded: a person looks
    /// at the differences and resumes it again accepting them (or puts the file back). 409,
    /// with the differences.
    #[error("{message}")]
    ConfigChanged {
        /// What is refused and how to go on.
        message: String,
        /// Each difference, `setting: old → new` (a credential's value hidden).
        changes: Vec<String>,
    },
}

/// How a person resumes a stopped run from a page: whether the configuration file's
/// differences from the run's record are applied, and what is added to its budgets first.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Resume {
    /// Apply the file's configuration, its differences shown to the person.
    pub accept_config: bool,
    /// What to add to each budget before going on (`None`: nothing) — the raises `tether
    /// resume --add-…` records; a run a budget other than its own iteration budget stopped
    /// needs a raise of that unit.
    pub add: tether_budget::Budget,
    /// Who resumes it (`web:ana`), recorded with the raises.
    pub by: String,
}

/// Starts and resumes runs in the serving process.
pub trait Launcher: Send + Sync {
    /// Starts `run`: what it started as soon as it is recorded (it goes on after the call
    /// returns).
    fn start(&self, run: NewRun) -> BoxFuture<'_, Result<Started, LaunchError>>;
    /// Resumes the stopped run `id` (it goes on after the call returns) with the
    /// configuration it recorded, after recording the raises `how` adds; when its file
    /// differs, refused with [`LaunchError::ConfigChanged`] unless `how.accept_config` (a
    /// person saw the differences and applies the file's).
    fn resume(&self, id: RunId, how: Resume) -> BoxFuture<'_, Result<(), LaunchError>>;
}

/// The answer to a question asked about a run on the side ([`SideAsker`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SideReply {
    /// The side model's answer, as it gave it (escape it before showing it).
    pub answer: String,
    /// The model that answered, for people (`openai-chat qwen3-coder`).
    pub model: String,
    /// The `side_question` event recording it in the run's journal.
    pub seq: crate::Seq,
}

/// Answers questions about runs on the side (the dashboard's "Ask about this run"): the serving
/// process composes the side model (`tether_runtime::side`), reads the run's record and the
/// repository, and records the question and its answer in the run's journal. It never reaches
/// the run's agent nor changes the run.
pub trait SideAsker: Send + Sync {
    /// Asks `question` about run `id` for `by`: the side model's answer once it gives it.
    fn ask(
        &self,
        id: RunId,
        question: String,
        by: String,
    ) -> BoxFuture<'_, Result<SideReply, LaunchError>>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_is_read_and_checked() {
        let ralph: NewRun = serde_json::from_str(
            r#"{"kind": "ralph", "prompt": "Fix it.", "completion_promise": "DONE", "max_iterations": 5}"#,
        )
        .unwrap();
        assert_eq!(ralph.problem(), None);
        let goal: NewRun = serde_json::from_str(r#"{"kind": "goal"}"#).unwrap();
        assert_eq!(
            goal,
            NewRun::Goal {
                max_iterations: None,
                worktree: false,
                parallel: None,
            }
        );
        let apart: NewRun =
            serde_json::from_str(r#"{"kind": "goal", "max_iterations": 4, "worktree": true}"#)
                .unwrap();
        assert_eq!(
            apart,
            NewRun::Goal {
                max_iterations: Some(4),
                worktree: true,
                parallel: None,
            }
        );
        for (body, says) in [
            (
                r#"{"kind": "ralph", "prompt": "  "}"#,
                "the prompt is empty",
            ),
            (
                r#"{"kind": "goal", "max_iterations": 0}"#,
                "cannot be asked for",
            ),
            (
                r#"{"kind": "goal", "max_iterations": 20001}"#,
                "above the ceiling",
            ),
            (
                r#"{"kind": "ralph", "prompt": "x", "completion_promise": " "}"#,
                "promise is empty",
            ),
            (r#"{"kind": "goal", "parallel": 0}"#, "parallel 0"),
            (r#"{"kind": "goal", "parallel": 65}"#, "ceiling of 64"),
        ] {
            let run: NewRun = serde_json::from_str(body).unwrap();
            assert!(run.problem().unwrap().contains(says), "{body}");
        }
        let many: NewRun = serde_json::from_str(r#"{"kind": "goal", "parallel": 3}"#).unwrap();
        assert_eq!(
            (many.problem(), many),
            (
                None,
                NewRun::Goal {
                    max_iterations: None,
                    worktree: false,
                    parallel: Some(3),
                }
            )
        );
        for bad in [
            r#"{"kind": "fleet"}"#,
            r#"{"kind": "goal", "approve": true}"#,
            r#"{"kind": "ralph", "prompt": "x", "parallel": 2}"#,
        ] {
            assert!(serde_json::from_str::<NewRun>(bad).is_err(), "{bad}");
        }
    }
}
