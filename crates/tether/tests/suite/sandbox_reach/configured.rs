//! The person's `[sandbox] readable` and `writable` are granted as the person wrote them, never
//! as the agent turned them: a setting naming `/` or the home directory is refused before the run
//! starts, naming the setting; a readable path inside the working tree that the agent replaced
//! with a link to `/` grants nothing outside — neither to the agent's next command in the same
//! run (each spawn opens it without following links) nor to the next run — and `/tmp` and the
//! home directory stay covered. `tether.toml` (and the file `TETHER_CONFIG` names in the tree)
//! is read-only, as `.git` is.

use std::fs;
use std::os::unix::net::UnixListener;
use std::path::Path;

use super::support::{Hostile, PROBE};
use crate::common::{text, unprivileged, wait_output};

#[test]
fn a_setting_naming_the_root_or_the_home_directory_is_refused_naming_it() {
    for (setting, value) in [
        ("readable", "/"),
        ("readable", "~"),
        ("writable", "~"),
        ("readable", "~/.."),
    ] {
        let toml = format!("[sandbox]\n{setting} = [{value:?}]\n");
        let h = Hostile::new(&["touch ran".to_owned()], &toml);
        let out = h
            .ralph(None, false)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .output()
            .unwrap();
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{setting} = {value}: {stderr}");
        assert!(
            stderr.contains(&format!("[sandbox] {setting}")) && stderr.contains("home directory"),
            "{stderr}"
        );
        assert!(!h.root().join("ran").exists());
    }
}

/// Probes of the `run`th run, through the link at `vendor/sdk`.
fn probes(run: u32, home: &Path, tmux: &Path) -> String {
    format!(
        "{PROBE}\
         p '{run}: list through the link' ls vendor/sdk/\n\
         p '{run}: list /' ls /\n\
         p '{run}: read the ssh key through the link' cat 'vendor/sdk{key}'\n\
         p '{run}: read the ssh key' cat '{key}'\n\
         p '{run}: connect to the multiplexer' python3 -c \"import socket; socket.socket(socket.AF_UNIX).connect('{tmux}')\"\n\
         p '{run}: read the workspace' cat tether.toml\n",
        key = home.join(".ssh/id_ed25519").display(),
        tmux = tmux.display(),
    )
}

fn swapped(unprivileged_user: bool) {
    let home = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir_in("/tmp").unwrap();
    fs::create_dir(tmp.path().join("tmux-0")).unwrap();
    fs::create_dir(home.path().join(".ssh")).unwrap();
    fs::write(home.path().join(".ssh/id_ed25519"), "PRIVATE KEY").unwrap();
    let tmux = tmp.path().join("tmux-0/default");
    let ws = tempfile::tempdir().unwrap();
    let sdk = ws.path().join("vendor/sdk");
    let runs = [
        vec![
            format!("{PROBE}p '1: read the sdk' cat vendor/sdk/lib.txt\n"),
            "rm -r vendor/sdk && ln -s / vendor/sdk".to_owned(),
            probes(1, home.path(), &tmux),
        ],
        vec![probes(2, home.path(), &tmux)],
    ];
    let toml = format!("[sandbox]\nreadable = [{:?}]\n", sdk.display().to_string());
    let h = Hostile::runs_in(ws, home, &runs, &toml, true);
    fs::create_dir_all(&sdk).unwrap();
    fs::write(sdk.join("lib.txt"), "sdk").unwrap();
    let _listener = UnixListener::bind(&tmux).unwrap();
    if unprivileged_user && unprivileged::is_root() {
        unprivileged::chown_tree(tmp.path());
    }
    let mut said = String::new();
    for run in 1..=2 {
        let out = wait_output(
            h.ralph(None, unprivileged_user)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap(),
        );
        said.push_str(&text(&out.stderr));
        assert_eq!(out.status.code(), Some(0), "run {run}: {said}");
        let refused: Vec<String> = [
            "list through the link",
            "list /",
            "read the ssh key through the link",
            "read the ssh key",
            "connect to the multiplexer",
        ]
        .iter()
        .map(|p| format!("{run}: {p}"))
        .collect();
        let refused: Vec<&str> = refused.iter().map(String::as_str).collect();
        let done = format!("{run}: read the workspace");
        let mut done = vec![done.as_str()];
        if run == 1 {
            done.push("1: read the sdk");
        }
        h.assert_probes(&out, &refused, &done);
    }
    assert!(said.contains("links lead out"), "{said}");
}

#[test]
fn a_readable_path_the_agent_replaced_with_a_link_to_the_root_grants_nothing() {
    swapped(false);
}

#[test]
fn nor_for_an_ordinary_user() {
    swapped(true);
}

/// `tether.toml`, and the file `TETHER_CONFIG` names inside the working tree, are read-only to
/// the agent, as `.git` is: neither can be edited, replaced or removed; the rest of the tree
/// stays writable.
fn config_read_only(unprivileged_user: bool) {
    let script = format!(
        "{PROBE}\
         p 'append to tether.toml' sh -c 'echo \"[sandbox]\" >> tether.toml'\n\
         p 'replace tether.toml' sh -c 'echo x > new.toml && mv new.toml tether.toml'\n\
         p 'remove tether.toml' rm tether.toml\n\
         p 'edit the named config' sh -c 'echo \"[sandbox]\" >> conf/tether.toml'\n\
         p 'write the tree' sh -c 'echo x > written.txt'\n"
    );
    let h = Hostile::new(&[script], "");
    fs::create_dir(h.root().join("conf")).unwrap();
    fs::copy(
        h.root().join("tether.toml"),
        h.root().join("conf/tether.toml"),
    )
    .unwrap();
    let before = fs::read_to_string(h.root().join("tether.toml")).unwrap();
    let out = wait_output(
        h.ralph(None, unprivileged_user)
            .env("TETHER_CONFIG", "conf/tether.toml")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    h.assert_probes(
        &out,
        &[
            "append to tether.toml",
            "replace tether.toml",
            "remove tether.toml",
            "edit the named config",
        ],
        &["write the tree"],
    );
    for file in ["tether.toml", "conf/tether.toml"] {
        assert_eq!(fs::read_to_string(h.root().join(file)).unwrap(), before);
    }
}

#[test]
fn tether_toml_and_the_config_tether_config_names_are_read_only() {
    config_read_only(false);
}

#[test]
fn tether_toml_is_read_only_for_an_ordinary_user_too() {
    config_read_only(true);
}
