//! The integration tests of tether-ntfy, as one binary: publishing and following a topic
//! against the fake ntfy server.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod suite;
