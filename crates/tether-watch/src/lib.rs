//! `tether watch`: every run of the workspace (with a team store, of every machine) in a
//! terminal, grouped as a person looks for them — needs input, running, paused, done — with the
//! runs waiting for a person always first and never shown as working; the selected run's live
//! header (iteration of its budget, state, tokens, cost, budget left, elapsed, its usage per
//! iteration as a sparkline) and its timeline (tool calls, messages, verdicts with their
//! quotes, questions and answers), scrollable, searchable and exportable; its question
//! answered from the keyboard (a digit picks an option), and pause, cancel (confirmed) and say.
//!
//! Everything it shows comes from the read model ([`tether_read`]), as `tether status` and the
//! dashboard do; it reads the store again only when the store says it changed
//! ([`tether_read::Changes`]), or every few seconds as a safety net. Acts go through [`Acts`],
//! which the binary implements with the same functions as `tether answer`, `pause`, `cancel`
//! and `say`.
//!
//! - `model.rs` reads what the screen shows; `timeline.rs` turns a journal into lines;
//! - `app.rs` holds the state and what each key does (tested without a terminal);
//! - `draw.rs` draws it; `term.rs` runs it on the terminal.

#![deny(missing_docs)]

mod app;
mod draw;
mod model;
mod term;
mod timeline;

pub use app::{Acts, App, Key, Mode};
pub use draw::{Theme, draw};
pub use model::{Row, Selected, View, load};
pub use term::{WatchError, run};
pub use timeline::{Kind, Line, lines};
