//! What can go wrong when loading a config, in a form a human can act on.
//!
//! Validation collects every [`Problem`] instead of stopping at the first, because
//! `tether validate` must list them all; a [`ConfigError::Invalid`] carries that list.

use std::fmt;
use std::path::PathBuf;

/// One thing wrong with a config file, located as precisely as the file allows.
///
/// `Display` reads like a compiler diagnostic:
/// `tether.toml:12: loop.max_iteratons: unknown key; did you mean `max_iterations`?`
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The config file the problem is in (or would be in, for environment values).
    pub file: PathBuf,
    /// 1-based line, when the problem sits at a place in the file.
    pub line: Option<usize>,
    /// 1-based column; only syntax errors have one.
    pub column: Option<usize>,
    /// Dotted key path such as `loop.max_iterations`; empty for syntax errors.
    pub key: String,
    /// What is wrong and what is allowed; never contains a secret's value.
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(column) = self.column {
                write!(f, ":{column}")?;
            }
        }
        if !self.key.is_empty() {
            write!(f, ": {}", self.key)?;
        }
        write!(f, ": {}", self.message)
    }
}

/// Why a config could not be loaded. All variants are fatal for the command that loads the
/// config: none is retried, and none is shown to a model. The CLI maps them to exit code 2.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The config file exists (or was named) but could not be read.
    #[error("cannot read {}: {cause}", path.display())]
    Io {
        /// The file that could not be read.
        path: PathBuf,
        /// The underlying error.
        cause: std::io::Error,
    },
    /// `TETHER_CONFIG` names a file that does not exist. (A missing default `tether.toml` is not
    /// an error: it means defaults.)
    #[error("TETHER_CONFIG names {}, which does not exist", path.display())]
    NotFound {
        /// The resolved path that was looked for.
        path: PathBuf,
    },
    /// The file was read but has problems; every one found is listed.
    #[error("{}", render_problems(file, problems))]
    Invalid {
        /// The config file.
        file: PathBuf,
        /// Every problem found, in file order, then those without a line.
        problems: Vec<Problem>,
    },
    /// A config names an environment variable for an API key, and that variable is unset or
    /// empty.
    #[error(
        "the environment variable `{var}` is not set; it must hold the API key \
         (keys never live in tether.toml)"
    )]
    MissingKey {
        /// The variable's name.
        var: String,
    },
}

impl ConfigError {
    /// The problems behind an [`ConfigError::Invalid`]; empty for the other variants.
    /// `tether validate` prints these one per line.
    pub fn problems(&self) -> &[Problem] {
        match self {
            Self::Invalid { problems, .. } => problems,
            Self::Io { .. } | Self::NotFound { .. } | Self::MissingKey { .. } => &[],
        }
    }
}

fn render_problems(file: &std::path::Path, problems: &[Problem]) -> String {
    let count = problems.len();
    let noun = if count == 1 { "problem" } else { "problems" };
    let mut out = format!("{} has {count} {noun}:", file.display());
    for problem in problems {
        out.push('\n');
        out.push_str(&problem.to_string());
    }
    out
}
