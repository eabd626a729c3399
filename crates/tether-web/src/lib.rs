//! tether's dashboard and its JSON API, served over HTTP from the workspace's store or a team's.
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
//! - **One machine or a team**: the store is opened through a [`tether_store::Connector`] —
//!   the workspace's own file ([`bind`]) or a team's database ([`bind_to`]), which holds the
//!   runs of every machine. Each run shows its machine and workspace, and the runs list filters
//!   by machine, workspace and state. A run of another machine is never taken for killed (its
//!   lock is not here) and its plan and verify logs, which live there, are not read here.
//! - **Live without polling the page**: one watcher per server follows the journal (an
//!   `inotify` wake-up on the store's files when they are local; the team store's feed of
//!   changes and an outside wake-up the caller hands in otherwise; a slow re-check as a safety
//!   net) and hands every new event to the open streams ([`hub`]). Streams are server-sent events whose ids are the
//!   journal's seqs, so a browser that reconnects with `Last-Event-ID` misses nothing ([`live`]).
//! - **Safe on a shared machine**: a random token printed with the URL, kept by the page in
//!   `sessionStorage` (this origin's alone, port included) and sent as a bearer header — never
//!   in a cookie, which browsers would send to every other server on `127.0.0.1`; the `Host`
//!   header must name the server (no DNS rebinding); state-changing requests must not come
//!   from another origin; loopback unless
//!   a remote bind is asked for explicitly; a strict Content-Security-Policy, no inline script,
//!   and every text escaped by the template engine after control characters are made visible
//!   ([`security`], [`views`]).
//! - **Made for people**: server-rendered pages, one small script that carries the token,
//!   fetches the pages and sends the forms with it, places the live updates and remembers the
//!   name; assets inside the binary; phone width, light and dark.

#![deny(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod api;
mod app;
mod body;
mod db;
mod error;
mod filter;
pub mod hub;
pub mod launch;
pub mod live;
mod model;
mod pages;
pub mod security;
mod server;
pub mod views;

pub use error::WebError;
pub use hub::Wakes;
pub use launch::{LaunchError, Launcher, NewRun, Started};
pub use server::{Bound, Settings, bind, bind_to, embedded};
pub use tether_store::launch::{SideAsker, SideReply};
