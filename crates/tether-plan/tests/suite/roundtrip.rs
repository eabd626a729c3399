//! Property tests: for random plans and random patches, every line a patch does not target is
//! byte-identical afterwards, and parsing the patched text agrees with the patch.

use proptest::prelude::*;
use tether_plan::{Patch, PlanDoc, Status, render};

/// A goal as the generator writes it.
#[derive(Debug, Clone)]
struct GenGoal {
    title: String,
    id: Option<String>,
    status: Option<Status>,
    done_when: Option<String>,
    verify: Option<String>,
    failure_modes: Vec<String>,
    /// Indices of earlier goals this one waits on (kept only where those goals have ids).
    after: Vec<usize>,
    subtasks: Vec<(bool, String)>,
    prose: Vec<String>,
    fake_fence: bool,
}

#[derive(Debug, Clone)]
struct GenPlan {
    crlf: bool,
    trailing_newline: bool,
    title: Option<String>,
    preamble: Vec<String>,
    goals: Vec<GenGoal>,
    log: Option<Vec<String>>,
    log_first: bool,
    notes: Vec<String>,
}

fn prose() -> impl Strategy<Value = String> {
    // No characters that start markdown structure this parser reads (`#`, bullets, fences,
    // comments, `key:`), so prose never turns into a field by accident.
    "[A-Za-z][A-Za-z0-9 ,.!?()é✓]{0,30}"
}

fn text() -> impl Strategy<Value = String> {
    "[A-Za-z][A-Za-z0-9 ,.()<>=/'é&|]{0,30}".prop_map(|s| s.trim_end().to_owned())
}

fn status() -> impl Strategy<Value = Status> {
    prop::sample::select(Status::ALL.to_vec())
}

fn goal() -> impl Strategy<Value = GenGoal> {
    (
        "[A-Za-z][A-Za-z0-9 ]{0,20}",
        any::<bool>(),
        prop::option::of(status()),
        prop::option::of(text()),
        prop::option::of(text()),
        prop::collection::vec(text(), 0..3),
        prop::collection::vec((any::<bool>(), text()), 0..5),
        prop::collection::vec(prose(), 0..3),
        any::<bool>(),
        prop::collection::vec(any::<usize>(), 0..3),
    )
        .prop_map(
            |(
                title,
                has_id,
                status,
                done_when,
                verify,
                failure_modes,
                subtasks,
                prose,
                fake,
                after,
            )| {
                GenGoal {
                    title: title.trim().to_owned(),
                    id: has_id.then_some(String::new()),
                    status,
                    done_when,
                    verify,
                    failure_modes,
                    after,
                    subtasks,
                    prose,
                    fake_fence: fake,
                }
            },
        )
}

fn plan() -> impl Strategy<Value = GenPlan> {
    (
        any::<bool>(),
        any::<bool>(),
        prop::option::of(prose()),
        prop::collection::vec(prose(), 0..3),
        prop::collection::vec(goal(), 0..6),
        prop::option::of(prop::collection::vec(text(), 0..4)),
        any::<bool>(),
        prop::collection::vec(prose(), 0..2),
    )
        .prop_map(
            |(crlf, trailing_newline, title, preamble, mut goals, log, log_first, notes)| {
                for (i, g) in goals.iter_mut().enumerate() {
                    if g.id.is_some() {
                        g.id = Some(format!("g{i}"));
                    }
                }
                // `after:` names only earlier goals that have ids, so the plan has no cycle.
                let has_id: Vec<bool> = goals.iter().map(|g| g.id.is_some()).collect();
                for (i, g) in goals.iter_mut().enumerate() {
                    let mut after: Vec<usize> = g
                        .after
                        .iter()
                        .filter(|_| i > 0)
                        .map(|k| k % i.max(1))
                        .filter(|k| has_id[*k])
                        .collect();
                    after.dedup();
                    g.after = after;
                }
                GenPlan {
                    crlf,
                    trailing_newline,
                    title,
                    preamble,
                    goals,
                    log,
                    log_first,
                    notes,
                }
            },
        )
}

fn write(p: &GenPlan) -> String {
    let mut lines: Vec<String> = Vec::new();
    if let Some(t) = &p.title {
        lines.push(format!("# Plan: {t}"));
    }
    lines.extend(p.preamble.iter().cloned());
    let log = |lines: &mut Vec<String>| {
        if let Some(entries) = &p.log {
            lines.push(String::new());
            lines.push("## Log".to_owned());
            lines.extend(entries.iter().map(|e| format!("- {e}")));
        }
    };
    if p.log_first {
        log(&mut lines);
    }
    for g in &p.goals {
        lines.push(String::new());
        lines.push(format!("## Goal: {}", g.title));
        if let Some(id) = &g.id {
            lines.push(format!("<!-- id: {id} -->"));
        }
        if let Some(s) = g.status {
            lines.push(format!("status: {s}"));
        }
        if let Some(d) = &g.done_when {
            lines.push(format!("done_when: {d}"));
        }
        if let Some(v) = &g.verify {
            lines.push(format!("verify: {v}"));
        }
        if !g.after.is_empty() {
            let ids: Vec<String> = g.after.iter().map(|k| format!("g{k}")).collect();
            lines.push(format!("after: {}", ids.join(" , ")));
        }
        if !g.failure_modes.is_empty() {
            lines.push("failure_modes:".to_owned());
            lines.extend(g.failure_modes.iter().map(|f| format!("- {f}")));
        }
        lines.extend(g.prose.iter().cloned());
        if g.fake_fence {
            lines.extend(
                [
                    "```md",
                    "## Goal: not real",
                    "status: bogus",
                    "- [ ] fake",
                    "```",
                ]
                .map(str::to_owned),
            );
        }
        lines.push(String::new());
        for (checked, t) in &g.subtasks {
            lines.push(format!("- [{}] {t}", if *checked { 'x' } else { ' ' }));
        }
    }
    if !p.notes.is_empty() {
        lines.push("## Notes".to_owned());
        lines.extend(p.notes.iter().cloned());
    }
    if !p.log_first {
        log(&mut lines);
    }
    let eol = if p.crlf { "\r\n" } else { "\n" };
    let mut out = lines.join(eol);
    if p.trailing_newline && !out.is_empty() {
        out.push_str(eol);
    }
    out
}

/// What a goal means, without line numbers (which inserts shift).
type Meaning = (
    String,
    Option<String>,
    Status,
    Option<String>,
    Option<String>,
    Vec<String>,
    Vec<(String, bool)>,
    Vec<String>,
);

fn meaning(doc: &PlanDoc) -> Vec<Meaning> {
    doc.plan()
        .goals
        .iter()
        .map(|g| {
            (
                g.title.clone(),
                g.id().map(str::to_owned),
                g.status(),
                g.done_when.as_ref().map(|l| l.value.clone()),
                g.verify.as_ref().map(|l| l.value.clone()),
                g.failure_modes.iter().map(|l| l.value.clone()).collect(),
                g.subtasks
                    .iter()
                    .map(|s| (s.text.clone(), s.checked))
                    .collect(),
                g.after().to_vec(),
            )
        })
        .collect()
}

fn log_entries(doc: &PlanDoc) -> Vec<String> {
    doc.plan()
        .log
        .as_ref()
        .map(|l| l.entries.iter().map(|e| e.text.clone()).collect())
        .unwrap_or_default()
}

/// The line without the one terminator (`\n` or `\r\n`) it gained.
fn gained_terminator(line: &str) -> Option<&str> {
    let s = line.strip_suffix('\n')?;
    Some(s.strip_suffix('\r').unwrap_or(s))
}

/// Splits into lines with their terminators.
fn raw_lines(s: &str) -> Vec<&str> {
    s.split_inclusive('\n').collect()
}

/// Checks that `after` is `before` with exactly `inserted` whole lines added, every old line kept
/// byte for byte (the old last line may gain a terminator if it had none).
fn assert_only_inserted(before: &str, after: &str, inserted: usize) {
    let old = raw_lines(before);
    let new = raw_lines(after);
    assert_eq!(new.len(), old.len() + inserted, "line count");
    let mut j = 0;
    for (i, line) in old.iter().enumerate() {
        let last_unterminated = i + 1 == old.len() && !line.ends_with('\n');
        while j < new.len()
            && !(new[j] == *line || (last_unterminated && gained_terminator(new[j]) == Some(*line)))
        {
            j += 1;
        }
        assert!(j < new.len(), "old line {} ({line:?}) lost", i + 1);
        j += 1;
    }
}

/// Checks that only line `target` (1-based) differs.
fn assert_only_line_changed(before: &str, after: &str, target: usize) {
    let old = raw_lines(before);
    let new = raw_lines(after);
    assert_eq!(old.len(), new.len());
    for (i, (a, b)) in old.iter().zip(&new).enumerate() {
        if i + 1 != target {
            assert_eq!(a, b, "line {} changed", i + 1);
        }
    }
}

#[derive(Debug, Clone)]
enum Op {
    Status(usize, Status),
    Subtask(usize, usize, bool),
    Log(String),
    Ids,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (any::<usize>(), status()).prop_map(|(g, s)| Op::Status(g, s)),
        (any::<usize>(), any::<usize>(), any::<bool>()).prop_map(|(g, i, c)| Op::Subtask(g, i, c)),
        "[A-Za-z][A-Za-z0-9 \n.]{0,30}".prop_map(Op::Log),
        Just(Op::Ids),
    ]
}

fn check_op(doc: &PlanDoc, op: &Op) -> PlanDoc {
    let before = doc.text();
    let goals = &doc.plan().goals;
    let pick = |g: usize| (!goals.is_empty()).then(|| g % goals.len());
    let (patch, after): (Patch, PlanDoc) = match op {
        Op::Status(g, s) => {
            let Some(gi) = pick(*g) else {
                return doc.clone();
            };
            let Some(id) = goals[gi].id() else {
                return doc.clone();
            };
            let patch = doc.set_status(id, *s).unwrap();
            let after = doc.apply(&patch);
            match &goals[gi].status {
                Some(f) => assert_only_line_changed(before, after.text(), f.line),
                None => assert_only_inserted(before, after.text(), 1),
            }
            let mut want = meaning(doc);
            want[gi].2 = *s;
            assert_eq!(meaning(&after), want);
            (patch, after)
        }
        Op::Subtask(g, i, c) => {
            let Some(gi) = pick(*g) else {
                return doc.clone();
            };
            let goal = &goals[gi];
            let (Some(id), false) = (goal.id(), goal.subtasks.is_empty()) else {
                return doc.clone();
            };
            let si = i % goal.subtasks.len();
            let patch = doc.set_subtask(id, si + 1, *c).unwrap();
            let after = doc.apply(&patch);
            assert_only_line_changed(before, after.text(), goal.subtasks[si].line);
            let mut want = meaning(doc);
            want[gi].6[si].1 = *c;
            assert_eq!(meaning(&after), want);
            (patch, after)
        }
        Op::Log(entry) => {
            let patch = doc.append_log(entry).unwrap();
            let after = doc.apply(&patch);
            let added = if doc.plan().log.is_some() {
                1
            } else if before.is_empty()
                || raw_lines(before)
                    .last()
                    .is_some_and(|l| l.trim().is_empty())
            {
                2
            } else {
                3
            };
            assert_only_inserted(before, after.text(), added);
            let mut want = log_entries(doc);
            let one_line: Vec<_> = entry
                .split(['\r', '\n'])
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .collect();
            want.push(one_line.join(" "));
            assert_eq!(log_entries(&after), want);
            assert_eq!(meaning(&after), meaning(doc));
            (patch, after)
        }
        Op::Ids => {
            let (patch, assigned) = doc.add_missing_ids().unwrap();
            let after = doc.apply(&patch);
            assert_only_inserted(before, after.text(), assigned.len());
            let ids: Vec<_> = after
                .plan()
                .goals
                .iter()
                .map(|g| g.id().unwrap().to_owned())
                .collect();
            let unique: std::collections::HashSet<_> = ids.iter().collect();
            assert_eq!(unique.len(), ids.len(), "ids unique");
            let mut want = meaning(doc);
            let mut k = 0;
            for m in &mut want {
                if m.1.is_none() {
                    m.1 = Some(assigned[k].id.clone());
                    k += 1;
                }
            }
            assert_eq!(meaning(&after), want);
            (patch, after)
        }
    };
    assert!(
        after.check().is_ok(),
        "patched plan has errors: {:?}",
        after.plan().problems
    );
    assert_eq!(patch.apply(before), after.text());
    // A CRLF file stays CRLF: no bare LF appears.
    if before.contains("\r\n") {
        assert!(
            !after.text().replace("\r\n", "").contains('\n'),
            "bare LF in a CRLF file"
        );
    }
    after
}

proptest! {
    #![proptest_config(ProptestConfig {
        failure_persistence: Some(Box::new(
            proptest::test_runner::FileFailurePersistence::Direct("tests/suite/roundtrip.proptest-regressions"),
        )),
        ..ProptestConfig::default()
    })]

    #[test]
    fn generated_plans_parse_to_what_was_written(p in plan()) {
        let text = write(&p);
        let doc = PlanDoc::parse("plan.md", text.as_str());
        prop_assert!(doc.check().is_ok(), "{:?}\n{text}", doc.plan().problems);
        let got = meaning(&doc);
        prop_assert_eq!(got.len(), p.goals.len());
        for (m, g) in got.iter().zip(&p.goals) {
            prop_assert_eq!(&m.0, &g.title);
            prop_assert_eq!(&m.1, &g.id);
            prop_assert_eq!(m.2, g.status.unwrap_or(Status::Open));
            prop_assert_eq!(&m.3, &g.done_when);
            prop_assert_eq!(&m.4, &g.verify);
            prop_assert_eq!(&m.5, &g.failure_modes);
            let subs: Vec<_> = g.subtasks.iter().map(|(c, t)| (t.clone(), *c)).collect();
            prop_assert_eq!(&m.6, &subs);
            let after: Vec<_> = g.after.iter().map(|k| format!("g{k}")).collect();
            prop_assert_eq!(&m.7, &after);
        }
        prop_assert_eq!(log_entries(&doc), p.log.unwrap_or_default());
    }

    #[test]
    fn patches_touch_only_their_lines(p in plan(), ops in prop::collection::vec(op(), 1..6)) {
        let mut doc = PlanDoc::parse("plan.md", write(&p));
        for op in &ops {
            doc = check_op(&doc, op);
        }
    }

    #[test]
    fn any_text_parses_and_renders_without_panicking(s in "(?s).{0,400}") {
        let doc = PlanDoc::parse("plan.md", s.as_str());
        let lines = s.split_inclusive('\n').count().max(1);
        for p in &doc.plan().problems {
            prop_assert!(p.line >= 1 && p.line <= lines);
        }
        for g in &doc.plan().goals {
            prop_assert!(g.heading_line <= g.end_line && g.end_line <= lines);
        }
        let _ = render::task_list("plan.md", doc.plan(), &render::Options::default());
    }

    #[test]
    fn markdown_like_text_never_breaks_patching(
        lines in prop::collection::vec(prop_oneof![
            Just("## Goal: A".to_owned()), Just("## Goal: A".to_owned()), Just("## Log".to_owned()),
            Just("```".to_owned()), Just("status: active".to_owned()), Just("- [ ] x".to_owned()),
            Just("- [x] y".to_owned()), Just("done_when: z".to_owned()), Just(String::new()),
            Just("<!-- id: a -->".to_owned()), Just("- item".to_owned()), Just("# T".to_owned()),
            Just("failure_modes:".to_owned()), Just("## Other".to_owned()),
            Just("after: a".to_owned()), "[a-z :]{0,12}",
        ], 0..30),
        crlf in any::<bool>(),
        ops in prop::collection::vec(op(), 1..4),
    ) {
        let text = lines.join(if crlf { "\r\n" } else { "\n" });
        let mut doc = PlanDoc::parse("plan.md", text);
        if doc.check().is_ok() {
            for op in &ops {
                doc = check_op(&doc, op);
            }
        }
    }
}
