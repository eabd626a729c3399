//! Applying a prepared policy to a child between `fork` and `exec`.
//!
//! Everything that allocates or can fail for a reason other than the kernel's answer (opening
//! paths, building the ruleset and the filter) happened in the parent; the hook only makes
//! system calls.

use std::io;
use std::os::unix::process::CommandExt as _;
use std::process::Command;

use landlock::{RestrictionStatus, RulesetCreated, RulesetStatus};
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

use crate::SandboxError;
use crate::detach;
use crate::enter::Entry;
use crate::mounts::Mounts;
use crate::ptys::Ptys;

/// A policy turned into kernel objects, ready for one child.
#[derive(Debug)]
pub struct Prepared {
    mounts: Mounts,
    ptys: Option<Ptys>,
    ruleset: RulesetCreated,
    filter: Option<BpfProgram>,
    /// tether's process group, which the child leaves for a session of its own.
    parent_group: libc::pid_t,
    /// The run's PID namespace the child joins, when it has one.
    entry: Option<Entry>,
}

impl Prepared {
    pub(crate) fn new(
        mounts: Mounts,
        ptys: Option<Ptys>,
        ruleset: RulesetCreated,
        filter: Option<BpfProgram>,
    ) -> Self {
        // SAFETY: getpgrp cannot fail.
        #[allow(unsafe_code)]
        let parent_group = unsafe { libc::getpgrp() };
        Prepared {
            mounts,
            ptys,
            ruleset,
            filter,
            parent_group,
            entry: None,
        }
    }

    /// Makes the child join a run's PID namespace (before the rest of the setup), so it ends
    /// with the run.
    pub(crate) fn inside(mut self, entry: Entry) -> Self {
        self.entry = Some(entry);
        self
    }

    /// Restricts the calling process for good. Only for a freshly forked child.
    ///
    /// Only an OS error code crosses back to the parent (as the spawn's error), so each step
    /// returns one.
    fn apply(self) -> io::Result<()> {
        detach::close_inherited()?;
        detach::own_session(self.parent_group)?;
        detach::no_terminal_on_stdio()?;
        if let Some(entry) = &self.entry {
            // Returns in the process that goes on to run the program, inside the namespace.
            entry.enter()?;
        }
        self.mounts.apply()?;
        if let Some(ptys) = &self.ptys {
            ptys.apply()?;
        }
        drop_capabilities()?;
        let status: RestrictionStatus = self
            .ruleset
            .restrict_self()
            .map_err(|e| io::Error::other(format!("applying the Landlock policy: {e}")))?;
        if status.ruleset != RulesetStatus::FullyEnforced {
            return Err(io::Error::other(
                "the Landlock policy was not fully enforced",
            ));
        }
        if let Some(filter) = &self.filter {
            seccompiler::apply_filter(filter)
                .map_err(|_| io::Error::from_raw_os_error(libc::EPERM))?;
        }
        Ok(())
    }
}

/// Whether this process can give a child a user and mount namespace of its own, with its own
/// pseudo-terminals there: tried once with `/bin/true` (some systems forbid unprivileged user
/// namespaces, or mounts in them).
#[allow(unsafe_code)]
pub(crate) fn namespaces_work() -> bool {
    let Ok(mounts) = Mounts::plan(Default::default(), std::iter::empty(), std::iter::empty())
    else {
        return false;
    };
    let ptys = std::path::Path::new("/dev/pts").is_dir();
    let mut cmd = Command::new("/bin/true");
    cmd.stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    // SAFETY: the hook makes system calls only, on strings built before the fork.
    unsafe {
        cmd.pre_exec(move || {
            mounts.apply()?;
            if ptys {
                crate::ptys::mount_private(false)?;
            }
            Ok(())
        });
    }
    cmd.status().is_ok_and(|s| s.success())
}

/// Makes `cmd`'s child run under `prepared` (applied after `fork`, before `exec`; a failure there
/// makes the spawn fail with the reason).
#[allow(unsafe_code)]
pub fn confine(cmd: &mut Command, prepared: Prepared) {
    let mut prepared = Some(prepared);
    let hook = move || match prepared.take() {
        Some(p) => p.apply(),
        None => Err(io::Error::other(
            "the sandbox was already used for another child",
        )),
    };
    // SAFETY: the hook runs in the forked child before `exec`. It makes system calls only
    // (close_range, setsid, setns, clone3, waitpid, prctl, mount, capset, landlock, seccomp) on
    // objects built in the parent, touches no lock another thread could hold, and returns an
    // error instead of panicking; the process it forks to wait on the program never returns.
    unsafe {
        cmd.pre_exec(hook);
    }
}

/// Refuses, with EPERM, a socket of any family but `AF_UNIX`, and `io_uring` (whose operations
/// would not pass through the socket call).
pub(crate) fn network_filter() -> Result<BpfProgram, SandboxError> {
    let err = |e: seccompiler::BackendError| SandboxError::Filter(e.to_string());
    let not_unix = SeccompCondition::new(
        0,
        SeccompCmpArgLen::Dword,
        SeccompCmpOp::Ne,
        libc::AF_UNIX as u64,
    )
    .map_err(err)?;
    let rules = [
        (
            libc::SYS_socket,
            vec![SeccompRule::new(vec![not_unix]).map_err(err)?],
        ),
        (libc::SYS_io_uring_setup, Vec::new()),
    ]
    .into_iter()
    .collect();
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        target_arch(),
    )
    .map_err(err)?;
    BpfProgram::try_from(filter).map_err(err)
}

#[cfg(target_arch = "x86_64")]
fn target_arch() -> TargetArch {
    TargetArch::x86_64
}

#[cfg(target_arch = "aarch64")]
fn target_arch() -> TargetArch {
    TargetArch::aarch64
}

#[cfg(target_arch = "riscv64")]
fn target_arch() -> TargetArch {
    TargetArch::riscv64
}

/// `struct __user_cap_header_struct`.
#[repr(C)]
struct CapHeader {
    version: u32,
    pid: libc::c_int,
}

/// `struct __user_cap_data_struct`.
#[repr(C)]
#[derive(Clone, Copy)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

/// Empties the ambient and bounding sets, then the effective, permitted and inheritable ones:
/// nothing the child runs can hold a capability again.
#[allow(unsafe_code)]
fn drop_capabilities() -> io::Result<()> {
    const LINUX_CAPABILITY_VERSION_3: u32 = 0x2008_0522;
    // SAFETY: prctl with integer arguments only; failures are read from errno.
    unsafe {
        // EINVAL on kernels without ambient capabilities: there is nothing to clear then.
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        );
        for cap in 0..64 {
            if libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 {
                match io::Error::last_os_error().raw_os_error() {
                    // Past the last capability this kernel knows.
                    Some(libc::EINVAL) => break,
                    // Without CAP_SETPCAP (not root) the bounding set cannot be changed, and
                    // with nothing permitted it gives nothing either.
                    Some(libc::EPERM) => break,
                    _ => return Err(io::Error::last_os_error()),
                }
            }
        }
    }
    let header = CapHeader {
        version: LINUX_CAPABILITY_VERSION_3,
        pid: 0,
    };
    let data = [CapData {
        effective: 0,
        permitted: 0,
        inheritable: 0,
    }; 2];
    // SAFETY: `header` and the two-element `data` array are the layout capset(2) reads for
    // version 3; both outlive the call.
    let r = unsafe { libc::syscall(libc::SYS_capset, &header, data.as_ptr()) };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
