//! What each iteration of a run used — its agent's tokens and cost, the judges' calls made
//! during it, and how long it took — read from the journal, since the run's row keeps only the
//! totals. The charts of the dashboard and `tether watch`'s sparkline draw it, and the
//! dashboard's runs list its end ([`recent_usage_series`], read through the usage events alone).

use serde::Serialize;
use tether_store::{Event, RunId, Store, StoreError, StoredEvent};

/// How many events are read at a time.
const PAGE: usize = 2_000;

/// One iteration's usage.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct IterationUsage {
    /// The iteration (from 1).
    pub n: u32,
    /// Tokens its agent turn sent and received (cache reads and writes included).
    pub agent_tokens: u64,
    /// What its agent turn cost, when known.
    pub agent_cost_usd: Option<f64>,
    /// Tokens of the judges' calls made during it (sign-off and loop judge).
    pub judge_tokens: u64,
    /// What those calls cost, when known.
    pub judge_cost_usd: Option<f64>,
    /// From its start to its end (or, while it goes on, to its last event, which
    /// [`recent_usage_series`] does not read), in milliseconds.
    pub duration_ms: u64,
    /// Whether it ended (completed or failed).
    pub ended: bool,
    /// Whether it failed.
    pub failed: bool,
}

impl IterationUsage {
    /// Its tokens, agent and judges together.
    pub fn tokens(&self) -> u64 {
        self.agent_tokens + self.judge_tokens
    }

    /// Its cost, agent and judges together; `None` when neither is known.
    pub fn cost_usd(&self) -> Option<f64> {
        match (self.agent_cost_usd, self.judge_cost_usd) {
            (None, None) => None,
            (a, j) => Some(a.unwrap_or(0.0) + j.unwrap_or(0.0)),
        }
    }
}

/// Every iteration of `run` with what it used, in order. An iteration run again (after an
/// interruption, or a usage limit) is one entry: its usage added up, its time from its last
/// start. Judges' calls made between iterations count toward the one before. Only the events a
/// series is made of are read ([`Store::usage_events_before`], a page at a time from the end),
/// so a chart of a run of thousands of tool calls reads none of them; an iteration under way
/// has its time up to the run's last event.
pub fn usage_series(store: &Store, run: &RunId) -> Result<Vec<IterationUsage>, StoreError> {
    let mut pages = Vec::new();
    let mut before = None;
    loop {
        let page = store.usage_events_before(run, before, PAGE)?;
        let Some(first) = page.first() else { break };
        before = Some(first.seq);
        let full = page.len() == PAGE;
        pages.push(page);
        if !full {
            break;
        }
    }
    let (mut series, started) = fold(pages.iter().rev().flatten());
    if series.last().is_some_and(|it| !it.ended) {
        let last_event = store.run(run)?.state.last_event_at_ms;
        under_way(&mut series, &started, last_event);
    }
    Ok(series)
}

/// The time so far of the series' last iteration, under way, up to `last_event_ms`.
fn under_way(series: &mut [IterationUsage], started: &[(u32, i64)], last_event_ms: Option<i64>) {
    let Some(it) = series.last_mut() else { return };
    if let (Some((_, began)), Some(last)) =
        (started.iter().find(|(m, _)| *m == it.n), last_event_ms)
    {
        it.duration_ms = u64::try_from(last.saturating_sub(*began)).unwrap_or(0);
    }
}

/// The newest iterations of `run`, in order: the end of the series read bounded, for a list
/// that shows many runs. Only the events a series is made of are read
/// ([`Store::usage_events_before`]), the newest `events` of them, so tool calls and messages,
/// however many, neither crowd the iterations out nor are decoded. When the run has more, the
/// oldest iteration seen may be seen only in part: it is left out. An iteration under way gets
/// no time here: these events say when it started, not how long it has gone on (its
/// `duration_ms` stays 0, or its last attempt's when it runs again).
pub fn recent_usage_series(
    store: &Store,
    run: &RunId,
    events: usize,
) -> Result<Vec<IterationUsage>, StoreError> {
    let page = store.usage_events_before(run, None, events)?;
    let (mut series, _) = fold(&page);
    if page.len() >= events && series.len() > 1 {
        series.remove(0);
    }
    Ok(series)
}

/// The series `events` (usage events, oldest first) make, and when each iteration last started.
fn fold<'a>(
    events: impl IntoIterator<Item = &'a StoredEvent>,
) -> (Vec<IterationUsage>, Vec<(u32, i64)>) {
    let mut series: Vec<IterationUsage> = Vec::new();
    let mut started: Vec<(u32, i64)> = Vec::new();
    for stored in events {
        if let Some(event) = &stored.event {
            apply(&mut series, &mut started, event, stored.at_ms);
        }
    }
    (series, started)
}

/// One event into the series.
fn apply(series: &mut Vec<IterationUsage>, started: &mut Vec<(u32, i64)>, event: &Event, at: i64) {
    match event {
        Event::IterationStarted { n } => {
            entry(series, *n);
            started.retain(|(m, _)| m != n);
            started.push((*n, at));
        }
        Event::IterationUsage { n, .. } => {
            let usage = tether_store::Usage::of(event);
            let it = entry(series, *n);
            it.agent_tokens += usage.tokens();
            it.agent_cost_usd = add(it.agent_cost_usd, usage.cost_usd);
        }
        Event::JudgeUsage { .. } => {
            let usage = tether_store::Usage::of(event);
            if let Some(it) = series.last_mut() {
                it.judge_tokens += usage.tokens();
                it.judge_cost_usd = add(it.judge_cost_usd, usage.cost_usd);
            }
        }
        Event::IterationCompleted { n, .. } | Event::IterationFailed { n, .. } => {
            let began = started.iter().find(|(m, _)| m == n).map(|(_, t)| *t);
            let it = entry(series, *n);
            it.ended = true;
            it.failed = matches!(event, Event::IterationFailed { .. });
            if let Some(began) = began {
                it.duration_ms = u64::try_from(at.saturating_sub(began)).unwrap_or(0);
            }
        }
        // Only the usage kinds are read; an iteration under way has its time from the run's
        // last event (`under_way`).
        _ => {}
    }
}

/// The entry of iteration `n`, made (in order) when there is none.
fn entry(series: &mut Vec<IterationUsage>, n: u32) -> &mut IterationUsage {
    let at = match series.iter().position(|it| it.n == n) {
        Some(at) => at,
        None => {
            let at = series.partition_point(|it| it.n < n);
            series.insert(
                at,
                IterationUsage {
                    n,
                    ..IterationUsage::default()
                },
            );
            at
        }
    };
    &mut series[at]
}

fn add(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
    }
}
