//! Acts only a person may do — approving a contract, answering a question, resuming or
//! cancelling a run, serving the dashboard… (see [`tether_core::human_act`]) — refused, for
//! every front end alike, when the process asking runs inside an agent's process tree. A front
//! end calls [`require_human`] before it does one; the refusal is an [`Error::NotAHuman`], a
//! usage error whose message names the act, how the agent showed, and what a person (or the
//! agent) does instead.

use tether_config::{Env, Workspace};

pub use tether_core::human_act::HumanAct;

use crate::{Error, Result};

/// `Ok` when this process may do `act` for a person in workspace `ws` (`env` holds no agent
/// mark, and no ancestor drives a run of `ws`); [`Error::NotAHuman`] otherwise.
pub fn require_human(ws: &Workspace, env: &dyn Env, act: HumanAct) -> Result<()> {
    tether_core::human_act::require_human(ws, env, act).map_err(Error::from)
}

#[cfg(test)]
mod tests {
    use tether_config::MapEnv;
    use tether_core::human_act::AGENT_MARK;

    use super::*;

    #[test]
    fn an_agent_is_refused_with_a_usage_error_saying_what_to_do_instead() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::at(dir.path());
        let agent = MapEnv::new().with(AGENT_MARK, "4242");
        let err = require_human(&ws, &agent, HumanAct::ResumeRun).unwrap_err();
        assert!(matches!(err, Error::NotAHuman(_)), "{err:?}");
        assert!(err.is_usage());
        let text = err.to_string();
        assert!(text.contains("resuming a run is for a person"), "{text}");
        assert!(
            text.contains("`tether resume` in their own shell"),
            "{text}"
        );
        assert!(require_human(&ws, &MapEnv::new(), HumanAct::ResumeRun).is_ok());
    }
}
