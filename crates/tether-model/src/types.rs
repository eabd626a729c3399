//! Provider-neutral conversation types.
//!
//! Executors, the judge and the scripted model all speak these; each wire module maps them to
//! and from its own JSON. They are serialisable so transcripts can be saved as they are.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tether_tools::ToolSpec;

/// Who wrote a [`Message`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Instructions from tether (in addition to [`Request::system`]).
    System,
    /// The user (tether's prompt, a human's answer).
    User,
    /// The model.
    Assistant,
    /// The result of a tool the model called.
    Tool,
}

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    /// Instructions; providers without mid-conversation system messages (Anthropic) get them
    /// appended to the top-level system prompt.
    System {
        /// The instructions.
        text: String,
    },
    /// A user turn.
    User {
        /// What the user said.
        text: String,
    },
    /// A model turn: text, tool calls, or both.
    Assistant {
        /// The model's text; empty when it only called tools.
        #[serde(default, skip_serializing_if = "String::is_empty")]
        text: String,
        /// The tools it called, in order.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
    },
    /// The result of one tool call, sent back to the model.
    Tool {
        /// The [`ToolCall::id`] this answers.
        tool_call_id: String,
        /// The result (or the error text) the model reads.
        content: String,
        /// Whether the tool failed. Only Anthropic carries this flag on the wire; for the OpenAI
        /// formats the content alone must say so.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
    },
}

impl Message {
    /// A system message.
    pub fn system(text: impl Into<String>) -> Self {
        Message::System { text: text.into() }
    }

    /// A user message.
    pub fn user(text: impl Into<String>) -> Self {
        Message::User { text: text.into() }
    }

    /// An assistant message with text only.
    pub fn assistant(text: impl Into<String>) -> Self {
        Message::Assistant {
            text: text.into(),
            tool_calls: Vec::new(),
        }
    }

    /// An assistant message that called tools (with optional text before the calls).
    pub fn assistant_tool_calls(text: impl Into<String>, tool_calls: Vec<ToolCall>) -> Self {
        Message::Assistant {
            text: text.into(),
            tool_calls,
        }
    }

    /// A successful tool result.
    pub fn tool_result(tool_call_id: impl Into<String>, content: impl Into<String>) -> Self {
        Message::Tool {
            tool_call_id: tool_call_id.into(),
            content: content.into(),
            is_error: false,
        }
    }

    /// A failed tool result: the model reads `content` as the error.
    pub fn tool_error(tool_call_id: impl Into<String>, content: impl Into<String>) -> Self {
        Message::Tool {
            tool_call_id: tool_call_id.into(),
            content: content.into(),
            is_error: true,
        }
    }

    /// This message's role.
    pub fn role(&self) -> Role {
        match self {
            Message::System { .. } => Role::System,
            Message::User { .. } => Role::User,
            Message::Assistant { .. } => Role::Assistant,
            Message::Tool { .. } => Role::Tool,
        }
    }
}

/// A tool call made by the model.
///
/// Models sometimes produce arguments that are not valid JSON. Such a call is still returned:
/// [`ToolCall::arguments`] is `null`, [`ToolCall::raw_arguments`] holds what the model wrote and
/// [`ToolCall::arguments_error`] says what is wrong, so the executor can tell the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The provider's id for this call; the tool result must carry it.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The parsed arguments (`{}` when the model sent none, `null` when they did not parse).
    pub arguments: Value,
    /// The arguments exactly as the model produced them.
    pub raw_arguments: String,
}

impl ToolCall {
    /// A call with well-formed arguments (used by scripts and tests).
    pub fn new(id: impl Into<String>, name: impl Into<String>, arguments: Value) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            raw_arguments: arguments.to_string(),
            arguments,
        }
    }

    /// A call from the raw argument text a model streamed; never fails.
    pub fn from_raw(
        id: impl Into<String>,
        name: impl Into<String>,
        raw: impl Into<String>,
    ) -> Self {
        let raw_arguments = raw.into();
        let arguments = if raw_arguments.trim().is_empty() {
            Value::Object(serde_json::Map::new())
        } else {
            serde_json::from_str(&raw_arguments).unwrap_or(Value::Null)
        };
        Self {
            id: id.into(),
            name: name.into(),
            arguments,
            raw_arguments,
        }
    }

    /// Why the raw arguments are not valid JSON, or `None` when they are.
    pub fn arguments_error(&self) -> Option<String> {
        if self.raw_arguments.trim().is_empty() {
            return None;
        }
        serde_json::from_str::<Value>(&self.raw_arguments)
            .err()
            .map(|err| format!("tool arguments are not valid JSON: {err}"))
    }
}

/// One model call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Request {
    /// The system prompt.
    pub system: Option<String>,
    /// The conversation so far.
    pub messages: Vec<Message>,
    /// The tools the model may call.
    pub tools: Vec<ToolSpec>,
    /// The most tokens the model may produce.
    pub max_tokens: u32,
    /// Sampling temperature; `None` leaves the provider's default.
    pub temperature: Option<f32>,
    /// Whether the conversation is marked for the provider's prompt cache (on Anthropic, a
    /// breakpoint on the newest message), so the conversation's next call reads it from the
    /// cache. True by default; false for a one-shot call that no later call extends, whose
    /// cache write would cost more than plain input. The system prompt and tools are marked
    /// either way. The OpenAI formats cache by prefix without marks.
    #[serde(default = "yes")]
    pub cache_conversation: bool,
}

fn yes() -> bool {
    true
}

impl Request {
    /// Default for [`Request::max_tokens`].
    pub const DEFAULT_MAX_TOKENS: u32 = 8192;

    /// A request with these messages, no system prompt, no tools and the default token limit.
    pub fn new(messages: Vec<Message>) -> Self {
        Self {
            system: None,
            messages,
            tools: Vec::new(),
            max_tokens: Self::DEFAULT_MAX_TOKENS,
            temperature: None,
            cache_conversation: true,
        }
    }

    /// Sets the system prompt.
    pub fn with_system(mut self, system: impl Into<String>) -> Self {
        self.system = Some(system.into());
        self
    }

    /// Sets the tools.
    pub fn with_tools(mut self, tools: Vec<ToolSpec>) -> Self {
        self.tools = tools;
        self
    }

    /// Sets whether the conversation is marked for the prompt cache (see
    /// [`Request::cache_conversation`]).
    pub fn with_conversation_cache(mut self, cache: bool) -> Self {
        self.cache_conversation = cache;
        self
    }

    /// The name of the tool whose call had this id, looked up in the assistant messages.
    pub fn tool_name_for(&self, tool_call_id: &str) -> Option<&str> {
        self.messages
            .iter()
            .rev()
            .find_map(|message| match message {
                Message::Assistant { tool_calls, .. } => tool_calls
                    .iter()
                    .find(|call| call.id == tool_call_id)
                    .map(|call| call.name.as_str()),
                _ => None,
            })
    }

    /// When the last message is a tool result: the tool's name (if known) and the result.
    ///
    /// Handy in scripts: "if the last message is the answer to `ask_human`, …".
    pub fn last_tool_result(&self) -> Option<(Option<&str>, &str)> {
        match self.messages.last()? {
            Message::Tool {
                tool_call_id,
                content,
                ..
            } => Some((self.tool_name_for(tool_call_id), content.as_str())),
            _ => None,
        }
    }

    /// The text of the last user message, if any.
    pub fn last_user_text(&self) -> Option<&str> {
        self.messages
            .iter()
            .rev()
            .find_map(|message| match message {
                Message::User { text } => Some(text.as_str()),
                _ => None,
            })
    }
}

/// Tokens used by one response.
///
/// Input is counted whole, as providers bill it in three parts: fresh input, input read from
/// the provider's prompt cache and input written to it (Anthropic reports the writes; the
/// OpenAI formats cache without being asked and report only the reads).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens, cache reads and writes included.
    pub input_tokens: u64,
    /// Of `input_tokens`, those read from the provider's prompt cache (billed cheaper).
    #[serde(default)]
    pub cached_input_tokens: u64,
    /// Of `input_tokens`, those written to the provider's prompt cache (billed dearer).
    #[serde(default)]
    pub cache_write_input_tokens: u64,
    /// Generated tokens.
    pub output_tokens: u64,
}

impl Usage {
    /// Both counts together.
    pub fn total(&self) -> u64 {
        self.input_tokens.saturating_add(self.output_tokens)
    }

    /// The counts as a [`tether_config::Price`] takes them.
    pub fn counts(&self) -> tether_config::TokenCounts {
        tether_config::TokenCounts {
            input: self.input_tokens,
            cache_read: self.cached_input_tokens,
            cache_write: self.cache_write_input_tokens,
            output: self.output_tokens,
        }
    }
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, other: Usage) {
        self.input_tokens = self.input_tokens.saturating_add(other.input_tokens);
        self.cached_input_tokens = self
            .cached_input_tokens
            .saturating_add(other.cached_input_tokens);
        self.cache_write_input_tokens = self
            .cache_write_input_tokens
            .saturating_add(other.cache_write_input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(other.output_tokens);
    }
}

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// It finished its turn.
    EndTurn,
    /// It wants tool results.
    ToolUse,
    /// It hit [`Request::max_tokens`]; the text is truncated.
    MaxTokens,
    /// The provider filtered the output.
    ContentFilter,
    /// A reason this crate does not know, as the provider spelled it.
    Other(String),
}

/// A complete model answer, as collected by [`crate::ModelClient::complete`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Response {
    /// All text the model produced, concatenated.
    pub text: String,
    /// The tools it called, in order.
    pub tool_calls: Vec<ToolCall>,
    /// Tokens used (zeros when the endpoint reported none).
    pub usage: Usage,
    /// Why it stopped.
    pub stop_reason: StopReason,
}

impl Response {
    /// This response as the assistant message to append to the conversation.
    pub fn to_message(&self) -> Message {
        Message::Assistant {
            text: self.text.clone(),
            tool_calls: self.tool_calls.clone(),
        }
    }
}

/// One piece of a streamed answer.
///
/// A well-formed stream is: any mix of text deltas and tool calls (each tool call is `Started`,
/// zero or more `ArgumentsDelta`, then `Finished`, with `index` counting calls from 0), then
/// exactly one [`StreamEvent::Usage`], then exactly one [`StreamEvent::Done`], then the end.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    /// More text.
    TextDelta(String),
    /// The model began a tool call.
    ToolCallStarted {
        /// The call's position among this response's calls.
        index: usize,
        /// The provider's id for the call.
        id: String,
        /// The tool's name.
        name: String,
    },
    /// More of a tool call's raw argument text.
    ToolCallArgumentsDelta {
        /// The call's position among this response's calls.
        index: usize,
        /// The next fragment of the raw arguments.
        delta: String,
    },
    /// A tool call is complete.
    ToolCallFinished {
        /// The call's position among this response's calls.
        index: usize,
        /// The whole call.
        call: ToolCall,
    },
    /// Tokens used by this response (sent once, before [`StreamEvent::Done`]).
    Usage(Usage),
    /// The response is complete.
    Done {
        /// Why the model stopped.
        stop_reason: StopReason,
    },
}
