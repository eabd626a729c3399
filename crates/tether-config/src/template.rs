//! The commented `tether.toml` that `tether init` writes, assembled from the schema: the core
//! tables' text below, each declared table's from its declaration ([`TableDecl`]: its
//! introduction, then each key's description and template line) in the schema's order between
//! `[notify]` and `[executor]`, and the lists in the core text that name integrations (the
//! variables that override the file, the channels `human.channels` may add, the sinks
//! `human.escalate_to` may name, the agent CLIs `[executor] kind` may name) filled in from the
//! schema.
//!
//! It doubles as the reference for the file's shape (the book's configuration reference is
//! generated from it): tests check that it names every key in the schema's order, that every
//! key has a description above it, that it parses with no problems, and that its active values
//! are the defaults.

use crate::declare::{KeyDecl, Role, TableDecl};
use crate::{STORE_URL_VAR, Schema};

/// The widest line of a comment the template fills in itself (its lists), `# ` included.
const WIDTH: usize = 95;

/// The core tables' text up to `[notify]`. A line starting with `#> ` is a comment filled to
/// [`WIDTH`] once its `{…}` are replaced.
const HEAD: &str = r#"# tether.toml: settings for tether, written by `tether init`.
#> The environment overrides this file ({overrides}), and TETHER_CONFIG can name another file. API keys never live here: name their variables instead.

# The plan file with goals, subtasks and the log; a path relative to the workspace root.
plan = "plan.md"

# The built-in agent's model (optional): uncomment for executor kind "builtin".
# [model]
# Wire protocol: openai-chat | openai-responses | anthropic.
# api = "openai-chat"
# Endpoint base URL, http:// or https:// (a local llama.cpp, vLLM or ollama server works).
# base_url = "http://127.0.0.1:8080/v1"
# The model's name as the endpoint knows it (not empty).
# model = "qwen3-coder"
# The NAME of the environment variable holding the key; omit it for keyless local servers.
# api_key_env = "OPENAI_API_KEY"
# US dollars per million tokens, for cost budgets and reports: fresh input, prompt cache reads
# and writes, output (cache_read and cache_write default to input; cached still means
# cache_read).
# price_per_mtok = { input = 3.0, cache_read = 0.3, cache_write = 3.75, output = 15.0 }

# Plan mode's model (optional): any [model] key given here overrides [model]'s when
# `tether plan new` drafts goals (`tether plan new --model` overrides the name once).
# [planning]
# Wire protocol: openai-chat | openai-responses | anthropic.
# api = "openai-chat"
# Endpoint base URL, http:// or https://.
# base_url = "http://127.0.0.1:8080/v1"
# The model's name as the endpoint knows it (not empty).
# model = "qwen3-coder-plus"
# The NAME of the environment variable holding the key.
# api_key_env = "OPENAI_API_KEY"
# US dollars per million tokens (cache_read and cache_write default to input).
# price_per_mtok = { input = 3.0, output = 15.0 }

# The sign-off judge (optional): an independent model that checks a goal is really done.
# [judge]
# Wire protocol: openai-chat | openai-responses | anthropic.
# api = "anthropic"
# Endpoint base URL, http:// or https://.
# base_url = "https://api.anthropic.com"
# The model's name as the endpoint knows it (not empty).
# model = "claude-opus-4-5"
# The NAME of the environment variable holding the key; omit it for keyless local servers.
# api_key_env = "ANTHROPIC_API_KEY"
# US dollars per million tokens, for cost budgets and reports: fresh input, prompt cache reads
# and writes, output (cache_read and cache_write default to input; cached still means
# cache_read).
# price_per_mtok = { input = 5.0, cache_read = 0.5, cache_write = 6.25, output = 25.0 }
# true | false: true allows the judge to be the executor's own model (default false).
# same_model = false
# Seconds one judge call may take: 1..86400.
# timeout_secs = 600
# How a panel decides: all (one reject rejects; the default) | majority (more than half accept).
# agree = "all"
# More judges, asked in turn after this one, each with the keys above but agree and panel
# (usually written as [[judge.panel]] tables); judges of other vendors make the best panel.
# panel = [{ api = "openai-chat", base_url = "http://127.0.0.1:8081/v1", model = "qwen3" }]

# The loop judge (optional): a small, cheap model that reads each iteration's final message
# and asks a person when the agent is stuck. It fails open and never signs a goal off.
# [loop_judge]
# Wire protocol: openai-chat | openai-responses | anthropic.
# api = "openai-chat"
# Endpoint base URL, http:// or https://.
# base_url = "http://127.0.0.1:8080/v1"
# The model's name as the endpoint knows it (not empty).
# model = "qwen3-4b"
# The NAME of the environment variable holding the key; omit it for keyless local servers.
# api_key_env = "OPENAI_API_KEY"
# US dollars per million tokens (cache_read and cache_write default to input).
# price_per_mtok = { input = 0.1, output = 0.4 }
# Seconds one call may take: 1..86400.
# timeout_secs = 60

# The model answering side questions (optional): `tether side` and the dashboard's "Ask about
# this run" answer a question about a run with it, reading the repository; absent = [model].
# [side]
# Wire protocol: openai-chat | openai-responses | anthropic.
# api = "openai-chat"
# Endpoint base URL, http:// or https://.
# base_url = "http://127.0.0.1:8080/v1"
# The model's name as the endpoint knows it (not empty).
# model = "qwen3-coder"
# The NAME of the environment variable holding the key; omit it for keyless local servers.
# api_key_env = "OPENAI_API_KEY"
# US dollars per million tokens (cache_read and cache_write default to input).
# price_per_mtok = { input = 0.1, output = 0.4 }

[loop]
# Iteration budget of a run: 0..20000, where 0 = unlimited (ask for it explicitly).
max_iterations = 20
# Tokens the run may use, agent and judges together (e.g. "400k", "2M"); absent = unlimited.
# max_tokens = "2M"
# US dollars the run may spend (needs price_per_mtok, or an agent CLI that reports cost).
# max_cost_usd = 20
# Running time of the run (e.g. "90m", "8h"), not counting pauses and waits for answers.
# max_duration = "8h"
# Rejections of one goal in a row before a person is asked how to go on: 0 (never) ..1000.
escalate_after_rejects = 3
# Iterations in a row with no tool call and no file change that pause the run: 1..100.
spin_guard = 2
# Identical failing verify outputs in a row before the agent is nudged to ask: 2..100.
oscillation_repeats = 3
# Iterations that change files but not the plan before the upkeep reminder: 1..100.
reminder_after = 3
# Reminders to sign off a fully ticked goal before the run pauses for a human: 1..100.
clean_end_reminders = 2
# Seconds a goal's verify command may run: 1..86400.
verify_timeout_secs = 600
# Failed agent iterations in a row that stop a Ralph loop: 1..100.
max_consecutive_failures = 3
# What the agent keeps between the iterations of a goal run: "fresh" (every iteration a new
# context: the prompt, the plan and the repository) or "continue" (it continues its session,
# told only what is new: nothing read twice, but the context grows with every iteration).
context = "fresh"

[human]
# Who you are in the records of your acts (approvals, answers typed here, sign-offs by hand);
# absent: git's user.name, else $USER.
# name = "Ana Lima"
# Interaction threshold: 0 (never ask) .. 5 (confirm everything); goals can override it.
threshold = 2
#> Where questions are offered, first answer wins. The terminal (when tether runs in one) and the CLI (`tether questions`, `tether answer`) and the dashboard are always on{channels}.
channels = ["terminal", "cli"]
# Seconds to wait for an answer: 1..2592000; absent = wait forever.
# timeout_secs = 14400
# The answer the agent gets when the wait times out (only with timeout_secs; not empty).
# on_timeout = "Proceed with your best judgement and note the assumption in the plan log."
# Command prefixes that need a human's yes before they run, e.g. ["git push"].
ask_before = []
# Remind the channels of a question still waiting after this long ("30m", "2h"); absent = never.
# remind_after = "30m"
# Offer a question still waiting on escalate_to too after this long; absent = never.
# escalate_after = "2h"
#> The sinks a question is escalated to: {sinks} (each built from its table, used only then).
# escalate_to = {escalate_to}

# What a run tells its channels unprompted, in the same places its questions go.
[notify]
# Any of "done" | "paused" | "failed" | "signed_off" | "rejected" | "schedule_paused" |
# "overdue" (the last two are a schedule's: `tether schedule`).
on = ["done", "paused", "schedule_paused", "overdue"]
# A desktop notification for the terminal user too (where a notification service runs).
desktop = true
# Rejected sign-offs of one goal in a row that make a "rejected" notice: 1..100.
rejected_after = 3"#;

/// The core tables' text from `[executor]` on (`#> ` as in [`HEAD`]).
const TAIL: &str = r#"[executor]
#> Who does the work: "builtin" (tether's own agent on [model]){agents} | "command" (any program) | "acp" (any agent speaking the Agent Client Protocol: program and args name it, e.g. program = "claude-agent-acp").
kind = "builtin"
# Only for kind = "command", and required then: the program and its arguments.
# command = ["my-agent", "--print"]
#> Only for an agent CLI ({agent_kinds}): the program (default: its name on PATH; required for acp).
# program = "claude"
# Only for an agent CLI: extra arguments, after tether's own.
# args = ["--model", "sonnet"]
# Only for an agent CLI: extra environment variables (for pi, PI_CODING_AGENT_DIR names your
# own pi directory, default ~/.pi/agent).
# env = { ANTHROPIC_MODEL = "sonnet" }
# Only for an agent CLI: how long one turn may take, in seconds (default 86400).
# turn_timeout_secs = 86400
# Only for kind = "acp": who decides the agent's permission requests: "ask_before" (a person,
# for commands matching ask_before; the rest allowed) | "allow" | "ask_all" (a person, for
# every call that changes something).
# permissions = "ask_before"
# When the agent hits a usage or rate limit: "wait" (until it resets, or with backoff, then
# run the same iteration again) | "stop" (pause the run; `tether resume` continues it).
on_usage_limit = "wait"
# The longest to wait out usage limits in a row, in seconds (60..2592000); then the run pauses.
max_usage_wait_secs = 86400
# The first wait, in seconds (1..3600), when the agent did not say when the limit resets; it
# doubles with each limit in a row, up to half an hour.
usage_backoff_secs = 60

[server]
# The dashboard every `tether run` and `tether ralph` serves (and `tether serve`'s default): an IP
# address and port; port 0 picks a free one. The URL, with its token, is printed at start.
# listen = "127.0.0.1:0"

[store]
# Team mode: keep runs, questions and verdicts in a PostgreSQL database that several machines
# share (one dashboard, one place to answer), instead of .tether/tether.db. No password here:
# PGPASSWORD or ~/.pgpass. TETHER_STORE_URL overrides it.
# url = "postgres://tether@db.example:5432/tether"

[sandbox]
# Every command the agent runs (the built-in agent's shell, an agent CLI as a whole, the verify
# commands) runs in a sandbox: it reads the system, toolchains and the workspace, writes only the
# working tree and a private temp directory, cannot touch .git or tether's state, cannot signal
# tether. "enforce" (a kernel that cannot enforce it all stops the run, saying what is missing)
# | "off" (no sandbox; a warning on every run).
mode = "enforce"
# Whether the built-in agent's shell and the verify commands may reach the network (an agent
# CLI always may: it needs its model's API). A goal can also ask for it.
network = false
# More trees (or files) the sandbox may write; absolute or under ~/. Not a tree holding keys:
# ~/.cargo whole holds your crates.io token (credentials.toml), its caches do not.
# writable = ["~/.cargo/registry", "~/.cargo/git"]
# More trees the sandbox may read; absolute or under ~/.
# readable = ["~/.config/gh"]
# More environment variables children get, by name (keys are never passed on).
# env = ["JAVA_HOME"]

[run]
# Every `tether run` / `tether ralph` works in a git worktree of its own on a branch
# tether/<run-id>, outside your checkout (as with --worktree).
worktree = false
# Whether your git hooks run for the commit tether makes per signed-off goal.
commit_hooks = false
# How many goals of the plan `tether run` works on at once (--parallel), each in a worktree
# of its own on a branch cut from tether/<run-id>; a goal starts once the goals in its
# `after:` are merged. 1: one after another.
parallel = 1
# How many times a goal's merge back may conflict before a person is asked; the goal's agent
# settles each conflict before that, on its branch with the run's merged in. 1: ask at once.
merge_attempts = 3

[schedule]
# How `tether schedule run` keeps goals on a schedule (`tether schedule add`). A fire whose run
# does not end done is a failure; after this many in a row the schedule pauses itself and a
# notice says so, with `tether schedule resume <name>`. 0: never pause.
pause_after_failures = 3
# How long past its due time a schedule that has not fired is overdue, in seconds: a notice
# says so, once per overdue spell.
overdue_grace_secs = 300
# How often the scheduler looks at the schedules at the most, in seconds (it also wakes when
# one is due).
poll_secs = 10
"#;

impl Schema {
    /// The `tether.toml` written by `tether init`: every table and key tether acts on, in the
    /// schema's order, each with its description; settings that are absent by default are
    /// commented out.
    pub fn template(&self) -> String {
        let mut out = String::new();
        self.lines(HEAD, &mut out);
        for table in self.declared() {
            out.push('\n');
            declared(table, &mut out);
        }
        out.push('\n');
        self.lines(TAIL, &mut out);
        out
    }

    /// `text`'s lines, each `#> ` comment filled, every `{…}` replaced.
    fn lines(&self, text: &str, out: &mut String) {
        for line in text.lines() {
            match line.strip_prefix("#> ") {
                Some(comment) => fill(&self.filled(comment), out),
                None => {
                    out.push_str(&self.filled(line));
                    out.push('\n');
                }
            }
        }
    }

    /// `text` with its `{…}` replaced by what the schema says.
    fn filled(&self, text: &str) -> String {
        text.replace("{overrides}", &self.overrides().join(", "))
            .replace("{channels}", &self.channel_clause())
            .replace("{sinks}", &self.sinks_listed())
            .replace("{escalate_to}", &self.escalation_example())
            .replace("{agents}", &self.agents_described())
            .replace("{agent_kinds}", &self.agent_kinds())
    }

    /// ` | "claude" (Claude Code, …) | …`: each agent CLI with what the template says of it.
    fn agents_described(&self) -> String {
        self.agents()
            .iter()
            .map(|agent| format!(" | {:?} ({})", agent.kind, agent.about))
            .collect()
    }

    /// `claude, codex, pi, acp`: the kinds that are agent CLIs.
    fn agent_kinds(&self) -> String {
        let kinds: Vec<&str> = self
            .executor_kinds()
            .into_iter()
            .filter(|(_, kind)| kind.is_agent_cli())
            .map(|(name, _)| name)
            .collect();
        kinds.join(", ")
    }

    /// Every variable that overrides a setting, in the template's order.
    fn overrides(&self) -> Vec<&'static str> {
        let declared = self
            .declared()
            .iter()
            .flat_map(|table| table.keys.iter().filter_map(|key| key.env));
        declared.chain([STORE_URL_VAR]).collect()
    }

    /// What `human.channels` may add to tether's own channels: `; add "a" or "b", or the notice
    /// sinks "c", "d"` (empty when nothing is declared).
    fn channel_clause(&self) -> String {
        let quoted = |role: fn(&Role) -> bool| -> Vec<String> {
            self.declared()
                .iter()
                .filter(|t| role(&t.role))
                .map(|t| format!("{:?}", t.name))
                .collect()
        };
        let chats = quoted(|r| matches!(r, Role::Channel));
        let sinks = quoted(|r| matches!(r, Role::Sink { .. }));
        match (chats.is_empty(), sinks.is_empty()) {
            (true, true) => String::new(),
            (false, true) => format!("; add {}", or_list(&chats)),
            (true, false) => format!("; add the notice sinks {}", sinks.join(", ")),
            (false, false) => format!(
                "; add {}, or the notice sinks {}",
                or_list(&chats),
                sinks.join(", ")
            ),
        }
    }

    /// The spellings `human.escalate_to` takes, for the template.
    fn sinks_listed(&self) -> String {
        match self.escalation_spellings() {
            spellings if spellings.is_empty() => "none (no notice sink is declared)".to_owned(),
            spellings => spellings.join(", "),
        }
    }

    /// An example of `human.escalate_to`: each sink taking an argument, with its example.
    fn escalation_example(&self) -> String {
        let examples: Vec<String> = self
            .sinks()
            .iter()
            .filter_map(|sink| match sink.role {
                Role::Sink { arg: Some(arg) } => Some(format!("\"{}:{}\"", sink.name, arg.example)),
                _ => None,
            })
            .collect();
        format!("[{}]", examples.join(", "))
    }
}

/// `"a", "b" or "c"`.
pub(crate) fn or_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

/// `text` as comment lines of at most [`WIDTH`] characters, words kept whole.
fn fill(text: &str, out: &mut String) {
    let mut line = String::from("#");
    for word in text.split(' ') {
        if line.len() > 1 && line.chars().count() + 1 + word.chars().count() > WIDTH {
            out.push_str(&line);
            out.push('\n');
            line = String::from("#");
        }
        line.push(' ');
        line.push_str(word);
    }
    out.push_str(&line);
    out.push('\n');
}

/// A declared table's paragraph: its introduction, its header, each key's description and line.
fn declared(table: &TableDecl, out: &mut String) {
    comment(table.intro, out);
    out.push_str(&format!("[{}]\n", table.name));
    for key in table.keys {
        setting(key, out);
    }
}

fn setting(key: &KeyDecl, out: &mut String) {
    comment(key.doc, out);
    let commented = if key.active { "" } else { "# " };
    out.push_str(&format!("{commented}{} = {}\n", key.name, key.example));
}

/// Each line of `text` as a comment.
fn comment(text: &str, out: &mut String) {
    for line in text.lines() {
        out.push_str("# ");
        out.push_str(line);
        out.push('\n');
    }
}

#[cfg(test)]
#[path = "template_tests.rs"]
mod tests;
