//! What every loop (Ralph, goal) shares: one driver running the iteration skeleton
//! ([`drive`], with [`start`] and [`resume`] around it), the [`LoopKind`] a loop implements to
//! say what differs, and the jobs around one agent turn — recording it ([`Recorder`]),
//! noticing `tether cancel` from another shell ([`watch_for_cancel`]), taking a run into this
//! process under its lock ([`open_new`], [`reopen`]), and, on resume, waiting for the questions
//! an interrupted turn left pending ([`await_interrupted`]).
//!
//! Keeping these in one place is what makes the loops behave the same way under pause, cancel,
//! Ctrl+C, kill -9 and `tether say`.

mod ask;
mod budget;
mod cancel;
mod driver;
mod error;
mod interrupted;
mod judged;
mod kind;
mod lease;
mod open;
mod pool;
mod recorder;
mod usage;

use std::sync::Arc;

use tether_agent::Executor;
use tether_config::Workspace;
use tether_human::Desk;
use tether_store::Journal;

pub use cancel::watch_for_cancel;
pub use driver::{drive, resume, start};
pub use error::LoopError;
pub use interrupted::{await_interrupted, interrupted_questions};
pub use kind::{
    Answered, At, Focus, HumanCall, Limits, LoopKind, Next, Prompt, Stopped, Turn, Why,
};
pub use lease::{Driving, HEARTBEAT, LEASE};
pub use open::{lock_path, open_new, reopen, resumable};
pub use pool::BudgetPool;
pub use recorder::{Recorder, chain, summary};
pub use usage::{SharedWait, UsageWaits};

/// What a loop needs.
#[derive(Clone)]
pub struct Deps {
    /// The workspace.
    pub ws: Workspace,
    /// The store, with sinks.
    pub journal: Journal,
    /// Who does the work.
    pub executor: Arc<dyn Executor>,
    /// The human side: waits again for the questions a killed run left pending, and hears
    /// that a run ended.
    pub human: Desk,
    /// How a usage limit of the agent is waited out.
    pub usage: UsageWaits,
    /// The agent model's price, for turns whose agent reports no cost (`[model]
    /// price_per_mtok`).
    pub price: Option<tether_config::Price>,
    /// The loop judge, when `[loop_judge]` is configured.
    pub loop_judge: Option<crate::loop_judge::LoopJudge>,
    /// Variables removed from the environment of the commands the loop itself runs (git for
    /// the run's starting snapshot): tether's own keys.
    pub env_remove: Vec<String>,
    /// Where tether's git (the run's starting snapshot) runs: in a sandbox of its own unless
    /// the run's sandbox is off.
    pub git: tether_git::Confinement,
    /// A run in a worktree of its own: its id, drawn beforehand, and what follows each
    /// iteration (a commit per signed-off goal).
    pub isolation: Isolation,
    /// The run's configuration as recorded (with a new run, and with a resume that accepted a
    /// change of it), and how to see its file change while the run is driven; `None` records
    /// and watches nothing.
    pub bounds: Option<Arc<crate::bounds::Pinned>>,
    /// The budget a goal run of a run of many goals shares with the others, if it is one.
    pub pool: Option<BudgetPool>,
}

/// What a run in a worktree of its own adds to the loop (nothing, by default).
#[derive(Clone, Default)]
pub struct Isolation {
    /// The id the new run takes (its worktree and branch are named after it before it exists).
    pub run_id: Option<tether_store::RunId>,
    /// Called after every iteration, before the next one (or the end) is recorded.
    pub after_iteration: Option<Arc<dyn AfterIteration>>,
}

/// Work done between iterations of a run, outside the agent's turn (committing the goals the
/// iteration signed off, or a Ralph run's work as it keeps its promise). Never fails the run:
/// it logs what goes wrong.
pub trait AfterIteration: Send + Sync {
    /// After an iteration of `run`; `completing` when the run is about to be recorded
    /// completed (so what is done here is in place before anyone sees it completed).
    fn after<'a>(
        &'a self,
        run: &'a tether_store::RunId,
        completing: bool,
    ) -> futures_util::future::BoxFuture<'a, ()>;
}
