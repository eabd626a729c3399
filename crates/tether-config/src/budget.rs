//! What a run may spend and what a model costs: the budget keys of `[loop]` (`max_tokens`,
//! `max_cost_usd`, `max_duration`) and a model table's `price_per_mtok`.
//!
//! Amounts are spelled as everywhere else in tether (`"400k"`, `5`, `"8h"`; see
//! `tether-budget`), so a budget reads the same in `tether.toml`, a goal's `budget:` line and a
//! flag.

use toml::de::DeValue;

use crate::reader::{Reader, Table, entry, path_of};

/// A model's price in US dollars per million tokens (`price_per_mtok = { input = 3.0,
/// cache_read = 0.3, cache_write = 3.75, output = 15.0 }`).
///
/// Input is priced in three parts, as providers bill it: fresh input, input read from the
/// provider's prompt cache, and input written to it. `cached` is accepted as the old spelling
/// of `cache_read`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Price {
    /// Per million input tokens neither read from nor written to the prompt cache.
    pub input: f64,
    /// Per million input tokens read from the prompt cache (default: `input`).
    pub cache_read: f64,
    /// Per million input tokens written to the prompt cache (default: `input`).
    pub cache_write: f64,
    /// Per million output tokens.
    pub output: f64,
}

/// The tokens one model call (or a sum of calls) used, as a [`Price`] takes them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TokenCounts {
    /// Input tokens, cache reads and writes included.
    pub input: u64,
    /// Of `input`, those read from the provider's prompt cache.
    pub cache_read: u64,
    /// Of `input`, those written to the provider's prompt cache.
    pub cache_write: u64,
    /// Output tokens.
    pub output: u64,
}

impl Price {
    /// What `tokens` cost: fresh input, cache reads, cache writes and output, each at its own
    /// rate. Reads and writes are taken as parts of the input (never more than it).
    #[allow(clippy::cast_precision_loss)]
    pub fn cost(&self, tokens: TokenCounts) -> f64 {
        let read = tokens.cache_read.min(tokens.input);
        let write = tokens.cache_write.min(tokens.input - read);
        let fresh = tokens.input - read - write;
        (fresh as f64 * self.input
            + read as f64 * self.cache_read
            + write as f64 * self.cache_write
            + tokens.output as f64 * self.output)
            / 1e6
    }
}

/// The keys of `price_per_mtok`; `cached` is the old spelling of `cache_read`.
const PRICE_KEYS: &[&str] = &["input", "cache_read", "cache_write", "output", "cached"];

/// A number (integer or float) at least 0.
fn number(r: &mut Reader, value: &toml::Spanned<DeValue>, path: &str) -> Option<f64> {
    let n = match value.get_ref() {
        DeValue::Integer(i) => i64::from_str_radix(i.as_str(), i.radix())
            .ok()
            .map(|n| n as f64),
        DeValue::Float(f) => f.as_str().parse::<f64>().ok(),
        _ => None,
    };
    match n.filter(|n| n.is_finite() && *n >= 0.0) {
        Some(n) => Some(n),
        None => {
            let message = "must be a number of at least 0 (such as 3 or 0.3)";
            r.report(Some(value.span()), path, message);
            None
        }
    }
}

/// `price_per_mtok` of a model table, if given.
pub(crate) fn read_price(r: &mut Reader, t: &Table) -> Option<Price> {
    let (key, value) = entry(t, "price_per_mtok")?;
    let path = path_of(t.path, "price_per_mtok");
    let DeValue::Table(entries) = value.get_ref() else {
        let message = "must be a table such as { input = 3.0, cache_read = 0.3, \
                       cache_write = 3.75, output = 15.0 } (US dollars per million tokens)";
        r.report(Some(value.span()), path, message);
        return None;
    };
    let mut read = |name: &str| {
        let (_, v) = entries.iter().find(|(k, _)| k.get_ref().as_ref() == name)?;
        number(r, v, &format!("{path}.{name}"))
    };
    let (input, output) = (read("input"), read("output"));
    let (cache_read, cached, cache_write) =
        (read("cache_read"), read("cached"), read("cache_write"));
    for (k, _) in entries {
        let name: &str = k.get_ref().as_ref();
        if !PRICE_KEYS.contains(&name) {
            let message = "unknown key; price_per_mtok takes `input`, `cache_read`, \
                           `cache_write` and `output` (`cached` is the old spelling of \
                           `cache_read`)";
            r.report(Some(k.span()), format!("{path}.{name}"), message);
        }
    }
    if let Some((k, _)) = entries
        .iter()
        .find(|(k, _)| k.get_ref().as_ref() == "cached")
        && entries
            .iter()
            .any(|(k, _)| k.get_ref().as_ref() == "cache_read")
    {
        let message = "give `cache_read` alone: `cached` is its old spelling";
        r.report(Some(k.span()), format!("{path}.cached"), message);
    }
    if input.is_none() || output.is_none() {
        let message = "needs `input` and `output` (US dollars per million tokens)";
        r.report(Some(key.span()), path, message);
        return None;
    }
    let input = input?;
    Some(Price {
        input,
        cache_read: cache_read.or(cached).unwrap_or(input),
        cache_write: cache_write.unwrap_or(input),
        output: output?,
    })
}

/// `max_tokens` (`400000` or `"400k"`), `max_cost_usd` (`5` or `"$5"`) and `max_duration`
/// (`"8h"`) of `[loop]`, into `out`.
pub(crate) fn read_loop_budget(r: &mut Reader, t: &Table, out: &mut tether_budget::Budget) {
    if let Some((_, v)) = entry(t, "max_tokens") {
        let path = path_of(t.path, "max_tokens");
        let parsed = match v.get_ref() {
            DeValue::Integer(i) => i64::from_str_radix(i.as_str(), i.radix())
                .ok()
                .and_then(|n| u64::try_from(n).ok())
                .ok_or_else(|| format!("must be at least 0, got {}", i.as_str())),
            DeValue::String(s) => tether_budget::parse_tokens(s).map_err(|e| e.to_string()),
            _ => Err("must be a token count such as 400000 or \"400k\"".to_owned()),
        };
        match parsed {
            Ok(n) => out.tokens = Some(n),
            Err(message) => r.report(Some(v.span()), path, message),
        }
    }
    if let Some((_, v)) = entry(t, "max_cost_usd") {
        let path = path_of(t.path, "max_cost_usd");
        let parsed = match v.get_ref() {
            DeValue::String(s) => match tether_budget::parse_cost(s) {
                Ok(c) => Some(c),
                Err(e) => {
                    r.report(Some(v.span()), path, e.to_string());
                    None
                }
            },
            _ => number(r, v, &path),
        };
        if parsed.is_some() {
            out.cost_usd = parsed;
        }
    }
    if let Some((_, v)) = entry(t, "max_duration") {
        let path = path_of(t.path, "max_duration");
        let parsed = match v.get_ref() {
            DeValue::String(s) => tether_budget::parse_duration(s).map_err(|e| e.to_string()),
            _ => Err("must be a duration string such as \"8h\" or \"90m\"".to_owned()),
        };
        match parsed {
            Ok(secs) => out.duration_secs = Some(secs),
            Err(message) => r.report(Some(v.span()), path, message),
        }
    }
}
