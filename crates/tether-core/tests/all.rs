//! The integration tests of tether-core, as one binary: the loops, plan mode, init and validation against real directories and a real store, with scripted executors and models.
//! Each file of `suite/` is one area; `common/` holds the scripted executor the loop tests share.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
mod suite;
