//! The integration tests of tether-signoff, as one binary: signing goals off end to end with
//! real parts — a real plan file, real SQLite, real `sh` for verify, and a judge that is a
//! scripted model or the fake model server over HTTP. Each file of `suite/` is one area;
//! `common/` holds the fixture they share.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
mod suite;
