//! The integration tests of tether-plan, as one binary (see `suite/`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod suite;
