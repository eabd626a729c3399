//! The HTML: every page and every fragment the live stream sends, rendered by `maud`, which
//! escapes whatever it interpolates. Text written by agents, models, verify commands or people
//! goes through [`text`] first, so control characters (ANSI escapes, carriage returns,
//! text-direction overrides) show as visible escapes instead of acting on anything.

mod charts;
mod fleet;
mod layout;
mod question;
mod run;
mod runs;
mod time;
mod timeline;

use std::borrow::Cow;

pub use charts::{VerdictMark, run_charts, sparkline};
pub use fleet::{FLEETS_SHOWN, fleet, fleets};
pub use layout::{Nav, Notice, page, shell};
pub use question::{answered_card, cards, history, pending_card, run_qa};
pub use run::{SideShown, controls, head, plan, report, side};
pub use runs::{RUNS_SHOWN, filters, group_list, new_run, place, row, table};
pub use time::{absolute, ago, when};
pub use timeline::{Context, item, timeline};

/// Agent- or user-written text, made safe to show: control characters become visible escapes
/// (newlines and tabs kept); the template escapes the HTML.
pub fn text(s: &str) -> Cow<'_, str> {
    tether_human::visible::visible(s)
}
