//! The integration tests of tether-web, as one binary: the real server on 127.0.0.1:0 spoken to
//! over raw HTTP (the security checks, every API route, the pages' escaping, server-sent events
//! and their resumption, the web channel through the broker). Each file of `suite/` is one area.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
mod suite;
