//! The JSON API under `/api/`: what the pages show and do, for other tools. Reads return the
//! store's own shapes; the acts (answer, pause, cancel, say) are the ones the pages use, and
//! go through the store exactly as the CLI's do.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tether_human::broker;
use tether_store::control::{self, Control};
use tether_store::{AnswerOutcome, Author, QuestionId, RunId, Seq, StoredEvent};

use crate::app::App;
use crate::body::{Body, Params};
use crate::error::WebError;
use crate::filter::{self, FilterQuery};
use crate::live::{self, Filter};
use crate::model::{self, Pending, RunDetail};

/// The channel name stored with answers given on the dashboard.
pub const CHANNEL: &str = "web";
/// The most runs or events one request returns.
const MAX_PAGE: usize = 1000;

/// `?limit=`.
#[derive(Debug, Deserialize)]
pub(crate) struct Limit {
    limit: Option<usize>,
}

/// `?limit=&after=` for the runs list (its filter is read separately, as [`FilterQuery`]).
#[derive(Debug, Deserialize)]
pub(crate) struct RunsQuery {
    limit: Option<usize>,
    after: Option<String>,
}

/// The response header naming the run to ask `?after=` for the next page, when there are older
/// runs that match.
pub const NEXT_HEADER: &str = "x-tether-next-after";

/// `GET /api/runs`: the newest runs (after `after`), those of one machine, workspace or state
/// when asked; when there are more, the header [`NEXT_HEADER`] says where the next page starts.
pub(crate) async fn runs(
    State(app): State<Arc<App>>,
    Params(q): Params<RunsQuery>,
    Params(f): Params<FilterQuery>,
) -> Result<Response, WebError> {
    let limit = q.limit.unwrap_or(100).clamp(1, MAX_PAGE);
    let filter = f.filter()?;
    let after = q.after.as_deref().map(run_id).transpose()?;
    let ws = app.ws.clone();
    let page = app
        .db
        .call(move |s| filter::page(s, &ws, &filter, after.as_ref(), limit))
        .await?;
    let mut response = Json(page.runs).into_response();
    if let Some(next) = page
        .next
        .and_then(|next| axum::http::HeaderValue::from_str(next.as_str()).ok())
    {
        response.headers_mut().insert(NEXT_HEADER, next);
    }
    Ok(response)
}

/// A run id from the path.
pub(crate) fn run_id(s: &str) -> Result<RunId, WebError> {
    s.parse()
        .map_err(|_| WebError::NotFound(format!("no run `{s}` in this workspace")))
}

/// A run in detail as `GET /api/runs/{id}` answers: with what each iteration used.
#[derive(Debug, Serialize)]
pub(crate) struct RunJson {
    #[serde(flatten)]
    detail: RunDetail,
    /// Per iteration, in order: its agent's and judges' tokens and cost, its time, how it ended.
    usage_series: Vec<tether_read::IterationUsage>,
}

/// `GET /api/runs/{id}`: a run in detail.
pub(crate) async fn run(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
) -> Result<Json<RunJson>, WebError> {
    let ws = app.ws.clone();
    let id = run_id(&id)?;
    Ok(Json(
        app.db
            .call(move |s| {
                let run = control::find_run(s, Some(id.as_str()))?;
                Ok(RunJson {
                    detail: model::detail(s, &ws, &run)?,
                    usage_series: tether_read::usage_series(s, &run.id)?,
                })
            })
            .await?,
    ))
}

/// `GET /api/fleets`: the newest runs of many goals (`?limit=`, at most 100), each with its
/// goals.
pub(crate) async fn fleets(
    State(app): State<Arc<App>>,
    Params(q): Params<RunsQuery>,
) -> Result<Json<Vec<tether_store::Fleet>>, WebError> {
    let limit = q.limit.unwrap_or(20).clamp(1, MAX_PAGE);
    Ok(Json(app.db.call(move |s| Ok(s.fleets(limit)?)).await?))
}

/// `GET /api/fleets/{id}`: a run of many goals, every goal with where it stands.
pub(crate) async fn fleet(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
) -> Result<Json<tether_store::Fleet>, WebError> {
    let id = run_id(&id)?;
    Ok(Json(app.db.call(move |s| Ok(s.fleet(&id)?)).await?))
}

/// `?before=&limit=` for a page of a timeline.
#[derive(Debug, Deserialize)]
pub(crate) struct Page {
    before: Option<i64>,
    limit: Option<usize>,
}

/// `GET /api/runs/{id}/timeline`: a page of the run's events, newest `limit` before `before`,
/// oldest first.
pub(crate) async fn timeline(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    Params(q): Params<Page>,
) -> Result<Json<Vec<StoredEvent>>, WebError> {
    let id = run_id(&id)?;
    let limit = q.limit.unwrap_or(500).min(MAX_PAGE);
    Ok(Json(
        app.db
            .call(move |s| {
                let run = control::find_run(s, Some(id.as_str()))?;
                Ok(s.events_before(&run.id, q.before.map(Seq), limit)?)
            })
            .await?,
    ))
}

/// `GET /api/runs/{id}/events`: the run's events as server-sent events, from the start (or
/// after `Last-Event-ID` / `?after=`), then live.
pub(crate) async fn run_events(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    Params(q): Params<live::After>,
    headers: HeaderMap,
) -> Result<Response, WebError> {
    let id = run_id(&id)?;
    let found = id.clone();
    app.db
        .call(move |s| Ok(control::find_run(s, Some(found.as_str()))?))
        .await?;
    let after = live::resume_point(&headers, &q).unwrap_or(Seq(0));
    Ok(live::json_stream(app, Filter::Run(id), after).into_response())
}

/// `GET /api/events`: every event of the workspace as server-sent events, from now (or after
/// `Last-Event-ID` / `?after=`).
pub(crate) async fn events(
    State(app): State<Arc<App>>,
    Params(q): Params<live::After>,
    headers: HeaderMap,
) -> Result<Response, WebError> {
    let after = match live::resume_point(&headers, &q) {
        Some(after) => after,
        None => app.db.call(|s| Ok(s.last_seq()?)).await?,
    };
    Ok(live::json_stream(app, Filter::All, after).into_response())
}

/// `GET /api/questions`: the pending questions, oldest first.
pub(crate) async fn questions(State(app): State<Arc<App>>) -> Result<Json<Vec<Pending>>, WebError> {
    Ok(Json(app.db.call(model::pending).await?))
}

/// `GET /api/history`: every question and its answer, newest first.
pub(crate) async fn history(
    State(app): State<Arc<App>>,
    Params(q): Params<Limit>,
) -> Result<Json<Vec<tether_store::Question>>, WebError> {
    let limit = q.limit.unwrap_or(100).min(MAX_PAGE);
    Ok(Json(
        app.db.call(move |s| Ok(s.question_history(limit)?)).await?,
    ))
}

/// The body of an answer: free text, or `choice`, the index (from 0) of one of the question's
/// options (then `text` is ignored).
#[derive(Debug, Deserialize)]
pub(crate) struct AnswerBody {
    #[serde(default)]
    pub(crate) text: String,
    #[serde(default)]
    pub(crate) choice: Option<usize>,
    #[serde(default)]
    pub(crate) responder: Option<String>,
}

/// Records an answer from the dashboard through the broker's first-answer-wins write, which
/// wakes the waiting process; returns what happened.
pub(crate) async fn give_answer(
    app: &Arc<App>,
    id: &str,
    body: AnswerBody,
) -> Result<AnswerOutcome, WebError> {
    let id: QuestionId = id
        .parse()
        .map_err(|_| WebError::NotFound(format!("no question `{id}` in this workspace")))?;
    if body.choice.is_none() && body.text.trim().is_empty() {
        return Err(WebError::BadRequest(
            "the answer is empty; write the text the agent should read".to_owned(),
        ));
    }
    let responder = responder(body.responder.as_deref());
    let state_dir = app.ws.state_dir();
    app.db
        .call(move |s| {
            let missing = |e: tether_store::StoreError| match e {
                tether_store::StoreError::NotFound { .. } => {
                    WebError::NotFound(format!("no question {id} in this workspace"))
                }
                e => e.into(),
            };
            let text = match body.choice {
                // A choice is stored as its label, which the store reads back as that choice.
                Some(i) => {
                    let question = s.question(&id).map_err(missing)?;
                    question.options.get(i).cloned().ok_or_else(|| {
                        WebError::BadRequest(format!(
                            "{id} has no option {i} (it offers {} options, counted from 0)",
                            question.options.len()
                        ))
                    })?
                }
                None => body.text,
            };
            broker::answer(s, &state_dir, &id, &text, CHANNEL, &responder).map_err(missing)
        })
        .await
}

/// The name given, trimmed and bounded, or `web` when none was.
pub(crate) fn responder(name: Option<&str>) -> String {
    let name: String = name.unwrap_or_default().trim().chars().take(100).collect();
    if name.is_empty() {
        CHANNEL.to_owned()
    } else {
        name
    }
}

/// `POST /api/questions/{id}/answer` `{"text": …, "responder": …}` or `{"choice": 1, …}` (an
/// option's index, from 0): 200 when it was the first
/// answer, 409 with the winning one when someone answered first, 410 when withdrawn.
pub(crate) async fn answer(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    Body(body): Body<AnswerBody>,
) -> Result<Response, WebError> {
    match give_answer(&app, &id, body).await? {
        AnswerOutcome::Answered(q) => Ok(Json(json!({ "outcome": "answered", "question": q })).into_response()),
        AnswerOutcome::AlreadyAnswered {
            answer,
            by_channel,
            responder,
        } => Ok((
            axum::http::StatusCode::CONFLICT,
            Json(json!({
                "outcome": "already_answered",
                "error": format!("{id} was already answered on {by_channel} by {responder}; your answer was not used"),
                "answer": answer, "channel": by_channel, "responder": responder,
            })),
        )
            .into_response()),
        AnswerOutcome::Cancelled => Err(WebError::Gone(format!(
            "{id} was withdrawn; nobody is waiting for an answer"
        ))),
    }
}

/// What a control did, as the API reports it.
#[derive(Debug, Serialize)]
pub(crate) struct ControlReply {
    /// `requested` (a live loop acts at its next safe point), `applied` (no process drove it,
    /// so the store was changed directly) or `unchanged` (it had ended or was already so).
    result: &'static str,
    /// The run's status before the request.
    status: String,
}

/// A control act on a run.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Act {
    Pause,
    Cancel,
}

/// Pauses or cancels the run for `by` (a person on the dashboard).
pub(crate) async fn act(
    app: &Arc<App>,
    id: &str,
    act: Act,
    by: &str,
) -> Result<(Control, String), WebError> {
    let id = run_id(id)?;
    let ws = app.ws.clone();
    let by = format!("web:{}", responder(Some(by)));
    app.db
        .call(move |s| {
            let run = control::find_run(s, Some(id.as_str()))?;
            let lock = ws.run_lock(run.id.as_str());
            let status = run.state.status.as_str().to_owned();
            let done = match act {
                Act::Pause => control::pause(s, &lock, &run, (&by, Author::Person))?,
                Act::Cancel => control::cancel(s, &lock, &run, &by)?,
            };
            Ok((done, status))
        })
        .await
}

/// Queues a message for the run's agent from `by`.
pub(crate) async fn say_to(
    app: &Arc<App>,
    id: &str,
    text: String,
    by: &str,
) -> Result<(Control, String), WebError> {
    let id = run_id(id)?;
    if text.trim().is_empty() {
        return Err(WebError::BadRequest("the message is empty".to_owned()));
    }
    let by = format!("web:{}", responder(Some(by)));
    app.db
        .call(move |s| {
            let run = control::find_run(s, Some(id.as_str()))?;
            let status = run.state.status.as_str().to_owned();
            Ok((control::say(s, &run, &text, (&by, Author::Person))?, status))
        })
        .await
}

fn reply((done, status): (Control, String)) -> Json<ControlReply> {
    let result = match done {
        Control::Requested => "requested",
        Control::Applied => "applied",
        Control::Unchanged(_) => "unchanged",
    };
    Json(ControlReply { result, status })
}

/// `{"by": …}` for pause and cancel.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct By {
    #[serde(default)]
    by: Option<String>,
}

/// `POST /api/runs/{id}/pause`.
pub(crate) async fn pause(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    body: Option<Body<By>>,
) -> Result<Json<ControlReply>, WebError> {
    let by = body.and_then(|b| b.0.by).unwrap_or_default();
    Ok(reply(act(&app, &id, Act::Pause, &by).await?))
}

/// `POST /api/runs/{id}/cancel`.
pub(crate) async fn cancel(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    body: Option<Body<By>>,
) -> Result<Json<ControlReply>, WebError> {
    let by = body.and_then(|b| b.0.by).unwrap_or_default();
    Ok(reply(act(&app, &id, Act::Cancel, &by).await?))
}

/// `{"text": …, "by": …}` for say.
#[derive(Debug, Deserialize)]
pub(crate) struct SayBody {
    text: String,
    #[serde(default)]
    by: Option<String>,
}

/// `POST /api/runs/{id}/say`: 200 when queued, 410 when the run has ended.
pub(crate) async fn say(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    Body(body): Body<SayBody>,
) -> Result<Json<ControlReply>, WebError> {
    let by = body.by.unwrap_or_default();
    let done = say_to(&app, &id, body.text, &by).await?;
    if let (Control::Unchanged(s), _) = &done {
        return Err(WebError::Gone(format!(
            "run {id} has ended ({}); a message can only go to a run that can continue",
            s.as_str()
        )));
    }
    Ok(reply(done))
}

/// `{"question": …, "by": …}` for a side question.
#[derive(Debug, Deserialize)]
pub(crate) struct SideBody {
    question: String,
    #[serde(default)]
    by: Option<String>,
}

/// A side question answered, as the API reports it.
#[derive(Debug, Serialize)]
pub(crate) struct SideAnswer {
    /// The run asked about.
    pub run: String,
    /// The question.
    pub question: String,
    /// The side model's answer, as it gave it.
    pub answer: String,
    /// The model that answered.
    pub model: String,
    /// The `side_question` event recording it.
    pub seq: i64,
}

/// Asks `question` about run `id` on the side for `by`, with the server's side asker: the
/// answer once the side model gives it. Nothing reaches the run's agent.
pub(crate) async fn ask_side(
    app: &Arc<App>,
    id: &str,
    question: String,
    by: &str,
) -> Result<SideAnswer, WebError> {
    let run = run_id(id)?;
    let Some(asker) = app.side.clone() else {
        return Err(WebError::NotImplemented(
            "this dashboard does not answer side questions (it is a run's own, or it shows a \
             store other than its workspace's): ask from `tether serve` in the workspace, or \
             with `tether side`"
                .to_owned(),
        ));
    };
    if question.trim().is_empty() {
        return Err(WebError::BadRequest("the question is empty".to_owned()));
    }
    let by = format!("web:{}", responder(Some(by)));
    let reply = asker.ask(run.clone(), question.clone(), by).await?;
    Ok(SideAnswer {
        run: run.to_string(),
        question,
        answer: reply.answer,
        model: reply.model,
        seq: reply.seq.0,
    })
}

/// `POST /api/runs/{id}/side`: a question about the run asked on the side, answered by the side
/// model (200 with the answer); the run and its agent are left alone.
pub(crate) async fn side(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    Body(body): Body<SideBody>,
) -> Result<Json<SideAnswer>, WebError> {
    let by = body.by.unwrap_or_default();
    Ok(Json(ask_side(&app, &id, body.question, &by).await?))
}

/// `GET /api/plan`: the workspace's plan as the run page shows it.
pub(crate) async fn plan(State(app): State<Arc<App>>) -> Result<Json<Value>, WebError> {
    let ws = app.ws.clone();
    let view = app
        .db
        .call(move |s| Ok(model::plan_checked(s, &ws, &model::plan_path(&ws, None))))
        .await?;
    Ok(Json(serde_json::to_value(view).unwrap_or(Value::Null)))
}
