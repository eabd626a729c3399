//! What an agent CLI needs beyond the sandbox every child gets: its install tree and Node's
//! (installed by npm anywhere: a global prefix, a version manager, a project's `node_modules`)
//! readable, and its own configuration directory (sessions, logs, credentials) writable and
//! named explicitly, so it writes nowhere else in the home directory.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use tether_config::{Config, ExecutorKind};
use tether_sandbox::Policy;

/// The reach of one agent CLI.
pub struct CliReach {
    /// Trees it reads (its install tree, Node's).
    read: Vec<PathBuf>,
    /// Its configuration directory.
    config_dir: PathBuf,
    /// Variables naming that directory for it.
    pub vars: Vec<(String, std::ffi::OsString)>,
}

impl CliReach {
    /// The reach of `kind` as `config` runs it.
    pub fn of(config: &Config, kind: ExecutorKind) -> Result<Self> {
        let program = config
            .executor
            .program
            .clone()
            .unwrap_or_else(|| default_program(kind).to_owned());
        let mut read = Vec::new();
        for name in [program.as_str(), "node"] {
            if let Some(found) = find(name) {
                read.extend(install_trees(&found));
                // A launcher script (a wrapper, npm's shims) runs programs named by path.
                for launched in launched_by(&found) {
                    read.extend(install_trees(&launched));
                }
            }
        }
        let (var, _) = config_var(kind);
        let config_dir = config_dir(config, kind);
        std::fs::create_dir_all(&config_dir)
            .with_context(|| format!("creating the agent's directory {}", config_dir.display()))?;
        // pi's per-run agent directory names it itself; the others are pointed at theirs.
        let vars = if kind == ExecutorKind::Pi {
            Vec::new()
        } else {
            vec![(var.to_owned(), config_dir.clone().into_os_string())]
        };
        Ok(CliReach {
            read,
            config_dir,
            vars,
        })
    }

    /// `policy` with this reach added.
    pub fn open(&self, policy: Policy) -> Policy {
        let mut policy = policy.write(&self.config_dir);
        for tree in &self.read {
            policy = policy.read_if_present(tree);
        }
        policy
    }
}

/// The variable naming `kind`'s configuration directory, and its default under `$HOME`.
fn config_var(kind: ExecutorKind) -> (&'static str, &'static str) {
    match kind {
        ExecutorKind::Claude => ("CLAUDE_CONFIG_DIR", ".claude"),
        ExecutorKind::Codex => ("CODEX_HOME", ".codex"),
        _ => ("PI_CODING_AGENT_DIR", ".pi/agent"),
    }
}

/// The configuration directory of the agent CLI `kind` as `config` runs it: its variable in
/// `[executor] env`, else in tether's environment, else its default under `$HOME`.
pub fn config_dir(config: &Config, kind: ExecutorKind) -> PathBuf {
    let (var, default) = config_var(kind);
    config
        .executor
        .env
        .iter()
        .find(|(k, _)| k == var)
        .map(|(_, v)| PathBuf::from(v))
        .or_else(|| std::env::var_os(var).map(PathBuf::from))
        .unwrap_or_else(|| {
            std::env::var_os("HOME")
                .map(PathBuf::from)
                .unwrap_or_default()
                .join(default)
        })
}

fn default_program(kind: ExecutorKind) -> &'static str {
    match kind {
        ExecutorKind::Claude => "claude",
        ExecutorKind::Codex => "codex",
        _ => "pi",
    }
}

/// `name` as a path, or found on `PATH`.
fn find(name: &str) -> Option<PathBuf> {
    if name.contains('/') {
        return Some(PathBuf::from(name));
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
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

/// The trees a program is installed in, as named and as its links lead: above the outermost
/// `node_modules` it lives in (an npm prefix or package), else the directory above its `bin/`.
fn install_trees(program: &Path) -> Vec<PathBuf> {
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
            outermost.or_else(|| Some(path.parent()?.parent()?.to_path_buf()))
        })
        .collect()
}
