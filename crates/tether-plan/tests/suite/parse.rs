//! Parser behaviour: the full contract format, code fences, malformed plans, line endings.

use tether_plan::{LineEnding, PlanDoc, ProblemKind, Severity, Status};

use super::fixture;

fn kinds(doc: &PlanDoc) -> Vec<(usize, ProblemKind)> {
    doc.plan()
        .problems
        .iter()
        .map(|p| (p.line, p.kind))
        .collect()
}

#[test]
fn product_example_parses_every_field() {
    let doc = PlanDoc::parse("plan.md", fixture("product.md"));
    let plan = doc.plan();
    assert!(plan.problems.is_empty(), "{:?}", plan.problems);
    assert_eq!(plan.title.as_ref().unwrap().value, "make the cache fast");
    let g = &plan.goals[0];
    assert_eq!(g.title, "Implement cache layer");
    assert_eq!(g.id(), Some("cache-layer"));
    assert_eq!(g.status(), Status::Active);
    assert_eq!(
        g.done_when.as_ref().unwrap().value,
        "p95 < 50ms on the bench. If wrong: timeouts in load-test.log"
    );
    assert_eq!(
        g.verify.as_ref().unwrap().value,
        "cargo test -p cache && ./bench/p95 --max-ms 50"
    );
    let fm: Vec<_> = g.failure_modes.iter().map(|l| l.value.as_str()).collect();
    assert_eq!(
        fm,
        [
            "cache silently bypassed (hit-rate ~0, latency ok by luck)",
            "verify passes on a trivial test"
        ]
    );
    let ab: Vec<_> = g.ask_before.iter().map(|l| l.value.as_str()).collect();
    assert_eq!(ab, ["git push", "cargo publish"]);
    assert_eq!(g.threshold(), Some(3));
    assert_eq!(g.subtasks.len(), 2);
    assert!(g.subtasks[0].checked && !g.subtasks[1].checked);
    assert_eq!((g.heading_line, g.end_line), (3, 16));
    let log = plan.log.as_ref().unwrap();
    assert_eq!(log.entries.len(), 1);
    assert_eq!(log.heading_line, 17);
}

#[test]
fn parsed_plan_json_is_stable() {
    let doc = PlanDoc::parse("plan.md", fixture("product.md"));
    insta::assert_json_snapshot!(doc.plan());
}

#[test]
fn malformed_plan_reports_every_problem_with_its_line() {
    let doc = PlanDoc::parse("plan.md", fixture("malformed.md"));
    let report: Vec<String> = doc
        .plan()
        .problems
        .iter()
        .map(ToString::to_string)
        .collect();
    insta::assert_snapshot!(report.join("\n"));
    let err = doc.check().unwrap_err();
    assert!(err.problems.iter().all(|p| p.severity == Severity::Error));
    insta::assert_snapshot!("malformed_plan_error", err.to_string());
}

#[test]
fn a_goal_heading_inside_a_code_fence_is_not_a_goal() {
    for fence in ["```", "~~~", "````"] {
        let text = format!(
            "# Plan: p\n\n{fence}md\n## Goal: fake\nstatus: bogus\n{fence}\n\n## Goal: real\n\
             <!-- id: real -->\nstatus: open\ndone_when: x\n"
        );
        let doc = PlanDoc::parse("plan.md", text);
        let titles: Vec<_> = doc.plan().goals.iter().map(|g| g.title.as_str()).collect();
        assert_eq!(titles, ["real"], "fence {fence}");
        assert!(doc.plan().problems.is_empty(), "{:?}", doc.plan().problems);
    }
}

#[test]
fn a_shorter_fence_does_not_close_a_longer_one() {
    let text = "````\n```\n## Goal: fake\n```\n````\n## Goal: real\n<!-- id: r -->\nstatus: open\ndone_when: x\n";
    let doc = PlanDoc::parse("plan.md", text);
    assert_eq!(doc.plan().goals.len(), 1);
    assert_eq!(doc.plan().goals[0].title, "real");
}

#[test]
fn an_unclosed_fence_is_an_error_and_swallows_the_rest() {
    let text = "## Goal: a\n<!-- id: a -->\nstatus: open\ndone_when: x\n```\n## Goal: b\n";
    let doc = PlanDoc::parse("plan.md", text);
    assert_eq!(doc.plan().goals.len(), 1);
    assert_eq!(kinds(&doc), [(5, ProblemKind::UnclosedFence)]);
    // Appending a log section after it would land inside the fence, so nothing is patched.
    assert!(doc.check().is_err());
}

#[test]
fn a_goal_heading_with_no_fields_is_a_precise_warning() {
    let doc = PlanDoc::parse("plan.md", "# Plan: p\n\n## Goal: Bare\n\nJust prose.\n");
    assert_eq!(
        kinds(&doc),
        [(3, ProblemKind::MissingId), (3, ProblemKind::NoFields)]
    );
    assert_eq!(doc.plan().goals[0].status(), Status::Open);
}

#[test]
fn missing_id_and_done_when_are_warnings_not_errors() {
    let doc = PlanDoc::parse("plan.md", "## Goal: G\nstatus: active\n- [ ] a\n");
    assert_eq!(
        kinds(&doc),
        [
            (1, ProblemKind::MissingId),
            (1, ProblemKind::MissingDoneWhen)
        ]
    );
    assert!(doc.check().is_ok());
}

#[test]
fn crlf_and_lf_parse_to_the_same_goals() {
    let lf = fixture("product.md");
    let crlf = lf.replace('\n', "\r\n");
    let a = PlanDoc::parse("plan.md", lf);
    let b = PlanDoc::parse("plan.md", crlf);
    assert_eq!(a.plan().goals, b.plan().goals);
    assert_eq!(a.plan().log, b.plan().log);
    assert_eq!(a.plan().line_ending, LineEnding::Lf);
    assert_eq!(b.plan().line_ending, LineEnding::CrLf);
}

#[test]
fn no_trailing_newline_and_empty_files() {
    let doc = PlanDoc::parse(
        "plan.md",
        "## Goal: G\n<!-- id: g -->\nstatus: done\ndone_when: x",
    );
    assert_eq!(doc.plan().goals[0].status(), Status::Done);
    assert_eq!(doc.plan().goals[0].end_line, 4);
    let empty = PlanDoc::parse("plan.md", "");
    assert!(empty.plan().goals.is_empty() && empty.plan().problems.is_empty());
}

#[test]
fn field_keys_and_statuses_are_case_insensitive_and_lists_take_both_forms() {
    let text = "## Goal: G\n<!-- ID: g -->\nStatus: Active\nDone_When: x\nask_before:\n- git push\n\n- npm publish\nfailure_modes: inline one\n- second\nthreshold: 0\n";
    let doc = PlanDoc::parse("plan.md", text);
    let g = &doc.plan().goals[0];
    assert!(doc.plan().problems.is_empty(), "{:?}", doc.plan().problems);
    assert_eq!(g.status(), Status::Active);
    assert_eq!(g.id(), Some("g"));
    let ab: Vec<_> = g.ask_before.iter().map(|l| l.value.as_str()).collect();
    assert_eq!(ab, ["git push", "npm publish"]);
    let fm: Vec<_> = g.failure_modes.iter().map(|l| l.value.as_str()).collect();
    assert_eq!(fm, ["inline one", "second"]);
    assert_eq!(g.threshold(), Some(0));
}

#[test]
fn prose_with_colons_is_not_a_field_but_a_near_miss_is_an_error() {
    let text = "## Goal: G\n<!-- id: g -->\nstatus: open\ndone_when: x\nNote: see http://example.com\nverfy: cargo test\n";
    let doc = PlanDoc::parse("plan.md", text);
    assert_eq!(kinds(&doc), [(6, ProblemKind::UnknownField)]);
    assert!(
        doc.plan().problems[0]
            .message
            .contains("did you mean `verify:`")
    );
}

#[test]
fn subtasks_accept_star_and_plus_bullets_and_capital_x() {
    let text = "## Goal: G\n<!-- id: g -->\nstatus: open\ndone_when: x\n* [X] one\n+ [ ] two\n  - [x] nested\n-[ ] not a subtask\n- [y] not one either\n";
    let doc = PlanDoc::parse("plan.md", text);
    let subs: Vec<_> = doc.plan().goals[0]
        .subtasks
        .iter()
        .map(|s| (s.text.as_str(), s.checked))
        .collect();
    assert_eq!(subs, [("one", true), ("two", false), ("nested", true)]);
}

#[test]
fn other_sections_end_a_goal_and_are_left_alone() {
    let text = "## Goal: G\n<!-- id: g -->\nstatus: open\ndone_when: x\n\n## Notes\nstatus: bogus\n- [ ] not a subtask\n### Sub heading\n";
    let doc = PlanDoc::parse("plan.md", text);
    let g = &doc.plan().goals[0];
    assert_eq!(g.end_line, 5);
    assert!(g.subtasks.is_empty());
    assert!(doc.plan().problems.is_empty());
}

#[test]
fn problem_codes_match_their_json_names() {
    let doc = PlanDoc::parse("plan.md", fixture("malformed.md"));
    for p in &doc.plan().problems {
        let json = serde_json::to_value(p.kind).unwrap();
        assert_eq!(json.as_str(), Some(p.kind.code()));
    }
}

#[test]
fn a_budget_line_is_read_checked_and_part_of_the_contract() {
    let plan = |budget: &str| {
        format!(
            "# Plan\n\n## Goal: Cache\n<!-- id: g1 -->\nstatus: active\ndone_when: fast\n{budget}\n"
        )
    };
    let doc = PlanDoc::parse("plan.md", plan("budget: 400k tokens, $5, 2h"));
    let goal = &doc.plan().goals[0];
    let budget = goal.budget().unwrap();
    assert_eq!(budget.tokens, Some(400_000));
    assert_eq!(budget.cost_usd, Some(5.0));
    assert_eq!(budget.duration_secs, Some(7200));
    let without = PlanDoc::parse("plan.md", plan(""));
    let other = PlanDoc::parse("plan.md", plan("budget: 500k tokens, $5, 2h"));
    let hash = |d: &PlanDoc| d.plan().goals[0].contract_hash();
    assert_ne!(hash(&doc), hash(&without));
    assert_ne!(hash(&doc), hash(&other));
    let bad = PlanDoc::parse("plan.md", plan("budget: lots of money"));
    assert_eq!(kinds(&bad), [(7, ProblemKind::InvalidBudget)]);
    assert!(
        bad.plan().problems[0]
            .message
            .contains("`budget:` does not read"),
        "{}",
        bad.plan().problems[0].message
    );
}

#[test]
fn a_network_line_is_read_checked_and_part_of_the_contract() {
    let plan = |network: &str| {
        format!(
            "# Plan\n\n## Goal: Fetch\n<!-- id: g1 -->\nstatus: active\ndone_when: fetched\n{network}\n"
        )
    };
    let on = PlanDoc::parse("plan.md", plan("network: on"));
    assert!(on.plan().goals[0].network());
    let off = PlanDoc::parse("plan.md", plan("network: off"));
    assert!(!off.plan().goals[0].network());
    let without = PlanDoc::parse("plan.md", plan(""));
    assert!(!without.plan().goals[0].network());
    let hash = |d: &PlanDoc| d.plan().goals[0].contract_hash();
    assert_ne!(hash(&on), hash(&without));
    assert_ne!(hash(&on), hash(&off));
    let bad = PlanDoc::parse("plan.md", plan("network: maybe"));
    assert_eq!(kinds(&bad), [(7, ProblemKind::InvalidNetwork)]);
    assert_eq!(
        bad.plan().problems[0].message,
        "`network:` is `maybe`; expected on or off"
    );
    assert!(!bad.plan().goals[0].network());
}

#[test]
fn after_names_the_goals_to_wait_for() {
    let doc = PlanDoc::parse("plan.md", fixture("after.md"));
    let plan = doc.plan();
    assert!(plan.problems.is_empty(), "{:?}", plan.problems);
    assert_eq!(plan.goals[2].after(), ["cache-layer", "config"]);
    assert_eq!(plan.goals[2].after.as_ref().unwrap().line, 18);
    assert_eq!(plan.goals[3].after(), ["cache-api"]);
    let ready: Vec<_> = plan.ready_goals().filter_map(|g| g.id()).collect();
    assert_eq!(ready, ["config"]);
}

#[test]
fn after_problems_name_their_lines() {
    let doc = PlanDoc::parse("plan.md", fixture("after-broken.md"));
    assert_eq!(
        kinds(&doc),
        [
            (6, ProblemKind::UnknownAfter),
            (12, ProblemKind::SelfAfter),
            (18, ProblemKind::AfterCycle),
            (36, ProblemKind::EmptyField),
        ]
    );
    insta::assert_snapshot!(doc.check().unwrap_err().to_string());
}
