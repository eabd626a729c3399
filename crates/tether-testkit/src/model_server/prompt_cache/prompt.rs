//! A request as a prompt cache sees it: segments in prefix order, each with the structure that
//! identifies it (role, block type, ids) and the text that is counted, and breakpoints.

use std::hash::{DefaultHasher, Hasher as _};

use serde_json::{Map, Value};
use tether_config::Api;
use tether_model::{Message, Request};

/// Characters per token, as the fake server counts (see `Turn::usage_for`).
const CHARS_PER_TOKEN: u64 = 4;

/// Tokens in `chars` characters.
pub(crate) fn tokens(chars: u64) -> u64 {
    chars.div_ceil(CHARS_PER_TOKEN)
}

/// One block of a prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Segment {
    /// What identifies the block besides its text (not counted).
    pub(crate) header: String,
    /// Its counted text.
    pub(crate) text: String,
    /// Whether a cache breakpoint ends here (Anthropic's `cache_control`).
    pub(crate) breakpoint: bool,
}

impl Segment {
    fn new(header: impl Into<String>, text: impl Into<String>) -> Self {
        Self {
            header: header.into(),
            text: text.into(),
            breakpoint: false,
        }
    }
}

/// A prefix of a prompt: its length in tokens and the hash of its bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Prefix {
    pub(crate) tokens: u64,
    pub(crate) hash: u64,
}

/// A request's segments, in prefix order, and what keeps one cache's entries apart from
/// another's (the API and the model).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Prompt {
    pub(crate) scope: String,
    pub(crate) segments: Vec<Segment>,
}

impl Prompt {
    /// An Anthropic Messages body: tools, system blocks, then every message's blocks, with the
    /// blocks marked `cache_control` as breakpoints.
    pub(crate) fn anthropic(model: &str, body: &Value) -> Self {
        let mut segments: Vec<Segment> = list(body, "tools").map(tool_segment).collect();
        match body.get("system") {
            Some(Value::String(text)) => segments.push(Segment::new("system", text.as_str())),
            Some(Value::Array(blocks)) => {
                segments.extend(blocks.iter().map(|b| block_segment("system", b)));
            }
            _ => {}
        }
        for message in list(body, "messages") {
            let role = message.get("role").and_then(Value::as_str).unwrap_or("?");
            let opening = format!("message {role}");
            match message.get("content") {
                Some(Value::String(text)) => segments.push(Segment::new(opening, text.as_str())),
                Some(Value::Array(blocks)) => {
                    for (i, block) in blocks.iter().enumerate() {
                        let at = if i == 0 { opening.as_str() } else { role };
                        segments.push(block_segment(at, block));
                    }
                }
                _ => {}
            }
        }
        Self {
            scope: format!("anthropic {model}"),
            segments,
        }
    }

    /// An OpenAI request (Chat Completions or Responses), from its neutral form: tools, the
    /// system prompt, then one segment per message.
    pub(crate) fn openai(api: Api, model: &str, request: &Request) -> Self {
        let mut segments: Vec<Segment> = request
            .tools
            .iter()
            .map(|tool| Segment::new("tool", serde_json::to_string(tool).unwrap_or_default()))
            .collect();
        if let Some(system) = &request.system {
            segments.push(Segment::new("system", system.as_str()));
        }
        segments.extend(request.messages.iter().map(message_segment));
        Self {
            scope: format!("{api:?} {model}"),
            segments,
        }
    }

    /// The whole prompt's tokens (at least 1, as the server's estimate).
    pub(crate) fn total_tokens(&self) -> u64 {
        tokens(self.segments.iter().map(|s| chars(&s.text)).sum()).max(1)
    }

    /// The prefix ending with each segment, in order.
    pub(crate) fn ends(&self) -> Vec<Prefix> {
        let mut hasher = self.hasher();
        let mut fed = 0;
        self.segments
            .iter()
            .map(|segment| {
                open(&mut hasher, segment);
                hasher.write(segment.text.as_bytes());
                fed += chars(&segment.text);
                Prefix {
                    tokens: tokens(fed),
                    hash: hasher.finish(),
                }
            })
            .collect()
    }

    /// The prefixes of `first` tokens, then every `step` tokens more, as far as the prompt goes.
    pub(crate) fn steps(&self, first: u64, step: u64) -> Vec<Prefix> {
        let mut hasher = self.hasher();
        let mut out = Vec::new();
        let (mut fed, mut next) = (0, first * CHARS_PER_TOKEN);
        for segment in &self.segments {
            open(&mut hasher, segment);
            let mut rest = segment.text.as_str();
            while !rest.is_empty() {
                let room = usize::try_from(next - fed).unwrap_or(usize::MAX);
                let cut = rest
                    .char_indices()
                    .nth(room)
                    .map_or(rest.len(), |(at, _)| at);
                let (part, later) = rest.split_at(cut);
                hasher.write(part.as_bytes());
                fed += chars(part);
                rest = later;
                if fed == next {
                    out.push(Prefix {
                        tokens: next / CHARS_PER_TOKEN,
                        hash: hasher.finish(),
                    });
                    next += step * CHARS_PER_TOKEN;
                }
            }
        }
        out
    }

    fn hasher(&self) -> DefaultHasher {
        let mut hasher = DefaultHasher::new();
        hasher.write(self.scope.as_bytes());
        hasher
    }
}

/// Starts `segment` in a prefix's bytes: a separator and its header (never counted).
fn open(hasher: &mut DefaultHasher, segment: &Segment) {
    hasher.write(&[0xfe]);
    hasher.write(segment.header.as_bytes());
    hasher.write(&[0xff]);
}

fn chars(text: &str) -> u64 {
    u64::try_from(text.chars().count()).unwrap_or(u64::MAX)
}

fn list<'a>(body: &'a Value, key: &str) -> impl Iterator<Item = &'a Value> {
    body.get(key)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

/// A block without its cache mark, and whether it had one.
fn unmarked(block: &Value) -> (Map<String, Value>, bool) {
    let mut fields = block.as_object().cloned().unwrap_or_default();
    let marked = fields.remove("cache_control").is_some();
    (fields, marked)
}

/// A tool definition: counted whole (name, description, schema), as providers count it.
fn tool_segment(tool: &Value) -> Segment {
    let (fields, marked) = unmarked(tool);
    Segment {
        breakpoint: marked,
        ..Segment::new("tool", Value::Object(fields).to_string())
    }
}

/// A content block: its text (a text block's, a tool call's input, a tool result's content)
/// counted, everything else its header.
fn block_segment(at: &str, block: &Value) -> Segment {
    let (mut fields, marked) = unmarked(block);
    let text = match (
        fields.remove("text"),
        fields.remove("input"),
        fields.remove("content"),
    ) {
        (Some(Value::String(text)), ..) => text,
        (_, Some(input), _) => input.to_string(),
        (.., Some(Value::String(content))) => content,
        (.., Some(content)) => content.to_string(),
        _ => String::new(),
    };
    Segment {
        breakpoint: marked,
        ..Segment::new(format!("{at} {}", Value::Object(fields)), text)
    }
}

/// An OpenAI message: its role and ids as the header, its text and tool arguments counted.
fn message_segment(message: &Message) -> Segment {
    match message {
        Message::System { text } => Segment::new("message system", text.as_str()),
        Message::User { text } => Segment::new("message user", text.as_str()),
        Message::Assistant { text, tool_calls } => {
            let mut header = "message assistant".to_owned();
            let mut counted = text.clone();
            for call in tool_calls {
                header.push_str(&format!(" {} {}", call.id, call.name));
                counted.push_str(&call.raw_arguments);
            }
            Segment::new(header, counted)
        }
        Message::Tool {
            tool_call_id,
            content,
            is_error,
        } => Segment::new(
            format!("message tool {tool_call_id} {is_error}"),
            content.as_str(),
        ),
    }
}
