//! Parse a 10,000-goal plan and compute + apply one patch on it; render the task list of 10,000
//! and 40,000 goals, each with a problem and a flag (rendering must stay linear: 4x the goals,
//! about 4x the time).
//!
//! Bars (the README's performance targets): parse < 10 ms, patch < 1 ms. Run with
//! `cargo bench -p tether-plan --bench plan`.

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::fmt::Write as _;
use std::hint::black_box;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use tether_plan::render::{Flag, Options, task_list};
use tether_plan::{PlanDoc, Status};

fn big_plan(goals: usize) -> String {
    let mut s = String::from("# Plan: a very large plan\n\nSome preamble prose.\n");
    for i in 0..goals {
        let _ = write!(
            s,
            "\n## Goal: Goal number {i}\n<!-- id: goal-{i} -->\nstatus: {}\n\
             done_when: the thing numbered {i} works and p95 < 50ms\n\
             verify: cargo test -p thing{i}\nfailure_modes:\n- it is bypassed\n\
             - verify passes on a trivial test\nask_before: git push\nthreshold: 2\n\n\
             - [x] first step\n- [ ] second step\n- [ ] third step\n",
            if i % 3 == 0 { "active" } else { "open" }
        );
    }
    s.push_str("\n## Log\n- 2026-06-15 14:02 started\n");
    s
}

fn bench(c: &mut Criterion) {
    let text = big_plan(10_000);
    eprintln!(
        "plan: {} goals, {} lines, {} bytes",
        10_000,
        text.lines().count(),
        text.len()
    );
    // The CLI reads the file into a String and hands it over; the copy made here for each
    // iteration, and dropping the parsed result, are outside the timed section.
    c.bench_function("parse 10k goals", |b| {
        b.iter_batched(
            || text.clone(),
            |t| PlanDoc::parse("plan.md", black_box(t)),
            BatchSize::LargeInput,
        )
    });
    let doc = PlanDoc::parse("plan.md", text.as_str());
    assert!(doc.check().is_ok());
    c.bench_function("patch status on 10k goals", |b| {
        b.iter(|| {
            let patch = doc
                .set_status(black_box("goal-7777"), Status::Done)
                .unwrap();
            patch.apply(doc.text())
        })
    });
    c.bench_function("append log on 10k goals", |b| {
        b.iter(|| {
            let patch = doc
                .append_log(black_box("2026-06-15 14:03 one more"))
                .unwrap();
            patch.apply(doc.text())
        })
    });
}

fn render(c: &mut Criterion) {
    for goals in [10_000, 40_000] {
        // `threshold: 9` is out of range: every goal carries a problem, as a broken plan would.
        let text = big_plan(goals).replace("threshold: 2", "threshold: 9");
        let doc = PlanDoc::parse("plan.md", text.as_str());
        let opts = Options {
            flags: (0..goals)
                .map(|goal| Flag {
                    goal,
                    message: "contract changed since it was approved".to_owned(),
                })
                .collect(),
            notes: Vec::new(),
            log_lines: 5,
        };
        c.bench_function(&format!("render the task list of {goals} goals"), |b| {
            b.iter(|| task_list("plan.md", black_box(doc.plan()), &opts))
        });
    }
}

criterion_group!(benches, bench, render);
criterion_main!(benches);
