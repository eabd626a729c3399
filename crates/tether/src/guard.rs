//! tether's own process, out of its children's reach.
//!
//! tether holds keys (the model's, the judge's, the Zulip bot's) in its environment and memory,
//! and runs agents and verify commands as children under the same user. A same-user process can
//! normally read another's `/proc/<pid>/environ` and `/proc/<pid>/mem`, or attach a debugger.
//! Marking tether non-dumpable (`PR_SET_DUMPABLE 0`) makes those files root-owned and refuses
//! ptrace to processes without `CAP_SYS_PTRACE`, so an agent running as the same user cannot read
//! the keys from its parent. It does not stop root (or a process with `CAP_SYS_PTRACE`): an
//! agent running as root needs a sandbox that drops that capability.
//!
//! The mark is made first thing in `main`, before any thread or child exists; children do not
//! inherit it past `exec`, so agents and tools behave as usual.

/// Marks this process non-dumpable; a failure is logged, never fatal.
pub fn protect_self() {
    if let Err(err) = nix::sys::prctl::set_dumpable(false) {
        tracing::warn!(%err, "could not mark tether non-dumpable; its children may read its keys from /proc");
    }
}
