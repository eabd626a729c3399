use std::collections::HashSet;

use super::*;

#[test]
fn generated_ids_have_the_documented_shape() {
    let run = RunId::generate();
    assert_eq!(run.as_str().len(), 2 + RUN_ID_LEN);
    assert!(run.as_str().starts_with("r-"));
    let question = QuestionId::generate();
    assert_eq!(question.as_str().len(), 2 + QUESTION_ID_LEN);
    assert!(question.as_str().starts_with("q-"));
    for id in [run.as_str(), question.as_str()] {
        assert!(id[2..].bytes().all(|b| ALPHABET.contains(&b)), "{id}");
    }
}

#[test]
fn generated_ids_round_trip_through_text_and_json() {
    let run = RunId::generate();
    assert_eq!(run.to_string().parse::<RunId>(), Ok(run.clone()));
    let json = serde_json::to_string(&run).unwrap();
    assert_eq!(serde_json::from_str::<RunId>(&json).unwrap(), run);
}

#[test]
fn parsing_normalises_case_and_rejects_other_shapes() {
    assert_eq!(
        "Q-7K2M9X".parse::<QuestionId>().unwrap().as_str(),
        "q-7k2m9x"
    );
    for bad in ["", "q-", "r-abc", "q-ab_c", "q-ab c", "7k2m9x"] {
        assert!(bad.parse::<QuestionId>().is_err(), "{bad:?} parsed");
    }
    assert!(serde_json::from_str::<RunId>("\"q-abc\"").is_err());
}

#[test]
fn generated_ids_do_not_repeat_in_a_burst() {
    let ids: HashSet<RunId> = (0..10_000).map(|_| RunId::generate()).collect();
    assert_eq!(ids.len(), 10_000);
}
