//! Plan mode's texts: the drafting agent's system prompt, the drafting prompt, the revision
//! prompt (a human's "Edit" request), and the send-back when a draft falls short of the format.
//!
//! Each agent turn starts from a fresh context, so every prompt carries the whole task: the
//! objective, the format, the rules.

/// The drafting agent's system prompt: its job and its tools.
pub const SYSTEM: &str = "\
You are planning a piece of software work before anyone writes code. You explore the repository \
(the workspace) with read-only tools - `read`, `grep`, `ls` - and write goals into the plan file \
with `write_plan` (the whole file) or `edit_plan` (an exact replacement). You cannot change any \
other file or run commands. Paths are relative to the workspace root.

Your turn ends when you answer without calling a tool: then list the goals you drafted, one line \
each.";

/// The drafting instructions for an agent CLI (Claude Code, Codex, pi), which runs read-only
/// with its own tools and writes the plan through tether's MCP tools.
pub const SYSTEM_CLI: &str = "\
You are planning a piece of software work before anyone writes code. You explore the repository \
(the workspace) with your read-only tools (reading and searching files) and write goals into \
the plan file with tether's `write_plan` (the whole file) or `edit_plan` (an exact replacement) \
tools. You cannot change any other file or run commands. Paths are relative to the workspace \
root.

Your turn ends when you answer without calling a tool: then list the goals you drafted, one line \
each.";

/// The contract format and the rules a draft must follow, shared by every prompt.
fn format_and_rules(plan_file: &str) -> String {
    format!(
        "Each goal is a section of {plan_file} in this format, placed before the `## Log` \
         section:\n\
         \n\
         ## Goal: <short title>\n\
         <!-- id: <short-id> -->\n\
         status: active\n\
         done_when: <the observable condition that means the goal is done, and where a \
         reviewer sees it>\n\
         verify: <optional: one shell command that exits 0 only when the goal is met>\n\
         failure_modes:\n\
         - <a way the goal could look done while it is not>\n\
         - <another>\n\
         \n\
         - [ ] <first step>\n\
         - [ ] <next step>\n\
         \n\
         Rules:\n\
         - Explore first: read the code, tests and docs the objective touches, so that goals \
         name real files, commands and behaviours.\n\
         - Few goals, each an outcome that can be checked on its own; not a to-do list.\n\
         - done_when: one line, concrete and observable (a command's result, a file's content, \
         a behaviour), not an intention.\n\
         - verify: only when one command can check the goal (the project's tests, a script); \
         leave the line out otherwise. Never a command that cannot fail.\n\
         - failure_modes: 2 or 3 items. When there is a verify command, at least one names how \
         verify could pass while the goal is still not met (a test that asserts nothing, a \
         check that misses the real path).\n\
         - Subtasks: the steps, as `- [ ]` items, in order.\n\
         - ids: short, lowercase, letters, digits and `-`, unique in the file.\n\
         - Keep every goal already in {plan_file} and the `## Log` section exactly as they \
         are; add your goals.\n\
         - The tools refuse a plan that does not parse and say why; fix it and write again."
    )
}

/// The first drafting turn: draft goals for `objective` into `plan_file`, which exists or not.
pub fn draft(objective: &str, plan_file: &str, exists: bool) -> String {
    let start = if exists {
        format!(
            "Read {plan_file} first: it may already hold goals and a log, which stay as they are."
        )
    } else {
        format!(
            "{plan_file} does not exist yet: start it with `# Plan: <the objective in one line>`, \
             then your goals, then an empty `## Log` section."
        )
    };
    format!(
        "Draft goals for this objective into the plan file {plan_file}:\n\
         \n\
         {objective}\n\
         \n\
         A human reviews your goals and agrees to each goal's contract (done_when, verify, \
         failure_modes) before any code is written. After that the contract is locked, and a \
         goal counts as done only when its verify command passes and an independent judge, \
         reading the repository, confirms done_when. So write contracts that can be checked.\n\
         \n\
         {start}\n\
         \n\
         {}",
        format_and_rules(plan_file),
        objective = objective.trim(),
    )
}

/// A revision turn: the human asked for `request` after reviewing the goals drafted so far
/// (`drafted`, their ids).
pub fn revision(objective: &str, plan_file: &str, request: &str, drafted: &[String]) -> String {
    let ids = if drafted.is_empty() {
        "none yet".to_owned()
    } else {
        drafted
            .iter()
            .map(|i| format!("`{i}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!(
        "You drafted goals into the plan file {plan_file} for this objective:\n\
         \n\
         {objective}\n\
         \n\
         The goals you drafted: {ids}. A human reviewed them and asks for this revision:\n\
         \n\
         {request}\n\
         \n\
         Read {plan_file}, then change your drafted goals accordingly. Leave the other goals \
         and the log as they are.\n\
         \n\
         {}",
        format_and_rules(plan_file),
        objective = objective.trim(),
        request = request.trim(),
    )
}

/// The same turn again, with what the last attempt left wrong.
pub fn send_back(prompt: &str, problems: &[String]) -> String {
    let mut out =
        format!("{prompt}\n\n---\nAn earlier attempt at this left the plan short of the format:\n");
    for p in problems {
        out.push_str(&format!("- {p}\n"));
    }
    out.push_str("Fix these in the plan file, then answer with the goals you drafted.");
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn drafting_texts() {
        let mut all = format!("--- system\n{}\n", super::SYSTEM);
        all.push_str(&format!(
            "--- draft (new plan)\n{}\n",
            super::draft("Add a --verbose flag to greet.sh\n", "plan.md", false)
        ));
        all.push_str(&format!(
            "--- draft (existing plan, first lines)\n{}\n",
            super::draft("Speed up the cache", "docs/plan.md", true)
                .lines()
                .take(12)
                .collect::<Vec<_>>()
                .join("\n")
        ));
        let revision = super::revision(
            "Add a --verbose flag",
            "plan.md",
            "Split the README work into its own goal.",
            &["verbose-flag".to_owned()],
        );
        all.push_str(&format!(
            "--- revision (first lines)\n{}\n",
            revision.lines().take(12).collect::<Vec<_>>().join("\n")
        ));
        let back = super::send_back(
            "PROMPT",
            &[
                "goal `verbose-flag` (line 3) has no `done_when:`".to_owned(),
                "goal `docs` (line 12) has 1 failure mode; give 2 or 3".to_owned(),
            ],
        );
        all.push_str(&format!("--- send back\n{back}\n"));
        insta::assert_snapshot!(all);
    }
}
