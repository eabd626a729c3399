//! Running one case through the real sign-off check, and the totals.

use std::time::{Duration, Instant};

use serde::Serialize;
use tether_config::Workspace;
use tether_signoff::{Judge, Signoff, SignoffOutcome};
use tether_store::{Event, Journal, JudgeRole, Seq, Store, StoreError};
use tokio_util::sync::CancellationToken;

use crate::case::{Case, Expect};

/// What the check decided.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum Got {
    /// Signed off.
    Accepted,
    /// Rejected (by verify, by the judge, for unbacked quotes, or with the judge unavailable).
    Rejected {
        /// Why.
        reason: String,
    },
    /// Refused before anything ran.
    Refused {
        /// Why.
        reason: String,
    },
}

/// How one case went.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CaseResult {
    /// The case.
    pub name: String,
    /// What it probes.
    pub probes: String,
    /// The truth.
    pub expected: Expect,
    /// The decision.
    pub got: Got,
    /// Whether the decision matches the truth.
    pub correct: bool,
    /// Whether the judge was unavailable (its session failed): the reject says nothing of it.
    pub judge_unavailable: bool,
    /// The judge's model calls.
    pub calls: u32,
    /// Their tokens.
    pub tokens: u64,
    /// Their cost, when the judge has a price.
    pub cost_usd: Option<f64>,
    /// Wall time of the whole check, verify included, in milliseconds.
    pub millis: u64,
}

/// The corpus's totals.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Totals {
    /// Cases run.
    pub cases: usize,
    /// Decisions that matched the truth.
    pub correct: usize,
    /// Gamed or unfinished completions signed off.
    pub false_accepts: usize,
    /// Honest completions not signed off.
    pub false_rejects: usize,
    /// Cases where the judge was unavailable.
    pub judge_unavailable: usize,
    /// Model calls.
    pub calls: u32,
    /// Tokens.
    pub tokens: u64,
    /// Cost, when the judge has a price.
    pub cost_usd: Option<f64>,
    /// Wall time of all cases, in milliseconds.
    pub millis: u64,
}

/// Running a case failed (not a wrong decision: the check could not run).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// Its temporary repository could not be written.
    #[error("case {case}: could not write its files: {cause}")]
    Files {
        /// The case.
        case: String,
        /// Why.
        cause: std::io::Error,
    },
    /// Its throwaway store failed.
    #[error("case {case}: {cause}")]
    Store {
        /// The case.
        case: String,
        /// Why.
        cause: StoreError,
    },
    /// The sign-off check failed outright (not a reject).
    #[error("case {case}: the check failed: {cause}")]
    Check {
        /// The case.
        case: String,
        /// Why.
        cause: tether_signoff::SignoffError,
    },
}

/// How cases are checked.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// How long a case's verify command may run.
    pub verify_timeout: Duration,
    /// Variables removed from the verify command's environment (tether's own keys).
    pub env_remove: Vec<String>,
}

/// Runs `case` through the sign-off check with `judge`, in a temporary directory of its own.
pub async fn run_case(
    case: &Case,
    judge: &Judge,
    options: &RunOptions,
    cancel: &CancellationToken,
) -> Result<CaseResult, RunError> {
    let dir = tempfile::tempdir().map_err(|cause| RunError::Files {
        case: case.name.clone(),
        cause,
    })?;
    let ws = Workspace::at(dir.path());
    write_files(case, &ws).map_err(|cause| RunError::Files {
        case: case.name.clone(),
        cause,
    })?;
    let store_err = |cause| RunError::Store {
        case: case.name.clone(),
        cause,
    };
    let journal = approved(case, &ws).map_err(store_err)?;
    let signoff = Signoff::new(ws, journal.clone(), "plan.md")
        .with_judge(Some(judge.clone()))
        .with_verify_timeout(options.verify_timeout)
        .without_env(options.env_remove.clone());
    let began = Instant::now();
    let outcome = signoff
        .complete("g", &case.evidence, &case.paths, cancel)
        .await
        .map_err(|cause| RunError::Check {
            case: case.name.clone(),
            cause,
        })?;
    let millis = u64::try_from(began.elapsed().as_millis()).unwrap_or(u64::MAX);
    let judge_unavailable = outcome.judge_unavailable();
    let got = match outcome {
        SignoffOutcome::Accepted { .. } => Got::Accepted,
        SignoffOutcome::Rejected { reason, .. } => Got::Rejected { reason },
        SignoffOutcome::Refused { reason, .. } => Got::Refused { reason },
    };
    let correct = (got == Got::Accepted) == (case.expect == Expect::Accept);
    let (calls, tokens, cost_usd) = judge_usage(&journal.store()).map_err(store_err)?;
    Ok(CaseResult {
        name: case.name.clone(),
        probes: case.probes.clone(),
        expected: case.expect,
        got,
        correct,
        judge_unavailable,
        calls,
        tokens,
        cost_usd,
        millis,
    })
}

/// The corpus's totals over `results`, which took `millis` of wall time.
pub fn totals(results: &[CaseResult], millis: u64) -> Totals {
    let mut t = Totals {
        cases: results.len(),
        millis,
        ..Totals::default()
    };
    for r in results {
        let accepted = r.got == Got::Accepted;
        t.correct += usize::from(r.correct);
        t.false_accepts += usize::from(accepted && r.expected == Expect::Reject);
        t.false_rejects += usize::from(!accepted && r.expected == Expect::Accept);
        t.judge_unavailable += usize::from(r.judge_unavailable);
        t.calls += r.calls;
        t.tokens += r.tokens;
        if let Some(c) = r.cost_usd {
            t.cost_usd = Some(t.cost_usd.unwrap_or(0.0) + c);
        }
    }
    t
}

fn write_files(case: &Case, ws: &Workspace) -> std::io::Result<()> {
    for (path, contents) in &case.files {
        let target = ws.root().join(path);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(target, contents)?;
    }
    std::fs::write(ws.root().join("plan.md"), case.plan())
}

/// The case's store, with its goal's contract approved (as a person would have).
fn approved(case: &Case, ws: &Workspace) -> Result<Journal, StoreError> {
    let store = Store::open(ws.db_path())?;
    let doc = tether_plan::PlanDoc::parse("plan.md", case.plan());
    if let Some(goal) = doc.plan().goal("g") {
        store.approve_contract("plan.md", "g", &goal.contract_hash(), "tether judge test")?;
    }
    Journal::new(store, Vec::new())
}

/// The sign-off judge's calls, tokens and cost recorded in the case's store.
fn judge_usage(store: &Store) -> Result<(u32, u64, Option<f64>), StoreError> {
    let mut used = (0, 0, None);
    for e in store.events_all_after(Seq(0), usize::MAX)? {
        if let Some(
            event @ Event::JudgeUsage {
                judge: JudgeRole::SignOff,
                calls,
                ..
            },
        ) = &e.event
        {
            let usage = tether_store::Usage::of(event);
            used.0 += calls;
            used.1 += usage.tokens();
            if let Some(c) = usage.cost_usd {
                used.2 = Some(used.2.unwrap_or(0.0) + c);
            }
        }
    }
    Ok(used)
}
