//! The seeded chaos test: 30 seeds of random faults, socket trouble, noise and answer timings;
//! every run must return the human's first answer, exactly once, with the question posted
//! exactly once. (The 1,000-seed soak is `cargo bench -p tether-slack --bench soak`.)

use super::chaos_scenario::run;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thirty_seeds_of_chaos_lose_and_duplicate_nothing() {
    let mut failures = Vec::new();
    let mut requests = 0;
    for seed in 0..30 {
        let report = run(seed).await;
        requests += report.requests;
        if report.lost() || report.duplicated() {
            failures.push(format!("{report:#?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        requests > 30 * 3,
        "the runs did real work ({requests} requests)"
    );
}
