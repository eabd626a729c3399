//! A toolchain's configuration is granted only when, parsed with its format's parser, no key at
//! any depth holds a credential: `~/.cargo/config.toml` with a registry token in an inline table
//! (`work = { index = "…", token = "…" }`, which a line-by-line look took for the key `work`)
//! stays unreadable, while an honest one (`[build] jobs`, `[net] git-fetch-with-cli`) is read.

use super::support::{Hostile, PROBE};
use crate::common::{text, wait_output};

/// Each `~/.cargo/config.toml`, and whether the agent may read it.
const CONFIGS: [(&str, bool); 4] = [
    (
        "[registries]\nwork = { index = \"https://r.example/index\", token = \"cio-secret\" }\n",
        false,
    ),
    ("registries.work.token = \"cio-secret\"\n", false),
    (
        "[registry]\nglobal-credential-providers = [\"cargo:token\"]\n",
        false,
    ),
    (
        "[build]\njobs = 4\n[net]\ngit-fetch-with-cli = true\n[registries.work]\nindex = \"https://r.example/index\"\n",
        true,
    ),
];

fn config(content: &str, readable: bool, unprivileged_user: bool) {
    let home = tempfile::tempdir().unwrap();
    let config = home.path().join(".cargo/config.toml");
    let script = format!(
        "{PROBE}p 'read the config' cat '{}'\np 'read cargo' cat '{}'\n",
        config.display(),
        home.path().join(".cargo/bin/cargo").display()
    );
    let h = Hostile::with_home(home, &[script], "");
    h.home_file(".cargo/config.toml", content);
    h.home_file(".cargo/bin/cargo", "x");
    let out = wait_output(
        h.ralph(None, unprivileged_user)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let (refused, done): (Vec<&str>, Vec<&str>) = if readable {
        (vec![], vec!["read the config", "read cargo"])
    } else {
        (vec!["read the config"], vec!["read cargo"])
    };
    h.assert_probes(&out, &refused, &done);
    if !readable {
        assert!(
            text(&out.stderr).contains("may hold a credential"),
            "{}",
            text(&out.stderr)
        );
    }
}

#[test]
fn a_cargo_config_with_a_token_at_any_depth_is_unreadable_and_an_honest_one_is_read() {
    for (content, readable) in CONFIGS {
        config(content, readable, false);
    }
}

#[test]
fn for_an_ordinary_user_too() {
    for (content, readable) in CONFIGS {
        config(content, readable, true);
    }
}
