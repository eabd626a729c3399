//! What the agent of a workspace's runs can reach, for the human desk: a channel whose reply path
//! the agent could read or reach answers nothing (see `tether_human::registry::ReplyPath`).
//!
//! The agent always reads the workspace — tether.toml included — and never tether's keys. What
//! changes with the setup is the network: the agent has it when the sandbox is off or lets it
//! out (`[sandbox] network`), when the agent talks to its model itself (an agent CLI, an ACP
//! agent: their sandbox keeps the network open), or when a goal of the plan opens it
//! (`network: on`). A goal's network opens once a person approves its contract, which may
//! happen while a run goes on, and the agent can make any goal of the plan the active one: so
//! any goal of the plan counts whose approved contract opens the network, whatever the plan says
//! of it now, or whose plan says `network: on`, approved yet or not.

use tether_config::{Config, SandboxMode, Workspace};
use tether_core::planning::PlanRef;
use tether_core::planning::terms::Approvals;
use tether_human::registry::Reach;
use tether_store::Journal;

use crate::compose::agents::Worker;

/// What the agent `config` sets up in `ws` reaches; the approved contracts are read in
/// `journal`'s store. When the executor cannot be told, the most.
pub fn of(config: &Config, ws: &Workspace, journal: &Journal) -> Reach {
    of_with(config, ws, Some(journal))
}

/// [`of`]; without a store (`tether doctor` creates none), only what the plan says of its goals'
/// network.
pub fn of_with(config: &Config, ws: &Workspace, journal: Option<&Journal>) -> Reach {
    let network = config.sandbox.mode == SandboxMode::Off
        || config.sandbox.network
        || !matches!(
            crate::compose::agents::sandboxed_as(config),
            Ok(Worker::Builtin | Worker::Command)
        )
        || a_goal_opens_the_network(config, ws, journal);
    Reach { network }
}

/// Whether a goal of the plan `config` names says `network: on`, or has an approved contract
/// (read in `journal`'s store) that opens the network.
fn a_goal_opens_the_network(config: &Config, ws: &Workspace, journal: Option<&Journal>) -> bool {
    let plan = PlanRef::new(ws, config);
    let Ok(doc) = tether_plan::file::read(&plan.path) else {
        return false;
    };
    let approvals = journal.map(|j| Approvals::new(j.clone(), plan.key));
    doc.plan().goals.iter().any(|goal| {
        goal.network()
            || approvals
                .as_ref()
                .is_some_and(|a| a.terms(goal).is_some_and(|terms| terms.network))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tether_config::ExecutorKind;
    use tether_store::Store;

    fn journal() -> Journal {
        Journal::new(Store::open_in_memory().unwrap(), Vec::new()).unwrap()
    }

    fn config(kind: ExecutorKind, network: bool) -> Config {
        let mut config = Config::default();
        config.executor.kind = kind;
        config.sandbox.network = network;
        config
    }

    #[test]
    fn the_network_as_the_sandbox_and_the_agent_leave_it() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::at(dir.path());
        let j = journal();
        let reach = |config: &Config| of(config, &ws, &j).network;
        assert!(!reach(&config(ExecutorKind::Builtin, false)));
        assert!(!reach(&config(ExecutorKind::Command, false)));
        assert!(reach(&config(ExecutorKind::Builtin, true)));
        assert!(reach(&config(ExecutorKind::Command, true)));
        // An agent that talks to its model itself keeps the network.
        assert!(reach(&config(ExecutorKind::Cli("claude"), false)));
        assert!(reach(&config(ExecutorKind::Acp, false)));
        let mut off = config(ExecutorKind::Builtin, false);
        off.sandbox.mode = SandboxMode::Off;
        assert!(reach(&off));
    }

    #[test]
    fn a_goal_that_opens_the_network_in_the_plan_or_its_approved_contract_opens_it() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::at(dir.path());
        let plan = "# Plan\n\n## Goal: Fetch\n<!-- id: fetch -->\nstatus: open\n\
                    done_when: it fetches\nnetwork: on\n\n## Log\n";
        std::fs::write(dir.path().join("plan.md"), plan).unwrap();
        let j = journal();
        let builtin = config(ExecutorKind::Builtin, false);
        // Written, not approved yet: a person may approve it while a run goes on.
        assert!(of(&builtin, &ws, &j).network);
        assert!(of_with(&builtin, &ws, None).network);
        let doc = tether_plan::file::read(&dir.path().join("plan.md")).unwrap();
        let goal = &doc.plan().goals[0];
        j.store()
            .approve_contract_terms(
                "plan.md",
                "fetch",
                &goal.contract_hash(),
                &tether_core::planning::terms::written(goal),
                "ana",
            )
            .unwrap();
        assert!(of(&builtin, &ws, &j).network);
        // The agent turns it off in the plan: the approved contract still opens it.
        std::fs::write(
            dir.path().join("plan.md"),
            plan.replace("network: on", "network: off"),
        )
        .unwrap();
        assert!(of(&builtin, &ws, &j).network);
        // A goal that never opened it: shut.
        assert!(!of(&builtin, &ws, &journal()).network);
    }
}
