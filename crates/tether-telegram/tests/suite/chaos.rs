//! A few seeds of the chaos scenario (the soak bench runs 1,000): none lost, none duplicated.

use super::chaos_scenario;

#[tokio::test]
async fn seeded_chaos_loses_and_duplicates_nothing() {
    for seed in 0..40 {
        let report = chaos_scenario::run(seed).await;
        assert!(!report.lost() && !report.duplicated(), "{report:#?}");
    }
}
