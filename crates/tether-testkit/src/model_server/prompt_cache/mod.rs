//! The providers' prompt caches, simulated from their documented rules, so tests and
//! benchmarks can count what a client's requests would read from a cache and write to it.
//!
//! A request is seen as a [`Prompt`]: its segments in prefix order (tools, then the system
//! prompt, then the conversation), each counted as the server counts tokens, about four
//! characters to a token (the tools' definitions included, as providers count them). What the
//! cache remembers is a prefix's bytes (a hash of them, with the API and the model), each
//! for five minutes from its last use.
//!
//! - **Anthropic** ([`rules::anthropic`]): only marked prefixes are cached. A request's
//!   cacheable prefixes end at its `cache_control` breakpoints. The longest prefix seen before
//!   (at a breakpoint, or at any of the 20 block boundaries up to one, as the API looks back)
//!   is read (`cache_read_input_tokens`); the rest up to the last breakpoint is written
//!   (`cache_creation_input_tokens`); what follows is plain input. A prefix shorter than 1024
//!   tokens is never cached.
//! - **OpenAI** (Chat Completions and Responses, [`rules::openai`]): caching is automatic. Every
//!   prefix of 1024 tokens and more, in steps of 128, is remembered; the longest one an earlier
//!   request had is reported as `cached_tokens`. Writes cost nothing and are not reported.
//!
//! The simulation is off unless a test asks for it
//! ([`FakeModelServerBuilder::prompt_cache`](super::FakeModelServerBuilder::prompt_cache)); a
//! scripted turn's explicit usage ([`Turn::with_usage`](tether_model::scripted::Turn)) is
//! reported as given, though its request is still remembered.

mod prompt;
mod rules;

use std::sync::{Mutex, PoisonError};
use std::time::Instant;

use serde_json::Value;
use tether_config::Api;
use tether_model::Request;

pub(crate) use prompt::Prompt;
use rules::Entries;

/// What the cache made of one request, in tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct CacheUse {
    /// The whole input, reads and writes included.
    pub(crate) input: u64,
    /// Read from the cache.
    pub(crate) read: u64,
    /// Written to the cache.
    pub(crate) written: u64,
}

/// One server's prompt cache, shared by its requests.
#[derive(Debug, Default)]
pub(crate) struct PromptCache {
    entries: Mutex<Entries>,
}

impl PromptCache {
    /// Serves the request `body` (parsed as `request`, for `model`) at `now`: what it reads and
    /// writes, and the cache remembers its prefixes.
    pub(crate) fn serve(
        &self,
        api: Api,
        model: &str,
        body: &Value,
        request: &Request,
        now: Instant,
    ) -> CacheUse {
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        entries.forget_expired(now);
        match api {
            Api::Anthropic => rules::anthropic(&mut entries, &Prompt::anthropic(model, body), now),
            Api::OpenAiChat | Api::OpenAiResponses => {
                rules::openai(&mut entries, &Prompt::openai(api, model, request), now)
            }
        }
    }
}

#[cfg(test)]
mod tests;
