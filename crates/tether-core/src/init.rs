//! `tether init`: everything a repository needs to start, written without clobbering anything.
//!
//! It writes a `tether.toml` — the full commented reference, or a short working one for an agent
//! ([`starter`]) —, a `plan.md` with one example goal, creates `.tether/` with the store, and
//! git-ignores `.tether/`. An existing `plan.md` is kept, always: it is the person's plan and
//! its log, and a template is no reason to lose them. An existing `tether.toml` is refused
//! before anything is written — unless the caller forces its overwrite.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use tether_config::{STATE_DIR, Workspace};

pub mod starter;

pub use starter::{Agent, starter};

/// The `plan.md` that `tether init` writes: one example goal in the contract format.
pub const PLAN_TEMPLATE: &str = "\
# Plan: describe the objective in one line

Each goal is a contract. tether signs a goal off only when its `verify` command passes and an
independent judge, reading the repository, agrees that `done_when` holds. Keep the `<!-- id -->`
lines: they let tether find a goal after it is renamed.

## Goal: Replace this example with your first goal
<!-- id: example -->
status: open
done_when: `cargo test` passes and the README documents the new flag. If wrong: CI fails on main.
verify: cargo test
failure_modes:
- verify passes because the new behaviour has no test
- the README mentions the flag but not how to use it

- [ ] write a failing test for the new behaviour
- [ ] implement it
- [ ] document it in the README

## Log
- plan created by `tether init`
";

/// What `init` writes, and what it should do about files that already exist.
#[derive(Debug, Clone, Default)]
pub struct InitOptions {
    /// Overwrite an existing `tether.toml` (an existing `plan.md` is kept all the same).
    pub force: bool,
    /// Write the short working `tether.toml` for this agent instead of the full reference.
    pub agent: Option<Agent>,
}

/// One thing `init` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InitAction {
    /// Wrote a new file.
    Created(PathBuf),
    /// Replaced an existing file (`--force`).
    Overwrote(PathBuf),
    /// Left an existing file as it was (a plan is never replaced).
    Kept(PathBuf),
    /// Created the state directory and the store in it.
    CreatedStore(PathBuf),
    /// The store already existed and was opened (and migrated if needed).
    KeptStore(PathBuf),
    /// Added `.tether/` to `.gitignore` (creating the file if needed).
    IgnoredState(PathBuf),
    /// `.gitignore` already ignores `.tether/`.
    AlreadyIgnored(PathBuf),
}

/// `init` could not finish.
#[derive(Debug, thiserror::Error)]
pub enum InitError {
    /// Files exist that `init` would overwrite; pass `--force` to replace them.
    #[error(
        "{} already exist{}; nothing was written (use --force to overwrite)",
        list(paths),
        if paths.len() == 1 { "s" } else { "" }
    )]
    Exists {
        /// The files in the way.
        paths: Vec<PathBuf>,
    },
    /// Writing failed at the OS level.
    #[error("{}: {cause}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The OS error.
        cause: io::Error,
    },
    /// The store could not be created or opened.
    #[error("creating the store")]
    Store(#[from] tether_store::StoreError),
}

fn list(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(" and ")
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> InitError + '_ {
    move |cause| InitError::Io {
        path: path.to_owned(),
        cause,
    }
}

/// Sets up `ws` for tether, its `tether.toml` the short working one of `options.agent`, else the
/// template of `schema` (every table and key it holds, commented). Returns what was done, in
/// order.
pub fn init(
    ws: &Workspace,
    schema: &tether_config::Schema,
    options: InitOptions,
) -> Result<Vec<InitAction>, InitError> {
    let template = match &options.agent {
        Some(agent) => starter(agent),
        None => schema.template(),
    };
    let config = ws.default_config_path();
    let plan = ws.root().join("plan.md");
    // `symlink_metadata`: a dangling link is in the way too, and is not written through.
    let exists = |p: &Path| p.symlink_metadata().is_ok();
    if exists(&config) && !options.force {
        return Err(InitError::Exists {
            paths: vec![PathBuf::from(ws.display(&config).as_ref())],
        });
    }
    fs::create_dir_all(ws.root()).map_err(io_err(ws.root()))?;
    let mut actions = Vec::new();
    let existed = exists(&config);
    fs::write(&config, &template).map_err(io_err(&config))?;
    actions.push(if existed {
        InitAction::Overwrote(config)
    } else {
        InitAction::Created(config)
    });
    if exists(&plan) {
        actions.push(InitAction::Kept(plan));
    } else {
        fs::write(&plan, PLAN_TEMPLATE).map_err(io_err(&plan))?;
        actions.push(InitAction::Created(plan));
    }
    let db = ws.db_path();
    let had_store = db.exists();
    drop(tether_store::Store::open(&db)?);
    actions.push(if had_store {
        InitAction::KeptStore(db)
    } else {
        InitAction::CreatedStore(db)
    });
    actions.push(ignore_state_dir(&ws.gitignore_path())?);
    Ok(actions)
}

/// Whether a `.gitignore` line already ignores the state directory at the root.
fn ignores_state(line: &str) -> bool {
    let l = line.trim();
    let l = l.strip_prefix('/').unwrap_or(l);
    let l = l.strip_suffix('/').unwrap_or(l);
    l == STATE_DIR
}

fn ignore_state_dir(path: &Path) -> Result<InitAction, InitError> {
    let existing = match fs::read_to_string(path) {
        Ok(s) => s,
        Err(e) if e.kind() == io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(io_err(path)(e)),
    };
    if existing.lines().any(ignores_state) {
        return Ok(InitAction::AlreadyIgnored(path.to_owned()));
    }
    let eol = if existing.contains("\r\n") {
        "\r\n"
    } else {
        "\n"
    };
    let mut text = existing;
    if !text.is_empty() && !text.ends_with('\n') {
        text.push_str(eol);
    }
    text.push_str(STATE_DIR);
    text.push('/');
    text.push_str(eol);
    fs::write(path, text).map_err(io_err(path))?;
    Ok(InitAction::IgnoredState(path.to_owned()))
}
