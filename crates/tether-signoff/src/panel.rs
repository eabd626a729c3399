//! The judges that sign a goal off: one (`[judge]`), or a panel (`[[judge.panel]]` beside it)
//! that must agree — every judge (`agree = "all"`, the default: one reject rejects) or more than
//! half (`"majority"`).
//!
//! The judges are asked in turn, each in a session of its own over the same brief, each with
//! its own read-only tools and its own quotes checked ([`crate::steps`]); no judge is asked
//! once the outcome is decided ([`Panel::decided`]): with `"all"` the panel stops at the first
//! judge that does not accept, with `"majority"` once enough have accepted or enough have not.

use tether_config::{Agree, Env, JudgeConfig, ModelConfig};

use crate::JudgeSetupError;
use crate::judge::Judge;

/// The judges of a sign-off and how they agree. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Panel {
    judges: Vec<Judge>,
    agree: Agree,
}

impl Panel {
    /// One judge alone.
    pub fn one(judge: Judge) -> Self {
        Panel {
            judges: vec![judge],
            agree: Agree::All,
        }
    }

    /// `first` and the judges `more`, asked in that order, agreeing as `agree` says.
    pub fn new(first: Judge, more: Vec<Judge>, agree: Agree) -> Self {
        let mut judges = vec![first];
        judges.extend(more);
        Panel { judges, agree }
    }

    /// The judges `[judge]` and its `[[judge.panel]]` describe, each refused as
    /// [`Judge::from_config`] refuses one.
    pub fn from_config(
        config: &JudgeConfig,
        executor_model: Option<&ModelConfig>,
        env: &dyn Env,
    ) -> Result<Self, JudgeSetupError> {
        let first = Judge::from_config(config, executor_model, env)?;
        let more = config
            .panel
            .iter()
            .map(|judge| Judge::from_config(judge, executor_model, env))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Panel::new(first, more, config.agree))
    }

    /// The judges, in the order they are asked.
    pub fn judges(&self) -> &[Judge] {
        &self.judges
    }

    /// The first judge (`[judge]`).
    pub fn first(&self) -> &Judge {
        // A panel is never empty: every constructor puts a first judge in.
        &self.judges[0]
    }

    /// How the judges agree.
    pub fn agree(&self) -> Agree {
        self.agree
    }

    /// Whether more than one judge rules.
    pub fn is_panel(&self) -> bool {
        self.judges.len() > 1
    }

    /// The judges' models, for people: `a`, or `a, b and c (all must accept)`.
    pub fn describe(&self) -> String {
        let names: Vec<&str> = self.judges.iter().map(Judge::model_name).collect();
        match self.agree {
            _ if names.len() == 1 => names[0].to_owned(),
            Agree::All => format!("{} (all must accept)", and_list(&names)),
            Agree::Majority => format!("{} (a majority must accept)", and_list(&names)),
        }
    }

    /// The panel's outcome once `accepts` of its judges accepted and `others` did not:
    /// `Some(true)` signed off, `Some(false)` not, `None` while the next judge could change it.
    pub fn decided(&self, accepts: usize, others: usize) -> Option<bool> {
        decided(self.agree, self.judges.len(), accepts, others)
    }
}

/// [`Panel::decided`] for a panel of `n` judges agreeing as `agree` says.
pub fn decided(agree: Agree, n: usize, accepts: usize, others: usize) -> Option<bool> {
    let needed = match agree {
        Agree::All => n,
        Agree::Majority => n / 2 + 1,
    };
    if accepts >= needed {
        Some(true)
    } else if others > n - needed {
        Some(false)
    } else {
        None
    }
}

/// `a`, `a and b`, `a, b and c`.
pub(crate) fn and_list(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use tether_config::Agree;

    use super::{and_list, decided};

    #[test]
    fn all_stops_at_the_first_judge_that_does_not_accept() {
        assert_eq!(decided(Agree::All, 3, 0, 0), None);
        assert_eq!(decided(Agree::All, 3, 1, 0), None);
        assert_eq!(decided(Agree::All, 3, 1, 1), Some(false));
        assert_eq!(decided(Agree::All, 3, 0, 1), Some(false));
        assert_eq!(decided(Agree::All, 3, 3, 0), Some(true));
        assert_eq!(decided(Agree::All, 1, 1, 0), Some(true));
        assert_eq!(decided(Agree::All, 1, 0, 1), Some(false));
    }

    #[test]
    fn a_majority_is_more_than_half_and_a_tie_does_not_sign_off() {
        assert_eq!(decided(Agree::Majority, 3, 2, 0), Some(true));
        assert_eq!(decided(Agree::Majority, 3, 1, 1), None);
        assert_eq!(decided(Agree::Majority, 3, 0, 2), Some(false));
        assert_eq!(decided(Agree::Majority, 4, 2, 1), None);
        assert_eq!(decided(Agree::Majority, 4, 2, 2), Some(false), "a tie");
        assert_eq!(decided(Agree::Majority, 4, 3, 1), Some(true));
        assert_eq!(decided(Agree::Majority, 2, 1, 0), None);
        assert_eq!(decided(Agree::Majority, 2, 1, 1), Some(false));
    }

    #[test]
    fn names_are_listed_as_people_write_them() {
        assert_eq!(and_list(&["a"]), "a");
        assert_eq!(and_list(&["a", "b"]), "a and b");
        assert_eq!(and_list(&["a", "b", "c"]), "a, b and c");
    }

    proptest! {
        /// Asking every judge always decides, the outcome never changes once decided, and it
        /// is the count the rule names.
        #[test]
        fn a_decision_is_final_and_is_the_rule(
            votes in proptest::collection::vec(any::<bool>(), 1..8),
            majority in any::<bool>(),
        ) {
            let agree = if majority { Agree::Majority } else { Agree::All };
            let n = votes.len();
            let mut first = None;
            let (mut yes, mut no) = (0, 0);
            for accept in &votes {
                if *accept { yes += 1 } else { no += 1 }
                let now = decided(agree, n, yes, no);
                if let Some(found) = first {
                    prop_assert_eq!(now, Some(found), "a decision never changes");
                }
                first = first.or(now);
            }
            let all_asked = decided(agree, n, yes, no);
            let rule = match agree {
                Agree::All => yes == n,
                Agree::Majority => 2 * yes > n,
            };
            prop_assert_eq!(all_asked, Some(rule));
        }
    }
}
