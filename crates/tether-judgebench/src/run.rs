//! Running one case through the real sign-off check, the quote check alone on the quotes it
//! scripts, and the totals.
//!
//! Two things are measured apart. The real check (verify, the judge's session, the quote check
//! of its accept) gives the case's decision; a reject where the judge accepted but its quotes
//! did not count is told apart from the model's own rejects (`quotes_refused`). And when a case
//! scripts the quotes an accepting judge cites (`quote:` lines), the quote check alone is run
//! on them ([`QuoteCheck`]): its false accepts and false rejects are tether's, not the model's.

use std::io::Read as _;
use std::path::Path;
use std::time::{Duration, Instant};

use serde::Serialize;
use tether_config::Workspace;
use tether_signoff::verdict::{self, Check};
use tether_signoff::{Judge, Signoff, SignoffOutcome};
use tether_store::{Event, Journal, JudgeRole, Seq, Store, StoreError};
use tokio_util::sync::CancellationToken;

use crate::case::{Case, Expect};
use crate::repo::{self, RepoError};

/// The largest judge transcript read back (to see what the judge decided).
const MAX_TRANSCRIPT: u64 = 64 * 1024 * 1024;

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
    /// Whether the judge accepted but tether's quote check refused its quotes: a reject by the
    /// quote check, not by the model.
    pub quotes_refused: bool,
    /// The quote check alone on the quotes the case scripts, when it scripts some.
    pub quote_check: Option<QuoteCheck>,
    /// The judge's model calls.
    pub calls: u32,
    /// Their tokens.
    pub tokens: u64,
    /// Their cost, when the judge has a price.
    pub cost_usd: Option<f64>,
    /// Wall time of the whole check, verify included, in milliseconds.
    pub millis: u64,
}

/// The quote check alone on a case's scripted quotes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct QuoteCheck {
    /// Whether every quote counts (so an accept citing them would stand).
    pub held: bool,
    /// Whether that is right: the quotes of an honest case must count, and those of a case
    /// that is not done must not.
    pub correct: bool,
    /// Why the quotes that do not count do not.
    pub problems: Vec<String>,
}

/// The quote check alone over the cases that script quotes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct QuoteTotals {
    /// Cases that script quotes.
    pub cases: usize,
    /// Those the quote check got right.
    pub correct: usize,
    /// Quotes of a case that is not done that counted.
    pub false_accepts: usize,
    /// Quotes of an honest case that did not count.
    pub false_rejects: usize,
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
    /// Of those, the ones where the judge accepted but its quotes did not count.
    pub false_rejects_by_quotes: usize,
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
    /// The quote check alone, on the cases that script quotes.
    pub quote_check: QuoteTotals,
}

/// Running a case failed (not a wrong decision: the check could not run).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// Its temporary repository could not be written.
    #[error("case {case}: {cause}")]
    Files {
        /// The case.
        case: String,
        /// Why.
        cause: RepoError,
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

/// A case written out in a temporary directory of its own, with its goal approved.
struct Prepared {
    _dir: tempfile::TempDir,
    ws: Workspace,
    journal: Journal,
    /// The case before the run, as a run's start.
    start: tether_git::Start,
}

async fn prepare(
    case: &Case,
    options: &RunOptions,
    cancel: &CancellationToken,
) -> Result<Prepared, RunError> {
    let files = |cause| RunError::Files {
        case: case.name.clone(),
        cause,
    };
    let dir = tempfile::tempdir().map_err(|e| files(RepoError::Files(e)))?;
    let ws = Workspace::at(dir.path());
    let start = repo::write(
        case,
        (ws.root(), &ws.state_dir()),
        &options.env_remove,
        cancel,
    )
    .await
    .map_err(files)?;
    let journal = approved(case, &ws).map_err(|cause| RunError::Store {
        case: case.name.clone(),
        cause,
    })?;
    Ok(Prepared {
        _dir: dir,
        ws,
        journal,
        start,
    })
}

impl Prepared {
    fn signoff(&self, options: &RunOptions) -> Signoff {
        Signoff::new(self.ws.clone(), self.journal.clone(), "plan.md")
            .with_verify_timeout(options.verify_timeout)
            .without_env(options.env_remove.clone())
            .since(self.start.clone())
    }
}

/// Runs `case` through the sign-off check with `judge`, in a temporary directory of its own;
/// first, on the workspace as the run left it, the quote check alone on the quotes the case
/// scripts.
pub async fn run_case(
    case: &Case,
    judge: &Judge,
    options: &RunOptions,
    cancel: &CancellationToken,
) -> Result<CaseResult, RunError> {
    let prepared = prepare(case, options, cancel).await?;
    let signoff = prepared.signoff(options).with_judge(Some(judge.clone()));
    let quote_check = scripted_quotes(case, &signoff, cancel).await;
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
    let quotes_refused = match &outcome {
        SignoffOutcome::Rejected {
            transcript: Some(transcript),
            judge_unavailable: false,
            ..
        } => judge_accepted(&prepared.ws.root().join(transcript)),
        _ => false,
    };
    let got = match outcome {
        SignoffOutcome::Accepted { .. } => Got::Accepted,
        SignoffOutcome::Rejected { reason, .. } => Got::Rejected { reason },
        SignoffOutcome::Refused { reason, .. } => Got::Refused { reason },
    };
    let correct = (got == Got::Accepted) == (case.expect == Expect::Accept);
    let (calls, tokens, cost_usd) =
        judge_usage(&prepared.journal.store()).map_err(|cause| RunError::Store {
            case: case.name.clone(),
            cause,
        })?;
    Ok(CaseResult {
        name: case.name.clone(),
        probes: case.probes.clone(),
        expected: case.expect,
        got,
        correct,
        judge_unavailable,
        quotes_refused,
        quote_check,
        calls,
        tokens,
        cost_usd,
        millis,
    })
}

/// The quote check alone on the quotes `case` scripts (`None` when it scripts none), with no
/// judge and no verify: what tether's mechanical check decides by itself.
pub async fn check_scripted_quotes(
    case: &Case,
    options: &RunOptions,
    cancel: &CancellationToken,
) -> Result<Option<QuoteCheck>, RunError> {
    let prepared = prepare(case, options, cancel).await?;
    Ok(scripted_quotes(case, &prepared.signoff(options), cancel).await)
}

async fn scripted_quotes(
    case: &Case,
    signoff: &Signoff,
    cancel: &CancellationToken,
) -> Option<QuoteCheck> {
    if case.quotes.is_empty() {
        return None;
    }
    let checks: Vec<Check> = case
        .quotes
        .iter()
        .map(|(path, quote)| Check {
            path: path.clone(),
            quote: quote.clone(),
            observation: "scripted by the case".to_owned(),
            line: None,
        })
        .collect();
    let problems: Vec<String> = signoff
        .check_quotes(&checks, cancel)
        .await
        .iter()
        .map(ToString::to_string)
        .collect();
    let held = problems.is_empty();
    Some(QuoteCheck {
        held,
        correct: held == (case.expect == Expect::Accept),
        problems,
    })
}

/// Whether the judge's last answer in its transcript was an accept.
fn judge_accepted(transcript: &Path) -> bool {
    let mut text = String::new();
    let read = std::fs::File::open(transcript)
        .and_then(|f| f.take(MAX_TRANSCRIPT).read_to_string(&mut text));
    if read.is_err() {
        return false;
    }
    let last_answer = text
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .rfind(|v| v["type"] == "response");
    last_answer
        .and_then(|v| v["response"]["text"].as_str().map(verdict::parse))
        .is_some_and(|v| v.is_ok_and(|v| v.decision == verdict::Decision::Accept))
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
        t.false_rejects_by_quotes +=
            usize::from(!accepted && r.expected == Expect::Accept && r.quotes_refused);
        if let Some(q) = &r.quote_check {
            t.quote_check.cases += 1;
            t.quote_check.correct += usize::from(q.correct);
            t.quote_check.false_accepts += usize::from(q.held && r.expected == Expect::Reject);
            t.quote_check.false_rejects += usize::from(!q.held && r.expected == Expect::Accept);
        }
        t.judge_unavailable += usize::from(r.judge_unavailable);
        t.calls += r.calls;
        t.tokens += r.tokens;
        if let Some(c) = r.cost_usd {
            t.cost_usd = Some(t.cost_usd.unwrap_or(0.0) + c);
        }
    }
    t
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
