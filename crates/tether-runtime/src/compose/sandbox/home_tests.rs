use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};

use super::{cover, holds_home, toolchains};

/// A home directory holding `files` (relative path, content).
fn home(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, content) in files {
        let path = dir.path().join(name);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, content).unwrap();
    }
    dir
}

fn no_vars(_: &str) -> Option<OsString> {
    None
}

/// Whether one of `granted` covers `path`.
fn covered(granted: &[PathBuf], path: &Path) -> bool {
    granted.iter().any(|g| path.starts_with(g))
}

const TOKEN: &str = "[registry]\ntoken = \"cio-secret\"\n";

#[test]
fn cargo_is_its_programs_and_crates_never_its_credentials() {
    let h = home(&[
        (".cargo/bin/cargo", "x"),
        (".cargo/registry/index/e", "x"),
        (".cargo/git/db/e", "x"),
        (".cargo/env", "x"),
        (".cargo/credentials.toml", TOKEN),
        (".cargo/credentials", TOKEN),
        (".cargo/config.toml", TOKEN),
    ]);
    let granted = toolchains(h.path(), no_vars);
    let c = h.path().join(".cargo");
    for part in ["bin/cargo", "registry/index/e", "git/db/e", "env"] {
        assert!(covered(&granted, &c.join(part)), "{part}: {granted:?}");
    }
    for secret in ["credentials.toml", "credentials", "config.toml"] {
        assert!(!covered(&granted, &c.join(secret)), "{secret}: {granted:?}");
    }
}

#[test]
fn a_configuration_without_a_credential_is_read() {
    let h = home(&[
        (".cargo/bin/cargo", "x"),
        (".cargo/config.toml", "[net]\noffline = true\n"),
    ]);
    let granted = toolchains(h.path(), no_vars);
    assert!(covered(&granted, &h.path().join(".cargo/config.toml")));
}

#[test]
fn a_node_prefixs_npmrc_with_a_token_is_left_out_and_the_rest_is_read() {
    let h = home(&[
        (".nvm/nvm.sh", "x"),
        (".nvm/versions/node/v22.0.0/bin/node", "x"),
        (".nvm/versions/node/v22.0.0/lib/node_modules/npm/x", "x"),
        (
            ".nvm/versions/node/v22.0.0/etc/npmrc",
            "//registry.npmjs.org/:_authToken=npm_secret\n",
        ),
        (".nvm/versions/node/v20.0.0/bin/node", "x"),
    ]);
    let granted = toolchains(h.path(), no_vars);
    let nvm = h.path().join(".nvm");
    for part in [
        "nvm.sh",
        "versions/node/v22.0.0/bin/node",
        "versions/node/v22.0.0/lib/node_modules/npm/x",
        "versions/node/v20.0.0/bin/node",
    ] {
        assert!(covered(&granted, &nvm.join(part)), "{part}: {granted:?}");
    }
    let npmrc = nvm.join("versions/node/v22.0.0/etc/npmrc");
    assert!(!covered(&granted, &npmrc), "{granted:?}");
}

#[test]
fn go_is_its_programs_and_modules_not_other_projects() {
    let h = home(&[
        ("go/bin/gopls", "x"),
        ("go/pkg/mod/m", "x"),
        ("go/src/example.com/other/main.go", "x"),
    ]);
    let granted = toolchains(h.path(), no_vars);
    assert!(covered(&granted, &h.path().join("go/bin/gopls")));
    assert!(covered(&granted, &h.path().join("go/pkg/mod/m")));
    assert!(!covered(
        &granted,
        &h.path().join("go/src/example.com/other/main.go")
    ));
}

#[test]
fn a_toolchain_moved_by_its_variable_is_found_there() {
    let h = home(&[(".ssh/id_ed25519", "key")]);
    let elsewhere = home(&[("bin/cargo", "x"), ("credentials.toml", TOKEN)]);
    let at = elsewhere.path().as_os_str().to_owned();
    let granted = toolchains(h.path(), |name| (name == "CARGO_HOME").then(|| at.clone()));
    assert!(covered(&granted, &elsewhere.path().join("bin/cargo")));
    assert!(!covered(
        &granted,
        &elsewhere.path().join("credentials.toml")
    ));
}

#[test]
fn a_variable_naming_the_home_directory_grants_nothing_that_holds_it() {
    let h = home(&[(".ssh/id_ed25519", "key"), ("toolchains/x", "x")]);
    let at = h.path().as_os_str().to_owned();
    let granted = toolchains(h.path(), |name| (name == "RUSTUP_HOME").then(|| at.clone()));
    assert!(
        !covered(&granted, &h.path().join(".ssh/id_ed25519")),
        "{granted:?}"
    );
    assert!(holds_home(h.path(), h.path()));
    assert!(holds_home(Path::new("/"), h.path()));
    assert!(!holds_home(&h.path().join(".cargo"), h.path()));
}

#[test]
fn a_cover_leaves_out_exactly_the_excluded_files() {
    let h = home(&[
        ("a/b/secret", "s"),
        ("a/b/keep", "k"),
        ("a/c/keep", "k"),
        ("d", "d"),
    ]);
    let excluded = vec![h.path().join("a/b/secret")];
    let granted = cover(h.path(), &excluded);
    for kept in ["a/b/keep", "a/c/keep", "d"] {
        assert!(
            covered(&granted, &h.path().join(kept)),
            "{kept}: {granted:?}"
        );
    }
    assert!(!covered(&granted, &h.path().join("a/b/secret")));
    assert_eq!(cover(h.path(), &[]), vec![h.path().to_path_buf()]);
}
