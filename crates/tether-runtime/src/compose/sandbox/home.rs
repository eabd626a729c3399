//! What of the home directory a sandboxed child may read: the toolchains kept there, each
//! narrowed to what holds no credential — never the home directory itself, nor a tree that holds
//! it.
//!
//! A toolchain's directory mixes code with its owner's keys: `~/.cargo` holds the crates.io
//! publish token (`credentials.toml`, or `config.toml` in older setups), a Node prefix's
//! `etc/npmrc` an npm `_authToken`, a Python's `pip.conf` an index password, and `~/go/src` other
//! projects. So each toolchain is granted as a list of parts, and a configuration file that may
//! hold a credential is granted only when [`credential::in_file`], parsing it, finds none in it (a child's
//! tool that needs it then fails to read it: the log says which file and why). The home
//! directory's other secrets (`~/.ssh`, `~/.aws`, `~/.npmrc`, `~/.config/gh`, `~/.docker`,
//! `~/.pypirc`, `~/.netrc`, keyrings) are in no toolchain and never granted.
//!
//! [`credential::in_file`]: super::credential::in_file

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::credential::Format;

/// A toolchain kept in the home directory.
struct Toolchain {
    /// Its directory under `$HOME`.
    dir: &'static str,
    /// The variable that moves it elsewhere (one the sandbox passes on to children, so they
    /// look for it there too).
    var: Option<&'static str>,
    /// The parts a child reads; `None`: all of it (but `checked` files holding a credential).
    parts: Option<&'static [&'static str]>,
    /// Configuration files (a `*` stands for one path component), in their format, a child
    /// reads only when they hold no credential.
    checked: &'static [(&'static str, Format)],
}

/// The toolchains a child may use: whole where they hold no credential; `~/.cargo` as its
/// programs, the crates it fetched and its shell setup (never `credentials` nor
/// `credentials.toml`); `~/go` as its programs and modules (`src` holds other projects).
const TOOLCHAINS: &[Toolchain] = &[
    Toolchain {
        dir: ".cargo",
        var: Some("CARGO_HOME"),
        parts: Some(&["bin", "registry", "git", "env", "env.fish", "env.nu"]),
        checked: &[("config.toml", Format::Toml), ("config", Format::Toml)],
    },
    Toolchain {
        dir: ".rustup",
        var: Some("RUSTUP_HOME"),
        parts: None,
        checked: &[],
    },
    Toolchain {
        dir: ".pyenv",
        var: Some("PYENV_ROOT"),
        parts: None,
        checked: &[("versions/*/pip.conf", Format::Ini)],
    },
    Toolchain {
        dir: ".nvm",
        var: Some("NVM_DIR"),
        parts: None,
        checked: &[("versions/node/*/etc/npmrc", Format::Npmrc)],
    },
    Toolchain {
        dir: ".local/bin",
        var: None,
        parts: None,
        checked: &[],
    },
    Toolchain {
        dir: ".local/lib",
        var: None,
        parts: None,
        checked: &[],
    },
    Toolchain {
        dir: ".local/share/mise",
        var: None,
        parts: None,
        checked: &[
            ("installs/node/*/etc/npmrc", Format::Npmrc),
            ("installs/python/*/pip.conf", Format::Ini),
        ],
    },
    Toolchain {
        dir: ".volta",
        var: None,
        parts: None,
        checked: &[("tools/image/node/*/etc/npmrc", Format::Npmrc)],
    },
    Toolchain {
        dir: ".bun",
        var: None,
        parts: None,
        checked: &[],
    },
    Toolchain {
        dir: ".deno",
        var: None,
        parts: None,
        checked: &[],
    },
    Toolchain {
        dir: "go",
        var: Some("GOPATH"),
        parts: Some(&["bin", "pkg"]),
        checked: &[],
    },
    Toolchain {
        dir: ".sdkman",
        var: None,
        parts: None,
        checked: &[],
    },
];

/// The most entries of one directory looked at when a tree is granted around a file it holds.
const MAX_ENTRIES: usize = 4096;

/// The home directory's paths a child may read: each toolchain's parts that exist, found under
/// `home` or where its variable (read with `var`) moves it.
pub fn toolchains(home: &Path, var: impl Fn(&str) -> Option<OsString>) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for t in TOOLCHAINS {
        let roots: Vec<PathBuf> = match t.var.and_then(&var) {
            Some(value) => std::env::split_paths(&value)
                .filter(|p| p.is_absolute())
                .collect(),
            None => vec![home.join(t.dir)],
        };
        for root in roots.iter().filter(|r| r.is_dir()) {
            out.extend(grant(root, t, home));
        }
    }
    out
}

/// What of the toolchain `t` kept at `root` a child reads.
fn grant(root: &Path, t: &Toolchain, home: &Path) -> Vec<PathBuf> {
    let mut excluded = Vec::new();
    let mut clean = Vec::new();
    for (pattern, format) in t.checked {
        for file in expand(root, pattern) {
            if super::credential::in_file(&file, *format) {
                tracing::warn!(
                    file = %file.display(),
                    "this file may hold a credential, so the sandbox's commands cannot read it; \
                     a tool that needs it fails there (keep the credential elsewhere, e.g. \
                     cargo's credentials.toml, which the sandbox never reads)"
                );
                excluded.push(file);
            } else {
                clean.push(file);
            }
        }
    }
    let parts: Vec<PathBuf> = match t.parts {
        Some(parts) => parts.iter().map(|p| root.join(p)).collect(),
        None => vec![root.to_path_buf()],
    };
    let mut out: Vec<PathBuf> = parts
        .iter()
        .filter(|p| p.exists())
        .flat_map(|p| cover(p, &excluded))
        .collect();
    // A clean configuration file outside the parts is granted on its own.
    out.extend(
        clean
            .into_iter()
            .filter(|f| !parts.iter().any(|p| f.starts_with(p))),
    );
    out.retain(|p| {
        let holds = holds_home(p, home);
        if holds {
            tracing::warn!(
                path = %p.display(),
                "this toolchain path is / or holds the home directory, so the sandbox does not \
                 grant it (check the variable that moves the toolchain)"
            );
        }
        !holds
    });
    out
}

/// The files `pattern` (relative, `*` a whole component) names under `root`.
fn expand(root: &Path, pattern: &str) -> Vec<PathBuf> {
    let mut found = vec![root.to_path_buf()];
    for part in pattern.split('/') {
        found = found
            .into_iter()
            .flat_map(|dir| -> Vec<PathBuf> {
                if part == "*" {
                    entries(&dir)
                        .into_iter()
                        .filter(|p| p.is_dir() && !p.is_symlink())
                        .collect()
                } else {
                    vec![dir.join(part)]
                }
            })
            .collect();
    }
    found.retain(|p| p.is_file());
    found
}

/// The entries of `dir` (at most [`MAX_ENTRIES`]).
fn entries(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|it| it.flatten().take(MAX_ENTRIES).map(|e| e.path()).collect())
        .unwrap_or_default()
}

/// Paths that together cover `tree` but none of `excluded`: `tree` itself when nothing
/// excluded lies in it, else its entries, each covered the same way. Symbolic links are left
/// out (a rule would follow them; what they point to in the tree is covered as itself).
pub fn cover(tree: &Path, excluded: &[PathBuf]) -> Vec<PathBuf> {
    let inside: Vec<PathBuf> = excluded
        .iter()
        .filter(|e| e.starts_with(tree))
        .cloned()
        .collect();
    if inside.is_empty() {
        return vec![tree.to_path_buf()];
    }
    if inside.iter().any(|e| e == tree) || !tree.is_dir() || tree.is_symlink() {
        return Vec::new();
    }
    entries(tree)
        .into_iter()
        .filter(|p| !p.is_symlink())
        .flat_map(|p| cover(&p, &inside))
        .collect()
}

/// Whether `path` is the home directory or a directory holding it (`/home`, `/`): granting it
/// would grant every secret there. Compared as the paths lead, links resolved.
pub fn holds_home(path: &Path, home: &Path) -> bool {
    let real = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    real(home).starts_with(real(path))
}

#[cfg(test)]
#[path = "home_tests.rs"]
mod tests;
