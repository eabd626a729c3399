//! A run's usage and budget as one line each, for people: `tether status`, the run report and
//! `tether watch` say them the same way.

use tether_budget::{Budget, Spending, Unit};
use tether_store::Usage;

/// `agent 1200 in / 340 out tokens · judge 300 in / 20 out tokens`: who used what; `None` when
/// nothing was recorded.
pub fn usage_line(agent: &Usage, judge: &Usage, loop_judge: &Usage) -> Option<String> {
    let parts: Vec<String> = [
        ("agent", agent),
        ("judge", judge),
        ("loop judge", loop_judge),
    ]
    .iter()
    .filter(|(_, u)| u.is_known())
    .map(|(who, u)| format!("{who} {}", u.describe()))
    .collect();
    (!parts.is_empty()).then(|| parts.join(" · "))
}

/// `12.3k tokens of 400k tokens · $0.42 of $5.00`: what was spent of each limited unit but
/// iterations (said on their own); `None` when none is limited.
pub fn budget_line(limits: &Budget, spent: &Spending) -> Option<String> {
    let parts: Vec<String> = [Unit::Tokens, Unit::CostUsd, Unit::Duration]
        .into_iter()
        .filter_map(|unit| {
            let limit = limits.get(unit)?;
            Some(format!(
                "{} of {}",
                unit.format(spent.get(unit)),
                unit.format(limit)
            ))
        })
        .collect();
    (!parts.is_empty()).then(|| parts.join(" · "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_names_only_what_is_known_or_limited() {
        let none = Usage::default();
        assert_eq!(usage_line(&none, &none, &none), None);
        assert_eq!(budget_line(&Budget::default(), &Spending::default()), None);
        let judge = Usage {
            input_tokens: 300,
            output_tokens: 20,
            ..Usage::default()
        };
        let line = usage_line(&none, &judge, &none).unwrap_or_default();
        assert!(line.starts_with("judge "), "{line}");
        assert!(!line.contains("agent"), "{line}");
    }
}
