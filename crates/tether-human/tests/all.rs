//! The integration tests of tether-human, as one binary: the broker, its channels (against the fake Zulip server) and the notification path.
//! Each file of `suite/` is one area.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
mod suite;
