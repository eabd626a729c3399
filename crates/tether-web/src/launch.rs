//! Starting and resuming runs from the dashboard: `POST /api/runs`, `POST
//! /api/runs/{id}/resume`, and the page's "New run" and "Resume" forms.
//!
//! The dashboard does not know how a run is put together (the executor, the sandbox, the
//! desk): the serving process hands it a [`Launcher`] that does (`tether serve` builds one over
//! the runtime), and the serving process drives the run, so it goes on when the page is closed.
//! A dashboard without one (the one embedded in a run) answers 501 and shows no form. The
//! launcher, the run it is asked for ([`NewRun`]) and its refusals ([`LaunchError`]) are
//! [`tether_store::launch`]'s, below both the dashboard and the runtime; here they are read from
//! requests and forms and answered over HTTP.
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
use serde::{Deserialize, Serialize};
use tether_store::launch::Resume;
pub use tether_store::launch::{
    LaunchError, Launcher, MAX_ITERATIONS, MAX_PARALLEL, NewRun, Started,
};
use tether_store::{Budget, RunId, Unit};

use crate::app::App;
use crate::body::Body;
use crate::error::WebError;

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

/// The answer to a start or resume.
#[derive(Debug, Serialize)]
pub(crate) struct Launched {
    id: String,
    /// The run's page.
    url: String,
}

impl Launched {
    fn of(started: &Started) -> Self {
        Launched {
            id: started.id().to_string(),
            url: started.url(),
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
async fn start_run(app: &App, run: NewRun) -> Result<Started, WebError> {
    let launcher = launcher(app)?;
    if let Some(problem) = run.problem() {
        return Err(WebError::BadRequest(problem));
    }
    Ok(launcher.start(run).await?)
}

async fn resume_run(app: &App, id: &str, how: Resume) -> Result<RunId, WebError> {
    let launcher = launcher(app)?;
    let id = crate::api::run_id(id)?;
    launcher.resume(id.clone(), how).await?;
    Ok(id)
}

/// A resume as a request spells it: `{}` (or no body) keeps the run's configuration;
/// `{"accept_config": true}` applies tether.toml's after its differences were shown; `"add":
/// {"iterations": 5, "tokens": 200000, "cost_usd": 2.5, "duration_secs": 3600}` (any of them)
/// raises those budgets first, as `tether resume --add-…` does; `"by"` names who.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ResumeRequest {
    #[serde(default)]
    accept_config: bool,
    #[serde(default)]
    add: Option<Budget>,
    #[serde(default)]
    by: Option<String>,
}

impl ResumeRequest {
    fn resume(self) -> Resume {
        Resume {
            accept_config: self.accept_config,
            add: self.add.unwrap_or_default(),
            by: format!("web:{}", crate::api::responder(self.by.as_deref())),
        }
    }
}

/// `POST /api/runs` `{"kind": "ralph", "prompt": …, "completion_promise": …, "max_iterations":
/// …}` or `{"kind": "goal", "max_iterations": …}`: 201 with `{"id", "url"}`.
pub(crate) async fn start(
    State(app): State<Arc<App>>,
    Body(run): Body<NewRun>,
) -> Result<(StatusCode, Json<Launched>), WebError> {
    let started = start_run(&app, run).await?;
    Ok((StatusCode::CREATED, Json(Launched::of(&started))))
}

/// `POST /api/runs/{id}/resume` (optionally `{"accept_config": true}`): 202 with `{"id",
/// "url"}` once the run is driven again; 409 with `{"error", "changes"}` when tether.toml
/// differs from the run's record and the request does not accept it.
pub(crate) async fn resume(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    body: Option<Body<ResumeRequest>>,
) -> Result<(StatusCode, Json<Launched>), WebError> {
    let how = body.map(|Body(r)| r).unwrap_or_default().resume();
    let id = resume_run(&app, &id, how).await?;
    Ok((StatusCode::ACCEPTED, Json(Launched::of(&Started::Run(id)))))
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
    #[serde(default)]
    parallel: String,
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
        let parallel = match self.parallel.trim() {
            "" => None,
            n => Some(n.parse::<u32>().map_err(|_| {
                WebError::BadRequest(format!("goals at once `{n}` is not a number"))
            })?),
        };
        match self.kind.as_str() {
            "ralph" if parallel.is_some() => Err(WebError::BadRequest(
                "goals at once is a goal run's: a ralph run has one prompt".to_owned(),
            )),
            "ralph" => Ok(NewRun::Ralph {
                prompt: self.prompt,
                completion_promise: Some(self.completion_promise).filter(|p| !p.trim().is_empty()),
                max_iterations,
                worktree,
            }),
            "goal" => Ok(NewRun::Goal {
                max_iterations,
                worktree,
                parallel,
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
        Ok(started) => Redirect::to(&format!("{}?notice=started", started.url())).into_response(),
        Err(e) => crate::pages::error_page(&e),
    }
}

/// The "Resume" button's form: `accept_config` is sent by the button under the differences;
/// `add` and `unit` by the form of a run a budget stopped (an amount of that unit, as `tether
/// resume --add-…` reads it: `5`, `200k`, `$2.50`, `1h`), with `by`.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct ResumeForm {
    #[serde(default)]
    accept_config: Option<String>,
    #[serde(default)]
    add: String,
    #[serde(default)]
    unit: String,
    #[serde(default)]
    by: String,
}

impl ResumeForm {
    fn resume(self) -> Result<Resume, WebError> {
        let mut add = Budget::default();
        let amount = self.add.trim();
        if !amount.is_empty() {
            let unit = Unit::ALL
                .into_iter()
                .find(|u| u.as_str() == self.unit)
                .ok_or_else(|| WebError::BadRequest(format!("`{}` is not a budget", self.unit)))?;
            let bad = |e: tether_budget::BudgetError| WebError::BadRequest(e.to_string());
            match unit {
                Unit::Iterations => {
                    add.iterations = Some(tether_budget::parse_iterations(amount).map_err(bad)?);
                }
                Unit::Tokens => {
                    add.tokens = Some(tether_budget::parse_tokens(amount).map_err(bad)?)
                }
                Unit::CostUsd => {
                    add.cost_usd = Some(tether_budget::parse_cost(amount).map_err(bad)?)
                }
                Unit::Duration => {
                    add.duration_secs = Some(tether_budget::parse_duration(amount).map_err(bad)?);
                }
            }
        }
        Ok(Resume {
            accept_config: self.accept_config.is_some(),
            add,
            by: format!("web:{}", crate::api::responder(Some(&self.by))),
        })
    }
}

/// `POST /runs/{id}/resume` (the "Resume" button): back to the run's page; when tether.toml
/// differs from the run's record, a page showing the differences and asking whether to apply
/// them.
pub(crate) async fn resume_form(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    Form(form): Form<ResumeForm>,
) -> Response {
    let resumed = match form.resume() {
        Ok(how) => resume_run(&app, &id, how).await,
        Err(e) => Err(e),
    };
    match resumed {
        Ok(id) => Redirect::to(&format!("/runs/{id}?notice=resumed")).into_response(),
        Err(WebError::ConfigChanged { changes, .. }) => crate::pages::config_changed(&id, &changes),
        Err(e) => crate::pages::error_page(&e),
    }
}
