//! What a prompt's response says it used, in tether's terms: input tokens with cache reads and
//! writes included, and the reads and writes apart.
//!
//! ACP's `Usage` does not say whether `inputTokens` includes the cache's tokens, and adapters
//! differ: Claude Code's counts fresh input only and sums every kind into `totalTokens` (as the
//! schema describes the total), while an adapter over an OpenAI-style count reports input with
//! the cached tokens in it and a total of input and output. The total tells them apart: when it
//! covers input, output, reads and writes as separate amounts, the input excluded the cache.
//!
//! An agent that sends no `usage` may count its tokens in the response's `_meta` instead, as
//! Gemini CLI does (`quota.token_count.input_tokens` and `output_tokens`): read when there is
//! no `usage`.

use agent_client_protocol::v1::schema::Usage;

use crate::TurnOutcome;

/// Sets `outcome`'s token counts from the response's `usage`.
pub(super) fn apply(usage: &Usage, outcome: &mut TurnOutcome) {
    let read = usage.cached_read_tokens.unwrap_or(0);
    let write = usage.cached_write_tokens.unwrap_or(0);
    let separate = usage
        .input_tokens
        .saturating_add(usage.output_tokens)
        .saturating_add(read)
        .saturating_add(write);
    outcome.input_tokens = if read + write > 0 && usage.total_tokens >= separate {
        usage
            .input_tokens
            .saturating_add(read)
            .saturating_add(write)
    } else {
        usage.input_tokens.max(read.saturating_add(write))
    };
    outcome.cached_input_tokens = read;
    outcome.cache_write_input_tokens = write;
    outcome.output_tokens = usage.output_tokens;
}

/// Sets `outcome`'s token counts from the response's `_meta`, when it counts them as Gemini CLI
/// does (`{"quota": {"token_count": {"input_tokens", "output_tokens"}}}`).
pub(super) fn apply_meta(
    meta: &serde_json::Map<String, serde_json::Value>,
    outcome: &mut TurnOutcome,
) {
    let Some(count) = meta.get("quota").and_then(|q| q.get("token_count")) else {
        return;
    };
    let tokens = |key: &str| count.get(key).and_then(serde_json::Value::as_u64);
    if let Some(input) = tokens("input_tokens") {
        outcome.input_tokens = input;
    }
    if let Some(output) = tokens("output_tokens") {
        outcome.output_tokens = output;
    }
}

#[cfg(test)]
mod tests {
    use agent_client_protocol::v1::schema::Usage;

    use crate::TurnOutcome;

    fn applied(usage: &Usage) -> (u64, u64, u64, u64) {
        let mut outcome = TurnOutcome::default();
        super::apply(usage, &mut outcome);
        (
            outcome.input_tokens,
            outcome.cached_input_tokens,
            outcome.cache_write_input_tokens,
            outcome.output_tokens,
        )
    }

    #[test]
    fn fresh_input_and_a_total_of_every_kind_adds_the_cache_to_the_input() {
        // Claude Code's adapter: 12 fresh, 3000 read, 500 written, 80 out; the total sums all.
        let usage = Usage::new(3592, 12, 80)
            .cached_read_tokens(3000)
            .cached_write_tokens(500);
        assert_eq!(applied(&usage), (3512, 3000, 500, 80));
    }

    #[test]
    fn input_that_includes_the_cache_is_kept() {
        // OpenAI-style: 4096 in of which 3072 read, 50 out, total = in + out.
        let usage = Usage::new(4146, 4096, 50).cached_read_tokens(3072);
        assert_eq!(applied(&usage), (4096, 3072, 0, 50));
    }

    #[test]
    fn without_cache_counts_the_input_is_as_reported() {
        assert_eq!(applied(&Usage::new(130, 100, 30)), (100, 0, 0, 30));
    }

    #[test]
    fn a_count_in_meta_as_gemini_cli_sends_it_is_read() {
        let meta = serde_json::json!({"quota": {"token_count":
            {"input_tokens": 120, "output_tokens": 9}, "model_usage": []}});
        let mut outcome = TurnOutcome::default();
        super::apply_meta(meta.as_object().unwrap(), &mut outcome);
        assert_eq!((outcome.input_tokens, outcome.output_tokens), (120, 9));
        let mut untouched = TurnOutcome::default();
        let other = serde_json::json!({"cost": 1});
        super::apply_meta(other.as_object().unwrap(), &mut untouched);
        assert_eq!(untouched.input_tokens, 0);
    }
}
