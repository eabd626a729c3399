//! An accept backed by its evidence: the quote check run on a judge's accept, and on its own
//! (`tether judge test` measures it apart from the model).

use tokio_util::sync::CancellationToken;

use super::diff::WorkTree;
use super::quotes::{QuoteProblem, Quotes};
use super::record::Decision;
use super::verdict::{self, Check};
use super::{Signoff, SignoffError, SignoffOutcome};

impl Signoff {
    /// The quote check alone, as it would meet an accept citing `checks` now: what the work
    /// changed since the run began is asked of git as for a sign-off. Empty when every check holds. Nothing is
    /// recorded.
    pub async fn check_quotes(
        &self,
        checks: &[Check],
        cancel: &CancellationToken,
    ) -> Vec<QuoteProblem> {
        let work = self.work_tree(cancel).await;
        let mut checks = checks.to_vec();
        self.backing(&mut checks, work)
    }

    /// What is wrong with the checks of an accept over the workspace as `work` describes it,
    /// recording in each check that holds the line its quote starts on.
    fn backing(&self, checks: &mut [Check], work: WorkTree) -> Vec<QuoteProblem> {
        match tether_tools::Workspace::new(self.ws.root()) {
            Ok(confined) => {
                let quotes =
                    Quotes::new(&confined, &self.plan, &work.changed).with_tracked(work.tracked);
                let problems = quotes.problems(checks);
                quotes.locate_all(checks);
                problems
            }
            Err(e) => vec![QuoteProblem::NoWorkspace { why: e.to_string() }],
        }
    }

    /// An accept whose every quote counts; otherwise a reject naming the bad quotes, why each
    /// does not count and what to quote instead.
    pub(super) fn accept_if_backed(
        &self,
        decision: Decision,
        verdict: verdict::Verdict,
        work: WorkTree,
    ) -> Result<SignoffOutcome, SignoffError> {
        let mut verdict = verdict;
        let problems: Vec<String> = self
            .backing(&mut verdict.checks, work)
            .iter()
            .map(ToString::to_string)
            .collect();
        if problems.is_empty() {
            let reason = verdict.summary.unwrap_or_else(|| {
                format!(
                    "the judge accepted, citing {} checked quote(s)",
                    verdict.checks.len()
                )
            });
            return self.record(decision.accept(reason, verdict.checks));
        }
        let reason = format!(
            "the judge's accept is not backed by its evidence: {}",
            problems.join("; ")
        );
        let mut missing = verdict.missing;
        missing.extend(problems);
        self.record(decision.reject(reason, missing))
    }
}
