//! What the running kernel can enforce.

use crate::SandboxError;

/// The Landlock ABI the sandbox needs: 6 (Linux 6.12) is the first that can forbid signals to
/// processes outside the sandbox; file-system rules with `truncate` and device `ioctl` rights
/// (ABI 3 and 5) and TCP rules (ABI 4) come before it.
pub const MIN_ABI: i32 = 6;

/// Set to a number, lowers the Landlock ABI tether believes the kernel has (never raises it): a
/// way to see, and to test, what happens on an older kernel.
pub const PRETEND_ABI_VAR: &str = "TETHER_SANDBOX_PRETEND_ABI";

/// What the kernel offers the sandbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Support {
    /// The Landlock ABI version, 0 when Landlock is not there (not built, or not in `lsm=`).
    pub landlock_abi: i32,
    /// Whether a child can have a user and mount namespace of its own.
    pub namespaces: bool,
}

impl Support {
    /// Asks the kernel (`landlock_create_ruleset` with the version flag).
    pub fn probe() -> Self {
        let found = kernel_abi();
        let pretend = std::env::var(PRETEND_ABI_VAR)
            .ok()
            .and_then(|v| v.trim().parse::<i32>().ok());
        Support {
            landlock_abi: pretend.map_or(found, |p| p.clamp(0, found)),
            namespaces: crate::child::namespaces_work(),
        }
    }

    /// Whether every part of a policy can be enforced; if not, which feature is missing.
    pub fn check(&self) -> Result<(), SandboxError> {
        let feature = match self.landlock_abi {
            0 => "Landlock (Linux 5.13 or later, with landlock in the kernel's lsm= list)",
            abi if abi < MIN_ABI => "Landlock signal scoping (Linux 6.12 or later)",
            _ if !self.namespaces => {
                "user namespaces (kernel.unprivileged_userns_clone, or an AppArmor or container policy forbids them)"
            }
            _ => return Ok(()),
        };
        Err(SandboxError::Unsupported {
            feature,
            found: self.landlock_abi,
            needed: MIN_ABI,
        })
    }
}

/// `landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)`: the ABI, or 0.
#[allow(unsafe_code)]
fn kernel_abi() -> i32 {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: with a null attribute pointer, size 0 and the version flag the call reads and
    // writes no memory; it returns the ABI or -1.
    let abi = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    i32::try_from(abi).unwrap_or(0).max(0)
}
