//! The scripted agent and judge of a run of many goals (`tether run --parallel`), shared by its
//! tests and its benchmark: each goal's prompt names `TARGET-<id>` (in its `done_when:`), by
//! which a request is told apart from the other goals' running beside it.

use serde_json::json;
use tether_model::Request;
use tether_model::scripted::{Script, Turn};

/// A plan of `goals`, each `(id, after, verify)`, in that order; each goal's `done_when:` names
/// `TARGET-<id>` and its file `<id>.txt` (what [`agent`] writes with [`own`]).
pub fn plan_of(title: &str, goals: &[(&str, &[&str], &str)]) -> String {
    let mut plan = format!("# Plan: {title}\n\n");
    for (id, after, verify) in goals {
        plan.push_str(&format!(
            "## Goal: {id}\n<!-- id: {id} -->\nstatus: active\n"
        ));
        if !after.is_empty() {
            plan.push_str(&format!("after: {}\n", after.join(", ")));
        }
        plan.push_str(&format!(
            "done_when: the file TARGET-{id} exists as {id}.txt\nverify: {verify}\n\n"
        ));
    }
    plan + "## Log\n"
}

/// The goal a request is about: the `TARGET-<id>` its prompt names.
pub fn goal_of(req: &Request) -> String {
    let text = serde_json::to_string(&req.messages).unwrap() + req.system.as_deref().unwrap_or("");
    let at = text.find("TARGET-").expect("a goal's prompt") + "TARGET-".len();
    text[at..]
        .chars()
        .take_while(char::is_ascii_alphanumeric)
        .collect()
}

/// Which file a goal's agent writes.
pub type FileOf = fn(&str) -> String;

/// Each goal its own file, `<id>.txt`.
pub fn own(goal: &str) -> String {
    format!("{goal}.txt")
}

/// Every goal one file.
pub fn shared(_: &str) -> String {
    "shared.txt".to_owned()
}

/// Whether `req` is of a goal's run settling a conflicting merge (its prompt says so).
pub fn settling(req: &Request) -> bool {
    serde_json::to_string(&req.messages)
        .unwrap()
        .contains("merging that branch into yours conflicts")
}

/// Each goal's agent: writes its file (`done <id>`), signs the goal off, says it is done.
pub fn agent(file_of: FileOf) -> Script {
    settling_agent(file_of, None)
}

/// [`agent`], which settles a conflicting merge by writing `settled` over the goal's file
/// (when given; else by doing its goal's work again, markers and all).
pub fn settling_agent(file_of: FileOf, settled: Option<&'static str>) -> Script {
    Script::from_fn(move |req: &Request| {
        let goal = goal_of(req);
        let file = file_of(&goal);
        if let (true, Some(content), None) = (settling(req), settled, req.last_tool_result()) {
            return Turn::tool("write", json!({"path": file, "content": content}));
        }
        match req.last_tool_result() {
            // The goal it works on is in its environment too.
            None => Turn::tool(
                "bash",
                json!({"command": format!("printf %s \"$TETHER_GOAL\" > {goal}.env")}),
            ),
            Some((Some("bash"), _)) => Turn::tool(
                "write",
                json!({"path": file, "content": format!("done {goal}\n")}),
            ),
            Some((Some("write"), _)) => Turn::tool(
                "complete_goal",
                json!({"id": goal, "evidence": format!("{file} says done {goal}"),
                       "paths": [file]}),
            ),
            Some(_) => Turn::text(format!("{goal} is done.")),
        }
    })
}

/// A judge that reads the goal's file and accepts, quoting its line that says `done <id>`
/// (as `read` numbered it, like `cat -n`).
pub fn judge(file_of: FileOf) -> Script {
    Script::from_fn(move |req: &Request| {
        let goal = goal_of(req);
        let file = file_of(&goal);
        match req.last_tool_result() {
            None => Turn::tool("read", json!({"path": file})),
            Some((_, read)) => {
                let done = format!("done {goal}");
                let quote = read
                    .lines()
                    .filter_map(|l| l.split_once('\t').map(|(_, line)| line))
                    .find(|line| line.contains(&done))
                    .unwrap_or(&done);
                let v = json!({
                    "verdict": "accept",
                    "summary": format!("{file} holds the work"),
                    "checks": [{"path": file, "quote": quote,
                                "observation": "the file is there"}],
                    "missing": [],
                });
                Turn::text(format!("```json\n{v}\n```"))
            }
        }
    })
}
