#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! tether-store's integration tests, in one binary so child processes can re-run it (see
//! `suite/common.rs`).

mod suite;
