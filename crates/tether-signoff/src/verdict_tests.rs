#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::{Check, Decision, parse};

#[test]
fn a_fenced_verdict_after_prose_parses() {
    let msg = "I read the code.\n\n```json\n{\"verdict\":\"accept\",\"summary\":\" ok \",\
               \"checks\":[{\"path\":\"a.rs\",\"quote\":\"fn a()\",\"observation\":\"there\"}],\
               \"missing\":[]}\n```\n";
    let v = parse(msg).unwrap();
    assert_eq!(v.decision, Decision::Accept);
    assert_eq!(v.summary.as_deref(), Some("ok"));
    assert_eq!(
        v.checks,
        vec![Check {
            path: "a.rs".into(),
            quote: "fn a()".into(),
            observation: "there".into(),
            line: None,
        }]
    );
}

#[test]
fn the_last_object_wins_and_nested_objects_stay_inside() {
    let msg = "draft: {\"verdict\":\"accept\",\"checks\":[]}\nfinal: {\"verdict\":\"reject\",\
               \"checks\":[{\"path\":\"x\",\"quote\":\"{\",\"observation\":\"o\"}],\
               \"missing\":[\"tests\", \" \"]} trailing {not json";
    let v = parse(msg).unwrap();
    assert_eq!(v.decision, Decision::Reject);
    assert_eq!(v.missing, vec!["tests".to_owned()]);
    assert_eq!(v.checks.len(), 1);
}

#[test]
fn a_verdict_object_is_preferred_over_a_later_example() {
    let msg = "{\"verdict\":\"reject\",\"missing\":[\"a\"]}\nFor example {\"path\":\"p\"}";
    assert_eq!(parse(msg).unwrap().decision, Decision::Reject);
}

#[test]
fn garbage_is_no_verdict() {
    for (msg, why) in [
        ("I think it is done.", "no JSON object"),
        (
            "{\"verdict\": \"maybe\"}",
            "not `accept`, `reject`, `impossible` or `blocked`",
        ),
        ("{\"verdict\": 1}", "expected shape"),
        ("{\"checks\": []}", "expected shape"),
        ("```json\n{\"verdict\": \"accept\",\n```", "no JSON object"),
    ] {
        let err = parse(msg).unwrap_err();
        assert!(err.contains(why), "{msg:?}: {err}");
    }
}

#[test]
fn a_goal_ruled_impossible_or_blocked_parses_with_its_reason() {
    for (word, decision) in [
        ("impossible", Decision::Impossible),
        ("Blocked", Decision::Blocked),
    ] {
        let msg = format!(
            "```json\n{{\"verdict\": \"{word}\", \"summary\": \"it needs the production key\"}}\n```"
        );
        let v = parse(&msg).unwrap();
        assert_eq!(v.decision, decision);
        assert_eq!(v.summary.as_deref(), Some("it needs the production key"));
    }
}
