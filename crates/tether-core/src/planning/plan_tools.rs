//! The drafting agent's tools: the read-only workspace tools (`read`, `grep`, `ls`) plus
//! `write_plan` and `edit_plan`, which write the plan file and nothing else.
//!
//! Both plan tools check the result before writing: it must parse without errors, and it must
//! keep every goal and log entry the plan had before drafting began (the [`Baseline`]). A plan
//! that fails either check is not written; the tool returns the problems so the agent fixes them.
//! Calls to the workspace's write tools (`write`, `edit`, `bash`) are refused with a message
//! that says why and what to use instead (they are withheld from the [`ToolSet`]).

use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Value, json};
use tether_plan::PlanDoc;
use tether_tools::{
    FatalToolError, SetupError, Tool, ToolContext, ToolOutput, ToolSet, ToolSpec, TypedTool,
};

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

#[derive(Deserialize)]
struct WriteArgs {
    content: String,
}

#[derive(Deserialize)]
struct EditArgs {
    old_text: String,
    new_text: String,
}

impl TypedTool for WritePlan {
    type Args = WriteArgs;

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn run(&self, args: WriteArgs, _ctx: &ToolContext) -> Result<ToolOutput, FatalToolError> {
        Ok(self.target.accept(&args.content))
    }

    fn describe_call(&self, _args: &Value) -> String {
        format!("write_plan {}", self.target.plan.key)
    }
}

impl TypedTool for EditPlan {
    type Args = EditArgs;

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn run(&self, args: EditArgs, _ctx: &ToolContext) -> Result<ToolOutput, FatalToolError> {
        Ok(self.edit(&args.old_text, &args.new_text))
    }

    fn describe_call(&self, _args: &Value) -> String {
        format!("edit_plan {}", self.target.plan.key)
    }
}

impl EditPlan {
    fn edit(&self, old: &str, new: &str) -> ToolOutput {
        let name = &self.target.plan.key;
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

/// `write_plan` and `edit_plan` over `target`'s plan file: the only writes of plan mode, for
/// the built-in drafting agent and, served by `tether mcp --drafting`, for an agent CLI.
pub fn plan_tools(target: PlanTarget) -> Vec<Arc<dyn Tool>> {
    let name = target.plan.key.clone();
    let target = Arc::new(target);
    let write = ToolSpec::object(
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
    let edit = ToolSpec::object(
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
    vec![
        Arc::new(WritePlan {
            target: Arc::clone(&target),
            spec: write,
        }),
        Arc::new(EditPlan { target, spec: edit }),
    ]
}

/// The names of the workspace tools that change files or run commands, refused in plan mode.
const WITHHELD: [&str; 3] = ["write", "edit", "bash"];

/// The drafting agent's tools over the workspace at `root`: the read-only workspace tools and
/// the plan tools writing only `target`'s plan file; the write tools are withheld, with a
/// message naming the plan tools.
pub fn drafting_tools(root: &std::path::Path, target: PlanTarget) -> Result<ToolSet, SetupError> {
    let name = target.plan.key.clone();
    let mut set = ToolSet::read_only(root)?;
    for tool in plan_tools(target) {
        set = set.with(tool)?;
    }
    for tool in WITHHELD {
        let message = format!(
            "`{tool}` is not available while goals are drafted: the repository is read-only in \
             plan mode. The only file you can change is the plan, {name}, with `write_plan` (the \
             whole file) or `edit_plan` (an exact replacement)."
        );
        set = set.withhold(tool, "plan mode is read-only", message)?;
    }
    Ok(set)
}
