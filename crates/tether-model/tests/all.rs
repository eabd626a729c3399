#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! tether-model's integration tests, in one binary: the HTTP clients against tether-testkit's
//! fake model server (every wire format, every fault), and the in-process scripted model.

mod suite;
