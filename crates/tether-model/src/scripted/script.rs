//! Scripts: what a scripted model answers, turn by turn or as a function of the request.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;

use crate::{Message, Request, StopReason, ToolSpec, Usage};

/// One scripted answer: optional text, then zero or more tool calls.
#[derive(Debug, Clone, PartialEq)]
pub struct Turn {
    /// The answer's text.
    pub text: Option<String>,
    /// Tool calls as `(name, arguments)`. A name is matched against the request's tools (see
    /// [`resolve_tool_name`]), so `"ask_human"` reaches a tool offered as
    /// `mcp__tether__ask_human`.
    pub tool_calls: Vec<(String, Value)>,
    /// The usage to report; `None` reports an estimate (see [`Turn::usage_for`]).
    pub usage: Option<Usage>,
}

impl Turn {
    /// A text-only answer.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            text: Some(text.into()),
            tool_calls: Vec::new(),
            usage: None,
        }
    }

    /// An answer that calls one tool.
    pub fn tool(name: impl Into<String>, arguments: Value) -> Self {
        Self {
            text: None,
            tool_calls: vec![(name.into(), arguments)],
            usage: None,
        }
    }

    /// Adds another tool call.
    pub fn and_tool(mut self, name: impl Into<String>, arguments: Value) -> Self {
        self.tool_calls.push((name.into(), arguments));
        self
    }

    /// Sets the text (said before the tool calls).
    pub fn with_text(mut self, text: impl Into<String>) -> Self {
        self.text = Some(text.into());
        self
    }

    /// Reports exactly this usage.
    pub fn with_usage(mut self, input_tokens: u64, output_tokens: u64) -> Self {
        self.usage = Some(Usage {
            input_tokens,
            output_tokens,
            ..Usage::default()
        });
        self
    }

    /// Reports exactly this usage: of the `input_tokens`, `cache_read` read from the prompt
    /// cache and `cache_write` written to it.
    pub fn with_cache_usage(
        mut self,
        input_tokens: u64,
        cache_read: u64,
        cache_write: u64,
        output_tokens: u64,
    ) -> Self {
        self.usage = Some(Usage {
            input_tokens,
            cached_input_tokens: cache_read,
            cache_write_input_tokens: cache_write,
            output_tokens,
        });
        self
    }

    /// [`StopReason::ToolUse`] when the turn calls tools, else [`StopReason::EndTurn`].
    pub fn stop_reason(&self) -> StopReason {
        if self.tool_calls.is_empty() {
            StopReason::EndTurn
        } else {
            StopReason::ToolUse
        }
    }

    /// The usage to report for this turn: the configured one, or an estimate of about four
    /// characters per token over the request's text and this turn's output (at least 1 each).
    pub fn usage_for(&self, request: &Request) -> Usage {
        if let Some(usage) = self.usage {
            return usage;
        }
        let mut input = request.system.as_ref().map_or(0, |s| s.chars().count());
        for message in &request.messages {
            input += match message {
                Message::System { text } | Message::User { text } => text.chars().count(),
                Message::Assistant { text, tool_calls } => {
                    text.chars().count()
                        + tool_calls
                            .iter()
                            .map(|call| call.raw_arguments.chars().count())
                            .sum::<usize>()
                }
                Message::Tool { content, .. } => content.chars().count(),
            };
        }
        let output = self.text.as_ref().map_or(0, |t| t.chars().count())
            + self
                .tool_calls
                .iter()
                .map(|(_, args)| args.to_string().chars().count())
                .sum::<usize>();
        let tokens = |chars: usize| u64::try_from(chars.div_ceil(4).max(1)).unwrap_or(u64::MAX);
        Usage {
            input_tokens: tokens(input),
            output_tokens: tokens(output),
            ..Usage::default()
        }
    }
}

/// The tool a scripted call names: the offered tool with exactly that name; else the one offered
/// tool whose name ends in `__<name>` (MCP tools are offered as `mcp__<server>__<tool>`); else,
/// for an MCP name `mcp__<server>__<tool>`, the tool offered as `<server>_<tool>` (opencode's
/// spelling), `mcp_<server>_<tool>` (Gemini CLI's) or `<server>-<tool>` (Copilot CLI's), and for a
/// bare name the one tool offered under either of the last two; else the name unchanged (a model
/// may call a tool that does not exist).
pub fn resolve_tool_name<'a>(name: &'a str, tools: &'a [ToolSpec]) -> &'a str {
    if tools.iter().any(|tool| tool.name == name) {
        return name;
    }
    if let Some((server, tool)) = name
        .strip_prefix("mcp__")
        .and_then(|rest| rest.split_once("__"))
        && let Some(offered) = tools
            .iter()
            .find(|offered| offered.name == format!("{server}_{tool}"))
    {
        return &offered.name;
    }
    let suffix = format!("__{name}");
    let mut matches = tools.iter().filter(|tool| tool.name.ends_with(&suffix));
    if let (Some(tool), None) = (matches.next(), matches.next()) {
        return &tool.name;
    }
    let (server, tool_name) = match name
        .strip_prefix("mcp__")
        .and_then(|rest| rest.split_once("__"))
    {
        Some((server, tool)) => (Some(server), tool),
        None => (None, name),
    };
    let mut matches = tools.iter().filter(|tool| {
        mcp_spelling(&tool.name)
            .is_some_and(|(s, t)| t == tool_name && server.is_none_or(|want| want == s))
    });
    match (matches.next(), matches.next()) {
        (Some(tool), None) => &tool.name,
        _ => name,
    }
}

/// The server and tool an offered name spells in Gemini CLI's way (`mcp_<server>_<tool>`) or
/// Copilot CLI's (`<server>-<tool>`).
fn mcp_spelling(offered: &str) -> Option<(&str, &str)> {
    match offered.strip_prefix("mcp_") {
        Some(rest) => rest.split_once('_'),
        None => offered.split_once('-'),
    }
}

/// Why a script had no turn.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScriptError {
    /// Every turn was used and no final turn was configured.
    #[error(
        "the script's {served} turn(s) are used up; add turns or a final one with Script::then_repeat"
    )]
    Exhausted {
        /// How many turns were served.
        served: usize,
    },
}

type TurnFn = Box<dyn FnMut(&Request) -> Turn + Send>;

enum Source {
    Turns {
        turns: VecDeque<Turn>,
        then: Option<Turn>,
    },
    Fn(TurnFn),
}

struct State {
    source: Source,
    served: usize,
}

/// What a scripted model answers: a list of turns consumed in order, or a function of the
/// request. Clones share one cursor, so a test can keep a clone to check [`Script::served`]
/// while a model or fake server uses another.
///
/// ```
/// use serde_json::json;
/// use tether_model::scripted::{Script, Turn};
/// use tether_model::{Message, Request};
///
/// let script = Script::turns([
///     Turn::tool("write", json!({"path": "a.txt", "content": "hi"})),
///     Turn::text("done"),
/// ]);
/// let request = Request::new(vec![Message::user("go")]);
/// assert_eq!(script.next_turn(&request)?.tool_calls[0].0, "write");
/// assert_eq!(script.next_turn(&request)?.text.as_deref(), Some("done"));
/// assert!(script.next_turn(&request).is_err());
///
/// let human = Script::from_fn(|request: &Request| match request.last_tool_result() {
///     Some((Some("ask_human"), _answer)) => Turn::text("Y"),
///     _ => Turn::tool("ask_human", json!({"question": "Proceed?"})),
/// });
/// assert_eq!(human.next_turn(&request)?.tool_calls[0].0, "ask_human");
/// # Ok::<(), tether_model::scripted::ScriptError>(())
/// ```
#[derive(Clone)]
pub struct Script {
    state: Arc<Mutex<State>>,
}

impl Script {
    /// Turns answered in order, one per request.
    pub fn turns(turns: impl IntoIterator<Item = Turn>) -> Self {
        Self::with_source(Source::Turns {
            turns: turns.into_iter().collect(),
            then: None,
        })
    }

    /// Answers computed from each request. The function may keep state (it is `FnMut`).
    pub fn from_fn(f: impl FnMut(&Request) -> Turn + Send + 'static) -> Self {
        Self::with_source(Source::Fn(Box::new(f)))
    }

    /// After the turns run out, answer every further request with `turn` instead of failing.
    /// (No effect on a [`Script::from_fn`] script.)
    pub fn then_repeat(self, turn: Turn) -> Self {
        if let Source::Turns { then, .. } = &mut self.lock().source {
            *then = Some(turn);
        }
        self
    }

    /// The answer to `request`, advancing the script.
    pub fn next_turn(&self, request: &Request) -> Result<Turn, ScriptError> {
        let mut state = self.lock();
        let turn = match &mut state.source {
            Source::Turns { turns, then } => match turns.pop_front().or_else(|| then.clone()) {
                Some(turn) => turn,
                None => {
                    return Err(ScriptError::Exhausted {
                        served: state.served,
                    });
                }
            },
            Source::Fn(f) => f(request),
        };
        state.served += 1;
        Ok(turn)
    }

    /// How many turns were served so far.
    pub fn served(&self) -> usize {
        self.lock().served
    }

    /// How many listed turns are left (`None` for a function script).
    pub fn remaining(&self) -> Option<usize> {
        match &self.lock().source {
            Source::Turns { turns, .. } => Some(turns.len()),
            Source::Fn(_) => None,
        }
    }

    fn with_source(source: Source) -> Self {
        Self {
            state: Arc::new(Mutex::new(State { source, served: 0 })),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl std::fmt::Debug for Script {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.lock();
        let kind = match &state.source {
            Source::Turns { turns, then } => format!(
                "turns(remaining: {}, then_repeat: {})",
                turns.len(),
                then.is_some()
            ),
            Source::Fn(_) => "from_fn".to_owned(),
        };
        f.debug_struct("Script")
            .field("source", &kind)
            .field("served", &state.served)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::resolve_tool_name;
    use crate::ToolSpec;

    fn offered(names: &[&str]) -> Vec<ToolSpec> {
        names
            .iter()
            .map(|n| ToolSpec::new(*n, "", json!({"type": "object"})))
            .collect()
    }

    #[test]
    fn an_mcp_name_reaches_each_agents_spelling_of_it() {
        let claude = offered(&["Bash", "mcp__tether__ask_human"]);
        let gemini = offered(&["write_file", "mcp_tether_ask_human"]);
        let copilot = offered(&["bash", "tether-ask_human"]);
        for tools in [&claude, &gemini, &copilot] {
            let want = &tools[1].name;
            assert_eq!(resolve_tool_name("mcp__tether__ask_human", tools), want);
            assert_eq!(resolve_tool_name("ask_human", tools), want);
        }
        assert_eq!(resolve_tool_name("write_file", &gemini), "write_file");
        // A name that is only the end of an offered tool's is not taken for it.
        assert_eq!(resolve_tool_name("human", &gemini), "human");
        assert_eq!(
            resolve_tool_name("mcp__other__ask_human", &copilot),
            "mcp__other__ask_human"
        );
    }
}
