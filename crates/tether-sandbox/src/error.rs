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
}
