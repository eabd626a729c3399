//! Settings this build recognises but cannot act on yet are refused, each with its line, why,
//! and what to use instead; what is always on may be listed.

use super::{config, problem};

#[test]
fn the_web_channel_is_refused_saying_terminal_and_cli_are_always_on() {
    assert_eq!(
        problem("[human]\nchannels = [\"terminal\", \"web\"]\n"),
        "tether.toml:2: human.channels: \"web\" is not built yet: there is no web dashboard in \
         this build; remove it (the terminal, when tether runs in one, and the CLI are always \
         on; \"zulip\" adds Zulip)"
    );
}

#[test]
fn the_channels_always_on_may_be_listed_or_left_out() {
    for list in ["[]", "[\"terminal\", \"cli\"]", "[\"cli\"]"] {
        config(&format!("[human]\nchannels = {list}\n"));
    }
}

#[test]
fn a_server_listen_address_is_refused_because_nothing_listens() {
    assert_eq!(
        problem("[server]\nlisten = \"127.0.0.1:0\"\n"),
        "tether.toml:2: server.listen: the web dashboard and its API are not built yet, so \
         nothing listens; remove `listen` (and the [server] table)"
    );
    // An invalid address is reported as such, once.
    assert!(problem("[server]\nlisten = \"localhost:80\"\n").contains("must be an IP address"));
    // An empty table sets nothing.
    config("[server]\n");
}
