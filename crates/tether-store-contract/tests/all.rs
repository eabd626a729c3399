#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The store contract on every backend; the team store's tests run against a real PostgreSQL
//! started for this process (`tether_testkit::postgres`) and fail when PostgreSQL is not
//! installed (run ./test.sh).

mod suite;
