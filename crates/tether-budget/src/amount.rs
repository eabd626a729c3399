//! How amounts are spelled, read and written back.
//!
//! - tokens: `400000`, `400_000`, `400k`, `1.5M` (an optional `tokens` after);
//! - dollars: `5`, `$5`, `$0.50` (an optional `usd` after);
//! - time: `45s`, `90m`, `2h`, `1h30m`, `2d` (parts in any combination, largest first);
//! - iterations: `10` (an optional `iterations` after);
//! - a whole budget, as in a goal's `budget:` line: those, comma-separated, each unit once:
//!   `400k tokens, $5, 2h`.

use crate::limits::{Budget, Unit};

/// An amount or a budget that does not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BudgetError {
    /// One amount is not spelled as its unit's amounts are.
    #[error("`{text}` is not {expected}")]
    Amount {
        /// What was given.
        text: String,
        /// What would be read, in words with examples.
        expected: &'static str,
    },
    /// A budget names one unit twice.
    #[error("the {} is given twice", unit.noun())]
    Twice {
        /// The unit.
        unit: Unit,
    },
    /// A budget is empty.
    #[error("the budget is empty; give amounts such as `400k tokens, $5, 2h`")]
    Empty,
}

const TOKENS: &str = "a token count (such as 400000, 400k or 1.5M)";
const COST: &str = "an amount of US dollars (such as 5, $5 or $0.50)";
const DURATION: &str = "a duration (such as 45s, 90m, 2h, 1h30m or 2d)";
const ITERATIONS: &str = "a number of iterations (such as 10)";
const ANY: &str = "an amount of tokens (400k tokens), dollars ($5), time (2h) or iterations \
                   (10 iterations)";

fn bad(text: &str, expected: &'static str) -> BudgetError {
    BudgetError::Amount {
        text: text.trim().to_owned(),
        expected,
    }
}

/// Strips an optional trailing word (`tokens`, `usd`, ...), case-insensitively.
fn without_word<'a>(text: &'a str, word: &str) -> &'a str {
    let text = text.trim();
    let lower = text.to_ascii_lowercase();
    match lower.strip_suffix(word) {
        Some(rest) => text[..rest.len()].trim_end(),
        None => text,
    }
}

/// A non-negative decimal number: digits, an optional fraction, `_` between digits.
fn number(text: &str) -> Option<f64> {
    let clean: String = text.chars().filter(|c| *c != '_').collect();
    let plain = !clean.is_empty()
        && clean.chars().all(|c| c.is_ascii_digit() || c == '.')
        && clean.chars().filter(|c| *c == '.').count() <= 1
        && clean.chars().any(|c| c.is_ascii_digit());
    if !plain {
        return None;
    }
    clean.parse::<f64>().ok().filter(|n| n.is_finite())
}

fn whole(n: f64) -> Option<u64> {
    // Bounded below 2^53, so the cast is exact; anything larger is refused.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    (0.0..9.0e15).contains(&n).then(|| n.round() as u64)
}

/// Reads a token count: `400000`, `400_000`, `400k`, `1.5M`, optionally followed by `tokens`.
pub fn parse_tokens(text: &str) -> Result<u64, BudgetError> {
    let t = without_word(without_word(text, "tokens"), "token");
    let (digits, scale) = match t.chars().last() {
        Some('k' | 'K') => (&t[..t.len() - 1], 1e3),
        Some('m' | 'M') => (&t[..t.len() - 1], 1e6),
        _ => (t, 1.0),
    };
    number(digits.trim())
        .and_then(|n| whole(n * scale))
        .ok_or_else(|| bad(text, TOKENS))
}

/// Reads an amount of US dollars: `5`, `$5`, `$0.50`, optionally followed by `usd`.
pub fn parse_cost(text: &str) -> Result<f64, BudgetError> {
    let t = without_word(text, "usd");
    let t = t.strip_prefix('$').unwrap_or(t).trim();
    number(t).ok_or_else(|| bad(text, COST))
}

/// Reads a duration in whole seconds: `45s`, `90m`, `2h`, `1h30m`, `2d`.
pub fn parse_duration(text: &str) -> Result<u64, BudgetError> {
    let t = text.trim();
    let mut total: u64 = 0;
    let mut digits = String::new();
    let mut any = false;
    for c in t.chars() {
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        let scale = match c {
            's' => 1,
            'm' => 60,
            'h' => 3600,
            'd' => 86_400,
            ' ' if digits.is_empty() => continue,
            _ => return Err(bad(text, DURATION)),
        };
        let n: u64 = digits.parse().map_err(|_| bad(text, DURATION))?;
        total = n
            .checked_mul(scale)
            .and_then(|s| total.checked_add(s))
            .ok_or_else(|| bad(text, DURATION))?;
        digits.clear();
        any = true;
    }
    if !digits.is_empty() || !any {
        return Err(bad(text, DURATION));
    }
    Ok(total)
}

/// Reads a number of iterations: `10`, optionally followed by `iterations`.
pub fn parse_iterations(text: &str) -> Result<u32, BudgetError> {
    let t = without_word(without_word(text, "iterations"), "iteration");
    t.parse::<u32>().map_err(|_| bad(text, ITERATIONS))
}

/// Reads a whole budget: comma-separated amounts, each unit at most once
/// (`400k tokens, $5, 2h, 30 iterations`). The unit of each amount is told by its spelling: a
/// `$` or `usd` is dollars, `tokens` (or a bare `k`/`M` count) is tokens, `iterations` is
/// iterations, a time suffix is a duration.
pub fn parse_budget(text: &str) -> Result<Budget, BudgetError> {
    let mut budget = Budget::default();
    let mut seen = Vec::new();
    for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let unit = unit_of(item).ok_or_else(|| bad(item, ANY))?;
        if seen.contains(&unit) {
            return Err(BudgetError::Twice { unit });
        }
        seen.push(unit);
        match unit {
            Unit::Iterations => budget.iterations = Some(parse_iterations(item)?),
            Unit::Tokens => budget.tokens = Some(parse_tokens(item)?),
            Unit::CostUsd => budget.cost_usd = Some(parse_cost(item)?),
            Unit::Duration => budget.duration_secs = Some(parse_duration(item)?),
        }
    }
    if seen.is_empty() {
        return Err(BudgetError::Empty);
    }
    Ok(budget)
}

/// The unit an item of a budget is spelled in.
fn unit_of(item: &str) -> Option<Unit> {
    let lower = item.to_ascii_lowercase();
    if lower.starts_with('$') || lower.ends_with("usd") {
        Some(Unit::CostUsd)
    } else if lower.ends_with("tokens") || lower.ends_with("token") {
        Some(Unit::Tokens)
    } else if lower.ends_with("iterations") || lower.ends_with("iteration") {
        Some(Unit::Iterations)
    } else if item.ends_with(['k', 'K', 'M']) {
        Some(Unit::Tokens)
    } else if item.starts_with(|c: char| c.is_ascii_digit())
        && item.ends_with(['s', 'm', 'h', 'd'])
        && item
            .chars()
            .all(|c| c.is_ascii_digit() || "smhd ".contains(c))
    {
        Some(Unit::Duration)
    } else {
        None
    }
}

/// `950`, `1.2k`, `400k`, `1.5M`: a token count, short.
pub fn format_tokens(n: u64) -> String {
    #[allow(clippy::cast_precision_loss)]
    let f = n as f64;
    let (value, suffix) = if n >= 1_000_000 {
        (f / 1e6, "M")
    } else if n >= 1000 {
        (f / 1e3, "k")
    } else {
        return n.to_string();
    };
    let text = format!("{value:.1}");
    let text = text.strip_suffix(".0").unwrap_or(&text);
    format!("{text}{suffix}")
}

/// `$4.20`; amounts under a cent with four decimals (`$0.0042`).
pub fn format_cost(usd: f64) -> String {
    if usd > 0.0 && usd < 0.01 {
        format!("${usd:.4}")
    } else {
        format!("${usd:.2}")
    }
}

/// `45s`, `12m 5s`, `2h`, `1h 30m`, `2d 3h`: a duration in seconds, short.
pub fn format_duration(secs: u64) -> String {
    let (d, h, m, s) = (
        secs / 86_400,
        secs % 86_400 / 3600,
        secs % 3600 / 60,
        secs % 60,
    );
    let parts: Vec<String> = [(d, "d"), (h, "h"), (m, "m"), (s, "s")]
        .iter()
        .filter(|(n, _)| *n > 0)
        .take(2)
        .map(|(n, unit)| format!("{n}{unit}"))
        .collect();
    if parts.is_empty() {
        "0s".to_owned()
    } else {
        parts.join(" ")
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn amounts_read_in_every_spelling() {
        assert_eq!(parse_tokens("400k"), Ok(400_000));
        assert_eq!(parse_tokens("1.5M tokens"), Ok(1_500_000));
        assert_eq!(parse_tokens("400_000"), Ok(400_000));
        assert_eq!(parse_cost("$5"), Ok(5.0));
        assert_eq!(parse_cost("0.5 USD"), Ok(0.5));
        assert_eq!(parse_duration("1h30m"), Ok(5400));
        assert_eq!(parse_duration("2d"), Ok(172_800));
        assert_eq!(parse_iterations("10 iterations"), Ok(10));
    }

    #[test]
    fn a_goal_budget_line_reads_each_unit_once() {
        assert_eq!(parse_budget("1.5M, 90m").unwrap().tokens, Some(1_500_000));
        let b = parse_budget("400k tokens, $5, 2h").unwrap();
        assert_eq!(b.tokens, Some(400_000));
        assert_eq!(b.cost_usd, Some(5.0));
        assert_eq!(b.duration_secs, Some(7200));
        assert_eq!(b.iterations, None);
        assert_eq!(b.describe(), "400k tokens, $5.00, 2h");
        assert_eq!(
            parse_budget("$5, $6").unwrap_err().to_string(),
            "the cost budget is given twice"
        );
        assert_eq!(
            parse_budget("lots").unwrap_err().to_string(),
            "`lots` is not an amount of tokens (400k tokens), dollars ($5), time (2h) or \
             iterations (10 iterations)"
        );
        assert_eq!(parse_budget(" , ").unwrap_err(), BudgetError::Empty);
    }

    #[test]
    fn bad_amounts_say_what_would_read() {
        assert_eq!(
            parse_duration("2 hours").unwrap_err().to_string(),
            "`2 hours` is not a duration (such as 45s, 90m, 2h, 1h30m or 2d)"
        );
        assert!(parse_tokens("-5k").is_err());
        assert!(parse_tokens("k").is_err());
        assert!(parse_cost("$").is_err());
        assert!(parse_duration("").is_err());
        assert!(parse_duration("5").is_err());
    }

    #[test]
    fn amounts_are_written_short() {
        assert_eq!(format_tokens(950), "950");
        assert_eq!(format_tokens(1234), "1.2k");
        assert_eq!(format_tokens(2_000_000), "2M");
        assert_eq!(format_cost(4.2), "$4.20");
        assert_eq!(format_cost(0.0042), "$0.0042");
        assert_eq!(format_duration(3725), "1h 2m");
        assert_eq!(format_duration(0), "0s");
    }

    proptest! {
        #[test]
        fn durations_written_whole_read_back(h in 0u64..1000, m in 0u64..60, s in 0u64..60) {
            let secs = h * 3600 + m * 60 + s;
            let text = [(h, "h"), (m, "m"), (s, "s")]
                .iter()
                .filter(|(n, _)| *n > 0)
                .map(|(n, u)| format!("{n}{u}"))
                .collect::<String>();
            prop_assume!(!text.is_empty());
            prop_assert_eq!(parse_duration(&text), Ok(secs));
        }

        #[test]
        fn token_counts_read_back(n in 0u64..10_000_000_000) {
            prop_assert_eq!(parse_tokens(&n.to_string()), Ok(n));
            prop_assert_eq!(parse_tokens(&format!("{n}k")), Ok(n * 1000));
        }

        #[test]
        fn no_text_panics_the_parsers(text in "\\PC{0,24}") {
            let _ = parse_budget(&text);
            let _ = parse_duration(&text);
            let _ = parse_tokens(&text);
            let _ = parse_cost(&text);
        }
    }
}
