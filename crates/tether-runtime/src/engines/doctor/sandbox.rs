//! What the sandbox enforces on this kernel, as `[sandbox]` asks for it.

use tether_config::{Config, ExecutorKind, SandboxMode};
use tether_sandbox::Support;

use super::Check;

/// Passes with what is enforced; fails, naming the missing kernel feature and the setting, when
/// `mode = "enforce"` cannot be; skipped (with the warning) when the sandbox is off.
pub fn check(config: &Config) -> Check {
    if config.sandbox.mode == SandboxMode::Off {
        return Check::skip(
            "sandbox",
            "off ([sandbox] mode = \"off\"): the agent's commands run with all your rights",
        );
    }
    let support = Support::probe();
    let cli = !matches!(
        config.executor.kind,
        ExecutorKind::Builtin | ExecutorKind::Command
    );
    match support.check() {
        Ok(()) => Check::pass(
            "sandbox",
            format!(
                "enforced: Landlock ABI {} (files, TCP, signals), user and mount namespaces \
                 (.git read-only, .tether/ hidden), a PID namespace per run (nothing outlives \
                 it), capabilities dropped, network {}{}",
                support.landlock_abi,
                if config.sandbox.network {
                    "on"
                } else {
                    "off (seccomp)"
                },
                if cli {
                    "; the agent CLI runs in it whole (its own sandbox off), with the network"
                } else {
                    ""
                }
            ),
        ),
        Err(e) => Check::fail(
            "sandbox",
            e.to_string(),
            "run on a kernel with Landlock ABI 6 or later and user namespaces, or set \
             [sandbox] mode = \"off\" in tether.toml",
        ),
    }
}
