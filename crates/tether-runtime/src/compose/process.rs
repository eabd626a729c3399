//! tether's own process, out of its children's reach: what any process that runs agents does
//! first — its keys taken out of its environment ([`take_keys`]), itself marked non-dumpable
//! ([`protect_self`]) — before any thread or child exists.
//!
//! tether holds keys (the model's, the judge's, the Zulip bot's) in its environment and memory,
//! and runs agents and verify commands as children under the same user. A same-user process can
//! normally read another's `/proc/<pid>/environ` and `/proc/<pid>/mem`, or attach a debugger.
//! Marking tether non-dumpable (`PR_SET_DUMPABLE 0`) makes those files root-owned and refuses
//! ptrace to processes without `CAP_SYS_PTRACE`, so an agent running as the same user cannot read
//! the keys from its parent. It does not stop root (or a process with `CAP_SYS_PTRACE`): an
//! agent running as root needs a sandbox that drops that capability.
//!
//! The mark is made first thing, before any thread or child exists; children do not inherit it
//! past `exec`, so agents and tools behave as usual.

use std::time::Duration;

use tether_config::{Env, Workspace};

/// Takes tether's own keys (the variables the workspace's config names) out of the process's
/// environment, overwriting their bytes first, and keeps them in memory: root can read any
/// process's `/proc/<pid>/environ`, and `unsetenv` alone leaves the bytes there. Call it before
/// any thread exists.
pub fn take_keys(ws: &Workspace) {
    let names = tether_config::load(crate::schema(), ws.root(), &tether_config::ProcessEnv)
        .map(|loaded| loaded.config.key_vars())
        .unwrap_or_else(|_| tether_config::Config::defaults(crate::schema()).key_vars());
    let taken = tether_sandbox::take_secrets(|name| names.iter().any(|n| n == name));
    tether_config::keep_secrets(taken);
}

/// The variable that shortens how long an ending command waits for its notice sinks (in
/// milliseconds); only tests set it, so a webhook that never answers does not hold them 30 s.
pub const NOTICE_GRACE_ENV: &str = "TETHER_NOTICE_GRACE_MS";

/// How long a process about to end waits for its notice sinks to hand over what they queued:
/// [`tether_human::DELIVERY_GRACE`] (30 s), or what [`NOTICE_GRACE_ENV`] says when it holds a
/// shorter number of milliseconds.
pub fn notice_grace(env: &dyn Env) -> Duration {
    env.var(NOTICE_GRACE_ENV)
        .and_then(|ms| ms.trim().parse::<u64>().ok())
        .map(Duration::from_millis)
        .filter(|grace| *grace < tether_human::DELIVERY_GRACE)
        .unwrap_or(tether_human::DELIVERY_GRACE)
}

/// Marks this process non-dumpable; a failure is logged, never fatal.
pub fn protect_self() {
    if let Err(err) = nix::sys::prctl::set_dumpable(false) {
        tracing::warn!(%err, "could not mark tether non-dumpable; its children may read its keys from /proc");
    }
}
