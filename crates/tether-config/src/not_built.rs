//! Settings this build recognises but cannot act on yet, refused with why and what to use.
//!
//! A setting that parsed and then did nothing would let `tether validate` say OK for a file
//! that does not do what it says. These rules turn each such setting into a problem, so every
//! command that loads the file (`validate` first) names it with its line; when the feature is
//! built, its rule goes away.

use std::ops::Range;

use crate::config::Channel;
use crate::reader::{Reader, Table, entry};

/// `"web"` in `human.channels`, at the span of the list.
pub(crate) fn channels(r: &mut Reader, channels: &[Channel], span: Option<Range<usize>>) {
    if channels.contains(&Channel::Web) {
        r.report(
            span,
            "human.channels",
            "\"web\" is not built yet: there is no web dashboard in this build; remove it \
             (the terminal, when tether runs in one, and the CLI are always on; \"zulip\" adds \
             Zulip)",
        );
    }
}

/// `server.listen`, when its value is otherwise valid: nothing would listen on it.
pub(crate) fn server_listen(r: &mut Reader, t: &Table) {
    let Some((_, value)) = entry(t, "listen") else {
        return;
    };
    r.report(
        Some(value.span()),
        "server.listen",
        "the web dashboard and its API are not built yet, so nothing listens; remove \
         `listen` (and the [server] table)",
    );
}
