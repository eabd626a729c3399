//! An accept backed by its evidence: the quote check run on each judge's accept, and on its
//! own (`tether judge test` measures it apart from the model).

use tokio_util::sync::CancellationToken;

use super::Signoff;
use super::diff::WorkTree;
use super::quotes::{QuoteProblem, Quotes};
use super::verdict::Check;

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
    pub(super) fn backing(&self, checks: &mut [Check], work: WorkTree) -> Vec<QuoteProblem> {
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
}
