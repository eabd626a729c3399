//! The fake servers' own contracts, as one binary (see `suite/`): each checked over raw HTTP, so
//! the client tests of tether-model and tether-zulip run against something faithful.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod suite;
