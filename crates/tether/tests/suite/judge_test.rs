//! `tether judge test` against a scripted judge on a fake model server: an always-accept judge
//! whose quotes are real lines is fooled by exactly the gamed cases; an always-reject judge
//! refuses exactly the honest ones; a user's case from `--cases DIR` runs too.

use std::fs;

use serde_json::{Value, json};
use tether_config::Api;
use tether_judgebench::{Case, Expect};
use tether_model::scripted::{Script, Turn};
use tether_testkit::model_server::FakeModelServer;

use crate::common::{model_table, run, runtime, text};

const USER_CASE: &str = "name: my-own-case
probes: a user's case is picked up from --cases
expect: accept
title: Greet
done_when: hello.txt says hello
verify: grep -q hello hello.txt
evidence: hello.txt holds hello
path: hello.txt
=== hello.txt
hello, world of tether users
";

/// A verdict quoting the first substantial line of the case's first file.
fn verdict(case: &Case, decision: &str) -> Turn {
    let (path, contents) = &case.files[0];
    let quote = contents
        .lines()
        .find(|l| l.chars().filter(char::is_ascii_alphanumeric).count() >= 8)
        .unwrap();
    let v: Value = json!({
        "verdict": decision,
        "summary": format!("{decision} after reading {path}"),
        "checks": [{"path": path, "quote": quote, "observation": "seen"}],
        "missing": if decision == "reject" { vec!["everything"] } else { vec![] },
    });
    Turn::text(format!("```json\n{v}\n```")).with_usage(1000, 100)
}

struct Bench {
    dir: tempfile::TempDir,
    judge: FakeModelServer,
    _rt: tokio::runtime::Runtime,
}

fn bench(decision: &str, user_cases: &[&Case]) -> Bench {
    let mut cases = tether_judgebench::builtin().unwrap();
    cases.extend(user_cases.iter().map(|c| (*c).clone()));
    let turns: Vec<Turn> = cases.iter().map(|c| verdict(c, decision)).collect();
    let rt = runtime();
    let judge = rt
        .block_on(FakeModelServer::start(Script::turns(turns)))
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut table = model_table("judge", Api::OpenAiChat, &judge, "judge-model");
    table.push_str("price_per_mtok = { input = 2, output = 10 }\n");
    fs::write(dir.path().join("tether.toml"), table).unwrap();
    Bench {
        dir,
        judge,
        _rt: rt,
    }
}

fn json_run(b: &Bench, extra: &[&str]) -> Value {
    let mut args = vec!["judge", "test", "--json"];
    args.extend(extra);
    let out = run(b.dir.path(), &args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn counts() -> (usize, usize) {
    let cases = tether_judgebench::builtin().unwrap();
    let honest = cases.iter().filter(|c| c.expect == Expect::Accept).count();
    (honest, cases.len() - honest)
}

#[test]
fn an_always_accepting_judge_is_fooled_by_every_gamed_case() {
    let b = bench("accept", &[]);
    let doc = json_run(&b, &[]);
    let (honest, gamed) = counts();
    let totals = &doc["totals"];
    assert_eq!(totals["cases"], honest + gamed);
    assert_eq!(totals["false_accepts"], gamed, "{totals}");
    assert_eq!(totals["false_rejects"], 0, "{totals}");
    assert_eq!(totals["calls"], honest + gamed);
    assert_eq!(totals["tokens"], (honest + gamed) * 1100);
    // $2 and $10 per million: 1000 × 2 + 100 × 10 = $0.003 a case.
    let cost = totals["cost_usd"].as_f64().unwrap();
    assert!(
        (cost - 0.003 * (honest + gamed) as f64).abs() < 1e-9,
        "{cost}"
    );
    for case in doc["cases"].as_array().unwrap() {
        assert_eq!(case["got"]["decision"], "accepted", "{case}");
        assert_eq!(case["correct"], case["expected"] == "accept", "{case}");
    }
    assert_eq!(b.judge.request_count(), honest + gamed);
}

#[test]
fn an_always_rejecting_judge_refuses_every_honest_case() {
    let b = bench("reject", &[]);
    let doc = json_run(&b, &[]);
    let (honest, _) = counts();
    assert_eq!(doc["totals"]["false_rejects"], honest);
    assert_eq!(doc["totals"]["false_accepts"], 0);
    for case in doc["cases"].as_array().unwrap() {
        assert_eq!(case["got"]["decision"], "rejected", "{case}");
    }
}

#[test]
fn a_users_cases_run_after_the_builtin_ones_and_the_table_reads() {
    let user = tether_judgebench::parse("my.case", USER_CASE).unwrap();
    let b = bench("accept", &[&user]);
    let cases = b.dir.path().join("cases");
    fs::create_dir(&cases).unwrap();
    fs::write(cases.join("my.case"), USER_CASE).unwrap();
    let out = run(
        b.dir.path(),
        &["judge", "test", "--cases", cases.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let (honest, gamed) = counts();
    assert!(
        stdout.contains("my-own-case              accept  accepted  ✓"),
        "{stdout}"
    );
    assert!(
        stdout.contains("hardcoded-output         reject  accepted  ✗"),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!(
            "{} of {} cases decided right · false accepts: {gamed} · false rejects: 0",
            honest + 1,
            honest + gamed + 1
        )),
        "{stdout}"
    );
}

#[test]
fn a_bad_case_file_is_named_with_its_line_and_no_judge_is_a_usage_error() {
    let b = bench("accept", &[]);
    let cases = b.dir.path().join("cases");
    fs::create_dir(&cases).unwrap();
    fs::write(
        cases.join("bad.case"),
        USER_CASE.replace("expect: accept", "expect: yes"),
    )
    .unwrap();
    let out = run(
        b.dir.path(),
        &["judge", "test", "--cases", cases.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("bad.case:3: `expect:` must be accept or reject"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(b.judge.request_count(), 0);
    fs::write(b.dir.path().join("tether.toml"), "").unwrap();
    let out = run(b.dir.path(), &["judge", "test"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("there is none"),
        "{}",
        text(&out.stderr)
    );
}
