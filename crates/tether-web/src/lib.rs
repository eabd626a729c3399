//! tether's dashboard and its JSON API, served over HTTP from the workspace's store.
//!
//! # Why it looks like this
//!
//! A person who left an agent running wants to glance at a page — on a laptop or a phone — see
//! what every run is doing and what the judge said, and answer the question the agent waits on.
//! Everything the pages show is read from the store, so a `tether serve` shows runs driven by
//! other processes too, and everything they do goes through the store as the CLI does: an
//! answer through the broker's first-answer-wins write ([`tether_human::broker::answer`], which
//! wakes the waiting process), pause, cancel and messages through [`tether_store::control`].
//! This crate never runs a loop.
//!
//! - **Live without polling the page**: one watcher per server follows the journal (an
//!   `inotify` wake-up on the store's files, a slow re-check as a safety net) and hands every
//!   new event to the open streams ([`hub`]). Streams are server-sent events whose ids are the
//!   journal's seqs, so a browser that reconnects with `Last-Event-ID` misses nothing ([`live`]).
//! - **Safe on a shared machine**: a random token printed with the URL, exchanged for an
//!   `HttpOnly`, `SameSite=Strict` cookie; the `Host` header must name the server (no DNS
//!   rebinding); state-changing requests must come from the page's own origin; loopback unless
//!   a remote bind is asked for explicitly; a strict Content-Security-Policy, no inline script,
//!   and every text escaped by the template engine after control characters are made visible
//!   ([`security`], [`views`]).
//! - **Made for people**: server-rendered pages that work without script, one small script for
//!   the live updates and the remembered name; assets inside the binary; phone width, light and
//!   dark.

#![deny(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod api;
mod app;
mod db;
mod error;
mod filter;
pub mod hub;
pub mod live;
mod model;
mod pages;
pub mod security;
mod server;
pub mod views;

pub use error::WebError;
pub use hub::Wakes;
pub use server::{Bound, Settings, bind, bind_to, embedded};
