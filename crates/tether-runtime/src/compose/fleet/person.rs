//! Asking a person about a goal whose merges kept conflicting, at the workspace's human desk
//! (every channel `[human]` lists, the terminal when a person is there), without holding the
//! rest of the run: the question waits in a task of its own and its answer comes back to the
//! coordinator.

use std::time::Duration;

use tether_store::NewQuestion;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::compose::asking::Asker;

/// The answer that merges the goal again (its branch settled by hand).
pub(super) const RETRY: &str = "retry";

/// The answer that leaves the goal unmerged.
pub(super) const LEAVE: &str = "leave";

/// How long the desk's last notices may take once a question is answered.
const GRACE: Duration = Duration::from_secs(5);

/// What a person decided about a goal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Decided {
    /// Merge it again: they settled its branch.
    Retry,
    /// Leave it unmerged (any other answer, or the question could not be asked).
    Leave,
}

/// A person's answer about a goal: the goal, and what they decided.
pub(super) type Heard = (String, Decided);

/// What a question about a goal says.
pub(super) struct Conflicted<'a> {
    pub(super) goal: &'a str,
    pub(super) paths: &'a [String],
    /// The goal's branch and worktree.
    pub(super) branch: &'a str,
    pub(super) dir: Option<&'a std::path::Path>,
    /// The run's branch.
    pub(super) integration: &'a str,
    pub(super) attempts: u32,
}

impl Conflicted<'_> {
    fn question(&self) -> NewQuestion {
        let Conflicted {
            goal,
            paths,
            branch,
            dir,
            integration,
            attempts,
        } = self;
        let place = dir.map_or_else(String::new, |d| format!(" (its worktree: {})", d.display()));
        NewQuestion {
            run_id: None,
            thread_id: None,
            question: format!(
                "Goal `{goal}` was signed off, but its merge into `{integration}` conflicted \
                 {attempts} time(s), in: {}. Settle it by hand on `{branch}`{place}: merge \
                 `{integration}` into it, resolve and commit; then answer `{RETRY}` to merge \
                 it again. Answer `{LEAVE}` to leave it unmerged (the goals after it do not \
                 start).",
                paths.join(", ")
            ),
            context: String::new(),
            confidence: None,
            options: vec![RETRY.to_owned(), LEAVE.to_owned()],
        }
    }
}

/// Asks `about` at `asker`'s desk in a task on `runtime`; the answer is sent on `heard`. A
/// cancelled `withdraw` leaves the question recorded, nobody waiting for it.
pub(super) fn ask(
    asker: &std::sync::Arc<Asker>,
    about: &Conflicted<'_>,
    runtime: &tokio::runtime::Handle,
    heard: mpsc::UnboundedSender<Heard>,
    withdraw: CancellationToken,
) {
    let question = about.question();
    let goal = about.goal.to_owned();
    let asker = asker.clone();
    runtime.spawn(async move {
        let decided = match asker.ask(question, withdraw, |_| {}, GRACE).await {
            Ok(answer) if answer.text.trim().eq_ignore_ascii_case(RETRY) => Decided::Retry,
            Ok(_) => Decided::Leave,
            Err(e) => {
                tracing::warn!(
                    goal,
                    "the question about the goal's merge ended unanswered: {e}"
                );
                Decided::Leave
            }
        };
        let _ = heard.send((goal, decided));
    });
}

impl super::Coordinator {
    /// Asks a person what to do about `goal`, whose merges kept conflicting.
    pub(super) fn ask_person(&mut self, goal: &str, runtime: &tokio::runtime::Handle) {
        let paths = self.conflicts.get(goal).cloned().unwrap_or_default();
        let branch = tether_worktree::goal_branch_name(self.run.as_str(), goal);
        let about = Conflicted {
            goal,
            paths: &paths,
            branch: &branch,
            dir: self.trees.get(goal).map(|t| t.dir.as_path()),
            integration: &self.tree.branch,
            attempts: self.launch.config.run.merge_attempts,
        };
        let withdraw = CancellationToken::new();
        ask(
            &self.asker,
            &about,
            runtime,
            self.heard.0.clone(),
            withdraw.clone(),
        );
        self.asking.insert(goal.to_owned(), withdraw);
    }

    /// A person decided about `goal`.
    pub(super) fn decided(&mut self, goal: &str, decided: Decided) {
        if self.asking.remove(goal).is_none() {
            return;
        }
        match decided {
            Decided::Retry if !self.interrupted && self.regression.is_none() => {
                self.schedule.retry(goal);
            }
            Decided::Retry | Decided::Leave => {}
        }
    }

    /// Withdraws every question still asked: the run ends without their answers.
    pub(super) fn withdraw_questions(&mut self) {
        for withdraw in self.asking.values() {
            withdraw.cancel();
        }
        self.asking.clear();
    }
}
