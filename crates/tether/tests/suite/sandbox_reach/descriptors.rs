//! Descriptors tether inherits (from a supervisor, a CI runner, a shell's `3<file`) do not pass
//! into the sandbox: Landlock checks paths at `open` only, so an inherited descriptor would let
//! the agent read or append to a file it could never open.

use std::fs;
use std::os::unix::fs::PermissionsExt as _;
use std::process::Command;

use super::support::{Hostile, PROBE};
use crate::common::{text, wait_output};

const SECRET: &str = "INHERITED-SECRET-1234";

/// tether started by `c`, with descriptor 7 open for reading on a secret outside the workspace
/// and 8 for appending to a log there, as a shell's `7<secret 8>>log` leaves them.
fn with_descriptors(c: &Command, secret: &std::path::Path, log: &std::path::Path) -> Command {
    let mut sh = Command::new("sh");
    sh.args([
        "-c",
        "exec \"$@\" 7<\"$SECRET_FILE\" 8>>\"$LOG_FILE\"",
        "sh",
    ])
    .arg(c.get_program())
    .args(c.get_args())
    .current_dir(c.get_current_dir().unwrap())
    .env("SECRET_FILE", secret)
    .env("LOG_FILE", log)
    .stdin(std::process::Stdio::null())
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped());
    for (name, value) in c.get_envs() {
        match value {
            Some(value) => sh.env(name, value),
            None => sh.env_remove(name),
        };
    }
    sh
}

fn agent() -> String {
    format!(
        "{PROBE}\
         p 'read descriptor 7' sh -c 'cat <&7 | grep -q {SECRET}'\n\
         p 'read descriptor 7 through /proc' grep -q {SECRET} /proc/self/fd/7\n\
         p 'append to descriptor 8' sh -c 'echo planted >&8'\n\
         p 'see descriptor 7' test -e /proc/self/fd/7\n\
         p 'write its own stdout' sh -c 'echo fine'\n"
    )
}

fn inherited(unprivileged_user: bool) {
    let h = Hostile::new(&[agent()], "");
    let outside = tempfile::tempdir().unwrap();
    let (secret, log) = (outside.path().join("secret"), outside.path().join("log"));
    fs::write(&secret, SECRET).unwrap();
    fs::write(&log, "").unwrap();
    // Only this user's: an ordinary user's tether holds descriptors it could not open itself.
    for file in [&secret, &log] {
        fs::set_permissions(file, fs::Permissions::from_mode(0o600)).unwrap();
    }
    let mut c = with_descriptors(&h.ralph(None, unprivileged_user), &secret, &log);
    let out = wait_output(c.spawn().unwrap());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    h.assert_probes(
        &out,
        &[
            "read descriptor 7",
            "read descriptor 7 through /proc",
            "append to descriptor 8",
            "see descriptor 7",
        ],
        &["write its own stdout"],
    );
    assert_eq!(fs::read_to_string(&log).unwrap(), "", "the agent appended");
}

#[test]
fn an_inherited_descriptor_does_not_reach_the_agent() {
    inherited(false);
}

#[test]
fn an_inherited_descriptor_does_not_reach_the_agent_of_an_ordinary_user() {
    inherited(true);
}
