//! The two caching rules over a [`Prompt`]: Anthropic's marked prefixes and OpenAI's automatic
//! ones. Both take the time, so tests can step past the time to live.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use super::CacheUse;
use super::prompt::{Prefix, Prompt};

/// How long an entry lives after its last use.
pub(crate) const TTL: Duration = Duration::from_secs(5 * 60);
/// The shortest prefix either provider caches, in tokens.
pub(crate) const MIN_TOKENS: u64 = 1024;
/// OpenAI's cached prefixes grow in steps of this many tokens.
pub(crate) const STEP_TOKENS: u64 = 128;
/// How many block boundaries, up to and including a breakpoint, Anthropic checks for a hit.
pub(crate) const LOOKBACK_BLOCKS: usize = 20;

/// The prefixes a cache remembers: hash → when last used.
#[derive(Debug, Default)]
pub(crate) struct Entries {
    used: HashMap<u64, Instant>,
}

impl Entries {
    /// Whether `prefix` is remembered and alive at `now`.
    fn alive(&self, prefix: Prefix, now: Instant) -> bool {
        self.used
            .get(&prefix.hash)
            .is_some_and(|used| now.saturating_duration_since(*used) < TTL)
    }

    /// Remembers `prefix` as used at `now` (a new entry, or one whose life starts again).
    fn touch(&mut self, prefix: Prefix, now: Instant) {
        self.used.insert(prefix.hash, now);
    }

    /// Drops the entries whose time ran out by `now`.
    pub(crate) fn forget_expired(&mut self, now: Instant) {
        self.used
            .retain(|_, used| now.saturating_duration_since(*used) < TTL);
    }
}

/// Anthropic: the longest remembered prefix near a breakpoint is read, the rest up to the last
/// breakpoint written, and every breakpoint's prefix (when long enough) remembered.
pub(crate) fn anthropic(entries: &mut Entries, prompt: &Prompt, now: Instant) -> CacheUse {
    let input = prompt.total_tokens();
    let ends = prompt.ends();
    let marks: Vec<usize> = (0..ends.len())
        .filter(|&i| prompt.segments[i].breakpoint)
        .collect();
    let cacheable = marks.last().map_or(0, |&last| ends[last].tokens);
    if cacheable < MIN_TOKENS {
        return CacheUse {
            input,
            ..CacheUse::default()
        };
    }
    let hit = marks
        .iter()
        .flat_map(|&mark| mark.saturating_sub(LOOKBACK_BLOCKS - 1)..=mark)
        .map(|i| ends[i])
        .filter(|prefix| prefix.tokens >= MIN_TOKENS && entries.alive(*prefix, now))
        .max_by_key(|prefix| prefix.tokens);
    let read = hit.map_or(0, |prefix| prefix.tokens);
    for prefix in hit.into_iter().chain(marks.iter().map(|&mark| ends[mark])) {
        if prefix.tokens >= MIN_TOKENS {
            entries.touch(prefix, now);
        }
    }
    CacheUse {
        input,
        read,
        written: cacheable - read,
    }
}

/// OpenAI: the longest remembered prefix (of 1024 tokens, 1152, …) is read; every such prefix
/// of this request is remembered, at no cost.
pub(crate) fn openai(entries: &mut Entries, prompt: &Prompt, now: Instant) -> CacheUse {
    let steps = prompt.steps(MIN_TOKENS, STEP_TOKENS);
    let read = steps
        .iter()
        .rev()
        .find(|prefix| entries.alive(**prefix, now))
        .map_or(0, |prefix| prefix.tokens);
    for prefix in &steps {
        entries.touch(*prefix, now);
    }
    CacheUse {
        input: prompt.total_tokens(),
        read,
        written: 0,
    }
}
