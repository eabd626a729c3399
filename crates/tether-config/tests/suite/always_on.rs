//! What is always on may be listed (the terminal, the CLI, the dashboard); the dashboard's
//! address is read and checked. (Nothing the configuration names is left unbuilt.)

use super::{config, problem};

#[test]
fn the_channels_always_on_may_be_listed_or_left_out() {
    for list in [
        "[]",
        "[\"terminal\", \"cli\"]",
        "[\"cli\"]",
        "[\"web\", \"cli\"]",
    ] {
        config(&format!("[human]\nchannels = {list}\n"));
    }
}

#[test]
fn the_dashboard_address_is_read_and_checked() {
    assert_eq!(
        config("[server]\nlisten = \"127.0.0.1:8080\"\n")
            .server
            .listen,
        "127.0.0.1:8080".parse().unwrap()
    );
    // An invalid address is reported as such, once.
    assert!(problem("[server]\nlisten = \"localhost:80\"\n").contains("must be an IP address"));
    // An empty table keeps the default: loopback, a free port.
    assert_eq!(
        config("[server]\n").server.listen,
        "127.0.0.1:0".parse().unwrap()
    );
}
