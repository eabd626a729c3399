//! Question escalation (`human.remind_after`, `human.escalate_after`, `human.escalate_to`):
//! its values and schema walk. What `human.escalate_to` may name is the schema's: each notice
//! sink a table declares ([`crate::Role::Sink`]), by its table's name, or `name:<arg>` when
//! the sink takes an argument (another topic, another recipient).

use crate::Channel;
use crate::declare::Role;
use crate::reader::{Reader, Table, entry, path_of};

/// A sink a question is escalated to (`human.escalate_to`), built only for escalation: a
/// notice sink's table, with what followed the colon when anything did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EscalationTarget {
    /// The sink, by its table's name.
    pub kind: Channel,
    /// What followed `name:` (`oncall` in `ntfy:oncall`), when the sink takes an argument.
    pub arg: Option<String>,
}

impl EscalationTarget {
    /// The spelling in `tether.toml`.
    pub fn spelling(&self) -> String {
        match &self.arg {
            Some(arg) => format!("{}:{arg}", self.kind.as_str()),
            None => self.kind.as_str().to_owned(),
        }
    }

    /// `value` as one of `schema`'s sinks names it, or the sentence saying what it may be.
    fn parse(value: &str, schema: &crate::Schema) -> Result<Self, String> {
        let (kind, arg) = match value.split_once(':') {
            Some((kind, arg)) => (kind, Some(arg.trim())),
            None => (value, None),
        };
        if arg == Some("") {
            return Err(format!("{value:?} names nothing after the colon"));
        }
        let sink = schema.sinks().into_iter().find(|decl| decl.name == kind);
        match (sink.map(|decl| (decl.name, decl.role)), arg) {
            (Some((name, Role::Sink { arg: Some(rule) })), Some(arg)) => {
                (rule.check)(arg)?;
                Ok(EscalationTarget {
                    kind: Channel::named(name),
                    arg: Some(arg.to_owned()),
                })
            }
            (Some((name, _)), None) => Ok(EscalationTarget {
                kind: Channel::named(name),
                arg: None,
            }),
            _ => Err(format!(
                "must be {}, got {value:?}",
                crate::template::or_list(&schema.escalation_spellings())
            )),
        }
    }
}

/// A duration setting of `[human]` (`"30m"`, `"2h"`, spelled as `max_duration`), in seconds.
fn duration(r: &mut Reader, t: &Table, key: &str) -> Option<u64> {
    let (_, v) = entry(t, key)?;
    let path = path_of(t.path, key);
    let parsed = match v.get_ref().as_str() {
        Some(s) => tether_budget::parse_duration(s)
            .map_err(|e| e.to_string())
            .and_then(|secs| {
                if secs == 0 {
                    Err("must be longer than 0s".to_owned())
                } else {
                    Ok(secs)
                }
            }),
        None => Err("must be a duration string such as \"30m\" or \"2h\"".to_owned()),
    };
    match parsed {
        Ok(secs) => Some(secs),
        Err(message) => {
            r.report(Some(v.span()), path, message);
            None
        }
    }
}

/// `remind_after`, `escalate_after` and `escalate_to` of `[human]`, into `out`.
pub(crate) fn read_escalation(
    r: &mut Reader,
    t: &Table,
    schema: &crate::Schema,
    out: &mut crate::HumanConfig,
) {
    out.remind_after_secs = duration(r, t, "remind_after");
    out.escalate_after_secs = duration(r, t, "escalate_after");
    if let Some(list) = r.string_list(t, "escalate_to", |v| {
        EscalationTarget::parse(v, schema).map(|_| ())
    }) {
        out.escalate_to = list
            .iter()
            .filter_map(|v| EscalationTarget::parse(v, schema).ok())
            .collect();
    }
    let after = entry(t, "escalate_after");
    let to = entry(t, "escalate_to");
    match (after, to) {
        (Some((_, v)), None) => r.report(
            Some(v.span()),
            "human.escalate_after",
            "has no effect without `human.escalate_to` (the sinks to offer the question on then)",
        ),
        (None, Some((_, v))) => r.report(
            Some(v.span()),
            "human.escalate_to",
            "has no effect without `human.escalate_after` (how long a question waits first)",
        ),
        _ => {}
    }
}
