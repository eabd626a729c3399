//! Which goal of a run of many goals happens next: the coordinator's decisions as a state
//! machine, with no I/O, so every rule of the fleet is tested on its own (see the property
//! tests beside it).
//!
//! Rules:
//! - a goal starts only when every goal in its `after:` is **merged** into the run's branch (its
//!   work is in the branch the goal is cut from), and at most `parallel` goals work at once
//!   (a goal settling a conflict counts);
//! - a signed-off goal is merged back, one merge at a time (the run's branch has one worktree);
//! - a conflicting merge gives the goal's agent a turn to settle it (before any new goal
//!   starts, when a place is free), up to `merge_attempts` conflicts, then a person is asked;
//! - a goal that failed or was cancelled never lets the goals after it start: they are
//!   **stuck**, and the run ends once nothing else can move, naming them.

use std::collections::{BTreeMap, BTreeSet};

/// Where one goal is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Phase {
    /// Some goal in its `after:` is not merged yet.
    Waiting,
    /// Its agent works on it (or settles its conflict when `settling`).
    Working {
        /// Whether this turn settles a conflicting merge.
        settling: bool,
    },
    /// Signed off; waits for its turn to merge.
    SignedOff,
    /// Its merge is in progress.
    Merging,
    /// Its merge conflicted: its agent settles it when a place is free.
    Conflicted,
    /// Its work is in the run's branch.
    Merged,
    /// Its merges conflicted `merge_attempts` times: a person decides.
    NeedsPerson,
    /// It ended without a sign-off (failed, cancelled, out of budget).
    Ended,
}

/// What the coordinator does next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Start the goal's agent on a branch cut from the run's branch.
    Start(String),
    /// Merge the goal's branch into the run's branch.
    Merge(String),
    /// Give the goal's agent a turn to settle the conflict of the run's branch merged into its
    /// own (the `attempt`th).
    Settle {
        /// The goal.
        goal: String,
        /// Which attempt this is (1 for the first).
        attempt: u32,
    },
    /// Ask a person about the goal whose merges kept conflicting.
    AskPerson(String),
}

/// How a run of many goals stands once nothing moves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finish {
    /// Every goal is merged.
    AllMerged,
    /// Some goals cannot go on: those that ended without a sign-off or wait for a person, and
    /// those waiting on them.
    Stuck {
        /// The goals that ended or wait for a person.
        ended: Vec<String>,
        /// The goals that wait on them, and can never start.
        waiting: Vec<String>,
    },
}

#[derive(Debug, Clone)]
struct Entry {
    after: Vec<String>,
    phase: Phase,
    conflicts: u32,
}

/// The decisions of one run of many goals.
#[derive(Debug, Clone)]
pub struct Schedule {
    goals: BTreeMap<String, Entry>,
    /// The plan's order: ready goals start in it.
    order: Vec<String>,
    parallel: usize,
    merge_attempts: u32,
}

impl Schedule {
    /// The goals in the plan's order, each with its `after:` (ids of goals not in the run count
    /// as merged: done before the run began) and whether it is done already; at most `parallel`
    /// (at least one) at once; a person asked after `merge_attempts` conflicting merges.
    pub fn new<I>(goals: I, parallel: usize, merge_attempts: u32) -> Schedule
    where
        I: IntoIterator<Item = (String, Vec<String>, bool)>,
    {
        let mut order = Vec::new();
        let mut entries = BTreeMap::new();
        for (id, after, done) in goals {
            order.push(id.clone());
            let phase = if done { Phase::Merged } else { Phase::Waiting };
            entries.insert(
                id,
                Entry {
                    after,
                    phase,
                    conflicts: 0,
                },
            );
        }
        let known: BTreeSet<String> = entries.keys().cloned().collect();
        for entry in entries.values_mut() {
            entry.after.retain(|id| known.contains(id));
        }
        Schedule {
            goals: entries,
            order,
            parallel: parallel.max(1),
            merge_attempts: merge_attempts.max(1),
        }
    }

    /// The steps to take now: a merge when none runs and a goal waits for one, and as many
    /// ready goals started as there are free places. The goals are moved to their new phase.
    pub fn steps(&mut self) -> Vec<Step> {
        let mut steps = Vec::new();
        if !self.any(|p| *p == Phase::Merging)
            && let Some(goal) = self.first(|p| *p == Phase::SignedOff)
        {
            self.set(&goal, Phase::Merging);
            steps.push(Step::Merge(goal));
        }
        while self.working() < self.parallel {
            if let Some(goal) = self.first(|p| *p == Phase::Conflicted) {
                self.set(&goal, Phase::Working { settling: true });
                let attempt = self.goals.get(&goal).map_or(1, |e| e.conflicts);
                steps.push(Step::Settle { goal, attempt });
                continue;
            }
            let Some(goal) = self.ready() else { break };
            self.set(&goal, Phase::Working { settling: false });
            steps.push(Step::Start(goal));
        }
        steps
    }

    /// The goal was signed off: it merges when its turn comes.
    pub fn signed_off(&mut self, goal: &str) {
        self.set(goal, Phase::SignedOff);
    }

    /// The goal's branch is merged: the goals after it may start.
    pub fn merged(&mut self, goal: &str) {
        self.set(goal, Phase::Merged);
    }

    /// The goal's merge conflicted: its agent settles it when a place is free ([`Step::Settle`]
    /// from [`Schedule::steps`]), or, at the `merge_attempts`th conflict, a person is asked (the
    /// step returned).
    pub fn conflicted(&mut self, goal: &str) -> Option<Step> {
        let attempts = self.merge_attempts;
        let entry = self.goals.get_mut(goal)?;
        entry.conflicts += 1;
        if entry.conflicts >= attempts {
            entry.phase = Phase::NeedsPerson;
            return Some(Step::AskPerson(goal.to_owned()));
        }
        entry.phase = Phase::Conflicted;
        None
    }

    /// The goal ended without a sign-off: the goals after it can never start.
    pub fn ended(&mut self, goal: &str) {
        self.set(goal, Phase::Ended);
    }

    /// A person settled the goal's conflict themselves (its branch merged by hand) or let it
    /// try again.
    pub fn retry(&mut self, goal: &str) {
        if let Some(entry) = self.goals.get_mut(goal) {
            entry.conflicts = 0;
            entry.phase = Phase::SignedOff;
        }
    }

    /// Every goal in the plan's order, with its `after:` (of the run's goals) and where it is.
    pub fn goals(&self) -> impl Iterator<Item = (&str, &[String], &Phase)> {
        self.order.iter().filter_map(|id| {
            let entry = self.goals.get(id)?;
            Some((id.as_str(), entry.after.as_slice(), &entry.phase))
        })
    }

    /// Where `goal` is.
    pub fn phase(&self, goal: &str) -> Option<&Phase> {
        self.goals.get(goal).map(|e| &e.phase)
    }

    /// The goals `goal` waits on that are not merged yet.
    pub fn waits_on(&self, goal: &str) -> Vec<String> {
        self.goals.get(goal).map_or_else(Vec::new, |entry| {
            entry
                .after
                .iter()
                .filter(|id| self.phase(id) != Some(&Phase::Merged))
                .cloned()
                .collect()
        })
    }

    /// The goals not merged, in the plan's order.
    pub fn not_merged(&self) -> Vec<String> {
        self.order
            .iter()
            .filter(|id| self.phase(id) != Some(&Phase::Merged))
            .cloned()
            .collect()
    }

    /// How many goals work now (a conflict being settled included).
    pub fn working(&self) -> usize {
        self.goals
            .values()
            .filter(|e| matches!(e.phase, Phase::Working { .. }))
            .count()
    }

    /// How the run stands when nothing more can happen: `None` while a goal works, merges or
    /// can still start.
    pub fn finish(&self) -> Option<Finish> {
        let moving = self.any(|p| {
            matches!(
                p,
                Phase::Working { .. } | Phase::SignedOff | Phase::Merging | Phase::Conflicted
            )
        });
        if moving || self.clone().ready().is_some() {
            return None;
        }
        let with = |want: fn(&Phase) -> bool| -> Vec<String> {
            self.order
                .iter()
                .filter(|id| self.phase(id).is_some_and(want))
                .cloned()
                .collect()
        };
        let ended = with(|p| matches!(p, Phase::Ended | Phase::NeedsPerson));
        let waiting = with(|p| *p == Phase::Waiting);
        Some(if ended.is_empty() && waiting.is_empty() {
            Finish::AllMerged
        } else {
            Finish::Stuck { ended, waiting }
        })
    }

    /// The first waiting goal, in the plan's order, whose `after:` are all merged.
    fn ready(&self) -> Option<String> {
        self.order
            .iter()
            .find(|id| self.phase(id) == Some(&Phase::Waiting) && self.waits_on(id).is_empty())
            .cloned()
    }

    fn first(&self, want: impl Fn(&Phase) -> bool) -> Option<String> {
        self.order
            .iter()
            .find(|id| self.phase(id).is_some_and(&want))
            .cloned()
    }

    fn any(&self, want: impl Fn(&Phase) -> bool) -> bool {
        self.goals.values().any(|e| want(&e.phase))
    }

    fn set(&mut self, goal: &str, phase: Phase) {
        if let Some(entry) = self.goals.get_mut(goal) {
            entry.phase = phase;
        }
    }
}
