//! Unix sockets the agent knows the path of but is not granted — a terminal multiplexer's in
//! `/tmp` (`tmux send-keys` would type into the person's terminals), an SSH agent's in the home
//! directory — cannot be connected to: Landlock checks what is opened, not what is connected to,
//! so the sandbox covers `/tmp`, `/run` and the home directory with what it grants put back.

use std::fs;
use std::os::unix::net::UnixListener;

use super::support::{Hostile, PROBE};
use crate::common::{text, unprivileged, wait_output};

fn sockets(unprivileged_user: bool) {
    let home = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    fs::create_dir(elsewhere.path().join("tmux-0")).unwrap();
    fs::create_dir(home.path().join(".ssh")).unwrap();
    let tmux = elsewhere.path().join("tmux-0/default");
    let agent = home.path().join(".ssh/agent.sock");
    let connect = |socket: &std::path::Path| {
        format!(
            "python3 -c \"import socket; socket.socket(socket.AF_UNIX).connect('{}')\"",
            socket.display()
        )
    };
    let script = format!(
        "{PROBE}\
         p 'connect to the multiplexer' {}\n\
         p 'connect to the ssh agent' {}\n\
         p 'use its own socket' python3 -c \"import socket, os; s = socket.socket(socket.AF_UNIX); s.bind('own.sock'); s.listen(1); socket.socket(socket.AF_UNIX).connect('own.sock')\"\n",
        connect(&tmux),
        connect(&agent),
    );
    let h = Hostile::with_home(home, &[script], "");
    let _listeners = [
        UnixListener::bind(&tmux).unwrap(),
        UnixListener::bind(&agent).unwrap(),
    ];
    if unprivileged_user && unprivileged::is_root() {
        unprivileged::chown_tree(elsewhere.path());
    }
    let out = wait_output(
        h.ralph(None, unprivileged_user)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    h.assert_probes(
        &out,
        &["connect to the multiplexer", "connect to the ssh agent"],
        &["use its own socket"],
    );
}

#[test]
fn a_socket_in_tmp_or_the_home_directory_is_not_there_to_connect_to() {
    sockets(false);
}

#[test]
fn nor_for_an_ordinary_user() {
    sockets(true);
}
