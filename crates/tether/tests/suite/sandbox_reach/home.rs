//! The secrets in the home directory stay out of the agent's reach wherever the tether binary is
//! kept — copied into the home directory (`~/tether`) or into a directory of `/tmp` — while the
//! toolchains there still work: the sandbox reads the binary itself, never its directory, and
//! of each toolchain only what holds no credential.

use std::fs;
use std::path::{Path, PathBuf};

use super::support::{Hostile, PROBE};
use crate::common::{text, unprivileged, wait_output};

/// Files that hold credentials, in the home directory: each must stay unreadable.
const SECRETS: [(&str, &str); 9] = [
    (".ssh/id_ed25519", "PRIVATE KEY"),
    (
        ".cargo/credentials.toml",
        "[registry]\ntoken = \"cio-secret\"\n",
    ),
    (".cargo/credentials", "[registry]\ntoken = \"cio-secret\"\n"),
    (
        ".cargo/config.toml",
        "[registries.work]\ntoken = \"cio-secret\"\n",
    ),
    (".npmrc", "//registry.npmjs.org/:_authToken=npm_secret\n"),
    (
        ".config/gh/hosts.yml",
        "github.com:\n    oauth_token: gho_secret\n",
    ),
    (
        ".docker/config.json",
        "{\"auths\":{\"r\":{\"auth\":\"c2VjcmV0\"}}}\n",
    ),
    (".pypirc", "[pypi]\npassword = pypi-secret\n"),
    (
        ".nvm/versions/node/v22.0.0/etc/npmrc",
        "//registry.npmjs.org/:_authToken=npm_secret\n",
    ),
];

/// Toolchain files an honest command needs: each must stay readable.
const TOOLS: [&str; 5] = [
    ".cargo/bin/cargo-tool",
    ".cargo/registry/index/entry",
    ".cargo/env",
    ".nvm/versions/node/v22.0.0/bin/node",
    "go/bin/gotool",
];

/// Another project's file under `~/go/src`: not a toolchain's.
const OTHER_PROJECT: &str = "go/src/example.com/other/secret.txt";

/// Where the binary is kept.
enum Kept {
    Home,
    Tmp,
}

fn agent(home: &Path, beside: &Path) -> String {
    let mut script = PROBE.to_owned();
    for (name, _) in SECRETS {
        script.push_str(&format!(
            "p 'read ~/{name}' cat '{}'\n",
            home.join(name).display()
        ));
    }
    for name in TOOLS {
        script.push_str(&format!(
            "p 'read ~/{name}' cat '{}'\n",
            home.join(name).display()
        ));
    }
    script.push_str(&format!(
        "p 'read another project' cat '{}'\n\
         p 'read a file beside tether' cat '{}'\n\
         p 'list the home directory' ls '{}'\n\
         p 'run the tether binary' sh -c '\"$0\" status > status.out 2>&1' '{}'\n",
        home.join(OTHER_PROJECT).display(),
        beside.join("krb5cc_secret").display(),
        home.display(),
        beside.join("tether").display(),
    ));
    script
}

fn secrets(kept: Kept, unprivileged_user: bool) {
    let home = tempfile::tempdir().unwrap();
    let tmp_dir = tempfile::tempdir_in("/tmp").unwrap();
    let beside: PathBuf = match kept {
        Kept::Home => home.path().to_owned(),
        Kept::Tmp => tmp_dir.path().to_owned(),
    };
    let script = agent(home.path(), &beside);
    let h = Hostile::with_home(home, &[script], "");
    for (name, content) in SECRETS {
        h.home_file(name, content);
    }
    for name in TOOLS.iter().chain([&OTHER_PROJECT]) {
        h.home_file(name, "x");
    }
    fs::write(beside.join("krb5cc_secret"), "TICKET").unwrap();
    let bin = beside.join("tether");
    fs::copy(env!("CARGO_BIN_EXE_tether"), &bin).unwrap();
    if unprivileged_user && unprivileged::is_root() {
        unprivileged::chown_tree(tmp_dir.path());
    }
    let out = wait_output(
        h.ralph(Some(&bin), unprivileged_user)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let mut refused: Vec<String> = SECRETS.iter().map(|(n, _)| format!("read ~/{n}")).collect();
    refused.extend(
        [
            "read another project",
            "read a file beside tether",
            "list the home directory",
        ]
        .map(str::to_owned),
    );
    let mut done: Vec<String> = TOOLS.iter().map(|n| format!("read ~/{n}")).collect();
    done.push("run the tether binary".to_owned());
    let refused: Vec<&str> = refused.iter().map(String::as_str).collect();
    let done: Vec<&str> = done.iter().map(String::as_str).collect();
    h.assert_probes(&out, &refused, &done);
}

#[test]
fn with_tether_kept_in_the_home_directory_its_secrets_stay_unreadable() {
    secrets(Kept::Home, false);
}

#[test]
fn with_tether_kept_in_tmp_the_files_beside_it_stay_unreadable() {
    secrets(Kept::Tmp, false);
}

#[test]
fn for_an_ordinary_user_too() {
    secrets(Kept::Home, true);
    secrets(Kept::Tmp, true);
}

/// The Rust toolchain that built these tests: its `bin` directory, and the rustup home it is in
/// (if any), which tether is told of as `RUSTUP_HOME`.
fn toolchain() -> (PathBuf, Option<PathBuf>) {
    let cargo = Path::new(env!("CARGO"));
    let bin = cargo.parent().unwrap().to_owned();
    let rustup = cargo
        .ancestors()
        .find(|a| a.file_name().is_some_and(|n| n == "toolchains"))
        .and_then(Path::parent)
        .map(Path::to_owned);
    (bin, rustup)
}

/// The honest case: with tether kept in the home directory and a publish token in
/// `~/.cargo/credentials.toml`, `cargo build` of a small project in the workspace works in the
/// sandbox, while the token and the SSH key stay unreadable. (As this user: an ordinary user
/// cannot run root's toolchain.)
#[test]
fn cargo_builds_a_project_in_the_workspace_while_the_token_stays_unreadable() {
    let home = tempfile::tempdir().unwrap();
    let script = format!(
        "{PROBE}\
         p 'read ~/.cargo/credentials.toml' cat ~/.cargo/credentials.toml\n\
         p 'read ~/.ssh/id_ed25519' cat ~/.ssh/id_ed25519\n\
         cd hello && cargo build --offline > ../build.out 2>&1; echo $? > ../build.code\n\
         ./target/debug/hello > ../hello.out\n"
    );
    let h = Hostile::with_home(home, &[script], "");
    h.home_file(".ssh/id_ed25519", "PRIVATE KEY");
    h.home_file(
        ".cargo/credentials.toml",
        "[registry]\ntoken = \"cio-secret\"\n",
    );
    h.home_file(".cargo/env", "export PATH=\"$HOME/.cargo/bin:$PATH\"\n");
    fs::create_dir_all(h.home.path().join(".cargo/bin")).unwrap();
    let project = h.root().join("hello");
    fs::create_dir_all(project.join("src")).unwrap();
    fs::write(
        project.join("Cargo.toml"),
        "[package]\nname = \"hello\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
    )
    .unwrap();
    fs::write(
        project.join("src/main.rs"),
        "fn main() { println!(\"hello from the sandbox\"); }\n",
    )
    .unwrap();
    let bin = h.home.path().join("tether");
    fs::copy(env!("CARGO_BIN_EXE_tether"), &bin).unwrap();
    let (tools, rustup) = toolchain();
    let mut c = h.ralph(Some(&bin), false);
    c.env(
        "PATH",
        format!("{}:/usr/local/bin:/usr/bin:/bin", tools.display()),
    );
    if let Some(rustup) = &rustup {
        c.env("RUSTUP_HOME", rustup);
    }
    let out = wait_output(
        c.stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let read = |name: &str| fs::read_to_string(h.root().join(name)).unwrap_or_default();
    assert_eq!(read("build.code").trim(), "0", "{}", read("build.out"));
    assert_eq!(read("hello.out"), "hello from the sandbox\n");
    h.assert_probes(
        &out,
        &["read ~/.cargo/credentials.toml", "read ~/.ssh/id_ed25519"],
        &[],
    );
}
