use super::*;

fn round_trips<T>(all: &[T])
where
    T: Copy + PartialEq + fmt::Debug + fmt::Display + FromStr + Serialize,
    <T as FromStr>::Err: fmt::Debug,
{
    for value in all {
        let text = value.to_string();
        assert_eq!(text.parse::<T>().ok(), Some(*value));
        assert_eq!(
            serde_json::to_value(value).unwrap(),
            serde_json::json!(text)
        );
    }
}

#[test]
fn every_value_has_one_spelling_in_text_and_json() {
    round_trips(RunKind::ALL);
    round_trips(RunStatus::ALL);
    round_trips(Outcome::ALL);
    round_trips(Verdict::ALL);
    round_trips(IterationOutcome::ALL);
    round_trips(QuestionStatus::ALL);
    round_trips(VerdictKind::ALL);
    round_trips(Rule::ALL);
}

#[test]
fn unknown_spellings_are_rejected() {
    let err = "Running".parse::<RunStatus>().unwrap_err();
    assert_eq!(err.to_string(), "`Running` is not a known run status");
}
