//! The answers check: only a person can answer on the channels `tether.toml` turns on. A channel
//! whose reply path the agent could read or reach — ntfy with its topic written in tether.toml
//! while the agent has the network — takes no answers (it only tells), and this says why and how
//! to protect it; the channels that do take answers are named with what keeps the agent out.

use tether_config::{Config, Env, Workspace};
use tether_human::registry::{self, ReplyPath};
use tether_store::Journal;

use super::Check;

const NAME: &str = "answers";

/// The answers check of `config` in `ws`: the agent's reach as a run would take it (the
/// approved contracts read from the store when there is one).
pub fn check(config: &Config, ws: &Workspace, env: &dyn Env) -> Check {
    let journal = existing_store(ws, env).and_then(|s| Journal::new(s, Vec::new()).ok());
    let reach = crate::compose::reach::of_with(config, ws, journal.as_ref());
    let paths = registry::reply_paths(config, reach);
    let mut exposed = Vec::new();
    let mut fixes = Vec::new();
    // The channels protected the same way, together: (how, names).
    let mut protected: Vec<(String, Vec<String>)> = Vec::new();
    for (name, path) in paths {
        match path {
            ReplyPath::Exposed { why, fix } => {
                exposed.push(format!("{name} takes no answers, only tells: {why}"));
                if !fixes.contains(&fix) {
                    fixes.push(fix);
                }
            }
            ReplyPath::Protected(how) => match protected.iter_mut().find(|(h, _)| *h == how) {
                Some((_, names)) => names.push(name),
                None => protected.push((how, vec![name])),
            },
            ReplyPath::None => {}
        }
    }
    if !exposed.is_empty() {
        return Check::fail(NAME, exposed.join("\n"), fixes.join("; "));
    }
    if protected.is_empty() {
        return Check::skip(
            NAME,
            "no channel takes answers besides the terminal, the dashboard and `tether answer`",
        );
    }
    let groups: Vec<String> = protected
        .into_iter()
        .map(|(how, names)| format!("{} ({how})", names.join(", ")))
        .collect();
    Check::pass(
        NAME,
        format!("only a person answers on {}", groups.join("; ")),
    )
}

/// The workspace's own store file, if it has one: doctor creates none, and connects to no team
/// store here (the `store` check does, off the runtime's thread); without one a goal whose plan
/// says `network: on` counts as opening the network, approved or not.
fn existing_store(ws: &Workspace, env: &dyn Env) -> Option<tether_store::Store> {
    let team = tether_config::load_store(ws.root(), env)
        .ok()?
        .url
        .is_some();
    if team || !ws.db_path().is_file() {
        return None;
    }
    tether_store::Store::open(ws.db_path()).ok()
}
