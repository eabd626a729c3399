//! The task list a human reads: snapshot-tested.

use tether_plan::PlanDoc;
use tether_plan::render::{Flag, Options, task_list};

use super::fixture;

fn opts() -> Options {
    Options {
        flags: Vec::new(),
        notes: Vec::new(),
        log_lines: 3,
    }
}

#[test]
fn product_example() {
    let doc = PlanDoc::parse("plan.md", fixture("product.md"));
    insta::assert_snapshot!(task_list("plan.md", doc.plan(), &opts()));
}

#[test]
fn malformed_plan_shows_every_flag_under_its_goal() {
    let doc = PlanDoc::parse("plan.md", fixture("malformed.md"));
    insta::assert_snapshot!(task_list("plan.md", doc.plan(), &opts()));
}

#[test]
fn closed_goals_collapse_and_the_log_is_cut_to_its_tail() {
    let text = "# Plan: mixed\n\n## Goal: Shipped\n<!-- id: shipped -->\nstatus: done\ndone_when: out\n- [x] a\n- [x] b\n\n## Goal: Dropped\n<!-- id: dropped -->\nstatus: cancelled\ndone_when: n/a\n\n## Goal: Next\n<!-- id: next -->\nstatus: open\ndone_when: later\n- [x] one\n- [x] two\n- [ ] three\n\n## Log\n- 1\n- 2\n- 3\n- 4\n- 5\n";
    let doc = PlanDoc::parse("plan.md", text);
    let mut o = opts();
    o.flags.push(Flag {
        goal: 0,
        message: "done without a sign-off in the store".to_owned(),
    });
    o.notes.push(Flag {
        goal: 2,
        message: "contract not approved yet".to_owned(),
    });
    insta::assert_snapshot!(task_list("plan.md", doc.plan(), &o));
}

#[test]
fn an_empty_plan_says_how_to_start() {
    let doc = PlanDoc::parse("plan.md", "# Plan: nothing yet\n");
    insta::assert_snapshot!(task_list("plan.md", doc.plan(), &opts()));
}

#[test]
fn what_each_goal_waits_on() {
    let doc = PlanDoc::parse("plan.md", fixture("after.md"));
    insta::assert_snapshot!(task_list("plan.md", doc.plan(), &opts()));
}
