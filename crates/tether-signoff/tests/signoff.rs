//! Signing goals off end to end with real parts: a real plan file, real SQLite, real `sh` for
//! verify, and a judge that is a scripted model or the fake model server over HTTP.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "signoff/common.rs"]
mod common;
#[path = "signoff/contract.rs"]
mod contract;
#[path = "signoff/http.rs"]
mod http;
#[path = "signoff/judge.rs"]
mod judge;
#[path = "signoff/tools.rs"]
mod tools;
#[path = "signoff/verify.rs"]
mod verify;
