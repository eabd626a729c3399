//! Which environment variable an agent CLI reads its model key from, as the CLI's own
//! configuration names it.
//!
//! tether passes an agent CLI an allow-listed environment only (its own `OPENAI_*`,
//! `ANTHROPIC_*`… prefixes, the sandbox's list), so a provider whose key lives in a variable of
//! its own choosing (Codex's `env_key = "OPENROUTER_API_KEY"`, pi's `"apiKey":
//! "$OPENROUTER_API_KEY"`) would start without it and fail every turn. Each CLI's reader
//! ([`crate::codex_provider_key`], [`crate::pi_provider_key`]) finds the provider the CLI will
//! use and the variables its configuration names; the sandbox passes exactly those, and
//! `tether doctor` names the one that is unset. A configuration that cannot be read is no
//! error: the CLI's defaults are assumed, with a note saying why.

use std::io::Read as _;
use std::path::{Path, PathBuf};

/// The largest configuration file read (they are a few kilobytes).
pub const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// What an agent CLI's configuration says about the key of the provider it will use.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProviderKey {
    /// The provider, as the configuration names it (`openrouter`); `None` when the CLI picks
    /// one itself.
    pub provider: Option<String>,
    /// The variable that provider reads its key from, when the configuration names one.
    pub key_var: Option<String>,
    /// Whether the CLI fails without `key_var` (no login of its own stands in for it).
    pub required: bool,
    /// Further variables the configuration names for the CLI (header values, other
    /// providers' keys), passed on like the key.
    pub other_vars: Vec<String>,
    /// How the provider is reached without a variable of its own (a built-in provider's login
    /// or standard variables), for people.
    pub builtin: Option<&'static str>,
    /// What could not be read, and what was assumed instead.
    pub notes: Vec<String>,
}

impl ProviderKey {
    /// Every variable to pass to the CLI: the key's first, each once.
    pub fn vars(&self) -> Vec<String> {
        let mut vars: Vec<String> = self.key_var.iter().cloned().collect();
        for var in &self.other_vars {
            if !vars.contains(var) {
                vars.push(var.clone());
            }
        }
        vars
    }
}

/// Why a configuration file was not read.
#[derive(Debug, thiserror::Error)]
pub enum ConfigFileError {
    /// It is there but not a regular file.
    #[error("{} is not a regular file", path.display())]
    NotAFile {
        /// The file.
        path: PathBuf,
    },
    /// It is larger than [`MAX_CONFIG_BYTES`].
    #[error("{} is larger than {} bytes", path.display(), MAX_CONFIG_BYTES)]
    TooLarge {
        /// The file.
        path: PathBuf,
    },
    /// Reading it failed.
    #[error("reading {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Its contents do not parse.
    #[error("{} does not parse: {detail}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// The parser's message (with line and column).
        detail: String,
    },
}

/// The text of the configuration file at `path` (symbolic links followed): `Ok(None)` when
/// there is none; refused when it is not a regular file or larger than [`MAX_CONFIG_BYTES`].
pub(crate) fn read_config(path: &Path) -> Result<Option<String>, ConfigFileError> {
    let read_err = |source| ConfigFileError::Read {
        path: path.to_owned(),
        source,
    };
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(read_err(e)),
    };
    if !meta.is_file() {
        return Err(ConfigFileError::NotAFile {
            path: path.to_owned(),
        });
    }
    let file = std::fs::File::open(path).map_err(read_err)?;
    let mut bytes = Vec::new();
    file.take(MAX_CONFIG_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(read_err)?;
    if bytes.len() as u64 > MAX_CONFIG_BYTES {
        return Err(ConfigFileError::TooLarge {
            path: path.to_owned(),
        });
    }
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|e| ConfigFileError::Parse {
            path: path.to_owned(),
            detail: e.to_string(),
        })
}

/// Whether `name` is a plausible environment variable name (`[A-Za-z_][A-Za-z0-9_]*`).
pub(crate) fn is_var_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_config_is_read_when_it_is_a_small_regular_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        assert!(read_config(&path).unwrap().is_none(), "missing: none");
        std::fs::write(&path, "a = 1\n").unwrap();
        assert_eq!(read_config(&path).unwrap().as_deref(), Some("a = 1\n"));
        let err = read_config(dir.path()).unwrap_err();
        assert!(err.to_string().ends_with("is not a regular file"), "{err}");
        let big = dir.path().join("big.toml");
        std::fs::write(&big, vec![b'#'; MAX_CONFIG_BYTES as usize + 1]).unwrap();
        let err = read_config(&big).unwrap_err();
        assert!(err.to_string().contains("is larger than"), "{err}");
    }

    #[test]
    fn vars_are_the_key_first_each_once() {
        let key = ProviderKey {
            key_var: Some("A".to_owned()),
            other_vars: vec!["B".to_owned(), "A".to_owned()],
            ..ProviderKey::default()
        };
        assert_eq!(key.vars(), ["A", "B"]);
        assert!(is_var_name("OPENROUTER_API_KEY") && is_var_name("_x1"));
        assert!(!is_var_name("1A") && !is_var_name("A-B") && !is_var_name(""));
    }
}
