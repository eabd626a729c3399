//! The two Rust error types of this crate, both for conditions the model cannot fix.
//!
//! Anything the model did wrong — bad arguments, a missing file, a path outside the workspace, a
//! command that failed — is a [`ToolOutput`](crate::ToolOutput) with `is_error: true`, so the
//! agent's turn goes on. The types here are for the rest: a tool set that cannot be built, and a
//! tool call that must end the turn.

use std::error::Error;
use std::io;
use std::path::PathBuf;

/// A [`ToolSet`](crate::ToolSet) or [`Workspace`](crate::Workspace) could not be built. Fatal: a
/// configuration or programming error, never shown to the model.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SetupError {
    /// The workspace root does not exist or cannot be resolved.
    #[error("workspace root {}: {cause}", path.display())]
    Root {
        /// The root as given.
        path: PathBuf,
        /// Why it could not be canonicalised.
        cause: io::Error,
    },
    /// The workspace root is not a directory.
    #[error("workspace root {} is not a directory", path.display())]
    NotADirectory {
        /// The canonical root.
        path: PathBuf,
    },
    /// Two tools of one set have the same name, so a model could not tell them apart.
    #[error("a tool named `{0}` is already in the set")]
    DuplicateTool(String),
}

/// A tool call failed in a way the model cannot fix (for example, the store behind a tether
/// tool is gone), so the turn must end instead of going on with an error result. The built-in
/// agent stops the turn at once and returns it as its error, which the loop records as a failed
/// iteration; it is never shown to the model as a tool result. Not retried by this crate. The
/// built-in tools never return it.
#[derive(Debug, thiserror::Error)]
#[error("tool `{tool}` failed: {message}")]
pub struct FatalToolError {
    tool: String,
    message: String,
    #[source]
    source: Option<Box<dyn Error + Send + Sync>>,
}

impl FatalToolError {
    /// A fatal failure of `tool`, described by `message`.
    pub fn new(tool: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            tool: tool.into(),
            message: message.into(),
            source: None,
        }
    }

    /// The same, keeping the underlying error as the source.
    pub fn with_source(
        tool: impl Into<String>,
        message: impl Into<String>,
        source: impl Into<Box<dyn Error + Send + Sync>>,
    ) -> Self {
        Self {
            tool: tool.into(),
            message: message.into(),
            source: Some(source.into()),
        }
    }

    /// The name of the tool that failed.
    pub fn tool(&self) -> &str {
        &self.tool
    }
}
