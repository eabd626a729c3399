//! The side model's texts (`tether side`): its system prompt and the request holding a
//! person's question about a run, with what the run's record says of it.

/// The side model's system prompt.
pub const SYSTEM: &str = "You answer a person's question about a run of an autonomous coding \
agent that works in a loop on this repository. You are not that agent and you cannot reach it: \
nothing you say is shown to it, and you cannot steer, pause or stop the run. The person asked \
on the side, to understand the work without disturbing it.

You are given the run's task and what its record says of its latest iterations. You can read \
the repository with your tools (read, grep, ls), which see its files as they are now: the agent \
may be changing them as you read. Read what you need to answer, and no more.

Answer the question plainly and briefly, for a person. Say what you saw in the record or in the \
files, and say so when you are guessing or when neither tells. Do not write code for the agent \
or suggest you will act: you only answer.";

/// How much of the run's task (its prompt, or its plan) the side model is given, in bytes.
pub const TASK_LIMIT: usize = 12_000;

/// How much of one iteration's notes (its summary, its tool calls) it is given, in bytes.
pub const ITERATION_LIMIT: usize = 1_500;

/// How many of the run's latest iterations it is given.
pub const ITERATIONS: usize = 8;

/// How much of the question it is given, in bytes.
pub const QUESTION_LIMIT: usize = 4_000;

/// What the run is working on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Task {
    /// A Ralph loop's prompt, given every iteration.
    Prompt(String),
    /// A goal run's plan file (its path, and its text when it could be read).
    Plan {
        /// The plan's path in the workspace.
        path: String,
        /// Its text, when it was readable here.
        text: Option<String>,
    },
    /// Neither is known (a kind of run this build does not describe).
    Unknown,
}

/// One of the run's latest iterations, as its record tells it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Iteration {
    /// Its number.
    pub n: u32,
    /// How it ended: its summary (the first line of the agent's final message), its error, or
    /// `None` while it runs.
    pub ended: Option<Result<String, String>>,
    /// The summaries of its tool calls, oldest first.
    pub tool_calls: Vec<String>,
}

/// What the side model is told of a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunNotes {
    /// The run's id.
    pub id: String,
    /// `ralph`, `goal`, ….
    pub kind: String,
    /// Its status now (`running`, `waiting_for_input`, `paused`, …).
    pub status: String,
    /// What it works on.
    pub task: Task,
    /// Its latest iterations, oldest first (at most [`ITERATIONS`]).
    pub iterations: Vec<Iteration>,
    /// The questions it waits on a person's answer for.
    pub waiting_on: Vec<String>,
}

/// The request: the run's notes, then the person's question (each part bounded).
pub fn request(run: &RunNotes, question: &str) -> String {
    let mut out = format!(
        "Run {} ({} loop), {} now.\n\n",
        run.id,
        run.kind,
        run.status.replace('_', " ")
    );
    match &run.task {
        Task::Prompt(prompt) => {
            out.push_str("Its prompt, given to the agent every iteration:\n<<<\n");
            out.push_str(&bounded(prompt, TASK_LIMIT));
            out.push_str("\n>>>\n\n");
        }
        Task::Plan {
            path,
            text: Some(text),
        } => {
            out.push_str(&format!("It works on the goals of the plan {path}:\n<<<\n"));
            out.push_str(&bounded(text, TASK_LIMIT));
            out.push_str("\n>>>\n\n");
        }
        Task::Plan { path, text: None } => out.push_str(&format!(
            "It works on the goals of the plan {path} (not readable here; try your tools).\n\n"
        )),
        Task::Unknown => {}
    }
    if run.iterations.is_empty() {
        out.push_str("No iteration has started yet.\n\n");
    } else {
        out.push_str("Its latest iterations, as its record tells them:\n");
        for it in &run.iterations {
            out.push_str(&bounded(&iteration(it), ITERATION_LIMIT));
            out.push('\n');
        }
        out.push('\n');
    }
    for asked in &run.waiting_on {
        out.push_str("It waits for a person's answer to: ");
        out.push_str(&bounded(asked, ITERATION_LIMIT));
        out.push('\n');
    }
    if !run.waiting_on.is_empty() {
        out.push('\n');
    }
    out.push_str("The person's question:\n<<<\n");
    out.push_str(&bounded(question.trim(), QUESTION_LIMIT));
    out.push_str("\n>>>");
    out
}

/// One iteration in a few lines.
fn iteration(it: &Iteration) -> String {
    let ended = match &it.ended {
        None => "in progress".to_owned(),
        Some(Ok(summary)) if summary.is_empty() => "done".to_owned(),
        Some(Ok(summary)) => format!("done: {summary}"),
        Some(Err(error)) => format!("failed: {error}"),
    };
    let mut out = format!("- Iteration {}, {ended}", it.n);
    if !it.tool_calls.is_empty() {
        out.push_str(&format!("\n  tool calls: {}", it.tool_calls.join("; ")));
    }
    out
}

/// `text` cut to at most `limit` bytes (at a character's boundary), marked when cut.
fn bounded(text: &str, limit: usize) -> String {
    if text.len() <= limit {
        return text.to_owned();
    }
    let mut end = limit;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}\n[… cut]", &text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_side_models_texts() {
        let ralph = RunNotes {
            id: "r-7k2m9x".into(),
            kind: "ralph".into(),
            status: "waiting_for_input".into(),
            task: Task::Prompt("Make the tests in tests/ pass.".into()),
            iterations: vec![
                Iteration {
                    n: 3,
                    ended: Some(Ok("Fixed the parser; two tests left.".into())),
                    tool_calls: vec!["read src/parse.rs".into(), "bash cargo test".into()],
                },
                Iteration {
                    n: 4,
                    ended: Some(Err("the agent's model failed".into())),
                    tool_calls: Vec::new(),
                },
                Iteration {
                    n: 5,
                    ended: None,
                    tool_calls: vec!["ask_human".into()],
                },
            ],
            waiting_on: vec!["Which date format should the report use?".into()],
        };
        let goal = RunNotes {
            id: "r-2b4c6d".into(),
            kind: "goal".into(),
            status: "paused".into(),
            task: Task::Plan {
                path: "plan.md".into(),
                text: Some(format!("# Goals\n\n{}", "x".repeat(TASK_LIMIT))),
            },
            iterations: Vec::new(),
            waiting_on: Vec::new(),
        };
        insta::assert_snapshot!(format!(
            "{SYSTEM}\n---\n{}\n---\n{}",
            request(&ralph, "  What is it stuck on?\n"),
            request(&goal, "Why is it paused?").replace(&"x".repeat(100), "x×100")
        ));
    }
}
