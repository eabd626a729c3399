//! Errors that carry their exit code.
//!
//! Most failures exit 1; a usage or configuration problem exits 2. A command marks the latter
//! explicitly by wrapping the error in [`Failure::usage`], so `main` never guesses from types or
//! message text.

use std::fmt;

/// A usage or configuration error: exit code 2.
#[derive(Debug)]
pub struct Failure(anyhow::Error);

impl Failure {
    /// Wraps `e` as a usage or configuration error.
    pub fn usage(e: impl Into<anyhow::Error>) -> anyhow::Error {
        anyhow::Error::new(Failure(e.into()))
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // `{:#}` prints the whole chain of the wrapped error.
        write!(f, "{:#}", self.0)
    }
}

impl std::error::Error for Failure {}
