//! The integration tests of tether-agent, as one binary: the built-in agent's turns against a
//! scripted model, the `command` executor's runs of real programs, and the `pi` executor around a
//! stand-in for pi.
//! Each file of `suite/` is one area.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod suite;
