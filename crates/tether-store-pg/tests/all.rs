#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! tether-store-pg's integration tests, against a real PostgreSQL started for this process
//! (`tether_testkit::postgres`); they fail when PostgreSQL is not installed (run ./test.sh).

mod suite;
