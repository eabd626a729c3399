//! tether-slack's integration tests, in one binary: the client against tether-testkit's fake
//! Slack (Web API + Socket Mode): plain and choice questions, follow-ups, every fault, resume,
//! several clients on one app, secrets, and a seeded chaos run.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod suite;
