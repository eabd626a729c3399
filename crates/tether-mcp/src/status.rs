//! The `plan_status` tool: a read-only view of the plan — each goal's status, `done_when` and
//! subtasks done/total, the last log lines — as text for the model and as structured JSON.
//! Problems name the plan file and the line.

use std::fmt::Write as _;

use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::{CallToolResult, ContentBlock, Tool, ToolAnnotations, object};
use rmcp::schemars::JsonSchema;
use serde::Serialize;
use serde_json::json;
use tether_plan::file as plan_file;
use tether_plan::{Plan, Severity, Status};

use crate::server::{Options, TetherMcp, ToolFuture};

/// How many of the last log entries are shown.
const LOG_LINES: usize = 5;

/// Where the plan stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub struct PlanStatus {
    /// The plan file, relative to the workspace.
    pub file: String,
    /// The objective from the `# Plan: …` heading, if any.
    pub title: Option<String>,
    /// How many goals have each status.
    pub counts: StatusCounts,
    /// Every goal, in file order.
    pub goals: Vec<GoalStatus>,
    /// The last log entries, oldest first.
    pub log: Vec<String>,
    /// How many log entries the plan has in all.
    pub log_total: usize,
    /// Problems found in the plan, in line order.
    pub problems: Vec<ProblemAt>,
}

/// Goals per status.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub struct StatusCounts {
    /// Not started.
    pub open: usize,
    /// Being worked on.
    pub active: usize,
    /// Signed off.
    pub done: usize,
    /// Dropped.
    pub cancelled: usize,
}

/// One goal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub struct GoalStatus {
    /// The goal's id, if it has one.
    pub id: Option<String>,
    /// The heading after `Goal:`.
    pub title: String,
    /// open, active, done or cancelled.
    pub status: String,
    /// The condition that means done, if written.
    pub done_when: Option<String>,
    /// Ticked subtasks.
    pub subtasks_done: usize,
    /// All subtasks.
    pub subtasks_total: usize,
    /// The line of the goal's heading.
    pub line: usize,
}

/// A problem in the plan, located.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub struct ProblemAt {
    /// `file:line`.
    pub at: String,
    /// The 1-based line.
    pub line: usize,
    /// `error` or `warning`.
    pub severity: String,
    /// What is wrong and what was expected.
    pub message: String,
}

impl PlanStatus {
    /// The status of `plan`, read from `file`.
    pub fn of(file: &str, plan: &Plan) -> Self {
        let mut counts = StatusCounts::default();
        for goal in &plan.goals {
            match goal.status() {
                Status::Open => counts.open += 1,
                Status::Active => counts.active += 1,
                Status::Done => counts.done += 1,
                Status::Cancelled => counts.cancelled += 1,
            }
        }
        let entries = plan.log.as_ref().map_or(&[][..], |l| &l.entries[..]);
        let shown = entries.len().saturating_sub(LOG_LINES);
        PlanStatus {
            file: file.to_owned(),
            title: plan
                .title
                .as_ref()
                .map(|t| t.value.clone())
                .filter(|t| !t.is_empty()),
            counts,
            goals: plan
                .goals
                .iter()
                .map(|g| GoalStatus {
                    id: g.id().map(str::to_owned),
                    title: g.title.clone(),
                    status: g.status().to_string(),
                    done_when: g.done_when.as_ref().map(|d| d.value.clone()),
                    subtasks_done: g.done_subtasks(),
                    subtasks_total: g.subtasks.len(),
                    line: g.heading_line,
                })
                .collect(),
            log: entries[shown..].iter().map(|e| e.text.clone()).collect(),
            log_total: entries.len(),
            problems: plan
                .problems
                .iter()
                .map(|p| ProblemAt {
                    at: format!("{file}:{}", p.line),
                    line: p.line,
                    severity: match p.severity {
                        Severity::Error => "error",
                        Severity::Warning => "warning",
                    }
                    .to_owned(),
                    message: p.message.clone(),
                })
                .collect(),
        }
    }

    /// The status as the model reads it.
    pub fn text(&self) -> String {
        let mut out = String::new();
        let title = self.title.as_deref().unwrap_or("(untitled)");
        let _ = writeln!(out, "Plan: {title} ({})", self.file);
        let c = &self.counts;
        let _ = writeln!(
            out,
            "{} goals: {} active, {} open, {} done, {} cancelled",
            self.goals.len(),
            c.active,
            c.open,
            c.done,
            c.cancelled
        );
        for g in &self.goals {
            let id =
                g.id.as_deref()
                    .map_or_else(String::new, |i| format!("#{i}, "));
            let _ = writeln!(
                out,
                "\n{:<9} {} ({id}{}:{})",
                g.status, g.title, self.file, g.line
            );
            match &g.done_when {
                Some(d) => {
                    let _ = writeln!(out, "          done when: {d}");
                }
                None => {
                    let _ = writeln!(out, "          done when: (not written)");
                }
            }
            if g.subtasks_total > 0 {
                let _ = writeln!(
                    out,
                    "          subtasks: {}/{} done",
                    g.subtasks_done, g.subtasks_total
                );
            }
        }
        if !self.problems.is_empty() {
            let _ = writeln!(out, "\nProblems:");
            for p in &self.problems {
                let _ = writeln!(out, "  {}: {}: {}", p.at, p.severity, p.message);
            }
        }
        if !self.log.is_empty() {
            let _ = writeln!(
                out,
                "\nLog (last {} of {}):",
                self.log.len(),
                self.log_total
            );
            for line in &self.log {
                let _ = writeln!(out, "  - {line}");
            }
        }
        out
    }
}

/// The tool's definition.
pub(crate) fn definition() -> Tool {
    Tool::new(
        "plan_status",
        "Read the plan: every goal with its status, what counts as done, how many subtasks are \
         ticked, problems in the file (with their lines), and the last log lines. Read-only.",
        object(json!({"type": "object", "properties": {}, "additionalProperties": false})),
    )
    .with_output_schema::<PlanStatus>()
    .annotate(
        ToolAnnotations::new()
            .read_only(true)
            .destructive(false)
            .idempotent(true)
            .open_world(false),
    )
}

/// The tool's handler.
pub(crate) fn call(ctx: ToolCallContext<'_, TetherMcp>) -> ToolFuture<'_> {
    let result = plan_status(&ctx.service.inner.options);
    Box::pin(std::future::ready(Ok(result.into())))
}

fn plan_status(options: &Options) -> CallToolResult {
    let refused = |text: String| CallToolResult::error(vec![ContentBlock::text(text)]);
    let config = match &options.config {
        Ok(c) => c,
        Err(e) => return refused(e.clone()),
    };
    let ws = &options.workspace;
    let path = config.plan_path(ws.root());
    let doc = match plan_file::read(&path) {
        Ok(doc) => doc,
        Err(e) => return refused(e.to_string()),
    };
    let status = PlanStatus::of(&ws.display(&path), doc.plan());
    let mut result = CallToolResult::success(vec![ContentBlock::text(status.text())]);
    result.structured_content = serde_json::to_value(&status).ok();
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_text_and_json() {
        let text = "# Plan: make the cache fast\n\n## Goal: Cache layer\n<!-- id: cache -->\n\
                    status: active\ndone_when: p99 under 5 ms on the bench\n\n- [x] design\n\
                    - [ ] build\n\n## Goal: Docs\nstatus: sideways\n\n## Log\n- one\n- two\n\
                    - three\n- four\n- five\n- six\n";
        let doc = tether_plan::PlanDoc::parse("plan.md", text);
        let status = PlanStatus::of("plan.md", doc.plan());
        insta::assert_snapshot!(status.text());
        insta::assert_json_snapshot!(status);
    }
}
