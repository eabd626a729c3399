//! A page's live stream (`GET /live`): for each new journal event, the fragments the page
//! needs — a timeline entry, the run's new head, a question card, a runs-list row — rendered
//! by the same views as the page itself and sent as `ops` for the page's script to place.

use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use tether_store::{Event, StoredEvent, now_ms};

use super::{HISTORY, charts, context};
use crate::api;
use crate::app::App;
use crate::body::PageParams;
use crate::error::WebError;
use crate::filter::{FilterQuery, RunFilter};
use crate::live::{self, Filter, Op};
use crate::model;
use crate::views;

/// `?page=runs|run|fleet|history&run=ID&after=SEQ` (and the runs page's filter, read
/// separately; a run of many goals' id as `run`).
#[derive(Debug, Deserialize)]
pub(crate) struct LiveQuery {
    page: String,
    run: Option<String>,
    after: Option<i64>,
}

/// Which page a live stream updates.
#[derive(Debug, Clone)]
enum Which {
    Runs(RunFilter),
    Run(tether_store::RunId),
    Fleet(tether_store::RunId),
    History,
}

/// `GET /live`: a page's updates as `ops` messages.
pub(crate) async fn live(
    State(app): State<Arc<App>>,
    PageParams(q): PageParams<LiveQuery>,
    PageParams(f): PageParams<FilterQuery>,
    headers: HeaderMap,
) -> Response {
    let which = match (q.page.as_str(), q.run.as_deref()) {
        ("runs", _) => match f.filter() {
            Ok(filter) => Which::Runs(filter),
            Err(e) => return e.into_response(),
        },
        ("history", _) => Which::History,
        ("run", Some(id)) => match api::run_id(id) {
            Ok(id) => Which::Run(id),
            Err(e) => return e.into_response(),
        },
        ("fleet", Some(id)) => match api::run_id(id) {
            Ok(id) => Which::Fleet(id),
            Err(e) => return e.into_response(),
        },
        _ => return (StatusCode::BAD_REQUEST, "unknown page").into_response(),
    };
    let after = match live::resume_point(&headers, &live::After { after: q.after }) {
        Some(after) => after,
        None => match app.db.call(|s| Ok(s.last_seq()?)).await {
            Ok(seq) => seq,
            Err(e) => return e.into_response(),
        },
    };
    let renderer = Arc::clone(&app);
    let render: live::Render = Arc::new(move |e: Arc<StoredEvent>| {
        let app = Arc::clone(&renderer);
        let which = which.clone();
        Box::pin(async move {
            let seq = e.seq;
            let ws = app.ws.clone();
            let sparks = Arc::clone(&app.sparks);
            let ops = app
                .db
                .call(move |s| ops_for(s, &ws, &sparks, &which, &e))
                .await
                .unwrap_or_else(|err| {
                    tracing::warn!(error = %err, "dashboard: rendering a live update failed");
                    Vec::new()
                });
            live::ops_event(seq, &ops)
        })
    });
    live::stream(app, Filter::All, after, render).into_response()
}

/// What the page `which` changes for the event `e`.
fn ops_for(
    s: &tether_store::Store,
    ws: &tether_config::Workspace,
    sparks: &model::Sparks,
    which: &Which,
    e: &StoredEvent,
) -> Result<Vec<Op>, WebError> {
    let now = now_ms();
    let mut ops = Vec::new();
    let question = match &e.event {
        Some(
            Event::QuestionAsked { question_id }
            | Event::QuestionAnswered { question_id, .. }
            | Event::QuestionCancelled { question_id },
        ) => Some(s.question(question_id)?),
        _ => None,
    };
    if let Some(q) = &question {
        let id = format!("q-{}", q.id);
        if q.status == tether_store::QuestionStatus::Pending {
            let pending = model::Pending {
                abandoned: s.abandoned(q)?,
                question: q.clone(),
            };
            let html = views::pending_card(&pending, now).into_string();
            ops.push(Op::Append {
                target: "questions".into(),
                id,
                html,
            });
        } else {
            let html = views::answered_card(q, now).into_string();
            ops.push(Op::Replace { target: id, html });
        }
    }
    let fleet = match &e.event {
        Some(
            Event::FleetStarted { fleet_id }
            | Event::FleetGoalMoved { fleet_id, .. }
            | Event::FleetEnded { fleet_id, .. },
        ) => Some(fleet_id),
        _ => None,
    };
    match which {
        Which::Runs(_) if fleet.is_some() => {
            let fleets = s.fleets(views::FLEETS_SHOWN)?;
            ops.push(Op::Replace {
                target: "fleets".into(),
                html: views::fleets(&fleets, now).into_string(),
            });
        }
        Which::Fleet(id) if fleet == Some(id) => {
            ops.push(Op::Replace {
                target: "fleet".into(),
                html: views::fleet(&s.fleet(id)?, now).into_string(),
            });
        }
        Which::Fleet(_) => {}
        Which::Runs(filter) => {
            if let Some(run_id) = &e.run_id {
                let run = s.run(run_id)?;
                if filter.matches(&run) {
                    let summary = model::runs_one(s, ws, &run)?;
                    ops.push(Op::Upsert {
                        target: views::group_list(summary.group),
                        id: format!("run-{run_id}"),
                        html: views::row(&summary, &sparks.of(s, &summary)?, now).into_string(),
                    });
                } else if !filter.is_empty() {
                    // It left the filter (a state changed): off the list, if it was on it.
                    ops.push(Op::Replace {
                        target: format!("run-{run_id}"),
                        html: String::new(),
                    });
                }
            }
        }
        Which::History => {
            if question.is_some() {
                let all = s.question_history(HISTORY)?;
                ops.push(Op::Replace {
                    target: "history".into(),
                    html: views::history(&all, now).into_string(),
                });
            }
        }
        Which::Run(id) if e.run_id.as_ref() == Some(id) => {
            let run = s.run(id)?;
            let detail = model::detail(s, ws, &run)?;
            let ctx = context(ws, &detail);
            if let Some(item) = views::item(e, &ctx) {
                ops.push(Op::Append {
                    target: "timeline".into(),
                    id: format!("e-{}", e.seq.0),
                    html: item.into_string(),
                });
            }
            ops.push(Op::Replace {
                target: "run-head".into(),
                html: views::head(&detail.run, now).into_string(),
            });
            // The charts draw the usage series (its events are the store's usage kinds) and the
            // verdicts.
            let usage_may_change = tether_store::USAGE_KINDS.contains(&e.kind.as_str())
                || matches!(e.event, Some(Event::GoalVerdict { .. }));
            if usage_may_change {
                ops.push(Op::Replace {
                    target: "run-charts".into(),
                    html: charts(s, id, &detail, now)?.into_string(),
                });
            }
            if question.is_some() {
                ops.push(Op::Replace {
                    target: "run-qa".into(),
                    html: views::run_qa(&detail.questions, now).into_string(),
                });
            }
            let plan_may_change = matches!(
                e.event,
                Some(Event::GoalVerdict { .. } | Event::IterationCompleted { .. })
            );
            if let (true, Some(p)) = (plan_may_change, &detail.plan) {
                ops.push(Op::Replace {
                    target: "plan".into(),
                    html: views::plan(p).into_string(),
                });
            }
        }
        Which::Run(_) => {}
    }
    Ok(ops)
}
