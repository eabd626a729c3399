//! [`ToolSet`]: the tools one agent (or the judge) may call, looked up by name.
//!
//! The set is where a model's call meets a tool, so it is also where calls that cannot reach a
//! tool — an unknown name, arguments that do not fit the schema — become error results for the
//! model, and where every call gets its one-line summary for the event journal.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use serde_json::{Map, Value};

use crate::args;
use crate::error::{FatalToolError, SetupError};
use crate::options::ToolOptions;
use crate::output::{ToolCallOutcome, ToolOutput, ToolSpec};
use crate::summary::summarize;
use crate::tool::{Tool, ToolContext};
use crate::tools::bash::BashTool;
use crate::tools::edit::EditTool;
use crate::tools::grep::GrepTool;
use crate::tools::ls::LsTool;
use crate::tools::read::ReadTool;
use crate::tools::write::WriteTool;
use crate::workspace::Workspace;

/// An ordered set of tools with unique names.
#[derive(Clone, Default)]
pub struct ToolSet {
    tools: Vec<Arc<dyn Tool>>,
}

impl std::fmt::Debug for ToolSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolSet")
            .field("tools", &self.names())
            .finish()
    }
}

impl ToolSet {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// The built-in agent's tools over the workspace at `root`: `read`, `write`, `edit`, `bash`,
    /// `grep`, `ls`.
    pub fn builtin(root: impl AsRef<Path>, options: &ToolOptions) -> Result<Self, SetupError> {
        let ws = Workspace::new(root)?;
        Self::new()
            .with(Arc::new(ReadTool::new(ws.clone(), options)))?
            .with(Arc::new(WriteTool::new(ws.clone())))?
            .with(Arc::new(EditTool::new(ws.clone())))?
            .with(Arc::new(BashTool::new(ws.clone(), options)))?
            .with(Arc::new(GrepTool::new(ws.clone(), options)))?
            .with(Arc::new(LsTool::new(ws, options)))
    }

    /// The judge's read-only tools over the workspace at `root`: `read`, `grep`, `ls`, with the
    /// default limits.
    pub fn read_only(root: impl AsRef<Path>) -> Result<Self, SetupError> {
        Self::read_only_with(root, &ToolOptions::default())
    }

    /// The read-only tools with the limits of `options`.
    pub fn read_only_with(
        root: impl AsRef<Path>,
        options: &ToolOptions,
    ) -> Result<Self, SetupError> {
        let ws = Workspace::new(root)?;
        Self::new()
            .with(Arc::new(ReadTool::new(ws.clone(), options)))?
            .with(Arc::new(GrepTool::new(ws.clone(), options)))?
            .with(Arc::new(LsTool::new(ws, options)))
    }

    /// The set with `tool` added at the end; refused if its name is taken.
    pub fn with(mut self, tool: Arc<dyn Tool>) -> Result<Self, SetupError> {
        self.add(tool)?;
        Ok(self)
    }

    /// Adds `tool` at the end; refused if its name is taken.
    pub fn add(&mut self, tool: Arc<dyn Tool>) -> Result<(), SetupError> {
        let name = &tool.spec().name;
        if self.get(name).is_some() {
            return Err(SetupError::DuplicateTool(name.clone()));
        }
        self.tools.push(tool);
        Ok(())
    }

    /// The tool called `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.iter().find(|tool| tool.spec().name == name)
    }

    /// The tools' names, in order.
    pub fn names(&self) -> Vec<&str> {
        self.tools
            .iter()
            .map(|tool| tool.spec().name.as_str())
            .collect()
    }

    /// What the model is told about each tool, in order.
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.tools.iter().map(|tool| tool.spec().clone()).collect()
    }

    /// Calls the tool `name` with the model's `args`. An unknown name or arguments that do not
    /// fit the tool's schema are error results for the model; `Err` only when the tool reports a
    /// fatal failure. `null` arguments count as `{}`.
    pub async fn call(
        &self,
        name: &str,
        args: Value,
        ctx: &ToolContext,
    ) -> Result<ToolCallOutcome, FatalToolError> {
        let started = Instant::now();
        let Some(tool) = self.get(name) else {
            let output = ToolOutput::error(self.unknown(name));
            let summary = summarize(
                &format!("{} (unknown tool)", crate::text::first_line(name, 40)),
                &output,
            );
            return Ok(ToolCallOutcome {
                output,
                summary,
                elapsed: started.elapsed(),
            });
        };
        let args = if args.is_null() {
            Value::Object(Map::new())
        } else {
            args
        };
        let what = tool.describe_call(&args);
        let output = match args::check(tool.spec(), &args) {
            Ok(()) => tool.call(args, ctx).await?,
            Err(message) => ToolOutput::error(message),
        };
        let summary = summarize(&what, &output);
        let elapsed = started.elapsed();
        tracing::debug!(
            tool = name,
            is_error = output.is_error,
            ?elapsed,
            "{summary}"
        );
        Ok(ToolCallOutcome {
            output,
            summary,
            elapsed,
        })
    }

    fn unknown(&self, name: &str) -> String {
        let available = self.names().join(", ");
        let mut msg = format!("unknown tool `{name}`; available: {available}");
        if let Some(close) = self.names().into_iter().find(|known| near(name, known)) {
            msg.push_str(&format!(". Did you mean `{close}`?"));
        }
        msg
    }
}

/// Whether `a` is a likely typo of `b`: within one single-character edit for short names, two
/// for longer ones (case-insensitively).
fn near(a: &str, b: &str) -> bool {
    let a: Vec<char> = a.to_lowercase().chars().collect();
    let b: Vec<char> = b.to_lowercase().chars().collect();
    let allowed = if b.len() <= 4 { 1 } else { 2 };
    if a.len().abs_diff(b.len()) > allowed {
        return false;
    }
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut row = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != cb);
            row.push((prev[j] + cost).min(prev[j + 1] + 1).min(row[j] + 1));
        }
        prev = row;
    }
    prev[b.len()] <= allowed
}
