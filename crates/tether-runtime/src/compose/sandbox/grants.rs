//! What a run's sandbox grants beyond the system trees, the working tree and its private
//! temporary directory, decided by one pure function ([`decide`]) from paths tether knows: the
//! person's `[sandbox] readable` and `writable`, what tether found for them (the toolchains in the
//! home directory, an agent CLI's install tree, its shared configuration) and what tether made
//! itself (a worktree's repository, its own binary). Nothing the agent wrote — a `.git` file, a
//! `commondir`, a link — is ever an input.
//!
//! The rules:
//! - a grant is never `/`, the home directory or a directory holding it, as written or as its
//!   links resolve: a configured one is refused, naming the setting ([`GrantError`]); a found one
//!   is left out and said ([`LeftOut::HoldsHome`]). A setting is the person's to fix; a
//!   toolchain's variable pointing at `/` should not stop every run;
//! - a path beneath a tree the agent can write (the working tree, the private temporary
//!   directory, a `[sandbox] writable` tree) is one the agent could replace with a link to `/`:
//!   it is granted as its links resolve, only when that stays inside such a tree, and then opened
//!   without following any link at each spawn ([`Reach::Unlinked`]); one whose links lead out is
//!   left out and said ([`LeftOut::LinksOut`]);
//! - any other path is the person's (or tether's) and is granted as it is written.
//!
//! The caller resolves the links (`std::fs::canonicalize`) before: everything here is a pure
//! computation over paths, property-tested with hostile inputs.

use std::path::{Component, Path, PathBuf};

/// Where a path to grant comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// `[sandbox] readable`.
    Readable,
    /// `[sandbox] writable`.
    Writable,
    /// Found by tether: a toolchain in the home directory.
    Found,
    /// Found by tether for an agent CLI alone: its install tree, its shared configuration.
    Agent,
    /// Made by tether: a worktree's repository, its own binary.
    Made,
}

impl Source {
    /// The setting a person names the path with, when a person does.
    fn setting(self) -> Option<&'static str> {
        match self {
            Source::Readable => Some("[sandbox] readable"),
            Source::Writable => Some("[sandbox] writable"),
            Source::Found | Source::Agent | Source::Made => None,
        }
    }

    fn access(self) -> Access {
        match self {
            Source::Writable => Access::Write,
            Source::Readable | Source::Found | Source::Agent | Source::Made => Access::Read,
        }
    }
}

/// A path as written and as its links resolved when the sandbox was built (`None`: missing).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    /// As written (absolute).
    pub path: PathBuf,
    /// As its links resolve.
    pub real: Option<PathBuf>,
}

impl Place {
    /// `path`, its links resolved on the file system now.
    pub fn resolve(path: impl Into<PathBuf>) -> Place {
        let path = path.into();
        let real = std::fs::canonicalize(&path).ok();
        Place { path, real }
    }

    /// Both forms, the written one with `.` and `..` taken lexically.
    fn forms(&self) -> impl Iterator<Item = PathBuf> + '_ {
        std::iter::once(lexical(&self.path)).chain(self.real.clone())
    }
}

/// A path asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Asked {
    /// Who asks.
    pub source: Source,
    /// The path.
    pub place: Place,
}

/// What the rules are checked against.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ground {
    /// The home directory, if known.
    pub home: Option<Place>,
    /// The trees the agent writes besides `[sandbox] writable`: the working tree and the private
    /// temporary directory.
    pub writable: Vec<Place>,
}

/// Read or write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Read (and execute) beneath the path.
    Read,
    /// Read, create, change and remove beneath the path.
    Write,
}

/// How a granted path is opened at each spawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// As written, links followed: a path only the person (or tether) controls.
    Followed,
    /// Without following any link: a path inside a tree the agent writes.
    Unlinked,
}

/// One path granted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    /// The path.
    pub path: PathBuf,
    /// Read or write.
    pub access: Access,
    /// How it is opened.
    pub reach: Reach,
    /// Who asked.
    pub source: Source,
}

/// A path asked for and not granted, to be said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LeftOut {
    /// A found path that is `/`, the home directory or holds it.
    HoldsHome {
        /// The path.
        path: PathBuf,
    },
    /// A path inside a tree the agent writes whose links lead out of it.
    LinksOut {
        /// Who asked.
        source: Source,
        /// The path as written.
        path: PathBuf,
        /// Where its links lead.
        real: PathBuf,
    },
}

impl std::fmt::Display for LeftOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LeftOut::HoldsHome { path } => write!(
                f,
                "{} is / or holds the home directory, so the sandbox does not grant it",
                path.display()
            ),
            LeftOut::LinksOut { source, path, real } => write!(
                f,
                "{}{} lies inside a tree the agent can write and its links lead out of it, to {}, \
                 so the sandbox does not grant it (name {} itself, if it is yours)",
                source
                    .setting()
                    .map(|s| format!("{s}: "))
                    .unwrap_or_default(),
                path.display(),
                real.display(),
                real.display()
            ),
        }
    }
}

/// What is granted, and what was left out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Decided {
    /// The grants, in the order asked.
    pub grants: Vec<Grant>,
    /// What was left out, to be said.
    pub left_out: Vec<LeftOut>,
}

/// A configured path the sandbox will not grant.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GrantError {
    /// `/`, the home directory or a directory holding it.
    #[error(
        "{setting} names {path}, which is / or holds your home directory (your keys, your shell's \
         startup files, every other project): name only the directories the agent needs, such as \
         ~/.cargo/registry, in tether.toml"
    )]
    HoldsHome {
        /// The setting.
        setting: &'static str,
        /// The path, as written.
        path: PathBuf,
    },
}

/// The grants for `asked` under the rules of this module, checked against `ground`.
pub fn decide(ground: &Ground, asked: &[Asked]) -> Result<Decided, GrantError> {
    let homes: Vec<PathBuf> = ground.home.iter().flat_map(Place::forms).collect();
    let holds = |form: &Path| form == Path::new("/") || homes.iter().any(|h| h.starts_with(form));
    // Every tree the agent writes: the working tree, the temporary directory, and the
    // configured writable trees (each with the one that names it), in both their forms; never
    // one that is the root or holds the home directory (that one is refused or left out).
    let areas: Vec<(Option<usize>, PathBuf)> = ground
        .writable
        .iter()
        .map(|place| (None, place))
        .chain(
            asked
                .iter()
                .enumerate()
                .filter(|(_, a)| a.source == Source::Writable)
                .map(|(at, a)| (Some(at), &a.place)),
        )
        .flat_map(|(at, place)| place.forms().map(move |form| (at, form)))
        .filter(|(_, form)| !holds(form))
        .collect();
    let mut out = Decided::default();
    for (at, a) in asked.iter().enumerate() {
        // The trees the agent writes, but the one this path names itself.
        let others = || {
            areas
                .iter()
                .filter(move |(by, _)| *by != Some(at))
                .map(|(_, area)| area)
        };
        let in_area = a
            .place
            .forms()
            .any(|form| others().any(|area| form != *area && form.starts_with(area)));
        // Where the links of a path inside the agent's trees lead is the agent's doing: only
        // the path as the person wrote it is theirs.
        let holds_home = if in_area {
            holds(&lexical(&a.place.path))
        } else {
            a.place.forms().any(|form| holds(&form))
        };
        if holds_home {
            match a.source.setting() {
                Some(setting) => {
                    return Err(GrantError::HoldsHome {
                        setting,
                        path: a.place.path.clone(),
                    });
                }
                None => {
                    out.left_out.push(LeftOut::HoldsHome {
                        path: a.place.path.clone(),
                    });
                    continue;
                }
            }
        }
        let grant = |path: PathBuf, reach| Grant {
            path,
            access: a.source.access(),
            reach,
            source: a.source,
        };
        if !in_area {
            out.grants
                .push(grant(a.place.path.clone(), Reach::Followed));
            continue;
        }
        match &a.place.real {
            None => out
                .grants
                .push(grant(lexical(&a.place.path), Reach::Unlinked)),
            Some(real) if !holds(real) && others().any(|area| real.starts_with(area)) => {
                out.grants.push(grant(real.clone(), Reach::Unlinked));
            }
            Some(real) => out.left_out.push(LeftOut::LinksOut {
                source: a.source,
                path: a.place.path.clone(),
                real: real.clone(),
            }),
        }
    }
    Ok(out)
}

/// `path` with `.` and `..` taken lexically (`..` above `/` stays at `/`).
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for part in path.components() {
        match part {
            Component::Normal(name) => out.push(name),
            Component::ParentDir => {
                out.pop();
            }
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    out
}

#[cfg(test)]
#[path = "grants_tests.rs"]
mod tests;
