//! What the screen shows, read from the store in one go: every run in its group (with the
//! question a run waits on), and the selected run's header, usage per iteration and timeline.

use tether_config::Workspace;
use tether_read::{Context, Group, IterationUsage, RunHeader};
use tether_store::{Question, QuestionStatus, RunFilter, RunId, Store, StoreError};

use crate::timeline::{self, Line};

/// The most runs listed.
const RUNS: usize = 200;
/// The most events of the selected run read (its newest).
const EVENTS: usize = 5_000;

/// One run in the list.
#[derive(Debug, Clone)]
pub struct Row {
    /// Where it stands.
    pub header: RunHeader,
    /// The first question it waits on, if any.
    pub question: Option<Question>,
}

/// The selected run, in full.
#[derive(Debug, Clone)]
pub struct Selected {
    /// Where it stands.
    pub header: RunHeader,
    /// What each iteration used.
    pub series: Vec<IterationUsage>,
    /// Its timeline.
    pub lines: Vec<Line>,
    /// The first question it waits on, if any.
    pub question: Option<Question>,
}

/// Everything on the screen.
#[derive(Debug, Clone, Default)]
pub struct View {
    /// The runs, in their groups (waiting ones first).
    pub groups: Vec<(Group, Vec<Row>)>,
    /// The selected run.
    pub selected: Option<Selected>,
}

impl View {
    /// The runs in the order they are listed.
    pub fn rows(&self) -> impl Iterator<Item = &Row> {
        self.groups.iter().flat_map(|(_, rows)| rows)
    }
}

/// Reads the view of `store` for `ws`, with `selected` (or, when it is gone or none, the first
/// run listed) selected.
pub fn load(store: &Store, ws: &Workspace, selected: Option<&RunId>) -> Result<View, StoreError> {
    let headers = tether_read::runs(store, ws, &RunFilter::default(), RUNS)?;
    let mut groups = Vec::new();
    for (group, runs) in tether_read::grouped(headers) {
        let mut rows = Vec::with_capacity(runs.len());
        for header in runs {
            let question = if header.pending_questions > 0 {
                first_pending(store, &header.id)?
            } else {
                None
            };
            rows.push(Row { header, question });
        }
        groups.push((group, rows));
    }
    let mut view = View {
        groups,
        selected: None,
    };
    let chosen = selected
        .and_then(|id| view.rows().find(|r| &r.header.id == id))
        .or_else(|| view.rows().next())
        .cloned();
    if let Some(row) = chosen {
        view.selected = Some(select(store, row)?);
    }
    Ok(view)
}

/// The selected run's usage and timeline.
fn select(store: &Store, row: Row) -> Result<Selected, StoreError> {
    let id = &row.header.id;
    let events = store.events_before(id, None, EVENTS)?;
    let ctx = Context::of(store, id)?;
    Ok(Selected {
        series: tether_read::usage_series(store, id)?,
        lines: timeline::lines(&events, &ctx),
        question: row.question,
        header: row.header,
    })
}

/// The oldest question of `run` still waiting for an answer.
fn first_pending(store: &Store, run: &RunId) -> Result<Option<Question>, StoreError> {
    Ok(store
        .questions_for_run(run)?
        .into_iter()
        .find(|q| q.status == QuestionStatus::Pending))
}
