//! The integration tests of tether-runtime, as one binary: runs composed and driven through the
//! runtime against real directories, a real store and real agent processes.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod suite;
