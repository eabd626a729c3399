//! tether-telegram's integration tests, in one binary: the client against tether-testkit's fake
//! Bot API (plain and choice questions, every fault, two waiters on one bot, a seeded chaos run).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod suite;
