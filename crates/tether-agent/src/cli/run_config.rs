//! A run's own copy of an agent CLI's configuration directory, so nothing the CLI writes during
//! a run — a hook in its `settings.json`, a `config.toml`, an extension, an MCP server — changes
//! what runs the next time the person uses that CLI, outside any sandbox.
//!
//! The CLI is pointed at a directory of the run's ([`RunConfigDir::dir`]), seeded from the
//! person's with what its descriptor lists ([`ConfigDir::files`]): its settings and its login
//! copied, the directories it only reads (skills, extensions) linked (the sandbox grants them
//! read-only). After each turn, and when the run ends, the credentials the CLI refreshed flow
//! back ([`RunConfigDir::keep_credentials`]): only a credential file that existed when the run
//! began, that the CLI changed, that still parses as a JSON object with the same keys, and that
//! the person did not change meanwhile; written through a temporary file and a rename. Nothing
//! else ever flows back, and the run's directory is removed when the run ends.
//!
//! The run's directory lies where the agent writes (the sandbox's private temporary
//! directory): it is opened once when made, and every file read back is opened beneath that
//! descriptor without following any link, so a link the agent puts in its place reads nothing
//! of tether's.
//!
//! [`ConfigDir::files`]: super::ConfigDir::files

use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, Read as _, Write as _};
use std::os::fd::OwnedFd;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use nix::fcntl::{OFlag, OpenHow, ResolveFlag};
use nix::sys::stat::Mode;

use super::Agent;
use super::descriptor::{ConfigFile, ConfigKind};

/// The largest configuration file copied (a larger one is left out, said).
const MAX_FILE: u64 = 1024 * 1024;

/// A credential the run began with.
#[derive(Debug)]
struct Login {
    /// Its name in both directories.
    name: &'static str,
    /// Where it is in the person's.
    person: PathBuf,
    /// What the person's held when the run began, then as last copied back.
    theirs: Vec<u8>,
    /// What the run's held when last looked at.
    ours: Vec<u8>,
    /// Its top-level keys, when it is a JSON object (else it never flows back).
    keys: Option<BTreeSet<String>>,
}

/// An agent CLI's configuration directory for one run.
#[derive(Debug)]
pub struct RunConfigDir {
    /// The run's directory.
    dir: PathBuf,
    /// The same, opened when made.
    fd: OwnedFd,
    /// The credentials it began with.
    logins: Mutex<Vec<Login>>,
}

impl RunConfigDir {
    /// Makes `dir` (mode 0700) the configuration directory of `agent` for one run, seeded from
    /// the person's directory `person` when there is one (and whether the CLI's variable names
    /// it, rather than its default under `home`).
    pub fn seed(
        agent: Agent,
        person: Option<(&Path, bool)>,
        home: Option<&Path>,
        dir: &Path,
    ) -> io::Result<Self> {
        std::fs::create_dir_all(dir)?;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
        let fd = nix::fcntl::open(
            dir,
            OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
            Mode::empty(),
        )?;
        let mut logins = Vec::new();
        for file in agent.config_dir.files {
            remove_in(&fd, file.name)?;
            let Some((person, named)) = person else {
                continue;
            };
            let source = source_of(file, person, named, home);
            match file.kind {
                ConfigKind::Shared => {
                    if source.is_dir() {
                        std::os::unix::fs::symlink(&source, dir.join(file.name))?;
                    }
                }
                ConfigKind::Setting | ConfigKind::Credential => {
                    let Some(bytes) = read_person(&source) else {
                        continue;
                    };
                    write_in(&fd, file.name, &bytes)?;
                    if file.kind == ConfigKind::Credential {
                        logins.push(Login {
                            name: file.name,
                            person: source,
                            keys: keys_of(&bytes),
                            theirs: bytes.clone(),
                            ours: bytes,
                        });
                    }
                }
            }
        }
        Ok(RunConfigDir {
            dir: dir.to_path_buf(),
            fd,
            logins: Mutex::new(logins),
        })
    }

    /// The directories of the person's `person` that `agent` reads in a run (its shared
    /// entries that exist), for the sandbox to grant read-only.
    pub fn shared(agent: Agent, person: &Path) -> Vec<PathBuf> {
        agent
            .config_dir
            .files
            .iter()
            .filter(|f| f.kind == ConfigKind::Shared)
            .map(|f| person.join(f.name))
            .filter(|p| p.is_dir())
            .collect()
    }

    /// The run's directory, which the CLI is pointed at.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Copies back to the person's directory each credential the CLI refreshed (see the
    /// module's documentation); what cannot be copied is said in the log.
    pub fn keep_credentials(&self) {
        let Ok(mut logins) = self.logins.lock() else {
            return;
        };
        for login in logins.iter_mut() {
            if let Err(why) = self.keep(login) {
                tracing::warn!(
                    file = %login.person.display(),
                    "the login the agent CLI refreshed during the run is not copied back: {why}"
                );
            }
        }
    }

    /// Copies `login` back when it changed and may flow back; `Err` says why it may not.
    fn keep(&self, login: &mut Login) -> Result<(), String> {
        let now = read_beneath(&self.fd, login.name).map_err(|e| e.to_string())?;
        if now == login.ours {
            return Ok(());
        }
        login.ours = now.clone();
        if login.keys.is_none() || keys_of(&now) != login.keys {
            return Err("it is no longer a JSON object with the keys it had".to_owned());
        }
        if read_person(&login.person).as_deref() != Some(login.theirs.as_slice()) {
            // The person logged in again meanwhile: theirs is the newer one.
            return Err("yours changed meanwhile, and is kept".to_owned());
        }
        replace(&login.person, &now).map_err(|e| e.to_string())?;
        login.theirs = now;
        Ok(())
    }
}

impl Drop for RunConfigDir {
    /// The last refresh flows back; the run's directory, with its copies of the person's
    /// settings and logins, is removed (a link put in its place is removed, not followed).
    fn drop(&mut self) {
        self.keep_credentials();
        if let Err(e) = std::fs::remove_dir_all(&self.dir) {
            tracing::warn!(dir = %self.dir.display(), "the run's copy of the agent CLI's configuration is left: {e}");
        }
    }
}

/// Where `file` is in the person's configuration.
fn source_of(file: &ConfigFile, person: &Path, named: bool, home: Option<&Path>) -> PathBuf {
    match (file.unnamed, named, home) {
        (Some(beside), false, Some(home)) => home.join(beside),
        _ => person.join(file.name),
    }
}

/// The person's file at `path` (links followed: it is theirs), when it is a regular file of at
/// most [`MAX_FILE`] bytes.
fn read_person(path: &Path) -> Option<Vec<u8>> {
    let file = File::open(path).ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut bytes = Vec::new();
    file.take(MAX_FILE + 1).read_to_end(&mut bytes).ok()?;
    if bytes.len() as u64 > MAX_FILE {
        tracing::warn!(file = %path.display(), "larger than 1 MiB: not copied into the run");
        return None;
    }
    Some(bytes)
}

/// The regular file `name` beneath `dir`, opened without following any link, at most
/// [`MAX_FILE`] bytes.
fn read_beneath(dir: &OwnedFd, name: &str) -> io::Result<Vec<u8>> {
    let how = OpenHow::new()
        .flags(OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC)
        .resolve(ResolveFlag::RESOLVE_BENEATH | ResolveFlag::RESOLVE_NO_SYMLINKS);
    let file = File::from(nix::fcntl::openat2(dir, name, how)?);
    if !file.metadata()?.is_file() {
        return Err(io::Error::other("it is not a regular file"));
    }
    let mut bytes = Vec::new();
    file.take(MAX_FILE + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_FILE {
        return Err(io::Error::other("it is larger than 1 MiB"));
    }
    Ok(bytes)
}

/// Writes a new file `name` (mode 0600) holding `bytes` in `dir`.
fn write_in(dir: &OwnedFd, name: &str, bytes: &[u8]) -> io::Result<()> {
    let fd = nix::fcntl::openat(
        dir,
        name,
        OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
        Mode::from_bits_truncate(0o600),
    )?;
    File::from(fd).write_all(bytes)
}

/// Removes the entry `name` of `dir` (a file or a link), if there is one.
fn remove_in(dir: &OwnedFd, name: &str) -> io::Result<()> {
    match nix::unistd::unlinkat(dir, name, nix::unistd::UnlinkatFlags::NoRemoveDir) {
        Ok(()) | Err(nix::errno::Errno::ENOENT) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// The top-level keys of `bytes`, when they are a JSON object.
fn keys_of(bytes: &[u8]) -> Option<BTreeSet<String>> {
    match serde_json::from_slice::<serde_json::Value>(bytes).ok()? {
        serde_json::Value::Object(map) => Some(map.keys().cloned().collect()),
        _ => None,
    }
}

/// Replaces the person's file at `path` (where its links lead) with `bytes`, keeping its mode:
/// through a temporary file beside it and a rename.
fn replace(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let target = std::fs::canonicalize(path)?;
    let parent = target.parent().unwrap_or(Path::new("/"));
    let mode = std::fs::metadata(&target)?.permissions().mode() & 0o777;
    let name = target.file_name().unwrap_or(OsStr::new("credentials"));
    let mut temp = tempfile::Builder::new()
        .prefix(&format!(".{}.", name.to_string_lossy()))
        .tempfile_in(parent)?;
    temp.write_all(bytes)?;
    temp.as_file().sync_all()?;
    std::fs::set_permissions(temp.path(), std::fs::Permissions::from_mode(mode))?;
    temp.persist(&target).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
#[path = "run_config_tests.rs"]
mod tests;
