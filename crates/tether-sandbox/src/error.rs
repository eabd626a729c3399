//! What can keep a sandbox from being set up.

use std::path::PathBuf;

/// Why a child cannot be sandboxed as asked.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// The kernel lacks a feature the policy needs; nothing runs until it is there or the
    /// sandbox is turned off.
    #[error(
        "the kernel cannot enforce the sandbox: {feature} is missing (this kernel offers Landlock ABI {found}; tether needs {needed} and user namespaces); \
         run on a newer kernel with Landlock enabled, or set [sandbox] mode = \"off\" in tether.toml"
    )]
    Unsupported {
        /// The missing feature, for a person.
        feature: &'static str,
        /// The Landlock ABI the kernel offers (0: none).
        found: i32,
        /// The ABI the policy needs.
        needed: i32,
    },
    /// A path the child must be able to use does not exist or cannot be opened.
    #[error("the sandbox cannot allow {path}: {source}")]
    Path {
        /// The path.
        path: PathBuf,
        /// Why it could not be opened.
        source: std::io::Error,
    },
    /// The kernel refused the Landlock ruleset.
    #[error("could not build the Landlock ruleset: {0}")]
    Ruleset(#[from] landlock::RulesetError),
    /// The seccomp filter could not be built.
    #[error("could not build the seccomp filter: {0}")]
    Filter(String),
    /// The run's PID namespace could not be made: nothing runs sandboxed until it can be (or
    /// the sandbox is turned off).
    #[error(
        "could not start the run's process namespace (a user and PID namespace every process of \
         the run ends with): {0}; run where user namespaces are allowed, or set [sandbox] mode = \
         \"off\" in tether.toml"
    )]
    Namespace(std::io::Error),
    /// The run's PID namespace has ended (the run is over): nothing starts in its sandbox any
    /// more.
    #[error("the run has ended: nothing starts in its sandbox any more")]
    Ended,
}
