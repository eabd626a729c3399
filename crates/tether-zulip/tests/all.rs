//! tether-zulip's integration tests, in one binary: the client against tether-testkit's fake
//! Zulip server (happy path, every fault, resume, follow-ups, cancellation, secrets, a seeded
//! chaos run). The fake server's own contract is tested in tether-testkit.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod suite;
