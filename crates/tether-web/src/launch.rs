//! Starting and resuming runs from the dashboard: `POST /api/runs`, `POST
//! /api/runs/{id}/resume`, and the page's "New run" and "Resume" forms.
//!
//! The dashboard does not know how a run is put together (the executor, the sandbox, the
//! desk): the serving process hands it a [`Launcher`] that does (`tether serve` builds one over
//! the runtime), and the serving process drives the run, so it goes on when the page is closed.
//! A dashboard without one (the one embedded in a run) answers 501 and shows no form.
//!
//! The same token, Host and Origin rules hold as for every change (the routes sit behind
//! [`crate::security::guard`]). Starting a goal run does not approve its contracts: that stays a
//! person's act at a terminal (`tether plan approve`), and a goal run whose contracts are not
//! approved is refused (409) saying so.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Form, Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use futures_util::future::BoxFuture;
use serde::{Deserialize, Serialize};
use tether_store::RunId;

use crate::app::App;
use crate::body::Body;
use crate::error::WebError;

/// The most iterations a run started here may ask for (the loops' ceiling).
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
    },
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
            }),
            Kind::Goal if r.prompt.is_some() || r.completion_promise.is_some() => Err(
                "`prompt` and `completion_promise` are a ralph run's; a goal run works on the \
                 plan's active goals"
                    .to_owned(),
            ),
            Kind::Goal => Ok(NewRun::Goal {
                max_iterations: r.max_iterations,
                worktree: r.worktree,
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
            NewRun::Goal { max_iterations, .. } => max_iterations,
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

impl From<LaunchError> for WebError {
    fn from(e: LaunchError) -> Self {
        match e {
            LaunchError::Invalid(m) => WebError::BadRequest(m),
            LaunchError::Refused(m) => WebError::Conflict(m),
            LaunchError::NotFound(m) => WebError::NotFound(m),
            LaunchError::Failed(m) => WebError::Internal(m),
            LaunchError::ConfigChanged { message, changes } => {
                WebError::ConfigChanged { message, changes }
            }
        }
    }
}

/// Starts and resumes runs in the serving process.
pub trait Launcher: Send + Sync {
    /// Starts `run`; its id as soon as it is recorded (the run goes on after the call returns).
    fn start(&self, run: NewRun) -> BoxFuture<'_, Result<RunId, LaunchError>>;
    /// Resumes the stopped run `id` (it goes on after the call returns) with the
    /// configuration it recorded; when its file differs, refused with
    /// [`LaunchError::ConfigChanged`] unless `accept_config` (a person saw the differences and
    /// applies the file's).
    fn resume(&self, id: RunId, accept_config: bool) -> BoxFuture<'_, Result<(), LaunchError>>;
}

/// The answer to a start or resume.
#[derive(Debug, Serialize)]
pub(crate) struct Launched {
    id: String,
    /// The run's page.
    url: String,
}

impl Launched {
    fn of(id: &RunId) -> Self {
        Launched {
            id: id.to_string(),
            url: format!("/runs/{id}"),
        }
    }
}

fn launcher(app: &App) -> Result<&Arc<dyn Launcher>, WebError> {
    app.launcher.as_ref().ok_or_else(|| {
        WebError::NotImplemented(
            "this dashboard does not start runs (it is a run's own, or it shows a store other \
             than its workspace's): start them from `tether serve` in the workspace"
                .to_owned(),
        )
    })
}

/// Starts `run` with `app`'s launcher, after checking it.
async fn start_run(app: &App, run: NewRun) -> Result<RunId, WebError> {
    let launcher = launcher(app)?;
    if let Some(problem) = run.problem() {
        return Err(WebError::BadRequest(problem));
    }
    Ok(launcher.start(run).await?)
}

async fn resume_run(app: &App, id: &str, accept_config: bool) -> Result<RunId, WebError> {
    let launcher = launcher(app)?;
    let id = crate::api::run_id(id)?;
    launcher.resume(id.clone(), accept_config).await?;
    Ok(id)
}

/// A resume as a request spells it: `{}` (or no body) keeps the run's configuration;
/// `{"accept_config": true}` applies tether.toml's after its differences were shown.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ResumeRequest {
    #[serde(default)]
    accept_config: bool,
}

/// `POST /api/runs` `{"kind": "ralph", "prompt": …, "completion_promise": …, "max_iterations":
/// …}` or `{"kind": "goal", "max_iterations": …}`: 201 with `{"id", "url"}`.
pub(crate) async fn start(
    State(app): State<Arc<App>>,
    Body(run): Body<NewRun>,
) -> Result<(StatusCode, Json<Launched>), WebError> {
    let id = start_run(&app, run).await?;
    Ok((StatusCode::CREATED, Json(Launched::of(&id))))
}

/// `POST /api/runs/{id}/resume` (optionally `{"accept_config": true}`): 202 with `{"id",
/// "url"}` once the run is driven again; 409 with `{"error", "changes"}` when tether.toml
/// differs from the run's record and the request does not accept it.
pub(crate) async fn resume(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    body: Option<Body<ResumeRequest>>,
) -> Result<(StatusCode, Json<Launched>), WebError> {
    let accept = body.is_some_and(|Body(r)| r.accept_config);
    let id = resume_run(&app, &id, accept).await?;
    Ok((StatusCode::ACCEPTED, Json(Launched::of(&id))))
}

/// The "New run" form (every field a string, as a form sends it).
#[derive(Debug, Deserialize)]
pub(crate) struct NewRunForm {
    kind: String,
    #[serde(default)]
    prompt: String,
    #[serde(default)]
    completion_promise: String,
    #[serde(default)]
    max_iterations: String,
    /// The checkbox: present (`true`) when ticked.
    #[serde(default)]
    worktree: Option<String>,
}

impl NewRunForm {
    fn run(self) -> Result<NewRun, WebError> {
        let max_iterations = match self.max_iterations.trim() {
            "" => None,
            n => Some(n.parse::<u32>().map_err(|_| {
                WebError::BadRequest(format!("max iterations `{n}` is not a number"))
            })?),
        };
        let worktree = self.worktree.is_some();
        match self.kind.as_str() {
            "ralph" => Ok(NewRun::Ralph {
                prompt: self.prompt,
                completion_promise: Some(self.completion_promise).filter(|p| !p.trim().is_empty()),
                max_iterations,
                worktree,
            }),
            "goal" => Ok(NewRun::Goal {
                max_iterations,
                worktree,
            }),
            other => Err(WebError::BadRequest(format!(
                "`{other}` is not a kind of run (ralph or goal)"
            ))),
        }
    }
}

/// `POST /runs` (the "New run" form): on to the new run's page.
pub(crate) async fn start_form(
    State(app): State<Arc<App>>,
    Form(form): Form<NewRunForm>,
) -> Response {
    let started = match form.run() {
        Ok(run) => start_run(&app, run).await,
        Err(e) => Err(e),
    };
    match started {
        Ok(id) => Redirect::to(&format!("/runs/{id}?notice=started")).into_response(),
        Err(e) => crate::pages::error_page(&e),
    }
}

/// The "Resume" button's form: `accept_config` is sent by the button under the differences.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct ResumeForm {
    #[serde(default)]
    accept_config: Option<String>,
}

/// `POST /runs/{id}/resume` (the "Resume" button): back to the run's page; when tether.toml
/// differs from the run's record, a page showing the differences and asking whether to apply
/// them.
pub(crate) async fn resume_form(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    Form(form): Form<ResumeForm>,
) -> Response {
    match resume_run(&app, &id, form.accept_config.is_some()).await {
        Ok(id) => Redirect::to(&format!("/runs/{id}?notice=resumed")).into_response(),
        Err(WebError::ConfigChanged { changes, .. }) => crate::pages::config_changed(&id, &changes),
        Err(e) => crate::pages::error_page(&e),
    }
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
        ] {
            let run: NewRun = serde_json::from_str(body).unwrap();
            assert!(run.problem().unwrap().contains(says), "{body}");
        }
        for bad in [
            r#"{"kind": "fleet"}"#,
            r#"{"kind": "goal", "approve": true}"#,
        ] {
            assert!(serde_json::from_str::<NewRun>(bad).is_err(), "{bad}");
        }
    }
}
