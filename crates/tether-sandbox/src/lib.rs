//! The sandbox every child process of tether runs in.
//!
//! tether runs an agent for hours, unattended, as the user who started it (often root in a
//! container or CI). Refusing the agent's requests is policy; this crate makes the forbidden acts
//! impossible. A [`Policy`] says which trees a child may read and which it may write, and whether
//! it may reach the network. [`Policy::prepare`] turns it into kernel objects *in tether's
//! process* (a Landlock ruleset, a seccomp program), and [`confine`] installs a hook that applies
//! them to the child between `fork` and `exec`, so tether itself is never restricted (a process
//! that restricted itself would share its domain, and its weaknesses, with every child).
//!
//! In the child, in this order:
//! 0. nothing of tether's process is kept (module `detach`): every descriptor above the standard
//!    streams closes at `exec`, the child starts a session of its own with no controlling
//!    terminal, and a terminal on a standard stream is replaced by `/dev/null`; then, for a
//!    sandbox [within](Sandbox::within) a run's [`RunNamespace`], the child joins the run's PID
//!    namespace and forks once more, the program running inside it (module `enter`), so
//!    nothing it starts outlives the run;
//! 1. a user and mount namespace of its own, where paths beneath a writable tree are made
//!    read-only ([`Policy::read_only`], for `.git`) or hidden ([`Policy::hide`], for `.tether/`):
//!    the two things Landlock, which can only allow, cannot express; `/tmp`, `/run` and the
//!    home directory ([`Policy::cover`]) covered but for what the policy grants there, so no Unix
//!    socket there can be connected to by its path, which Landlock does not check (module
//!    `cover`); and a `devpts` instance of its own over `/dev/pts`, so the only terminals it can
//!    open are those it makes (module `ptys`);
//! 2. every capability is dropped (bounding, ambient, effective, permitted, inheritable): root in
//!    the sandbox cannot `sethostname`, remount, or regain anything through `exec`;
//! 3. Landlock restricts the file system to the policy, forbids signalling processes outside the
//!    sandbox (tether) and connecting to abstract Unix sockets outside it, and with the network
//!    off refuses TCP `connect` and `bind`;
//! 4. with the network off, a seccomp filter refuses any socket that is not a Unix socket (UDP,
//!    raw, netlink) and `io_uring`, which could bypass it.
//!
//! A path the child itself could replace with a link (one inside a tree it writes) is granted
//! with [`Policy::read_unlinked`] or [`Policy::write_unlinked`]: opened at each spawn without
//! following any link, so a link planted there grants nothing; and a read-only path that is a
//! link is left alone, since a mount would follow it.
//!
//! Landlock only allows: it cannot deny a path beneath one it allows. Whatever must stay out of
//! reach (tether's store, its keys, `.git`) must therefore not lie beneath a writable path: the
//! caller lays the trees out accordingly, or names them for step 0.
//!
//! [`Support::probe`] says what the running kernel can enforce; a policy that cannot be enforced
//! fully is refused with [`SandboxError::Unsupported`], never silently weakened.
//!
//! [`RunNamespace`] is a run's PID namespace (module `holder`): a small process, PID 1 there,
//! that tether kills when the run ends, and that exits when tether does, taking every process of
//! the run with it. With the sandbox off, [`kill_descendants`] kills what a run left below
//! tether instead (module `sweep`).
//!
//! [`take_secrets`] is the other half of keeping keys from children: it takes variables out of
//! tether's own environment, overwriting their bytes first (root can read a parent's
//! `/proc/<pid>/environ`, and `unsetenv` alone leaves the bytes there).

mod child;
mod cover;
mod detach;
mod enter;
mod error;
mod fork;
mod holder;
mod mounts;
mod pidfd;
mod policy;
pub mod proc_stat;
mod ptys;
mod sandbox;
mod secrets;
mod support;
mod sweep;

pub use child::{Prepared, confine};
pub use error::SandboxError;
pub use holder::RunNamespace;
pub use policy::{Policy, system_readable};
pub use sandbox::Sandbox;
pub use secrets::take_secrets;
pub use support::{MIN_ABI, PRETEND_ABI_VAR, Support};
pub use sweep::{Swept, kill_descendants};
