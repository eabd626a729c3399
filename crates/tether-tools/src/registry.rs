//! [`ToolSet`]: the tools one agent (or the judge) may call, looked up by name — the one
//! registry every tether agent uses.
//!
//! The set is where a model's call meets a tool, so it is also where calls that cannot reach a
//! tool — an unknown name, a withheld tool, arguments that do not fit the schema — become error
//! results for the model, and where every call gets its one-line summary for the event journal.
//! Its [`specs`](ToolSet::specs) are what the model clients put on the wire.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use serde_json::{Map, Value};

use crate::args;
use crate::error::{FatalToolError, SetupError};
use crate::options::ToolOptions;
use crate::output::{ToolCallOutcome, ToolOutput};
use crate::spec::ToolSpec;
use crate::summary::summarize;
use crate::tool::{Tool, ToolContext};
use crate::tools::bash::BashTool;
use crate::tools::{edit, grep, ls, read, write};
use crate::workspace::Workspace;

/// An ordered set of tools with unique names.
#[derive(Clone, Default)]
pub struct ToolSet {
    tools: Vec<Arc<dyn Tool>>,
    withheld: Vec<Withheld>,
}

/// A name the model may call but is refused here (plan mode's `write`, `edit`, `bash`).
#[derive(Clone)]
struct Withheld {
    name: String,
    reason: String,
    message: String,
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
            .with(Arc::new(read::tool(ws.clone(), options)))?
            .with(Arc::new(write::tool(ws.clone())))?
            .with(Arc::new(edit::tool(ws.clone())))?
            .with(Arc::new(BashTool::new(ws.clone(), options)))?
            .with(Arc::new(grep::tool(ws.clone(), options)))?
            .with(Arc::new(ls::tool(ws, options)))
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
            .with(Arc::new(read::tool(ws.clone(), options)))?
            .with(Arc::new(grep::tool(ws.clone(), options)))?
            .with(Arc::new(ls::tool(ws, options)))
    }

    /// The set with `tool` added at the end; refused if its name is taken.
    pub fn with(mut self, tool: Arc<dyn Tool>) -> Result<Self, SetupError> {
        self.add(tool)?;
        Ok(self)
    }

    /// Adds `tool` at the end; refused if its name is taken.
    pub fn add(&mut self, tool: Arc<dyn Tool>) -> Result<(), SetupError> {
        let name = &tool.spec().name;
        if self.get(name).is_some() || self.withheld(name).is_some() {
            return Err(SetupError::DuplicateTool(name.clone()));
        }
        self.tools.push(tool);
        Ok(())
    }

    /// The set, refusing calls to `name` without offering it: the model reads `message`, and the
    /// call's summary is `{name}: refused ({reason})`. For a tool the model knows from elsewhere
    /// (its training, an earlier prompt) but may not use here. Refused if `name` is a tool of
    /// the set.
    pub fn withhold(
        mut self,
        name: &str,
        reason: impl Into<String>,
        message: impl Into<String>,
    ) -> Result<Self, SetupError> {
        if self.get(name).is_some() || self.withheld(name).is_some() {
            return Err(SetupError::DuplicateTool(name.to_owned()));
        }
        self.withheld.push(Withheld {
            name: name.to_owned(),
            reason: reason.into(),
            message: message.into(),
        });
        Ok(self)
    }

    fn withheld(&self, name: &str) -> Option<&Withheld> {
        self.withheld.iter().find(|w| w.name == name)
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
        if let Some(withheld) = self.withheld(name) {
            return Ok(ToolCallOutcome {
                output: ToolOutput::error(withheld.message.clone()),
                summary: format!("{name}: refused ({})", withheld.reason),
                elapsed: started.elapsed(),
            });
        }
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
