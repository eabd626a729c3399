//! What a side question (`tether side`) is told of a run: its task (a Ralph loop's prompt, a
//! goal run's plan), its latest iterations as its journal tells them (their summaries and tool
//! calls), and the questions it waits on a person for — read from the store alone (and the plan
//! from the repository), so a run of another machine of a team store can be asked about too.
//! The model's side of it is the runtime's (`tether_runtime::side`); the texts are
//! [`crate::prompts::side`].

use std::path::Path;

use tether_store::{Event, QuestionStatus, Run, Store, StoreError};

use crate::prompts::side::{ITERATIONS, Iteration, RunNotes, TASK_LIMIT, Task};

/// How many of the run's latest journal events are read to find its latest iterations.
const EVENTS: usize = 1_000;

/// How many tool calls of one iteration are kept (the latest).
const TOOL_CALLS: usize = 12;

/// What the side model is told of `run`; a goal run's plan is read from `root` (the
/// repository the run works in, or this one for a run of another machine).
pub fn notes(store: &Store, run: &Run, root: &Path) -> Result<RunNotes, StoreError> {
    let events = store.events_before(&run.id, None, EVENTS)?;
    let mut iterations: Vec<Iteration> = Vec::new();
    for stored in &events {
        let Some(event) = &stored.event else {
            continue;
        };
        let n = match event {
            Event::IterationStarted { n }
            | Event::ToolCalled { n, .. }
            | Event::IterationCompleted { n, .. }
            | Event::IterationFailed { n, .. } => *n,
            _ => continue,
        };
        if iterations.last().is_none_or(|it| it.n != n) {
            iterations.push(Iteration {
                n,
                ..Iteration::default()
            });
        }
        let Some(it) = iterations.last_mut() else {
            continue;
        };
        match event {
            Event::IterationStarted { .. } => {
                it.ended = None;
                it.tool_calls.clear();
            }
            Event::ToolCalled { summary, tool, .. } => {
                let call = if summary.is_empty() { tool } else { summary };
                it.tool_calls.push(call.clone());
                if it.tool_calls.len() > TOOL_CALLS {
                    it.tool_calls.remove(0);
                }
            }
            Event::IterationCompleted { summary, .. } => it.ended = Some(Ok(summary.clone())),
            Event::IterationFailed { error, .. } => it.ended = Some(Err(error.clone())),
            _ => {}
        }
    }
    // An iteration run again (after a usage limit, an interruption) is told once, as it ended.
    let mut latest: Vec<Iteration> = Vec::new();
    for it in iterations.into_iter().rev() {
        if latest.len() == ITERATIONS {
            break;
        }
        if !latest.iter().any(|seen| seen.n == it.n) {
            latest.push(it);
        }
    }
    latest.reverse();
    let waiting_on = store
        .questions_for_run(&run.id)?
        .into_iter()
        .filter(|q| q.status == QuestionStatus::Pending)
        .map(|q| q.question)
        .collect();
    Ok(RunNotes {
        id: run.id.to_string(),
        kind: run.kind.as_str().to_owned(),
        status: run.state.status.as_str().to_owned(),
        task: task(run, root),
        iterations: latest,
        waiting_on,
    })
}

/// The run's task from its spec: a Ralph loop's prompt, or a goal run's plan read from `root`.
fn task(run: &Run, root: &Path) -> Task {
    if let Some(prompt) = run.spec.get("prompt").and_then(|p| p.as_str()) {
        return Task::Prompt(prompt.to_owned());
    }
    let Some(plan) = run.spec.get("plan").and_then(|p| p.as_str()) else {
        return Task::Unknown;
    };
    Task::Plan {
        path: plan.to_owned(),
        text: read_bounded(root, plan),
    }
}

/// The start of the plan file `plan` in `root` (a little more than the prompt keeps, so a cut
/// shows), when it can be read. The agent writes the plan, so it is read as the side model's
/// own tools read: inside `root` (no symlink out of it, nothing under `.tether/`), a regular
/// file, opened without blocking — a FIFO or a link to a secret is not read.
fn read_bounded(root: &Path, plan: &str) -> Option<String> {
    use std::io::Read as _;
    let ws = tether_tools::Workspace::new(root).ok()?;
    let file = ws.open_read(&ws.resolve(plan).ok()?).ok()?;
    let mut bytes = Vec::new();
    file.take(TASK_LIMIT as u64 + 4)
        .read_to_end(&mut bytes)
        .ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use tether_store::RunKind;

    #[test]
    fn the_plan_is_read_inside_the_workspace_only_and_never_waits_on_a_fifo() {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(root.path().join("plan.md"), "# Plan\n").unwrap();
        assert_eq!(
            read_bounded(root.path(), "plan.md").as_deref(),
            Some("# Plan\n")
        );
        std::fs::write(outside.path().join("secret"), "sk-live-1").unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret"), root.path().join("link.md"))
            .unwrap();
        assert_eq!(read_bounded(root.path(), "link.md"), None, "a link out");
        assert_eq!(read_bounded(root.path(), "/proc/self/environ"), None);
        assert_eq!(read_bounded(root.path(), "../secret"), None);
        nix::unistd::mkfifo(
            &root.path().join("fifo.md"),
            nix::sys::stat::Mode::from_bits_truncate(0o600),
        )
        .unwrap();
        // Opened without blocking and refused: no writer ever comes.
        assert_eq!(read_bounded(root.path(), "fifo.md"), None);
    }

    #[test]
    fn the_latest_iterations_are_told_once_each_with_their_latest_tool_calls() {
        let store = Store::open_in_memory().unwrap();
        let spec = serde_json::json!({"prompt": "Fix it.", "max_iterations": 20});
        let id = store
            .create_run(RunKind::Ralph, Path::new("/nowhere"), &spec)
            .unwrap();
        let mut events = Vec::new();
        for n in 1..=10 {
            events.push(Event::IterationStarted { n });
            for call in 0..15 {
                events.push(Event::ToolCalled {
                    n,
                    tool: "read".into(),
                    summary: format!("read f{call}"),
                });
            }
            events.push(Event::IterationCompleted {
                n,
                summary: format!("did {n}"),
            });
        }
        // Iteration 11 began, was interrupted and runs again.
        events.push(Event::IterationStarted { n: 11 });
        events.push(Event::ToolCalled {
            n: 11,
            tool: "bash".into(),
            summary: String::new(),
        });
        events.push(Event::IterationStarted { n: 11 });
        store.append_all(Some(&id), &events).unwrap();
        let run = store.run(&id).unwrap();
        let notes = notes(&store, &run, Path::new("/nowhere")).unwrap();
        assert_eq!(notes.task, Task::Prompt("Fix it.".into()));
        let told: Vec<u32> = notes.iterations.iter().map(|it| it.n).collect();
        assert_eq!(told, [4, 5, 6, 7, 8, 9, 10, 11]);
        assert_eq!(notes.iterations[6].ended, Some(Ok("did 10".into())));
        assert_eq!(notes.iterations[6].tool_calls.len(), TOOL_CALLS);
        assert_eq!(notes.iterations[6].tool_calls[0], "read f3");
        assert_eq!(notes.iterations[7].ended, None);
        assert!(notes.iterations[7].tool_calls.is_empty(), "started again");
        assert!(notes.waiting_on.is_empty());
    }
}
