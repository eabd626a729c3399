//! Limits, spending, and the check between them.

use serde::{Deserialize, Serialize};

use crate::amount::{format_cost, format_duration, format_tokens};

/// What a budget is counted in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// Agent iterations.
    Iterations,
    /// Model tokens, input (prompt cache reads and writes included) and output, of the agent and
    /// both judges.
    Tokens,
    /// US dollars, of the agent and both judges.
    CostUsd,
    /// Time the run spent running (not paused, not waiting for a person's answer).
    Duration,
}

impl Unit {
    /// Every unit, in the order they are checked and shown.
    pub const ALL: [Unit; 4] = [
        Unit::Iterations,
        Unit::Tokens,
        Unit::CostUsd,
        Unit::Duration,
    ];

    /// The unit's name in JSON and in messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Unit::Iterations => "iterations",
            Unit::Tokens => "tokens",
            Unit::CostUsd => "cost_usd",
            Unit::Duration => "duration",
        }
    }

    /// In words for people: `token budget`.
    pub fn noun(self) -> &'static str {
        match self {
            Unit::Iterations => "iteration budget",
            Unit::Tokens => "token budget",
            Unit::CostUsd => "cost budget",
            Unit::Duration => "time budget",
        }
    }

    /// The `tether resume` flag that raises this unit.
    pub fn raise_flag(self) -> &'static str {
        match self {
            Unit::Iterations => "--add-iterations",
            Unit::Tokens => "--add-tokens",
            Unit::CostUsd => "--add-cost",
            Unit::Duration => "--add-time",
        }
    }

    /// `amount` of this unit for people: `12`, `512.3k tokens`, `$4.20`, `1h 5m`.
    pub fn format(self, amount: f64) -> String {
        match self {
            Unit::Iterations => format!("{} iterations", amount.round()),
            Unit::Tokens => format!("{} tokens", format_tokens(to_u64(amount))),
            Unit::CostUsd => format_cost(amount),
            Unit::Duration => format_duration(to_u64(amount)),
        }
    }
}

impl std::fmt::Display for Unit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

fn to_u64(amount: f64) -> u64 {
    if amount.is_finite() && amount > 0.0 {
        // Amounts are counts and seconds far below 2^53: the cast is exact where it matters.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let n = amount.round() as u64;
        n
    } else {
        0
    }
}

/// Limits in each unit; `None` is unlimited. Also used for the amounts a person added.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Budget {
    /// Agent iterations.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iterations: Option<u32>,
    /// Tokens.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tokens: Option<u64>,
    /// US dollars.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// Seconds of running time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_secs: Option<u64>,
}

impl Budget {
    /// The limit in `unit`, if there is one.
    pub fn get(&self, unit: Unit) -> Option<f64> {
        match unit {
            Unit::Iterations => self.iterations.map(f64::from),
            #[allow(clippy::cast_precision_loss)]
            Unit::Tokens => self.tokens.map(|t| t as f64),
            Unit::CostUsd => self.cost_usd,
            #[allow(clippy::cast_precision_loss)]
            Unit::Duration => self.duration_secs.map(|s| s as f64),
        }
    }

    /// Adds `amount` to the limit in `unit` (a person's raise). A unit without a limit stays
    /// unlimited.
    pub fn raise(&mut self, unit: Unit, amount: f64) {
        let whole = to_u64(amount);
        match unit {
            Unit::Iterations => {
                let add = u32::try_from(whole).unwrap_or(u32::MAX);
                self.iterations = self.iterations.map(|n| n.saturating_add(add));
            }
            Unit::Tokens => self.tokens = self.tokens.map(|n| n.saturating_add(whole)),
            Unit::CostUsd => self.cost_usd = self.cost_usd.map(|c| c + amount.max(0.0)),
            Unit::Duration => {
                self.duration_secs = self.duration_secs.map(|s| s.saturating_add(whole));
            }
        }
    }

    /// Whether no unit is limited.
    pub fn is_unlimited(&self) -> bool {
        Unit::ALL.iter().all(|u| self.get(*u).is_none())
    }

    /// `400k tokens, $5.00, 2h`: the limits set, in the spelling [`crate::parse_budget`] reads.
    pub fn describe(&self) -> String {
        let parts: Vec<String> = Unit::ALL
            .iter()
            .filter_map(|u| self.get(*u).map(|amount| u.format(amount)))
            .collect();
        if parts.is_empty() {
            "unlimited".to_owned()
        } else {
            parts.join(", ")
        }
    }
}

/// What was spent so far, in every unit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Spending {
    /// Iterations run.
    pub iterations: u32,
    /// Tokens used.
    pub tokens: u64,
    /// US dollars spent (of the calls whose cost is known).
    pub cost_usd: f64,
    /// Seconds spent running.
    pub duration_secs: u64,
}

impl Spending {
    /// The amount spent in `unit`.
    #[allow(clippy::cast_precision_loss)]
    pub fn get(&self, unit: Unit) -> f64 {
        match unit {
            Unit::Iterations => f64::from(self.iterations),
            Unit::Tokens => self.tokens as f64,
            Unit::CostUsd => self.cost_usd,
            Unit::Duration => self.duration_secs as f64,
        }
    }
}

/// A budget that is spent: its unit, what was spent and the limit (raises included).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Overrun {
    /// The unit.
    pub unit: Unit,
    /// What was spent.
    pub used: f64,
    /// The limit it reached.
    pub limit: f64,
}

impl std::fmt::Display for Overrun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} spent: {} of {}",
            self.unit.noun(),
            self.unit.format(self.used),
            self.unit.format(self.limit)
        )
    }
}

/// The first unit (in [`Unit::ALL`]'s order) whose limit `spent` has reached.
pub fn first_spent(limits: &Budget, spent: &Spending) -> Option<Overrun> {
    Unit::ALL.into_iter().find_map(|unit| {
        let limit = limits.get(unit)?;
        let used = spent.get(unit);
        (used >= limit).then_some(Overrun { unit, used, limit })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_spent_unit_is_named_with_what_was_used() {
        let limits = Budget {
            tokens: Some(1000),
            cost_usd: Some(1.0),
            ..Budget::default()
        };
        let mut spent = Spending {
            tokens: 999,
            cost_usd: 0.5,
            ..Spending::default()
        };
        assert_eq!(first_spent(&limits, &spent), None);
        spent.tokens = 1200;
        let overrun = first_spent(&limits, &spent).unwrap();
        assert_eq!(overrun.unit, Unit::Tokens);
        assert_eq!(
            overrun.to_string(),
            "token budget spent: 1.2k tokens of 1k tokens"
        );
    }

    #[test]
    fn a_raise_lifts_a_set_limit_and_leaves_an_unset_one_unlimited() {
        let mut limits = Budget {
            cost_usd: Some(5.0),
            ..Budget::default()
        };
        limits.raise(Unit::CostUsd, 2.5);
        limits.raise(Unit::Tokens, 1000.0);
        assert_eq!(limits.cost_usd, Some(7.5));
        assert_eq!(limits.tokens, None);
        assert_eq!(limits.describe(), "$7.50");
        assert_eq!(Budget::default().describe(), "unlimited");
    }

    #[test]
    fn zero_iterations_left_is_spent_at_once() {
        let limits = Budget {
            iterations: Some(0),
            ..Budget::default()
        };
        let overrun = first_spent(&limits, &Spending::default()).unwrap();
        assert_eq!(overrun.unit, Unit::Iterations);
    }
}
