//! `add_criterion`: only the bytes of the criterion are added, whatever the line endings.

use tether_plan::{PatchError, PlanDoc};

fn added(text: &str, id: &str, criterion: &str) -> String {
    let doc = PlanDoc::parse("plan.md", text);
    doc.add_criterion(id, criterion).unwrap().apply(text)
}

#[test]
fn the_criterion_follows_the_value_and_keeps_the_rest_of_the_line() {
    let text = "## Goal: A\r\n<!-- id: a -->\r\ndone_when: it works  \r\n";
    assert_eq!(
        added(text, "a", "it is fast\nreally"),
        "## Goal: A\r\n<!-- id: a -->\r\ndone_when: it works; it is fast really  \r\n"
    );
}

#[test]
fn a_goal_without_done_when_gets_one_under_its_heading_lines() {
    let text = "## Goal: A\n<!-- id: a -->\nstatus: active\nverify: true\n";
    assert_eq!(
        added(text, "a", "it exists"),
        "## Goal: A\n<!-- id: a -->\nstatus: active\ndone_when: it exists\nverify: true\n"
    );
    let bare = "## Goal: B\n<!-- id: b -->";
    assert_eq!(
        added(bare, "b", "done"),
        "## Goal: B\n<!-- id: b -->\ndone_when: done"
    );
}

#[test]
fn an_empty_criterion_or_an_unknown_goal_is_refused() {
    let doc = PlanDoc::parse("plan.md", "## Goal: A\n<!-- id: a -->\n");
    assert!(matches!(
        doc.add_criterion("a", " \n "),
        Err(PatchError::EmptyCriterion)
    ));
    assert!(matches!(
        doc.add_criterion("z", "x"),
        Err(PatchError::UnknownGoal { .. })
    ));
}
