//! `archive_finished`: done and cancelled goals move, byte for byte, into `## Archive` at the end;
//! nothing else changes, and a second run changes nothing.

use proptest::prelude::*;
use tether_plan::{PlanDoc, Status};

const PLAN: &str = "# Plan: ship\n\n## Goal: First\n<!-- id: first -->\nstatus: done\n\n\
                    ## Goal: Second\n<!-- id: second -->\nstatus: active\n- [ ] one\n\n\
                    ## Goal: Third\n<!-- id: third -->\nstatus: cancelled\n\n## Log\n- started\n";

fn archived(text: &str) -> (String, Vec<String>) {
    let doc = PlanDoc::parse("plan.md", text);
    let (patch, titles) = doc.archive_finished().unwrap();
    (patch.apply(text), titles)
}

#[test]
fn finished_goals_move_to_a_new_archive_at_the_end() {
    let (text, titles) = archived(PLAN);
    assert_eq!(titles, ["First", "Third"]);
    insta::assert_snapshot!(text);
    let doc = PlanDoc::parse("plan.md", text.as_str());
    doc.check().unwrap();
    let goals: Vec<_> = doc
        .plan()
        .goals
        .iter()
        .map(|g| (g.id().unwrap().to_owned(), g.status()))
        .collect();
    assert_eq!(
        goals,
        [
            ("second".to_owned(), Status::Active),
            ("first".to_owned(), Status::Done),
            ("third".to_owned(), Status::Cancelled)
        ]
    );
    assert_eq!(doc.plan().log.as_ref().unwrap().entries.len(), 1);
    let (again, none) = archived(&text);
    assert_eq!((again, none.len()), (text, 0));
}

#[test]
fn an_existing_archive_takes_them_at_its_end_before_the_next_section() {
    let text = "# Plan: p\n\n## Goal: Old\nstatus: done\n\n## Goal: Now\nstatus: done\n\n\
                ## Goal: Open\nstatus: open\n\n## Archive\n\n## Goal: Older\nstatus: done\n\n\
                ## Log\n- a\n";
    let (out, titles) = archived(text);
    assert_eq!(titles, ["Old", "Now"]);
    assert_eq!(
        out,
        "# Plan: p\n\n## Goal: Open\nstatus: open\n\n## Archive\n\n## Goal: Older\nstatus: done\n\n\
         ## Goal: Old\nstatus: done\n\n## Goal: Now\nstatus: done\n\n## Log\n- a\n"
    );
}

#[test]
fn crlf_and_a_missing_final_newline_are_kept() {
    let text = "# Plan: p\r\n\r\n## Goal: A\r\nstatus: open\r\n\r\n## Goal: B\r\nstatus: done";
    let (out, _) = archived(text);
    assert_eq!(
        out,
        "# Plan: p\r\n\r\n## Goal: A\r\nstatus: open\r\n\r\n## Archive\r\n\r\n## Goal: B\r\nstatus: done\r\n"
    );
}

#[test]
fn a_plan_with_errors_is_not_archived() {
    let doc = PlanDoc::parse("plan.md", "# Plan: p\n\n## Goal: A\nstatus: finished\n");
    assert!(doc.archive_finished().is_err());
}

/// A plan of goals with the given statuses, each with a line of its own so they can be told
/// apart, and a log.
fn plan_of(statuses: &[Status], crlf: bool) -> String {
    let eol = if crlf { "\r\n" } else { "\n" };
    let mut text = format!("# Plan: p{eol}{eol}");
    for (i, s) in statuses.iter().enumerate() {
        text.push_str(&format!(
            "## Goal: G{i}{eol}<!-- id: g{i} -->{eol}status: {}{eol}- [ ] step {i}{eol}{eol}",
            s.as_str()
        ));
    }
    text.push_str(&format!("## Log{eol}- begun{eol}"));
    text
}

proptest! {
    #[test]
    fn archiving_moves_whole_goals_and_keeps_every_other_line(
        statuses in proptest::collection::vec(
            prop_oneof![Just(Status::Open), Just(Status::Active), Just(Status::Done), Just(Status::Cancelled)],
            0..8,
        ),
        crlf in any::<bool>(),
    ) {
        let text = plan_of(&statuses, crlf);
        let (out, titles) = archived(&text);
        let finished = statuses.iter().filter(|s| matches!(s, Status::Done | Status::Cancelled)).count();
        prop_assert_eq!(titles.len(), finished);
        let mut before: Vec<&str> = text.split_inclusive('\n').collect();
        let mut after: Vec<&str> = out.split_inclusive('\n').collect();
        if finished > 0 {
            // What was added: the heading and the blank lines around it.
            let eol = if crlf { "\r\n" } else { "\n" };
            let heading = format!("## Archive{eol}");
            let at = after.iter().position(|l| *l == heading).unwrap();
            after.remove(at);
            after.retain(|l| !l.trim().is_empty());
            before.retain(|l| !l.trim().is_empty());
        }
        before.sort_unstable();
        after.sort_unstable();
        prop_assert_eq!(before, after);
        let doc = PlanDoc::parse("plan.md", out.as_str());
        prop_assert!(doc.check().is_ok());
        let order: Vec<Status> = doc.plan().goals.iter().map(|g| g.status()).collect();
        let unfinished = statuses.len() - finished;
        prop_assert!(order[..unfinished].iter().all(|s| !matches!(s, Status::Done | Status::Cancelled)));
        let (again, _) = archived(&out);
        prop_assert_eq!(again, out);
    }
}
