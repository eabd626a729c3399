//! What a run's model requests cost, counted one way for every loop from the requests the fake
//! server received (Anthropic's Messages API).
//!
//! A request's input is its tools, system prompt and message blocks, four characters to a
//! token. The prompt cache follows Anthropic's documented rules: a request's cacheable
//! prefixes end at its `cache_control` breakpoints (in the order tools, system, messages); the
//! longest prefix an earlier request wrote is read from the cache, the rest up to the request's
//! last breakpoint is written to it, and prefixes under 1024 tokens are not cached. Every run
//! takes minutes, well within the cache's five-minute lifetime, which each read renews.

use std::collections::HashSet;
use std::hash::{DefaultHasher, Hash, Hasher};

use serde_json::Value;

use super::goal_task::tokens;

/// The smallest prefix the cache keeps.
const MIN_CACHED: u64 = 1024;

/// US dollars per million tokens: a Sonnet-class model's list prices.
pub const PRICE: Price = Price {
    input: 3.0,
    cache_write: 3.75,
    cache_read: 0.30,
    output: 15.0,
};

/// Prices per million tokens.
pub struct Price {
    pub input: f64,
    pub cache_write: f64,
    pub cache_read: f64,
    pub output: f64,
}

/// Tokens of a set of requests.
#[derive(Debug, Default, Clone, Copy)]
pub struct Tally {
    pub calls: u64,
    /// All input, cache reads and writes included.
    pub input: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    pub output: u64,
}

impl Tally {
    /// Input and output tokens.
    pub fn tokens(&self) -> u64 {
        self.input + self.output
    }

    /// US dollars at [`PRICE`].
    #[allow(clippy::cast_precision_loss)]
    pub fn dollars(&self) -> f64 {
        let fresh = self.input - self.cache_read - self.cache_write;
        (fresh as f64 * PRICE.input
            + self.cache_write as f64 * PRICE.cache_write
            + self.cache_read as f64 * PRICE.cache_read
            + self.output as f64 * PRICE.output)
            / 1e6
    }

    pub fn add(&mut self, other: &Tally) {
        self.calls += other.calls;
        self.input += other.input;
        self.cache_read += other.cache_read;
        self.cache_write += other.cache_write;
        self.output += other.output;
    }
}

/// One provider's prompt cache, fed the requests in the order they arrived.
#[derive(Default)]
pub struct Cache {
    written: HashSet<u64>,
}

impl Cache {
    /// The input tokens of `body` and what the cache served and kept of them.
    pub fn request(&mut self, body: &Value) -> Tally {
        let blocks = blocks(body);
        let mut hasher = DefaultHasher::new();
        let mut chars = 0usize;
        let mut prefixes = Vec::with_capacity(blocks.len());
        for (text, breakpoint) in &blocks {
            text.hash(&mut hasher);
            chars += text.len();
            prefixes.push((hasher.finish(), tokens(chars), *breakpoint));
        }
        let input = prefixes.last().map_or(0, |p| p.1);
        let last_breakpoint = prefixes.iter().rposition(|p| p.2);
        let mut tally = Tally {
            calls: 1,
            input,
            ..Tally::default()
        };
        let Some(last) = last_breakpoint else {
            return tally;
        };
        tally.cache_read = prefixes[..=last]
            .iter()
            .rev()
            .find(|p| self.written.contains(&p.0))
            .map_or(0, |p| p.1);
        let end = prefixes[last].1;
        if end >= MIN_CACHED {
            tally.cache_write = end - tally.cache_read;
        }
        for (hash, size, breakpoint) in &prefixes[..=last] {
            if *breakpoint && *size >= MIN_CACHED {
                self.written.insert(*hash);
            }
        }
        tally
    }
}

/// A request's blocks in cache order, each serialised as the cache sees it, with whether it
/// carries a breakpoint: the marker itself is not part of the cached text, and a message whose
/// content is a string is one text block.
fn blocks(body: &Value) -> Vec<(String, bool)> {
    let mut out: Vec<(String, bool)> = Vec::new();
    let push = |out: &mut Vec<(String, bool)>, v: &Value| {
        let breakpoint = v.get("cache_control").is_some();
        let mut v = match v {
            Value::String(text) => serde_json::json!({"type": "text", "text": text}),
            other => other.clone(),
        };
        if let Some(block) = v.as_object_mut() {
            block.remove("cache_control");
        }
        out.push((v.to_string(), breakpoint));
    };
    for tool in body["tools"].as_array().into_iter().flatten() {
        push(&mut out, tool);
    }
    match &body["system"] {
        Value::Array(parts) => parts.iter().for_each(|p| push(&mut out, p)),
        Value::Null => {}
        other => push(&mut out, other),
    }
    for message in body["messages"].as_array().into_iter().flatten() {
        push(
            &mut out,
            &Value::from(format!("role: {}", message["role"].as_str().unwrap_or(""))),
        );
        match &message["content"] {
            Value::Array(parts) => parts.iter().for_each(|p| push(&mut out, p)),
            other => push(&mut out, other),
        }
    }
    out
}
