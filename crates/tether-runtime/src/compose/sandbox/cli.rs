//! What an agent needs beyond the sandbox every child gets: its install tree and Node's
//! (installed by npm anywhere: a global prefix, a version manager, a project's `node_modules`)
//! readable, and the shared parts of the person's configuration directory it reads (its skills,
//! its extensions) readable, never writable. The CLI writes only the run's own copy of its
//! configuration directory, in the run's private temporary directory (see
//! `tether_agent::cli::RunConfigDir`): a hook or a setting it writes there never reaches the
//! person's.

use std::path::{Path, PathBuf};

use tether_agent::cli::{Agent, RunConfigDir};
use tether_config::{Config, Workspace};

use super::grants::{Asked, Place, Source};
use crate::compose::agents::Worker;
use crate::error::{Error, Result};

/// The reach of one agent CLI.
pub struct CliReach {
    /// Trees it reads (its install tree, Node's, the person's shared configuration).
    read: Vec<PathBuf>,
}

impl CliReach {
    /// The reach of `agent` as `config` runs it. A launcher script inside one of `areas` (trees
    /// the agent writes) is the agent's to rewrite: the programs it names are not followed.
    pub fn of(config: &Config, agent: Agent, areas: &[&Path]) -> Self {
        let program = config
            .executor
            .program
            .clone()
            .unwrap_or_else(|| agent.program.to_owned());
        let mut read = program_reach(&program, areas);
        let person = config_dir(config, agent);
        read.extend(tether_agent::cli::RunConfigDir::shared(agent, &person));
        // What it reads of the home directory besides (its own unpacked package).
        if let Some(home) = std::env::var_os("HOME").map(PathBuf::from) {
            read.extend(
                agent
                    .home_reads
                    .iter()
                    .map(|dir| home.join(dir))
                    .filter(|dir| dir.is_dir()),
            );
        }
        CliReach { read }
    }

    /// The reach of any other agent program `config` names (an ACP agent, a command): its
    /// install tree and Node's, found as an agent CLI's are, so an agent installed by npm (or
    /// anywhere with a `bin/`) starts in the sandbox without `[sandbox] readable`.
    pub fn program(config: &Config, areas: &[&Path]) -> Self {
        let read = config
            .executor
            .program
            .as_deref()
            .map(|program| program_reach(program, areas))
            .unwrap_or_default();
        CliReach { read }
    }

    /// What it asks the sandbox to grant.
    pub fn asked(&self) -> impl Iterator<Item = Asked> + '_ {
        self.read.iter().map(|path| Asked {
            source: Source::Agent,
            place: Place::resolve(path),
        })
    }
}

/// The install trees of `program` and of Node, and of what a launcher script of theirs names
/// by path, unless the script lies in one of `areas` (a tree the agent writes).
fn program_reach(program: &str, areas: &[&Path]) -> Vec<PathBuf> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let agents = |path: &Path| {
        let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        areas.iter().any(|area| {
            let area = std::fs::canonicalize(area).unwrap_or_else(|_| area.to_path_buf());
            real.starts_with(&area) || path.starts_with(&area)
        })
    };
    let mut read = Vec::new();
    for name in [program, "node"] {
        if let Some(found) = tether_tools::process::locate(Path::new(name), Path::new("")) {
            read.extend(reach(&found, home.as_deref()));
            // A launcher script (a wrapper, npm's shims) runs programs named by path.
            if !agents(&found) {
                for launched in launched_by(&found) {
                    read.extend(reach(&launched, home.as_deref()));
                }
            }
        }
    }
    read
}

/// The person's configuration directory of `agent` as `config` runs it: its variable in
/// `[executor] env`, else in tether's environment, else its default under `$HOME`.
pub fn config_dir(config: &Config, agent: Agent) -> PathBuf {
    person_config(config, agent).0
}

/// [`config_dir`], and whether a variable names it (or the home it lies in).
fn person_config(config: &Config, agent: Agent) -> (PathBuf, bool) {
    let (var, default) = (agent.config_dir.var, agent.config_dir.default);
    config
        .executor
        .env
        .iter()
        .find(|(k, _)| k == var)
        .map(|(_, v)| PathBuf::from(v))
        .or_else(|| std::env::var_os(var).map(PathBuf::from))
        .map(|named| match agent.config_dir.within {
            Some(name) => named.join(name),
            None => named,
        })
        .map_or_else(
            || {
                let home = std::env::var_os("HOME").map(PathBuf::from);
                (home.unwrap_or_default().join(default), false)
            },
            |dir| (dir, true),
        )
}

/// The run's own configuration directory of the agent CLI `config` runs (or whose ACP adapter
/// it runs), in the sandbox's `scratch` directory, seeded from the person's; with the variable
/// that points the CLI at it and its value (the directory, or the home it lies in). `None`
/// without a sandbox (the CLI then uses its own, as the person does) or for another agent.
pub fn run_config_dir(
    config: &Config,
    ws: &Workspace,
    scratch: Option<&Path>,
) -> Result<Option<(String, PathBuf, RunConfigDir)>> {
    let (Some(scratch), Worker::Cli(agent)) =
        (scratch, crate::compose::agents::sandboxed_as(config)?)
    else {
        return Ok(None);
    };
    let (person, named) = person_config(config, agent);
    if person.starts_with(ws.root()) {
        tracing::warn!(
            dir = %person.display(),
            "{}'s configuration directory lies in the working tree, which the agent writes: \
             its settings and hooks there are the agent's to change",
            agent.title
        );
    }
    let value = scratch.join(format!("{}-config", agent.kind));
    let dir = match agent.config_dir.within {
        Some(name) => value.join(name),
        None => value.clone(),
    };
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let made = RunConfigDir::seed(agent, Some((&person, named)), home.as_deref(), &dir)
        .map_err(|e| Error::io(format!("making the run's copy of {}", person.display()), e))?;
    Ok(Some((agent.config_dir.var.to_owned(), value, made)))
}

/// The programs a launcher script names by absolute path (`exec /opt/node/bin/node …`, a
/// `#!` line): read from a small text file starting with `#!`, at most 64 KiB.
fn launched_by(program: &Path) -> Vec<PathBuf> {
    use std::io::Read as _;
    let Ok(file) = std::fs::File::open(program) else {
        return Vec::new();
    };
    let mut text = Vec::new();
    if file.take(64 * 1024).read_to_end(&mut text).is_err() || !text.starts_with(b"#!") {
        return Vec::new();
    }
    String::from_utf8_lossy(&text)
        .split(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '=' | ';' | '!'))
        .filter(|word| word.starts_with('/') && word.len() > 1)
        .map(PathBuf::from)
        .filter(|path| path.is_file())
        .collect()
}

/// What of `program`'s install trees a child reads: each [narrowed](narrowed).
fn reach(program: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    install_trees(program)
        .into_iter()
        .flat_map(|(tree, path)| narrowed(&tree, &path, home))
        .collect()
}

/// The trees a program is installed in, as named and as its links lead (each with the
/// program's path that led to it): above the outermost `node_modules` it lives in (an npm
/// prefix or package), else the directory above its `bin/`, else its own directory.
fn install_trees(program: &Path) -> Vec<(PathBuf, PathBuf)> {
    let real = std::fs::canonicalize(program).ok();
    [Some(program.to_path_buf()), real]
        .into_iter()
        .flatten()
        .filter_map(|path| {
            let outermost = path
                .ancestors()
                .filter(|a| a.file_name().is_some_and(|n| n == "node_modules"))
                .last()
                .and_then(Path::parent)
                .map(Path::to_path_buf);
            let dir = path.parent()?;
            let above_bin = || {
                dir.file_name()
                    .is_some_and(|n| n == "bin")
                    .then(|| dir.parent())
                    .flatten()
                    .map(Path::to_path_buf)
            };
            let tree = outermost
                .or_else(above_bin)
                .unwrap_or_else(|| dir.to_path_buf());
            Some((tree, path))
        })
        .collect()
}

/// Directories of the home directory that many programs share (and keep secrets in): never an
/// install tree.
const SHARED_HOME_DIRS: &[&str] = &[
    ".local",
    ".local/share",
    ".local/state",
    ".config",
    ".cache",
];

/// `tree`, where `program` is installed, as a child may read it: never the home directory or a
/// directory holding it, nor one of its shared directories (`~/.local` for `~/.local/bin/claude`)
/// — the program's own directory then, or the program alone; and without the `etc/npmrc` of a
/// Node prefix when it holds a credential (npm's global configuration, an `_authToken`).
fn narrowed(tree: &Path, program: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    let too_wide = |dir: &Path| {
        home.is_some_and(|home| {
            super::home::holds_home(dir, home)
                || SHARED_HOME_DIRS
                    .iter()
                    .any(|shared| same_dir(dir, &home.join(shared)))
        })
    };
    let tree = if !too_wide(tree) {
        tree.to_path_buf()
    } else {
        match program.parent() {
            Some(dir) if !too_wide(dir) => dir.to_path_buf(),
            _ => return vec![program.to_path_buf()],
        }
    };
    let npmrc = tree.join("etc/npmrc");
    let excluded = if npmrc.is_file()
        && super::credential::in_file(&npmrc, super::credential::Format::Npmrc)
    {
        vec![npmrc]
    } else {
        Vec::new()
    };
    super::home::cover(&tree, &excluded)
}

/// Whether `a` and `b` are the same directory (links resolved).
fn same_dir(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::path::Path;

    use super::narrowed;

    #[test]
    fn an_install_tree_never_holds_the_home_directory_or_its_shared_directories() {
        let home = tempfile::tempdir().unwrap();
        let h = home.path();
        for dir in [".local/bin", ".ssh", "bin"] {
            fs::create_dir_all(h.join(dir)).unwrap();
        }
        // `~/.local/bin/claude`: the tree above `bin/` would be `~/.local`.
        let claude = h.join(".local/bin/claude");
        fs::write(&claude, "x").unwrap();
        assert_eq!(
            narrowed(&h.join(".local"), &claude, Some(h)),
            vec![h.join(".local/bin")]
        );
        // `~/bin/agent`: the tree above `bin/` would be the home directory.
        let agent = h.join("bin/agent");
        fs::write(&agent, "x").unwrap();
        assert_eq!(narrowed(h, &agent, Some(h)), vec![h.join("bin")]);
        // `~/agent`: its own directory is the home directory too.
        let bare = h.join("agent");
        fs::write(&bare, "x").unwrap();
        assert_eq!(narrowed(Path::new("/"), &bare, Some(h)), vec![bare.clone()]);
    }

    #[test]
    fn a_node_prefixs_npmrc_with_a_token_is_left_out() {
        let prefix = tempfile::tempdir().unwrap();
        let p = prefix.path();
        fs::create_dir_all(p.join("bin")).unwrap();
        fs::create_dir_all(p.join("etc")).unwrap();
        fs::write(p.join("bin/node"), "x").unwrap();
        fs::write(p.join("etc/npmrc"), "//r/:_authToken=npm_secret\n").unwrap();
        let granted = narrowed(p, &p.join("bin/node"), None);
        assert!(granted.iter().any(|g| p.join("bin/node").starts_with(g)));
        assert!(!granted.iter().any(|g| p.join("etc/npmrc").starts_with(g)));
    }
}
