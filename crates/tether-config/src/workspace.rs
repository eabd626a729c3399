//! Where tether keeps things inside a repository.
//!
//! Every path tether reads or writes is derived here from one root, so the layout
//! (`tether.toml`, `plan.md`, `.tether/tether.db`, `.tether/runs/<run>/`) is defined once.
//!
//! A run in a worktree of its own works in another root (the worktree) while keeping its state
//! in the checkout's `.tether/` ([`Workspace::with_state_dir`]). A worker's goal run of a run of
//! many goals works on another machine for the workspace the run was started in, whose records
//! (approved contracts, verdicts) a team store keeps under that machine and root
//! ([`Workspace::standing_for`]).

use std::path::{Path, PathBuf};

/// The name of tether's own directory inside a workspace.
pub const STATE_DIR: &str = ".tether";

/// A repository tether works in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workspace {
    root: PathBuf,
    state: PathBuf,
    /// The machine and root of the workspace this one works for, when it is another's.
    standing_for: Option<(String, PathBuf)>,
}

impl Workspace {
    /// The workspace rooted exactly at `root`.
    pub fn at(root: impl Into<PathBuf>) -> Self {
        let root = root.into();
        Workspace {
            state: root.join(STATE_DIR),
            root,
            standing_for: None,
        }
    }

    /// The same workspace working for the workspace at `root` on `machine` (a worker's goal run
    /// of a run of many goals started there): a team store keeps its records as that one's.
    #[must_use]
    pub fn standing_for(mut self, machine: impl Into<String>, root: impl Into<PathBuf>) -> Self {
        self.standing_for = Some((machine.into(), root.into()));
        self
    }

    /// The machine and root of the workspace this one works for, when it is another's.
    pub fn stands_for(&self) -> Option<(&str, &Path)> {
        self.standing_for
            .as_ref()
            .map(|(machine, root)| (machine.as_str(), root.as_path()))
    }

    /// The same working tree with its state in `dir` (a worktree run keeps the checkout's).
    #[must_use]
    pub fn with_state_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.state = dir.into();
        self
    }

    /// The nearest directory at or above `start` holding `tether.toml` or `.tether/`; `start`
    /// itself when there is none (so commands run from a subdirectory find their workspace).
    pub fn discover(start: &Path) -> Self {
        let found = start
            .ancestors()
            .find(|dir| dir.join(crate::FILE_NAME).is_file() || dir.join(STATE_DIR).is_dir());
        Workspace::at(found.unwrap_or(start))
    }

    /// The workspace root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `.tether/`, tether's state directory (git-ignored).
    pub fn state_dir(&self) -> PathBuf {
        self.state.clone()
    }

    /// `.tether/tether.db`, the store.
    pub fn db_path(&self) -> PathBuf {
        self.state_dir().join("tether.db")
    }

    /// `.tether/runs/`, transcripts and logs per run.
    pub fn runs_dir(&self) -> PathBuf {
        self.state_dir().join("runs")
    }

    /// `.tether/runs/<run>/lock`: held (`flock`) by the process driving the run.
    pub fn run_lock(&self, run: &str) -> PathBuf {
        self.runs_dir().join(run).join("lock")
    }

    /// `tether.toml` at the root (the environment may name another file).
    pub fn default_config_path(&self) -> PathBuf {
        self.root.join(crate::FILE_NAME)
    }

    /// `.gitignore` at the root.
    pub fn gitignore_path(&self) -> PathBuf {
        self.root.join(".gitignore")
    }

    /// `path` relative to the root when it is inside it, for messages.
    pub fn display<'a>(&self, path: &'a Path) -> std::borrow::Cow<'a, str> {
        match path.strip_prefix(&self.root) {
            // The workspace itself (a plan path of `.`): named, never an empty label.
            Ok(rel) if rel.as_os_str().is_empty() => std::borrow::Cow::Borrowed("."),
            Ok(rel) => rel.to_string_lossy(),
            Err(_) => path.to_string_lossy(),
        }
    }
}
