//! What a run may spend and what a model costs: the budget keys of `[loop]` (`max_tokens`,
//! `max_cost_usd`, `max_duration`) and a model table's `price_per_mtok`.
//!
//! Amounts are spelled as everywhere else in tether (`"400k"`, `5`, `"8h"`; see
//! `tether-budget`), so a budget reads the same in `tether.toml`, a goal's `budget:` line and a
//! flag.

use toml::de::DeValue;

use crate::reader::{Reader, Table, entry, path_of};

/// A model's price in US dollars per million tokens (`price_per_mtok = { input = 3.0, cached =
/// 0.3, output = 15.0 }`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Price {
    /// Per million input tokens not read from the cache.
    pub input: f64,
    /// Per million input tokens read from the prompt cache (default: `input`).
    pub cached: f64,
    /// Per million output tokens.
    pub output: f64,
}

impl Price {
    /// What a call costs: `input` tokens (of which `cached` came from the cache) and `output`.
    #[allow(clippy::cast_precision_loss)]
    pub fn cost(&self, input: u64, cached: u64, output: u64) -> f64 {
        let cached = cached.min(input);
        let fresh = input - cached;
        (fresh as f64 * self.input + cached as f64 * self.cached + output as f64 * self.output)
            / 1e6
    }
}

/// The keys of `price_per_mtok`.
const PRICE_KEYS: &[&str] = &["input", "cached", "output"];

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
        let message = "must be a table such as { input = 3.0, cached = 0.3, output = 15.0 } \
                       (US dollars per million tokens)";
        r.report(Some(value.span()), path, message);
        return None;
    };
    let mut read = |name: &str| {
        let (_, v) = entries.iter().find(|(k, _)| k.get_ref().as_ref() == name)?;
        number(r, v, &format!("{path}.{name}"))
    };
    let (input, cached, output) = (read("input"), read("cached"), read("output"));
    for (k, _) in entries {
        let name: &str = k.get_ref().as_ref();
        if !PRICE_KEYS.contains(&name) {
            let message = "unknown key; price_per_mtok takes `input`, `cached` and `output`";
            r.report(Some(k.span()), format!("{path}.{name}"), message);
        }
    }
    if input.is_none() || output.is_none() {
        let message = "needs `input` and `output` (US dollars per million tokens)";
        r.report(Some(key.span()), path, message);
        return None;
    }
    Some(Price {
        input: input?,
        cached: cached.or(input)?,
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
