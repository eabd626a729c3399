//! What an ACP agent asks before a tool call (`session/request_permission`), in tether's terms,
//! and who decides: the [`PermissionDesk`] the executor is given (the run's `ask_before` rules
//! and the human desk, in the loop crate). The executor only translates: the agent's tool call
//! and its own options in, the chosen option (or a refusal with its reason) out.

use std::path::PathBuf;

use agent_client_protocol::v1::schema::{
    PermissionOption, PermissionOptionKind, RequestPermissionRequest, ToolKind,
};
use futures_util::future::BoxFuture;
use serde::Serialize;
use tokio_util::sync::CancellationToken;

/// How many characters of a tool call's input are shown to a person.
const SHOWN_INPUT_CHARS: usize = 600;

/// What kind of option the agent offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChoiceKind {
    /// Allow this call.
    AllowOnce,
    /// Allow this call and others like it.
    AllowAlways,
    /// Refuse this call.
    RejectOnce,
    /// Refuse this call and others like it.
    RejectAlways,
}

impl ChoiceKind {
    /// Whether the option lets the call run.
    pub fn allows(self) -> bool {
        matches!(self, ChoiceKind::AllowOnce | ChoiceKind::AllowAlways)
    }
}

/// One of the agent's options ("Allow once", "Reject", …).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Choice {
    /// The agent's id for it.
    pub id: String,
    /// Its label for people.
    pub label: String,
    /// What it does.
    pub kind: ChoiceKind,
}

/// A tool call the agent wants to make, held until it is decided.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PermissionAsk {
    /// The agent's title for the call (for a shell command, usually the command).
    pub title: String,
    /// The kind of tool (`execute`, `edit`, `read`, `delete`, `move`, `fetch`, `other`, …).
    pub kind: String,
    /// The shell command, when the call runs one.
    pub command: Option<String>,
    /// The files it names.
    pub paths: Vec<PathBuf>,
    /// Its input as the agent gave it (JSON, shortened).
    pub input: Option<String>,
    /// The agent's options, in its order.
    pub choices: Vec<Choice>,
    /// Whether the call is one of tether's own MCP tools (`ask_human`, `complete_goal`, …),
    /// whose effects tether itself governs.
    pub tether_tool: bool,
}

impl PermissionAsk {
    /// Whether the call only looks (reads, searches, fetches, thinks): it changes nothing.
    pub fn only_reads(&self) -> bool {
        matches!(self.kind.as_str(), "read" | "search" | "think" | "fetch")
    }

    /// The first option of `kind`, if the agent offers one.
    pub fn option(&self, kind: ChoiceKind) -> Option<&Choice> {
        self.choices.iter().find(|c| c.kind == kind)
    }

    /// What the agent is asking, in one line for a person.
    pub fn describe(&self) -> String {
        match &self.command {
            Some(command) => format!("run `{}`", super::one_line(command, SHOWN_INPUT_CHARS)),
            None => super::one_line(&self.title, SHOWN_INPUT_CHARS),
        }
    }
}

/// What was decided about a tool call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PermissionVerdict {
    /// One of the agent's options (by id), chosen by `by` (`tether` for a rule, or the
    /// person who answered).
    Chose {
        /// The option's id.
        option: String,
        /// Who chose it.
        by: String,
    },
    /// Refused without a choice of the agent's (no one could be asked, the call reaches outside
    /// the workspace, the turn was cancelled): the executor picks the agent's reject option and
    /// tells the agent why in its next prompt.
    Refused {
        /// Why, for the agent and the journal.
        reason: String,
        /// Who refused.
        by: String,
    },
}

impl PermissionVerdict {
    /// The narrowest allow the agent offers for `ask` (once before always), chosen by `by`;
    /// refused when it offers none.
    pub fn allow(ask: &PermissionAsk, by: &str) -> Self {
        match ask
            .option(ChoiceKind::AllowOnce)
            .or_else(|| ask.option(ChoiceKind::AllowAlways))
        {
            Some(choice) => PermissionVerdict::Chose {
                option: choice.id.clone(),
                by: by.to_owned(),
            },
            None => PermissionVerdict::Refused {
                reason: format!("{} offered no option that allows it", ask.describe()),
                by: by.to_owned(),
            },
        }
    }
}

/// Decides the agent's permission requests.
pub trait PermissionDesk: Send + Sync {
    /// Decides `ask`; `cancel` fires when the turn is cancelled (a question put to a person is
    /// then withdrawn and the call refused).
    fn decide<'a>(
        &'a self,
        ask: &'a PermissionAsk,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, PermissionVerdict>;
}

/// Refuses every request without asking (an agent started only to check that it runs).
#[derive(Debug, Clone, Copy, Default)]
pub struct RefuseAll;

impl PermissionDesk for RefuseAll {
    fn decide<'a>(
        &'a self,
        _ask: &'a PermissionAsk,
        _cancel: CancellationToken,
    ) -> BoxFuture<'a, PermissionVerdict> {
        Box::pin(async {
            PermissionVerdict::Refused {
                reason: "nobody decides permissions here".into(),
                by: "tether".into(),
            }
        })
    }
}

/// Allows what only reads, refuses the rest without asking: the desk of plan mode's drafting
/// turns, which may only read the workspace (tether's own tools, the plan's among them, the
/// executor allows before any desk is asked).
#[derive(Debug, Clone, Copy, Default)]
pub struct AllowReads;

impl PermissionDesk for AllowReads {
    fn decide<'a>(
        &'a self,
        ask: &'a PermissionAsk,
        _cancel: CancellationToken,
    ) -> BoxFuture<'a, PermissionVerdict> {
        Box::pin(async move {
            if ask.only_reads() {
                PermissionVerdict::allow(ask, "tether")
            } else {
                PermissionVerdict::Refused {
                    reason: format!(
                        "{} is not a read, and this turn may only read",
                        ask.describe()
                    ),
                    by: "tether".into(),
                }
            }
        })
    }
}

/// Reads an ACP permission request.
pub(crate) fn ask_of(request: &RequestPermissionRequest) -> PermissionAsk {
    let fields = &request.tool_call.fields;
    let title = fields.title.clone().unwrap_or_else(|| "a tool call".into());
    let kind = fields.kind.map_or("other", kind_name).to_owned();
    let raw = fields.raw_input.as_ref();
    let command = if kind == "execute" {
        raw.and_then(command_of).or_else(|| Some(title.clone()))
    } else {
        None
    };
    let mut paths: Vec<PathBuf> = fields
        .locations
        .iter()
        .flatten()
        .map(|l| l.path.clone())
        .collect();
    for key in ["file_path", "path", "notebook_path"] {
        if let Some(p) = raw.and_then(|r| r.get(key)).and_then(|v| v.as_str()) {
            paths.push(PathBuf::from(p));
        }
    }
    paths.dedup();
    let tether_tool = kind != "execute" && is_tether_tool(&title, raw);
    PermissionAsk {
        title,
        kind,
        command,
        paths,
        input: raw.map(|r| super::clip(&r.to_string(), SHOWN_INPUT_CHARS)),
        choices: request.options.iter().map(choice_of).collect(),
        tether_tool,
    }
}

/// tether's own MCP tools, as the agent calls them.
const TETHER_TOOLS: [&str; 6] = [
    "ask_human",
    "complete_goal",
    "cancel_goal",
    "plan_status",
    "write_plan",
    "edit_plan",
];

/// Whether a call names one of tether's own tools exactly: Claude's adapter titles it
/// `mcp__tether__<tool>`; Codex's asks to "Approve MCP tool call" with the server and tool in
/// its input.
fn is_tether_tool(title: &str, raw: Option<&serde_json::Value>) -> bool {
    let named = |tool: &str| TETHER_TOOLS.contains(&tool);
    if let Some(tool) = title.strip_prefix("mcp__tether__") {
        return named(tool);
    }
    if let Some(tool) = title.strip_prefix("Tool: tether/") {
        return named(tool);
    }
    let Some(raw) = raw else {
        return false;
    };
    let server = ["server_name", "serverName", "server"]
        .iter()
        .find_map(|k| raw.get(*k).and_then(|v| v.as_str()));
    let tool = ["tool_name", "toolName", "tool"]
        .iter()
        .find_map(|k| raw.get(*k).and_then(|v| v.as_str()));
    server == Some("tether") && tool.is_some_and(named)
}

fn choice_of(option: &PermissionOption) -> Choice {
    Choice {
        id: option.option_id.to_string(),
        label: option.name.clone(),
        kind: match option.kind {
            PermissionOptionKind::AllowAlways => ChoiceKind::AllowAlways,
            PermissionOptionKind::RejectOnce => ChoiceKind::RejectOnce,
            PermissionOptionKind::RejectAlways => ChoiceKind::RejectAlways,
            // A kind newer than this build: treated as the narrowest allow.
            _ => ChoiceKind::AllowOnce,
        },
    }
}

/// The command line of a shell tool's input: `{"command": "…"}` (Claude Code), or an argv
/// such as `["/bin/bash", "-lc", "…"]` (Codex), whose script is the command.
fn command_of(raw: &serde_json::Value) -> Option<String> {
    match raw.get("command")? {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Array(argv) => {
            let words: Vec<&str> = argv.iter().filter_map(|v| v.as_str()).collect();
            match words.as_slice() {
                [shell, flag, script]
                    if flag.starts_with('-') && flag.contains('c') && is_shell(shell) =>
                {
                    Some((*script).to_owned())
                }
                _ => Some(words.join(" ")),
            }
        }
        _ => None,
    }
}

fn is_shell(program: &str) -> bool {
    let name = program.rsplit('/').next().unwrap_or(program);
    matches!(name, "sh" | "bash" | "zsh" | "dash")
}

/// The protocol's name of a tool kind.
pub(crate) fn kind_name(kind: ToolKind) -> &'static str {
    match kind {
        ToolKind::Read => "read",
        ToolKind::Edit => "edit",
        ToolKind::Delete => "delete",
        ToolKind::Move => "move",
        ToolKind::Search => "search",
        ToolKind::Execute => "execute",
        ToolKind::Think => "think",
        ToolKind::Fetch => "fetch",
        ToolKind::SwitchMode => "switch_mode",
        _ => "other",
    }
}

#[cfg(test)]
#[path = "permission_tests.rs"]
mod tests;
