//! One judge's ruling on a sign-off attempt (its quotes checked), and the decision a judge
//! or a panel's rulings make ([`Ruling::decide`]).

use tether_store::{JudgeVote, VerdictKind};

use super::judge::SessionUsage;
use super::panel::Panel;
use super::record::{Decided, Decision, JUDGE_UNAVAILABLE};
use super::verdict::Check;

/// What one judge ruled, its quotes checked.
pub(super) struct Ruling {
    pub(super) model: String,
    pub(super) transcript: String,
    pub(super) used: SessionUsage,
    pub(super) kind: VerdictKind,
    pub(super) reason: String,
    pub(super) missing: Vec<String>,
    pub(super) checks: Vec<Check>,
}

impl Ruling {
    /// The judge could not judge: fail closed.
    pub(super) fn unavailable(mut self, why: String) -> Self {
        self.kind = VerdictKind::JudgeUnavailable;
        self.reason = format!("{JUDGE_UNAVAILABLE}: {why}");
        self
    }

    /// Whether it accepted with backed quotes.
    pub(super) fn accepted(&self) -> bool {
        self.kind == VerdictKind::Accepted
    }

    fn vote(&self) -> JudgeVote {
        JudgeVote {
            model: self.model.clone(),
            kind: self.kind,
            reason: self.reason.clone(),
            calls: self.used.calls,
            input_tokens: self.used.usage.input_tokens,
            output_tokens: self.used.usage.output_tokens,
            cost_usd: self.used.cost_usd,
            transcript_path: Some(self.transcript.clone()),
        }
    }

    /// `decision` as the judges of `panel` ruled (`rulings`, in the order they were asked):
    /// one judge's ruling is the decision; a panel's is signed off when its rule is met, and
    /// otherwise rejected with the kind of the first judge that did not accept (a judge that
    /// could not judge counts only when no other judge rejected), every vote kept.
    pub(super) fn decide(panel: &Panel, rulings: Vec<Ruling>, mut decision: Decision) -> Decided {
        if !panel.is_panel()
            && let [one] = rulings.as_slice()
        {
            decision.judge_model = Some(one.model.clone());
            decision.transcript = Some(one.transcript.clone());
            decision.checks.clone_from(&one.checks);
            return Decided {
                decision,
                kind: one.kind,
                reason: one.reason.clone(),
                missing: one.missing.clone(),
                votes: Vec::new(),
            };
        }
        let models: Vec<&str> = rulings.iter().map(|r| r.model.as_str()).collect();
        decision.judge_model = Some(models.join(", "));
        let votes: Vec<JudgeVote> = rulings.iter().map(Ruling::vote).collect();
        let (yes, no): (Vec<&Ruling>, Vec<&Ruling>) = rulings.iter().partition(|r| r.accepted());
        let judges = panel.judges().len();
        if panel.decided(yes.len(), no.len()) == Some(true) {
            decision.checks = yes.iter().flat_map(|r| r.checks.clone()).collect();
            decision.transcript = yes.first().map(|r| r.transcript.clone());
            let first = yes.first().map_or("", |r| r.reason.as_str());
            let reason = format!(
                "{} of {judges} judges accepted ({}): {first}",
                yes.len(),
                panel.agree().as_str()
            );
            return Decided {
                decision,
                kind: VerdictKind::Accepted,
                reason,
                missing: Vec::new(),
                votes,
            };
        }
        let deciding = no
            .iter()
            .find(|r| r.kind != VerdictKind::JudgeUnavailable)
            .or(no.first());
        let Some(deciding) = deciding else {
            // Every judge asked accepted, yet too few for the rule: cannot happen once the
            // panel is decided, and is not signed off.
            return Decided {
                decision,
                kind: VerdictKind::JudgeRejected,
                reason: "the panel did not reach its rule".to_owned(),
                missing: Vec::new(),
                votes,
            };
        };
        decision.checks.clone_from(&deciding.checks);
        decision.transcript = Some(deciding.transcript.clone());
        let mut missing: Vec<String> = Vec::new();
        for item in no.iter().flat_map(|r| &r.missing) {
            if !missing.contains(item) {
                missing.push(item.clone());
            }
        }
        let reason = format!(
            "{} of {} judges asked did not accept ({}); {}: {}",
            no.len(),
            rulings.len(),
            panel.agree().as_str(),
            deciding.model,
            deciding.reason
        );
        Decided {
            decision,
            kind: deciding.kind,
            reason,
            missing,
            votes,
        }
    }
}
