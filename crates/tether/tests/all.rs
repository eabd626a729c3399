//! The integration tests of tether, as one binary: the binary as a user runs it, as a process, against fake model and chat servers.
//! Each file of `suite/` is one area; `common/` holds the runner of the binary and the MCP client they share.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
mod suite;
