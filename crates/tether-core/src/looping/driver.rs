//! The one loop driver: the iteration skeleton every loop runs, with a [`LoopKind`] supplying
//! what differs. Each iteration:
//!
//! 1. **Boundary** — a recorded cancel ends the run, a pause request pauses it, Ctrl+C
//!    interrupts it; then the loop's own check ([`LoopKind::before`]); then the budget.
//! 2. **Prompt** — messages queued with `tether say` are taken (and recorded as delivered; the
//!    agent's own `tether say` as its own note, never as a person's message) and
//!    handed to [`LoopKind::prompt`], which puts them first in what the prompt owes the agent.
//! 3. **Turn** — `iteration_started`, the agent's turn with its tool calls recorded and a
//!    watcher turning a `tether cancel` from another shell into the turn's cancellation. A loop
//!    whose prompt has a continuation asks the executor to continue the agent's session of the
//!    last iteration with it ([`Context::Continue`]); an executor that cannot starts fresh with
//!    the whole prompt, recorded as `fresh_context` with why.
//! 4. **Outcome** — a completed turn is recorded and given to [`LoopKind::after`]; a cancelled
//!    turn ends the run (cancelled if the store says so, else interrupted); a failed one is
//!    recorded and counted, and too many in a row end the run. A turn that hit a usage limit
//!    is waited out and run again with the same prompt, not counted ([`super::usage`]).
//!
//! Every step is a journal event, so a run can be paused, cancelled, killed and resumed; the
//! store, not the process, says where a run stands.

use serde::Serialize;
use serde::de::DeserializeOwned;
use tether_agent::cli::limits::UsageLimit;
use tether_agent::{Access, Context, ExecError, TurnOutcome, TurnRequest};
use tether_config::OnUsageLimit;
use tether_store::{Author, Event, Outcome, Rule, RunId, RunKind, RunState, StoreError};
use tokio_util::sync::CancellationToken;

use super::ask::{self, Asked};
use super::judged;
use super::kind::{At, LoopKind, Next, Prompt, Stopped, Turn, Why};
use super::recorder::{Recorder, chain, summary};
use super::{Deps, LoopError, await_interrupted, open_new, reopen, watch_for_cancel};
use super::{budget, usage};
use crate::prompts::Feedback;

/// Creates a run of `run_kind` with `spec`, tells `on_start` its id (so the caller can print
/// it), and drives it with `kind` to its end.
pub async fn start<K: LoopKind>(
    deps: &Deps,
    run_kind: RunKind,
    spec: &impl Serialize,
    mut kind: K,
    interrupt: CancellationToken,
    on_start: impl FnOnce(&RunId),
) -> Result<(RunId, K::End), LoopError> {
    let id = deps.isolation.run_id.as_ref();
    // The workspace as the run begins: what "changed by this run" is measured from.
    let began = crate::snapshot::take_start(&deps.ws, deps.git, &deps.env_remove).await;
    // Losing the run's lease interrupts the loop: this process writes nothing more for it.
    let (run, driving) = open_new(
        &deps.ws,
        &deps.journal,
        run_kind,
        (spec, deps.bounds.as_deref()),
        &began,
        (id, &interrupt),
    )?;
    on_start(&run);
    let git = (deps.git, deps.env_remove.as_slice());
    crate::snapshot::keep_start(&deps.ws, &deps.journal, &run, &began, git).await;
    let end = lease_lost(drive(deps, &run, &mut kind, interrupt).await)?;
    drop(driving);
    Ok((run, end))
}

/// Takes a stopped run of `run_kind` up again (see [`reopen`]), tells `on_open` once it holds
/// the run's lock, waits for the answers to the questions its interrupted iteration left
/// pending, then drives it with the loop `kind` makes from its spec and those answers.
pub async fn resume<S: DeserializeOwned, K: LoopKind>(
    deps: &Deps,
    run: &RunId,
    (run_kind, by): (RunKind, &str),
    interrupt: CancellationToken,
    on_open: impl FnOnce(&RunId),
    kind: impl FnOnce(S, Vec<(String, String)>) -> Result<K, LoopError>,
) -> Result<K::End, LoopError> {
    let accepted = deps.bounds.as_deref().filter(|p| p.accepted);
    let (driving, spec) = reopen(
        &deps.ws,
        &deps.journal,
        run,
        run_kind,
        (by, accepted, &interrupt),
    )?;
    on_open(run);
    // A run begun before its start was pinned gets it pinned now (nothing to do otherwise).
    let began = deps
        .journal
        .store()
        .run(run)
        .map(|r| tether_git::Start::of_spec(&r.spec));
    if let Ok(began) = began {
        let git = (deps.git, deps.env_remove.as_slice());
        crate::snapshot::keep_start(&deps.ws, &deps.journal, run, &began, git).await;
    }
    let Some(answers) = await_interrupted(&deps.human, &deps.journal, run, &interrupt).await?
    else {
        finish(deps, run, Outcome::Interrupted).await?;
        return Ok(Stopped::Interrupted.into());
    };
    let mut kind = kind(spec, answers)?;
    let end = lease_lost(drive(deps, run, &mut kind, interrupt).await)?;
    drop(driving);
    Ok(end)
}

/// A loop whose writes were refused because another process took its run is a loop that
/// stopped as [`Stopped::LeaseLost`]; any other error stays one.
fn lease_lost<E: From<Stopped>>(result: Result<E, LoopError>) -> Result<E, LoopError> {
    match result {
        Err(LoopError::Store(e @ StoreError::LeaseLost { .. })) => Ok(Stopped::LeaseLost {
            detail: e.to_string(),
        }
        .into()),
        other => other,
    }
}

/// Drives `run` with `kind` until it ends or stops. A run stopped by an error that is the
/// person's to fix (the agent broke the plan) is recorded as paused with the reason, so
/// `tether status` says why it stopped and `tether resume` continues once it is fixed.
pub async fn drive<K: LoopKind>(
    deps: &Deps,
    run: &RunId,
    kind: &mut K,
    interrupt: CancellationToken,
) -> Result<K::End, LoopError> {
    let result = iterate(deps, run, kind, interrupt).await;
    if let Err(e) = &result {
        record_stop(deps, run, e);
    }
    result
}

/// Records why the run stopped on `e`, when the person can fix it; a store that fails cannot
/// record anything, and the other errors happen before a run is driven.
fn record_stop(deps: &Deps, run: &RunId, e: &LoopError) {
    let reason = match e {
        LoopError::PlanInvalid(detail) => format!("stopped: the plan no longer parses: {detail}"),
        LoopError::Plan(_) | LoopError::NoActiveGoals { .. } => format!("stopped: {e}"),
        _ => return,
    };
    if let Err(err) = deps.journal.append(run, &Event::Paused { reason }) {
        tracing::warn!(error = %err, "could not record why the run stopped");
    }
}

/// The iterations of [`drive`].
async fn iterate<K: LoopKind>(
    deps: &Deps,
    run: &RunId,
    kind: &mut K,
    interrupt: CancellationToken,
) -> Result<K::End, LoopError> {
    let at = At { deps, run };
    let limits = kind.limits();
    loop {
        crate::subreaper::reap_orphans();
        let state = deps.journal.state(run)?;
        if let Some(stopped) = boundary(at, &state, &interrupt).await? {
            return Ok(stopped.into());
        }
        if let Some(stopped) = settings_changed(at)? {
            return Ok(stopped.into());
        }
        let next = kind.before(at, state.iteration)?;
        if let Some(end) = settle(at, kind, next, &interrupt).await? {
            return Ok(end);
        }
        let goals = kind.working_on();
        if let Some(stopped) = budget::check(at, &state, &limits, &goals).await? {
            return Ok(stopped.into());
        }
        let n = state.iteration + 1;
        let owed = messages(at, &state, n)?;
        let prompt = kind.prompt(at, n, owed)?;
        let charged: Vec<String> = goals.iter().map(|g| g.id.clone()).collect();
        let next = match run_turn_waiting(at, n, &prompt, &charged, &interrupt).await? {
            Ran::Completed {
                final_message,
                tool_calls,
            } => {
                let summary = summary(&final_message);
                deps.journal.append(
                    run,
                    &Event::IterationCompleted {
                        n,
                        summary: summary.clone(),
                    },
                )?;
                let turn = Turn {
                    final_message: &final_message,
                    summary: &summary,
                    tool_calls,
                };
                match kind.after(at, n, turn)? {
                    Next::Continue => {
                        judged::read(at, n, &goals, &final_message, &interrupt).await?
                    }
                    next => next,
                }
            }
            Ran::Failed(error) => {
                deps.journal.append(
                    run,
                    &Event::IterationFailed {
                        n,
                        error: error.clone(),
                    },
                )?;
                let failures = deps.journal.state(run)?.consecutive_failures;
                if failures >= limits.max_consecutive_failures {
                    finish(deps, run, Outcome::Failed).await?;
                    return Ok(Stopped::Failed {
                        iteration: n,
                        error,
                    }
                    .into());
                }
                Next::Continue
            }
            Ran::CannotRun(error) => {
                deps.journal.append(
                    run,
                    &Event::IterationFailed {
                        n,
                        error: error.clone(),
                    },
                )?;
                finish(deps, run, Outcome::Failed).await?;
                return Ok(Stopped::CannotRun {
                    iteration: n,
                    error,
                }
                .into());
            }
            Ran::Stopped(stopped) => return Ok(stopped.into()),
        };
        if let Some(hook) = &deps.isolation.after_iteration {
            let completing = matches!(next, Next::Finish(Outcome::Completed, _));
            hook.after(run, completing).await;
        }
        if let Some(end) = settle(at, kind, next, &interrupt).await? {
            return Ok(end);
        }
    }
}

/// The checks at an iteration boundary: a recorded cancel, a pause request, Ctrl+C.
pub(super) async fn boundary(
    at: At<'_>,
    state: &RunState,
    interrupt: &CancellationToken,
) -> Result<Option<Stopped>, LoopError> {
    if state.cancel_requested.is_some() {
        finish(at.deps, at.run, Outcome::Cancelled).await?;
        return Ok(Some(Stopped::Cancelled));
    }
    if let Some(by) = &state.pause_requested {
        let reason = format!("paused by {by}");
        at.deps.journal.append(
            at.run,
            &Event::Paused {
                reason: reason.clone(),
            },
        )?;
        return Ok(Some(Stopped::Paused { reason }));
    }
    if interrupt.is_cancelled() {
        finish(at.deps, at.run, Outcome::Interrupted).await?;
        return Ok(Some(Stopped::Interrupted));
    }
    Ok(None)
}

/// Pauses the run for a person when its configuration's file changed since this process took
/// it up (someone edited it): the change is not applied.
fn settings_changed(at: At<'_>) -> Result<Option<Stopped>, LoopError> {
    let Some(reason) = at.deps.bounds.as_ref().and_then(|p| p.changed(at.run)) else {
        return Ok(None);
    };
    tracing::warn!(run = %at.run, "{reason}");
    at.deps.journal.append(
        at.run,
        &Event::RuleFired {
            rule: Rule::SettingsChanged,
            reason: reason.clone(),
        },
    )?;
    at.deps.journal.append(
        at.run,
        &Event::Paused {
            reason: reason.clone(),
        },
    )?;
    Ok(Some(Stopped::Paused { reason }))
}

/// Records the ending a loop decided on, if it decided on one. A question the loop puts to a
/// person is asked first and the loop told the answer (which decides again); when nobody can
/// be asked the run pauses, saying why.
async fn settle<K: LoopKind>(
    at: At<'_>,
    kind: &mut K,
    mut next: Next<K::End>,
    interrupt: &CancellationToken,
) -> Result<Option<K::End>, LoopError> {
    loop {
        let call = match next {
            Next::Continue => return Ok(None),
            Next::Finish(outcome, end) => {
                finish(at.deps, at.run, outcome).await?;
                return Ok(Some(end));
            }
            Next::Pause(reason, end) => {
                at.deps.journal.append(at.run, &Event::Paused { reason })?;
                return Ok(Some(end));
            }
            Next::Ask(call) => call,
        };
        next = match ask::person(at, &call, interrupt).await? {
            // The loop judge's question is the driver's: the answer goes to the agent.
            Asked::Answered(answer) if call.why == Why::LoopJudge => {
                let message = Event::MessageQueued {
                    text: answer.text,
                    by: answer.by,
                    author: Author::Person,
                };
                at.deps.journal.append(at.run, &message)?;
                Next::Continue
            }
            Asked::Answered(answer) => kind.answered(at, &call, answer)?,
            Asked::Nobody(why) => {
                let reason = format!("{}; nobody can be asked: {why}", call.unreachable);
                let end = Stopped::Paused {
                    reason: reason.clone(),
                };
                at.deps.journal.append(at.run, &Event::Paused { reason })?;
                return Ok(Some(end.into()));
            }
            Asked::Stopped => {
                let cancelled = at.deps.journal.state(at.run)?.cancel_requested.is_some();
                let (outcome, stopped) = if cancelled {
                    (Outcome::Cancelled, Stopped::Cancelled)
                } else {
                    (Outcome::Interrupted, Stopped::Interrupted)
                };
                finish(at.deps, at.run, outcome).await?;
                return Ok(Some(stopped.into()));
            }
        };
    }
}

/// What the run owes iteration `n`'s prompt besides the loop's own feedback — the messages
/// queued with `tether say`, and the answers to questions whose asker had stopped waiting (an
/// MCP client that timed out) — taken and recorded as delivered. The state read at the boundary
/// says whether anything waits, so an iteration without any costs no write.
fn messages(at: At<'_>, state: &RunState, n: u32) -> Result<Vec<Feedback>, LoopError> {
    if state.queued_messages.is_empty() && state.late_answers.is_empty() {
        return Ok(Vec::new());
    }
    let delivery = at.deps.journal.store().deliver(at.run, n)?;
    let mut owed: Vec<Feedback> = delivery
        .messages
        .into_iter()
        .map(|m| match m.author {
            Author::Person => Feedback::Message {
                by: m.by,
                text: m.text,
            },
            // Its own `tether say`: never shown as a person's words.
            Author::Agent => Feedback::OwnNote { text: m.text },
        })
        .collect();
    if !delivery.answers.is_empty() {
        owed.push(Feedback::LateAnswers(
            delivery
                .answers
                .into_iter()
                .map(|q| (q.question, q.answer.unwrap_or_default()))
                .collect(),
        ));
    }
    Ok(owed)
}

/// How an agent turn went.
enum Ran {
    Completed {
        final_message: String,
        tool_calls: u32,
    },
    Failed(String),
    /// The agent cannot run until its setup is fixed.
    CannotRun(String),
    Stopped(Stopped),
}

/// Iteration `n`'s turn ([`run_turn`]), run again with the same prompt after each usage limit
/// is waited out; a limit that cannot be waited out pauses the run. A reset another run of the
/// same provider waits for is waited for before the turn starts, and a limit this run waits out
/// is told to them ([`usage::SharedWait`]).
async fn run_turn_waiting(
    at: At<'_>,
    n: u32,
    prompt: &Prompt,
    goals: &[String],
    interrupt: &CancellationToken,
) -> Result<Ran, LoopError> {
    let waits = &at.deps.usage;
    let mut waited = std::time::Duration::ZERO;
    let mut attempt = 0_u32;
    loop {
        if let Some((left, message)) = waits.shared.pending() {
            let limit = UsageLimit {
                message: format!("{message} (another run's agent of the same provider hit it)"),
                retry_after: Some(left),
            };
            if let Some(stopped) =
                wait_or_pause(at, n, &limit, left, &mut waited, interrupt).await?
            {
                return Ok(stopped);
            }
            continue;
        }
        let limit = match run_turn(at, n, prompt.clone(), goals, interrupt).await? {
            Ok(ran) => return Ok(ran),
            Err(limit) => limit,
        };
        let wait = waits.wait_for(&limit, attempt);
        if let Some(stopped) = wait_or_pause(at, n, &limit, wait, &mut waited, interrupt).await? {
            return Ok(stopped);
        }
        attempt = attempt.saturating_add(1);
    }
}

/// Waits `wait` for `limit` before iteration `n`'s turn runs again (`waited` in a row so far),
/// or pauses the run when it may not wait that long: `None` once waited, or how the run
/// stopped.
async fn wait_or_pause(
    at: At<'_>,
    n: u32,
    limit: &UsageLimit,
    wait: std::time::Duration,
    waited: &mut std::time::Duration,
    interrupt: &CancellationToken,
) -> Result<Option<Ran>, LoopError> {
    let waits = &at.deps.usage;
    if waits.on_limit == OnUsageLimit::Stop || waited.saturating_add(wait) > waits.max_wait {
        let reason = usage::pause_reason(waits, limit, wait);
        at.deps.journal.append(
            at.run,
            &Event::Paused {
                reason: reason.clone(),
            },
        )?;
        return Ok(Some(Ran::Stopped(Stopped::Paused { reason })));
    }
    // A run that waits has every other run of its provider wait with it (one that pauses does
    // not: a person resuming it, or another run, may find the limit gone).
    waits.shared.hit(wait, &limit.message);
    if let Some(stopped) = usage::wait_out(at, n, limit, wait, interrupt).await? {
        return Ok(Some(Ran::Stopped(stopped)));
    }
    *waited = waited.saturating_add(wait);
    Ok(None)
}

/// Iteration `n`'s turn: recorded as started, watched for `tether cancel`, its tool calls
/// recorded; a cancelled turn ends the run here. A usage limit is handed back to wait out.
async fn run_turn(
    at: At<'_>,
    n: u32,
    prompt: Prompt,
    goals: &[String],
    interrupt: &CancellationToken,
) -> Result<Result<Ran, UsageLimit>, LoopError> {
    let At { deps, run } = at;
    deps.journal.append(run, &Event::IterationStarted { n })?;
    let turn_cancel = interrupt.child_token();
    let watcher = tokio::spawn(watch_for_cancel(
        deps.journal.clone(),
        run.clone(),
        turn_cancel.clone(),
    ));
    let request = TurnRequest {
        iteration: n,
        prompt: prompt.whole,
        context: prompt.continued.map_or(Context::Fresh, Context::Continue),
        transcript: deps
            .ws
            .runs_dir()
            .join(run.to_string())
            .join(format!("iteration-{n:04}.jsonl")),
        access: Access::Work,
    };
    let recorder = Recorder::new(&deps.journal, run, n);
    let began = std::time::Instant::now();
    let result = deps
        .executor
        .run_turn(request, &recorder, turn_cancel)
        .await;
    watcher.abort();
    if let Ok(outcome) = &result {
        let took = u64::try_from(began.elapsed().as_millis()).unwrap_or(u64::MAX);
        record_usage(deps, run, n, outcome, goals, took)?;
    }
    let ran = match result {
        Ok(outcome) => Ran::Completed {
            final_message: outcome.final_message,
            tool_calls: recorder.tool_calls(),
        },
        Err(ExecError::Cancelled) => {
            // The store is the judge of why: a recorded cancel request wins over Ctrl+C.
            if deps.journal.state(run)?.cancel_requested.is_some() {
                finish(deps, run, Outcome::Cancelled).await?;
                return Ok(Ok(Ran::Stopped(Stopped::Cancelled)));
            }
            finish(deps, run, Outcome::Interrupted).await?;
            Ran::Stopped(Stopped::Interrupted)
        }
        Err(ExecError::UsageLimit(limit)) => return Ok(Err(limit)),
        Err(e @ ExecError::Setup(_)) => Ran::CannotRun(chain(&e)),
        Err(e) => Ran::Failed(chain(&e)),
    };
    Ok(Ok(ran))
}

/// Records what the turn used — tokens, and its cost as the agent reported it or else from the
/// model's price — and charges it to the `goals` worked on, when there is anything to record.
fn record_usage(
    deps: &Deps,
    run: &RunId,
    n: u32,
    outcome: &TurnOutcome,
    goals: &[String],
    duration_ms: u64,
) -> Result<(), LoopError> {
    let silent = outcome.input_tokens == 0 && outcome.output_tokens == 0;
    if silent && outcome.cost_usd.is_none() && goals.is_empty() {
        return Ok(());
    }
    let priced = deps.price.filter(|_| !silent).map(|price| {
        price.cost(tether_config::TokenCounts {
            input: outcome.input_tokens,
            cache_read: outcome.cached_input_tokens,
            cache_write: outcome.cache_write_input_tokens,
            output: outcome.output_tokens,
        })
    });
    let usage = Event::IterationUsage {
        n,
        input_tokens: outcome.input_tokens,
        cached_input_tokens: outcome.cached_input_tokens,
        cache_write_input_tokens: outcome.cache_write_input_tokens,
        output_tokens: outcome.output_tokens,
        cost_usd: outcome.cost_usd.or(priced),
        goals: goals.to_vec(),
        duration_ms,
    };
    deps.journal.append(run, &usage)?;
    Ok(())
}

/// Records that the run ended with `outcome`, and tells the human side's channels.
pub(super) async fn finish(deps: &Deps, run: &RunId, outcome: Outcome) -> Result<(), LoopError> {
    deps.journal.append(run, &Event::RunFinished { outcome })?;
    deps.human.run_ended(run, outcome).await;
    Ok(())
}
