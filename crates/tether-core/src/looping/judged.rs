//! The loop judge's step after an iteration the loop goes on from (see
//! [`crate::loop_judge`]): its usage recorded (`judge_usage`, role `loop`), a failure logged and
//! counted (the third in a row switches it off, recorded as `rule_fired loop_judge_off`), and
//! "blocked" turned into a question to a person ([`Next::Ask`]) whose answer reaches the agent
//! as a message. It never ends a run: every other reading is "continue".

use tether_store::{Event, JudgeRole, Rule};
use tokio_util::sync::CancellationToken;

use super::LoopError;
use super::kind::{At, Focus, HumanCall, Next, Why};
use crate::loop_judge::{FAILURES_TO_SWITCH_OFF, Reading};

/// What the loop judge makes of iteration `n`, when there is one and it is on.
pub(super) async fn read<E>(
    at: At<'_>,
    n: u32,
    goals: &[Focus],
    final_message: &str,
    interrupt: &CancellationToken,
) -> Result<Next<E>, LoopError> {
    let Some(judge) = at.deps.loop_judge.as_ref().filter(|j| !j.is_off()) else {
        return Ok(Next::Continue);
    };
    let titles: Vec<String> = goals
        .iter()
        .map(|g| format!("{}: {}", g.id, g.title))
        .collect();
    let called = judge.read(n, &titles, final_message, interrupt).await;
    if called.usage.total() > 0 {
        at.deps.journal.append(
            at.run,
            &Event::JudgeUsage {
                judge: JudgeRole::Loop,
                goal_id: None,
                calls: 1,
                input_tokens: called.usage.input_tokens,
                cached_input_tokens: called.usage.cached_input_tokens,
                cache_write_input_tokens: called.usage.cache_write_input_tokens,
                output_tokens: called.usage.output_tokens,
                cost_usd: called.cost_usd,
            },
        )?;
    }
    match called.reading {
        Ok(Reading::Continue) => {
            judge.answered();
            Ok(Next::Continue)
        }
        Ok(Reading::Blocked(reason)) => {
            judge.answered();
            at.deps.journal.append(
                at.run,
                &Event::RuleFired {
                    rule: Rule::LoopJudgeBlocked,
                    reason: reason.clone(),
                },
            )?;
            Ok(Next::Ask(call(n, &reason)))
        }
        Err(why) => {
            tracing::warn!(run = %at.run, "the loop judge failed on iteration {n}: {why}; going on");
            if judge.failed() {
                let reason = format!(
                    "the loop judge failed {FAILURES_TO_SWITCH_OFF} times in a row (last: {why}); \
                     it is off for the rest of the run"
                );
                tracing::warn!(run = %at.run, "{reason}");
                at.deps.journal.append(
                    at.run,
                    &Event::RuleFired {
                        rule: Rule::LoopJudgeOff,
                        reason,
                    },
                )?;
            }
            Ok(Next::Continue)
        }
    }
}

/// The question "blocked" asks: free text, which the agent gets as a message.
fn call(n: u32, reason: &str) -> HumanCall {
    HumanCall {
        why: Why::LoopJudge,
        question: format!(
            "The loop judge read iteration {n} and thinks the agent is stuck: {reason} What \
             should the agent do? (Your answer reaches it as a message; `tether pause` or \
             `tether cancel` stop the run.)"
        ),
        context: String::new(),
        options: Vec::new(),
        unreachable: format!("the loop judge found the agent stuck after iteration {n}: {reason}"),
    }
}
