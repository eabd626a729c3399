//! The pages and what their forms do: the runs list, a run, the Q&A history, the answer form,
//! pause, cancel and say, each page's live stream, and the two embedded assets.
//!
//! Forms post plainly and lead back to the page with a fixed notice. The page's script sends
//! them (with the token, which never travels in a cookie: see [`crate::security`]) and shows
//! the page they lead to; it also fetches each page itself, reads the live updates
//! ([`updates`]) and remembers the responder's name.

mod updates;

pub(crate) use updates::live;

use std::sync::Arc;

use axum::extract::{Form, Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Redirect, Response};
use maud::Markup;
use serde::Deserialize;
use tether_store::control::{self, Control};
use tether_store::{AnswerOutcome, RunId, Seq, now_ms};

use crate::api::{self, Act, AnswerBody};
use crate::app::App;
use crate::body::PageParams;
use crate::error::WebError;
use crate::filter::{self, FilterLinks, FilterQuery};
use crate::model;
use crate::views::{self, Context, Nav, Notice};

/// Timeline entries shown on a run page before "Earlier events".
pub const TIMELINE_PAGE: usize = 500;
/// Questions on the history page.
pub(super) const HISTORY: usize = 200;
/// Runs on the runs page.
const RUNS: usize = views::RUNS_SHOWN;

/// `?notice=`.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct PageQuery {
    notice: Option<String>,
    before: Option<i64>,
    /// The runs page after this run (the next page).
    after: Option<String>,
    /// The `side_question` event whose answer the run page shows (after "Ask").
    side: Option<i64>,
}

impl PageQuery {
    fn notice(&self) -> Option<Notice> {
        self.notice.as_deref().and_then(Notice::from_name)
    }
}

/// An error page.
pub(crate) fn error_page(e: &WebError) -> Response {
    let body = maud::html! {
        (maud::DOCTYPE)
        html lang="en" {
            head { meta charset="utf-8"; title { "tether" } link rel="stylesheet" href="/assets/app.css"; }
            body { main { h1 { "Not here" } p { (views::text(&e.to_string())) } p { a href="/" { "All runs" } } } }
        }
    };
    (e.status(), Html(body.into_string())).into_response()
}

/// The answer to a Resume refused because tether.toml differs from the run's record: the
/// differences, and a button that resumes the run applying them (a person's act: this page is
/// the dashboard's, served by a person) or a way back.
pub(crate) fn config_changed(id: &str, changes: &[String]) -> Response {
    let body = maud::html! {
        (maud::DOCTYPE)
        html lang="en" {
            head { meta charset="utf-8"; title { "tether" } link rel="stylesheet" href="/assets/app.css"; }
            body { main {
                h1 { "tether.toml changed" }
                p { "tether.toml differs from the configuration run " code { (views::text(id)) } " recorded:" }
                ul.changes { @for change in changes { li { code { (views::text(change)) } } } }
                p { "Resume keeps nothing of it unless you apply it. Look at the change first (" code { "git diff tether.toml" } "): an agent may have made it." }
                form method="post" action=(format!("/runs/{id}/resume")) {
                    input type="hidden" name="accept_config" value="yes";
                    button.danger type="submit" { "Apply these settings and resume" }
                }
                p { a href=(format!("/runs/{id}")) { "Back to the run" } " (put tether.toml back, then resume)" }
            } }
        }
    };
    (StatusCode::CONFLICT, Html(body.into_string())).into_response()
}

fn page_result(r: Result<Markup, WebError>) -> Response {
    match r {
        Ok(m) => Html(m.into_string()).into_response(),
        Err(e) => error_page(&e),
    }
}

/// `GET /`: the runs list, of one machine, workspace or state when the query asks.
pub(crate) async fn runs(
    State(app): State<Arc<App>>,
    PageParams(q): PageParams<PageQuery>,
    PageParams(f): PageParams<FilterQuery>,
) -> Response {
    let ws = app.ws.clone();
    let sparks = Arc::clone(&app.sparks);
    let can_start = app.launcher.is_some();
    let filter = match f.filter() {
        Ok(filter) => filter,
        Err(e) => return error_page(&e),
    };
    let made = app
        .db
        .call(move |s| {
            let now = now_ms();
            // Read first: whatever is appended while the page is made comes on its stream.
            let after = s.last_seq()?;
            let page = match q.after.as_deref().map(str::parse::<RunId>) {
                Some(Ok(last)) => filter::page(s, &ws, &filter, Some(&last), RUNS)?,
                Some(Err(_)) => filter::Page {
                    runs: Vec::new(),
                    next: None,
                },
                None => filter::page(s, &ws, &filter, None, RUNS)?,
            };
            let mut usage = std::collections::HashMap::new();
            for r in &page.runs {
                usage.insert(r.id.clone(), sparks.of(s, r)?);
            }
            let pending = model::pending(s)?;
            let fleets = s.fleets(views::FLEETS_SHOWN)?;
            let live = [format!("/live?page=runs&after={}", after.0), filter.query()]
                .into_iter()
                .filter(|p| !p.is_empty())
                .collect::<Vec<_>>()
                .join("&");
            Ok(views::page(
                "Runs",
                Nav::Runs,
                &live,
                q.notice(),
                views::cards(&pending, now),
                maud::html! {
                    @if can_start { (views::new_run()) }
                    (views::fleets(&fleets, now))
                    (views::table(&page, &usage, &filter, now))
                },
            ))
        })
        .await;
    page_result(made)
}

/// `GET /runs/{id}`: a run — head, controls, the pending cards, the timeline (the newest
/// entries, with a link to earlier ones), its Q&A and the plan.
pub(crate) async fn run(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    PageParams(q): PageParams<PageQuery>,
) -> Response {
    let ws = app.ws.clone();
    let can_resume = app.launcher.is_some();
    let can_ask = app.side.is_some();
    let made = app
        .db
        .call(move |s| {
            let now = now_ms();
            // Read first: whatever is appended while the page is made comes on its stream.
            let after = s.last_seq()?;
            let run = control::find_run(s, Some(api::run_id(&id)?.as_str()))?;
            let detail = model::detail(s, &ws, &run)?;
            let events = s.events_before(&run.id, q.before.map(Seq), TIMELINE_PAGE + 1)?;
            let (earlier, shown) = if events.len() > TIMELINE_PAGE {
                (events.get(1).map(|e| e.seq.0), &events[1..])
            } else {
                (None, &events[..])
            };
            let ctx = context(&ws, &detail);
            let charts = charts(s, &run.id, &detail, now)?;
            let side = match q.side {
                Some(seq) => side_shown(s, &run.id, seq)?,
                None => None,
            };
            let pending = model::pending(s)?;
            let live = if q.before.is_some() {
                String::new()
            } else {
                format!("/live?page=run&run={}&after={}", run.id, after.0)
            };
            let main = maud::html! {
                (views::head(&detail.run, now))
                (views::controls(&detail.run, can_resume))
                (charts)
                (views::side(run.id.as_str(), can_ask, side.as_ref()))
                (views::timeline(run.id.as_str(), shown, &ctx, earlier))
                (views::run_qa(&detail.questions, now))
                @if let Some(r) = &detail.report { (views::report(r)) }
                @if let Some(p) = &detail.plan { (views::plan(p)) }
            };
            Ok(views::page(
                &format!("Run {}", run.id),
                Nav::Run,
                &live,
                q.notice(),
                views::cards(&pending, now),
                main,
            ))
        })
        .await;
    page_result(made)
}

/// `GET /fleets/{id}`: a run of many goals, every goal with where it stands.
pub(crate) async fn fleet(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    PageParams(q): PageParams<PageQuery>,
) -> Response {
    let made = app
        .db
        .call(move |s| {
            let now = now_ms();
            // Read first: whatever is appended while the page is made comes on its stream.
            let after = s.last_seq()?;
            let fleet = s.fleet(&api::run_id(&id)?)?;
            let pending = model::pending(s)?;
            let live = format!("/live?page=fleet&run={}&after={}", fleet.id, after.0);
            Ok(views::page(
                &format!("Run of many goals {}", fleet.id),
                Nav::Run,
                &live,
                q.notice(),
                views::cards(&pending, now),
                views::fleet(&fleet, now),
            ))
        })
        .await;
    page_result(made)
}

/// A run's charts: what each iteration used and, for a goal run, its sign-off verdicts over
/// time (from its start to its last event, or to now while it goes on).
pub(super) fn charts(
    s: &tether_store::Store,
    id: &RunId,
    detail: &model::RunDetail,
    now: i64,
) -> Result<Markup, WebError> {
    let r = &detail.run;
    let series = tether_read::usage_series(s, id)?;
    let marks: Vec<views::VerdictMark> = detail.verdicts.iter().map(Into::into).collect();
    let to = if r.status.is_stopped() {
        r.last_event_at_ms.unwrap_or(r.created_at_ms)
    } else {
        now
    };
    let goal = r.kind == tether_store::RunKind::Goal;
    Ok(views::run_charts(
        &series,
        goal.then_some(&marks[..]),
        r.created_at_ms,
        to,
    ))
}

/// The timeline's context for a run: its questions, verdicts and verify output tails.
pub(super) fn context(ws: &tether_config::Workspace, detail: &model::RunDetail) -> Context {
    // The verify logs of a run of another machine are on that machine.
    let tails = detail
        .verdicts
        .iter()
        .filter(|_| detail.run.here)
        .filter_map(|v| Some((v.id, model::verify_tail(ws, v)?)))
        .collect();
    Context::new(detail.questions.clone(), detail.verdicts.clone(), tails)
}

/// `GET /history`: every question and answer, newest first.
pub(crate) async fn history(
    State(app): State<Arc<App>>,
    PageParams(q): PageParams<PageQuery>,
) -> Response {
    let made = app
        .db
        .call(move |s| {
            let now = now_ms();
            // Read first: whatever is appended while the page is made comes on its stream.
            let after = s.last_seq()?;
            let all = s.question_history(HISTORY)?;
            let pending = model::pending(s)?;
            Ok(views::page(
                "Q&A history",
                Nav::History,
                &format!("/live?page=history&after={}", after.0),
                q.notice(),
                views::cards(&pending, now),
                views::history(&all, now),
            ))
        })
        .await;
    page_result(made)
}

/// Back to the page the form was on (a local path only), with a notice.
fn back(headers: &HeaderMap, fallback: &str, notice: Notice) -> Response {
    let from = headers
        .get(header::REFERER)
        .and_then(|v| v.to_str().ok())
        .and_then(|r| r.split_once("://").map(|(_, rest)| rest))
        .and_then(|rest| rest.find('/').map(|i| &rest[i..]))
        .map(|p| p.split('?').next().unwrap_or("/"))
        .filter(|p| p.starts_with('/') && !p.starts_with("//"))
        .unwrap_or(fallback);
    Redirect::to(&format!("{from}?notice={}", notice.name())).into_response()
}

/// The answer form.
#[derive(Debug, Deserialize)]
pub(crate) struct AnswerForm {
    #[serde(default)]
    text: String,
    /// Set by a choice's button: the option's index.
    #[serde(default)]
    choice: Option<usize>,
    #[serde(default)]
    responder: Option<String>,
}

/// `POST /questions/{id}/answer` (the form).
pub(crate) async fn answer(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    headers: HeaderMap,
    Form(form): Form<AnswerForm>,
) -> Response {
    let body = AnswerBody {
        text: form.text,
        choice: form.choice,
        responder: form.responder,
    };
    let notice = match api::give_answer(&app, &id, body).await {
        Ok(AnswerOutcome::Answered(_)) => Notice::Answered,
        Ok(AnswerOutcome::AlreadyAnswered { .. }) => Notice::AlreadyAnswered,
        Ok(AnswerOutcome::Cancelled) => Notice::Withdrawn,
        Err(WebError::BadRequest(_)) => Notice::EmptyAnswer,
        Err(e) => return error_page(&e),
    };
    back(&headers, "/", notice)
}

/// Pause and cancel forms.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct ByForm {
    #[serde(default)]
    by: Option<String>,
    #[serde(default)]
    text: Option<String>,
}

fn control_notice(done: Control, ok: Notice) -> Notice {
    match done {
        Control::Unchanged(s) if control::is_ended(s) => Notice::Ended,
        _ => ok,
    }
}

/// `POST /runs/{id}/pause` (the form).
pub(crate) async fn pause(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    headers: HeaderMap,
    Form(form): Form<ByForm>,
) -> Response {
    control_form(&app, &id, &headers, form, Act::Pause, Notice::Paused).await
}

/// `POST /runs/{id}/cancel` (the form).
pub(crate) async fn cancel(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    headers: HeaderMap,
    Form(form): Form<ByForm>,
) -> Response {
    control_form(&app, &id, &headers, form, Act::Cancel, Notice::Cancelled).await
}

/// Asks the run `id` to `act` for the form's `by`, then back to the page with `done`'s notice.
async fn control_form(
    app: &Arc<App>,
    id: &str,
    headers: &HeaderMap,
    form: ByForm,
    act: Act,
    done: Notice,
) -> Response {
    let by = form.by.unwrap_or_default();
    match api::act(app, id, act, &by).await {
        Ok((result, _)) => back(headers, "/", control_notice(result, done)),
        Err(e) => error_page(&e),
    }
}

/// `POST /runs/{id}/say` (the form).
pub(crate) async fn say(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    headers: HeaderMap,
    Form(form): Form<ByForm>,
) -> Response {
    let by = form.by.unwrap_or_default();
    match api::say_to(&app, &id, form.text.unwrap_or_default(), &by).await {
        Ok((done, _)) => back(&headers, "/", control_notice(done, Notice::Said)),
        Err(e) => error_page(&e),
    }
}

/// The side question recorded at `seq` in `run`'s journal, if that is one.
fn side_shown(
    s: &tether_store::Store,
    run: &tether_store::RunId,
    seq: i64,
) -> Result<Option<views::SideShown>, tether_store::StoreError> {
    let found = s.events(run, Seq(seq.saturating_sub(1)), 1)?;
    Ok(found
        .into_iter()
        .find(|e| e.seq.0 == seq)
        .and_then(|e| match e.event {
            Some(tether_store::Event::SideQuestion {
                question,
                answer,
                model,
                ..
            }) => Some(views::SideShown {
                question,
                answer,
                model,
            }),
            _ => None,
        }))
}

/// `POST /runs/{id}/side` (the form): asks on the side, then back to the run's page showing the
/// answer.
pub(crate) async fn side(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    Form(form): Form<ByForm>,
) -> Response {
    let by = form.by.unwrap_or_default();
    match api::ask_side(&app, &id, form.text.unwrap_or_default(), &by).await {
        Ok(answered) => Redirect::to(&format!(
            "/runs/{}?side={}#side-answer",
            answered.run, answered.seq
        ))
        .into_response(),
        Err(e) => error_page(&e),
    }
}

/// `GET /assets/app.css`.
pub(crate) async fn css() -> Response {
    asset(
        include_str!("../../assets/app.css"),
        "text/css; charset=utf-8",
    )
}

/// `GET /assets/app.js`.
pub(crate) async fn js() -> Response {
    asset(
        include_str!("../../assets/app.js"),
        "text/javascript; charset=utf-8",
    )
}

fn asset(body: &'static str, kind: &'static str) -> Response {
    let mut r = body.into_response();
    r.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(kind));
    r.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("private, max-age=3600"),
    );
    r
}
