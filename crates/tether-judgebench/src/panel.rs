//! A judge panel measured on the corpus: each judge runs every case on its own (its false
//! accepts and rejects are its own), and the panel's decision on a case is the one its rule
//! makes of its judges' decisions there — asked in turn until decided, as a sign-off asks them
//! — with the calls, tokens, cost and time of the judges it asked. No judge is asked twice.

use tether_config::Agree;

use crate::run::{CaseResult, Got};

/// The panel's result on one case from `judges`' own results on it, in the order they are
/// asked, agreeing as `agree` says. `None` when `judges` is empty.
pub fn panel_case(judges: &[CaseResult], agree: Agree) -> Option<CaseResult> {
    let first = judges.first()?;
    let mut asked = Vec::new();
    let (mut yes, mut no) = (0, 0);
    let mut decision = None;
    for judge in judges {
        asked.push(judge);
        if judge.got == Got::Accepted {
            yes += 1;
        } else {
            no += 1;
        }
        decision = tether_signoff::panel::decided(agree, judges.len(), yes, no);
        if decision.is_some() {
            break;
        }
    }
    let not_accepting: Vec<&&CaseResult> =
        asked.iter().filter(|r| r.got != Got::Accepted).collect();
    // The judge whose reject decides: the first that judged, else the first that could not.
    let deciding = not_accepting
        .iter()
        .find(|r| !r.judge_unavailable)
        .or(not_accepting.first());
    let got = match (decision, deciding) {
        (Some(true), _) => Got::Accepted,
        (_, Some(r)) => match &r.got {
            Got::Refused { reason } => Got::Refused {
                reason: reason.clone(),
            },
            Got::Rejected { reason } => Got::Rejected {
                reason: reason.clone(),
            },
            Got::Accepted => Got::Rejected {
                reason: "the panel did not reach its rule".to_owned(),
            },
        },
        (_, None) => Got::Rejected {
            reason: "the panel did not reach its rule".to_owned(),
        },
    };
    let accepted = got == Got::Accepted;
    let mut cost_usd = None;
    for c in asked.iter().filter_map(|r| r.cost_usd) {
        cost_usd = Some(cost_usd.unwrap_or(0.0) + c);
    }
    Some(CaseResult {
        name: first.name.clone(),
        probes: first.probes.clone(),
        expected: first.expected,
        correct: accepted == (first.expected == crate::Expect::Accept),
        judge_unavailable: !accepted && deciding.is_some_and(|r| r.judge_unavailable),
        quotes_refused: !accepted && deciding.is_some_and(|r| r.quotes_refused),
        quote_check: first.quote_check.clone(),
        calls: asked.iter().map(|r| r.calls).sum(),
        tokens: asked.iter().map(|r| r.tokens).sum(),
        cost_usd,
        millis: asked.iter().map(|r| r.millis).sum(),
        got,
    })
}

#[cfg(test)]
mod tests {
    use tether_config::Agree;

    use super::panel_case;
    use crate::Expect;
    use crate::run::{CaseResult, Got};

    fn result(got: Got, calls: u32, cost: Option<f64>) -> CaseResult {
        CaseResult {
            name: "c".into(),
            probes: "p".into(),
            expected: Expect::Reject,
            correct: got != Got::Accepted,
            judge_unavailable: false,
            quotes_refused: false,
            quote_check: None,
            calls,
            tokens: u64::from(calls) * 100,
            cost_usd: cost,
            millis: 10,
            got,
        }
    }

    fn reject(why: &str) -> Got {
        Got::Rejected { reason: why.into() }
    }

    #[test]
    fn one_veto_under_all_catches_what_one_judge_let_through() {
        let fooled = result(Got::Accepted, 2, Some(0.01));
        let wary = result(reject("a test asserts nothing"), 3, Some(0.02));
        let unasked = result(Got::Accepted, 5, Some(1.0));
        let panel = panel_case(&[fooled, wary, unasked], Agree::All).unwrap();
        assert_eq!(panel.got, reject("a test asserts nothing"));
        assert!(panel.correct);
        assert_eq!(
            (panel.calls, panel.tokens, panel.millis),
            (5, 500, 20),
            "two asked"
        );
        assert!((panel.cost_usd.unwrap() - 0.03).abs() < 1e-9);
    }

    #[test]
    fn a_majority_lets_through_what_most_judges_accept() {
        let panel = panel_case(
            &[
                result(Got::Accepted, 1, None),
                result(reject("no"), 1, None),
                result(Got::Accepted, 1, None),
            ],
            Agree::Majority,
        )
        .unwrap();
        assert_eq!(panel.got, Got::Accepted);
        assert!(!panel.correct, "a false accept of the panel");
        assert_eq!(panel.cost_usd, None, "no judge has a price");
    }

    #[test]
    fn a_judge_that_could_not_judge_decides_only_when_no_other_rejected() {
        let mut unavailable = result(reject("judge unavailable: timeout"), 1, None);
        unavailable.judge_unavailable = true;
        let panel = panel_case(
            &[
                unavailable.clone(),
                result(reject("wrong"), 1, None),
                result(Got::Accepted, 1, None),
            ],
            Agree::Majority,
        )
        .unwrap();
        assert_eq!(panel.got, reject("wrong"));
        assert!(!panel.judge_unavailable);
        let panel = panel_case(&[unavailable], Agree::All).unwrap();
        assert!(panel.judge_unavailable);
        assert!(panel_case(&[], Agree::All).is_none());
    }
}
