//! Helpers shared by the integration tests, and the list of test modules.
//!
//! Each test gets a fresh temporary directory holding `ws/` (the workspace) and `outside/` (a
//! directory next to it that no tool may touch, with `secret.txt`).

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;
use tempfile::TempDir;
use tether_tools::{ToolCallOutcome, ToolContext, ToolOptions, ToolSet};

mod bash;
mod escape;
mod files;
mod gate;
mod huge;
mod leftovers;
mod program;
mod race;
mod registry;
mod search;
mod snapshots;
mod special;

/// No single tool call in these tests may take longer than this.
pub const CALL_LIMIT: Duration = Duration::from_secs(30);

pub struct Fixture {
    _dir: TempDir,
    pub root: PathBuf,
    pub outside: PathBuf,
    pub tools: ToolSet,
}

impl Fixture {
    pub fn new() -> Self {
        Self::with_options(&ToolOptions::default())
    }

    pub fn with_options(options: &ToolOptions) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(dir.path()).unwrap();
        let root = base.join("ws");
        let outside = base.join("outside");
        fs::create_dir_all(&root).unwrap();
        fs::create_dir_all(&outside).unwrap();
        fs::write(outside.join("secret.txt"), "secret\n").unwrap();
        let tools = ToolSet::builtin(&root, options).unwrap();
        Self {
            _dir: dir,
            root,
            outside,
            tools,
        }
    }

    /// Writes `content` to `rel` under the workspace, creating directories.
    pub fn file(&self, rel: &str, content: impl AsRef<[u8]>) -> &Self {
        let path = self.root.join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, content).unwrap();
        self
    }

    pub fn link(&self, rel: &str, target: impl AsRef<Path>) {
        std::os::unix::fs::symlink(target, self.root.join(rel)).unwrap();
    }

    pub fn read(&self, rel: &str) -> String {
        fs::read_to_string(self.root.join(rel)).unwrap()
    }

    pub async fn call(&self, tool: &str, args: Value) -> ToolCallOutcome {
        self.call_with(tool, args, &ToolContext::default()).await
    }

    pub async fn call_with(&self, tool: &str, args: Value, ctx: &ToolContext) -> ToolCallOutcome {
        match tokio::time::timeout(CALL_LIMIT, self.tools.call(tool, args, ctx)).await {
            Ok(Ok(outcome)) => outcome,
            Ok(Err(fatal)) => panic!("{tool} failed fatally: {fatal}"),
            Err(_) => panic!("{tool} did not return within {CALL_LIMIT:?}"),
        }
    }

    /// The content of a call that must succeed.
    pub async fn ok(&self, tool: &str, args: Value) -> String {
        let out = self.call(tool, args.clone()).await.output;
        assert!(
            !out.is_error,
            "{tool} {args} should succeed, got:\n{}",
            out.content
        );
        out.content
    }

    /// The content of a call that must fail.
    pub async fn err(&self, tool: &str, args: Value) -> String {
        let out = self.call(tool, args.clone()).await.output;
        assert!(
            out.is_error,
            "{tool} {args} should fail, got:\n{}",
            out.content
        );
        out.content
    }
}

/// Every file under `dir` with its content, to show nothing changed.
pub fn tree(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let content = fs::read(&path).unwrap_or_default();
                out.push((path, content));
            }
        }
    }
    out.sort();
    out
}
