//! The drafting agent's tools: the read-only workspace tools (`read`, `grep`, `ls`) plus
//! `write_plan` and `edit_plan`, which write the plan file and nothing else.
//!
//! Both plan tools check the result before writing: it must parse without errors, and it must
//! keep every goal and log entry the plan had before drafting began (the [`Baseline`]). A plan
//! that fails either check is not written; the tool returns the problems so the agent fixes them.
//! Calls to the workspace's write tools (`write`, `edit`, `bash`) are refused with a message
//! that says why and what to use instead.

use std::sync::Arc;

use serde_json::{Value, json};
use tether_agent::{BoxFuture as AgentFuture, ToolBox, ToolResult, WorkspaceTools};
use tether_model::ToolSpec as ModelToolSpec;
use tether_plan::PlanDoc;
use tether_tools::{
    BoxFuture, FatalToolError, SetupError, Tool, ToolContext, ToolOutput, ToolSet, ToolSpec,
};
use tokio_util::sync::CancellationToken;

use super::PlanRef;
use super::baseline::Baseline;
use tether_plan::file::{self as plan_file, PlanFileError};

/// The plan file the drafting tools may write, and what it must keep.
#[derive(Debug, Clone)]
pub struct PlanTarget {
    /// The plan file.
    pub plan: PlanRef,
    /// The plan before drafting.
    pub baseline: Baseline,
}

impl PlanTarget {
    /// Checks `text` and writes it to the plan file, or says why not (nothing written then).
    fn accept(&self, text: &str) -> ToolOutput {
        let name = &self.plan.key;
        let doc = PlanDoc::parse(name.as_str(), text);
        let plan = doc.plan();
        let errors: Vec<String> = plan
            .problems
            .iter()
            .filter(|p| p.is_error())
            .map(|p| format!("- line {}: {}", p.line, p.message))
            .collect();
        if !errors.is_empty() {
            return ToolOutput::error(format!(
                "nothing was written: the new {name} would not parse:\n{}\nFix these and call \
                 the tool again.",
                errors.join("\n")
            ));
        }
        let dropped = self.baseline.dropped(plan);
        if !dropped.is_empty() {
            return ToolOutput::error(format!(
                "nothing was written: the new {name} drops what the plan had before: {}. Keep \
                 the existing goals and every log entry as they are, and add your goals.",
                dropped.join(", ")
            ));
        }
        if let Err(e) = plan_file::write(&self.plan.path, text) {
            return ToolOutput::error(format!("could not write {name}: {e}"));
        }
        let ids: Vec<String> = plan
            .goals
            .iter()
            .map(|g| {
                g.id()
                    .map_or_else(|| format!("`{}` (no id)", g.title), |i| format!("`{i}`"))
            })
            .collect();
        let mut out = format!(
            "wrote {name}: {} goal(s): {}",
            plan.goals.len(),
            if ids.is_empty() {
                "none".to_owned()
            } else {
                ids.join(", ")
            }
        );
        for p in &plan.problems {
            out.push_str(&format!("\nwarning: line {}: {}", p.line, p.message));
        }
        ToolOutput::ok(out)
    }
}

fn spec(name: &str, description: String, properties: Value, required: &[&str]) -> ToolSpec {
    ToolSpec {
        name: name.to_owned(),
        description,
        parameters: json!({
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": false,
        }),
    }
}

/// `write_plan`: replaces the whole plan file.
struct WritePlan {
    target: Arc<PlanTarget>,
    spec: ToolSpec,
}

/// `edit_plan`: replaces one exact piece of the plan file.
struct EditPlan {
    target: Arc<PlanTarget>,
    spec: ToolSpec,
}

fn str_field<'a>(args: &'a Value, name: &str) -> Option<&'a str> {
    args.get(name).and_then(Value::as_str)
}

impl Tool for WritePlan {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call<'a>(
        &'a self,
        args: Value,
        _ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, FatalToolError>> {
        Box::pin(async move {
            Ok(match str_field(&args, "content") {
                Some(content) => self.target.accept(content),
                None => ToolOutput::error("`write_plan` needs `content`, the whole new plan"),
            })
        })
    }

    fn describe_call(&self, _args: &Value) -> String {
        format!("write_plan {}", self.target.plan.key)
    }
}

impl Tool for EditPlan {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call<'a>(
        &'a self,
        args: Value,
        _ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, FatalToolError>> {
        Box::pin(async move { Ok(self.edit(&args)) })
    }

    fn describe_call(&self, _args: &Value) -> String {
        format!("edit_plan {}", self.target.plan.key)
    }
}

impl EditPlan {
    fn edit(&self, args: &Value) -> ToolOutput {
        let name = &self.target.plan.key;
        let (Some(old), Some(new)) = (str_field(args, "old_text"), str_field(args, "new_text"))
        else {
            return ToolOutput::error("`edit_plan` needs `old_text` and `new_text`");
        };
        if old.is_empty() {
            return ToolOutput::error("`old_text` is empty; give the exact text to replace");
        }
        let text = match plan_file::read(&self.target.plan.path) {
            Ok(doc) => doc.text().to_owned(),
            Err(PlanFileError::Missing { .. }) => {
                return ToolOutput::error(format!(
                    "{name} does not exist yet; create it with `write_plan`"
                ));
            }
            Err(e) => return ToolOutput::error(format!("could not read {name}: {e}")),
        };
        match text.matches(old).count() {
            0 => ToolOutput::error(format!(
                "`old_text` was not found in {name}; it must match exactly, including \
                 whitespace. Read the file again to see its current text."
            )),
            1 => self.target.accept(&text.replacen(old, new, 1)),
            n => ToolOutput::error(format!(
                "`old_text` occurs {n} times in {name}; include surrounding lines so it \
                 matches once"
            )),
        }
    }
}

/// The names of the workspace tools that change files or run commands, refused in plan mode.
const WITHHELD: [&str; 3] = ["write", "edit", "bash"];

/// The drafting agent's tools: read-only workspace tools plus the plan tools; the write tools
/// are refused with a message naming the plan tools.
pub struct DraftingTools {
    inner: WorkspaceTools,
    plan_name: String,
}

impl DraftingTools {
    /// The tools over the workspace at `root`, writing only `target`'s plan file.
    pub fn new(root: &std::path::Path, target: PlanTarget) -> Result<Self, SetupError> {
        let name = target.plan.key.clone();
        let target = Arc::new(target);
        let write = spec(
            "write_plan",
            format!(
                "Replace the whole plan file {name} with `content`. The new plan must parse \
                 without errors and keep every goal and log entry the plan already had; \
                 otherwise nothing is written and the problems are returned: fix them and call \
                 again. This is the only file you can write."
            ),
            json!({"content": {"type": "string", "description": "The complete new plan."}}),
            &["content"],
        );
        let edit = spec(
            "edit_plan",
            format!(
                "Replace one exact piece of the plan file {name}: `old_text` must occur exactly \
                 once, including whitespace. The result is checked as with `write_plan`; if it \
                 fails, nothing is written and the problems are returned."
            ),
            json!({
                "old_text": {"type": "string", "description": "The exact text to replace."},
                "new_text": {"type": "string", "description": "The text to put in its place."},
            }),
            &["old_text", "new_text"],
        );
        let set = ToolSet::read_only(root)?
            .with(Arc::new(WritePlan {
                target: Arc::clone(&target),
                spec: write,
            }))?
            .with(Arc::new(EditPlan { target, spec: edit }))?;
        Ok(DraftingTools {
            inner: WorkspaceTools::new(set),
            plan_name: name,
        })
    }
}

impl ToolBox for DraftingTools {
    fn specs(&self) -> Vec<ModelToolSpec> {
        self.inner.specs()
    }

    fn call<'a>(
        &'a self,
        name: &'a str,
        arguments: Value,
        cancel: CancellationToken,
    ) -> AgentFuture<'a, ToolResult> {
        if WITHHELD.contains(&name) {
            let content = format!(
                "`{name}` is not available while goals are drafted: the repository is \
                 read-only in plan mode. The only file you can change is the plan, {}, with \
                 `write_plan` (the whole file) or `edit_plan` (an exact replacement).",
                self.plan_name
            );
            return Box::pin(async move {
                ToolResult {
                    content,
                    is_error: true,
                    summary: format!("{name}: refused (plan mode is read-only)"),
                }
            });
        }
        self.inner.call(name, arguments, cancel)
    }
}
