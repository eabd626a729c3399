#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use proptest::prelude::*;
use serde_json::{Value, json};
use tether_config::Api;
use tether_model::{Message, Request, ToolSpec};

use super::prompt::{Prompt, Segment};
use super::rules::{self, Entries, MIN_TOKENS, STEP_TOKENS, TTL};
use super::{CacheUse, PromptCache};

/// Text of exactly `tokens` tokens (four characters each).
fn text(tokens: usize, letter: char) -> String {
    letter.to_string().repeat(tokens * 4)
}

fn ephemeral() -> Value {
    json!({"type": "ephemeral"})
}

/// An Anthropic body as tether's client sends it: a tool and a system prompt of 600 tokens
/// each, marked, then `turns`, the newest block marked.
fn anthropic_body(system: &str, turns: &[Value]) -> Value {
    let mut messages: Vec<Value> = turns.to_vec();
    if let Some(last) = messages.last_mut() {
        let blocks = last["content"].as_array_mut().unwrap();
        blocks.last_mut().unwrap()["cache_control"] = ephemeral();
    }
    json!({
        "model": "m",
        "max_tokens": 100,
        "tools": [{"name": "ls", "description": text(600, 't'), "input_schema": {}, "cache_control": ephemeral()}],
        "system": [{"type": "text", "text": system, "cache_control": ephemeral()}],
        "messages": messages,
    })
}

fn user(text: &str) -> Value {
    json!({"role": "user", "content": [{"type": "text", "text": text}]})
}

fn assistant_call(id: &str) -> Value {
    json!({"role": "assistant", "content": [{"type": "tool_use", "id": id, "name": "ls", "input": {}}]})
}

fn result(id: &str, content: &str) -> Value {
    json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": content}]})
}

fn serve_anthropic(cache: &PromptCache, body: &Value, now: Instant) -> CacheUse {
    cache.serve(Api::Anthropic, "m", body, &Request::new(Vec::new()), now)
}

#[test]
fn an_anthropic_prefix_is_written_once_then_read() {
    let cache = PromptCache::default();
    let now = Instant::now();
    let body = anthropic_body(&text(600, 's'), &[user(&text(100, 'u'))]);
    let input = Prompt::anthropic("m", &body).total_tokens();
    let first = serve_anthropic(&cache, &body, now);
    assert_eq!(first.read, 0);
    assert_eq!(
        first.written, input,
        "everything up to the newest block is written"
    );
    let again = serve_anthropic(&cache, &body, now + Duration::from_secs(1));
    assert_eq!((again.read, again.written, again.input), (input, 0, input));
}

#[test]
fn a_rolling_mark_reads_the_conversation_so_far_and_writes_only_the_new_turn() {
    let cache = PromptCache::default();
    let now = Instant::now();
    let goal = user(&text(100, 'u'));
    let first = anthropic_body(&text(600, 's'), std::slice::from_ref(&goal));
    let first_use = serve_anthropic(&cache, &first, now);
    let turns = [goal, assistant_call("t1"), result("t1", &text(300, 'r'))];
    let second = anthropic_body(&text(600, 's'), &turns);
    let second_use = serve_anthropic(&cache, &second, now);
    assert_eq!(
        second_use.read, first_use.input,
        "the first call's whole prompt"
    );
    assert_eq!(second_use.written, second_use.input - first_use.input);
    // A changed system prompt changes every prefix after the tools: only they are read.
    let other = anthropic_body(&text(600, 'x'), &turns);
    let other_use = serve_anthropic(&cache, &other, now);
    assert_eq!(other_use.read, 0, "the tools alone are under the minimum");
    assert_eq!(other_use.written, other_use.input);
}

#[test]
fn moving_the_mark_leaves_a_prefix_the_same_bytes() {
    let marked = anthropic_body("sys", &[user("a")]);
    let mut unmarked = marked.clone();
    unmarked["messages"][0]["content"][0]
        .as_object_mut()
        .unwrap()
        .remove("cache_control");
    let (a, b) = (
        Prompt::anthropic("m", &marked),
        Prompt::anthropic("m", &unmarked),
    );
    assert_eq!(a.ends(), b.ends());
    assert!(a.segments[2].breakpoint && !b.segments[2].breakpoint);
    assert_ne!(
        Prompt::anthropic("other", &marked).ends(),
        a.ends(),
        "per model"
    );
}

#[test]
fn nothing_under_the_minimum_or_unmarked_is_cached() {
    let cache = PromptCache::default();
    let now = Instant::now();
    // Marked three times, but about 600 tokens in all.
    let short = anthropic_body("short", &[user("hi")]);
    for _ in 0..2 {
        let used = serve_anthropic(&cache, &short, now);
        assert!(used.input < MIN_TOKENS);
        assert_eq!((used.read, used.written), (0, 0));
    }
    let unmarked = json!({"model": "m", "system": text(2000, 's'), "messages": [user("hi")]});
    for _ in 0..2 {
        let used = serve_anthropic(&cache, &unmarked, now);
        assert_eq!(
            (used.read, used.written),
            (0, 0),
            "only marked prefixes are cached"
        );
    }
}

#[test]
fn an_entry_lives_five_minutes_from_its_last_use() {
    let cache = PromptCache::default();
    let start = Instant::now();
    let body = anthropic_body(&text(600, 's'), &[user("go")]);
    let input = serve_anthropic(&cache, &body, start).input;
    let minute = Duration::from_secs(60);
    assert_eq!(
        serve_anthropic(&cache, &body, start + 4 * minute).read,
        input
    );
    // Read at minute 4, so alive until minute 9.
    assert_eq!(
        serve_anthropic(&cache, &body, start + 8 * minute).read,
        input
    );
    let late = serve_anthropic(&cache, &body, start + 8 * minute + TTL);
    assert_eq!(
        (late.read, late.written),
        (0, input),
        "expired: written again"
    );
}

#[test]
fn anthropic_looks_back_at_most_twenty_blocks_from_a_mark() {
    let now = Instant::now();
    let segment = |letter, breakpoint| Segment {
        header: "b".into(),
        text: text(100, letter),
        breakpoint,
    };
    let prompt = |blocks: usize, mark: usize| Prompt {
        scope: "s".into(),
        segments: (0..blocks).map(|i| segment('a', i == mark)).collect(),
    };
    let mut seen = Entries::default();
    assert_eq!(
        rules::anthropic(&mut seen, &prompt(12, 11), now).written,
        1200
    );
    // From a mark on block 30, block 11 is among the 20 boundaries checked.
    assert_eq!(rules::anthropic(&mut seen, &prompt(31, 30), now).read, 1200);
    let mut seen = Entries::default();
    rules::anthropic(&mut seen, &prompt(12, 11), now);
    // From block 31 it is not.
    assert_eq!(rules::anthropic(&mut seen, &prompt(32, 31), now).read, 0);
}

fn openai_request(system: &str, messages: Vec<Message>) -> Request {
    Request::new(messages)
        .with_system(system)
        .with_tools(vec![ToolSpec::new("ls", "list", json!({"type": "object"}))])
}

#[test]
fn openai_reads_the_longest_prefix_in_steps_of_128_from_1024() {
    let cache = PromptCache::default();
    let now = Instant::now();
    let serve = |api, request: &Request| cache.serve(api, "m", &json!({}), request, now);
    for api in [Api::OpenAiChat, Api::OpenAiResponses] {
        let first = openai_request(&text(1500, 's'), vec![Message::user("one")]);
        let used = serve(api, &first);
        assert_eq!((used.read, used.written), (0, 0));
        let second = openai_request(&text(1500, 's'), vec![Message::user("two")]);
        let used = serve(api, &second);
        // The common prefix is the tool and the system prompt: its last whole step is read.
        let common = Prompt::openai(api, "m", &openai_request(&text(1500, 's'), Vec::new()));
        let common_chars: usize = common.segments.iter().map(|s| s.text.chars().count()).sum();
        let whole_tokens = u64::try_from(common_chars / 4).unwrap();
        let expected = (whole_tokens - MIN_TOKENS) / STEP_TOKENS * STEP_TOKENS + MIN_TOKENS;
        assert_eq!(
            expected, 1408,
            "1024 + 3 steps of 128 fit in about 1520 tokens"
        );
        assert_eq!((used.read, used.written), (expected, 0), "{api:?}");
        let short = openai_request("short", vec![Message::user("hi")]);
        serve(api, &short);
        assert_eq!(serve(api, &short).read, 0, "{api:?}: under 1024 tokens");
    }
}

fn segments() -> impl Strategy<Value = Vec<Segment>> {
    let segment = (0usize..3, "[a-c]{0,3}", 0usize..900, any::<bool>()).prop_map(
        |(header, letters, tokens, breakpoint)| Segment {
            header: format!("h{header}"),
            text: letters.repeat(tokens.div_ceil(letters.len().max(1)) * 4),
            breakpoint,
        },
    );
    prop::collection::vec(segment, 0..12)
}

proptest! {
    #[test]
    fn reads_writes_and_fresh_input_add_up_to_the_input(
        prompts in prop::collection::vec(segments(), 1..6),
        gaps in prop::collection::vec(0u64..400, 6),
        anthropic in any::<bool>(),
    ) {
        let mut entries = Entries::default();
        let mut now = Instant::now();
        for (segments, gap) in prompts.into_iter().zip(gaps) {
            now += Duration::from_secs(gap);
            entries.forget_expired(now);
            let prompt = Prompt { scope: "s".into(), segments };
            let used = if anthropic {
                rules::anthropic(&mut entries, &prompt, now)
            } else {
                rules::openai(&mut entries, &prompt, now)
            };
            prop_assert_eq!(used.input, prompt.total_tokens());
            prop_assert!(used.read + used.written <= used.input);
            let fresh = used.input - used.read - used.written;
            prop_assert_eq!(used.read + used.written + fresh, used.input);
            prop_assert!(used.read == 0 || used.read >= MIN_TOKENS);
            if !anthropic {
                prop_assert_eq!(used.written, 0);
                prop_assert_eq!(used.read % STEP_TOKENS, 0);
            }
        }
    }
}
