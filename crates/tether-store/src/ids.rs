//! Identifier newtypes and their generation.
//!
//! Ids are typed so a question id can never be passed where a run id is expected, and they are
//! short lowercase strings because humans type them (`tether answer q-7k2m9x "yes"`). The
//! alphabet is Crockford's base32 without `i`, `l`, `o` and `u`, so ids survive being read aloud
//! or copied from a chat. Randomness comes from std alone: the process-random SipHash keys of
//! [`RandomState`] mixed with the time, the pid and a counter. That is not cryptographic and
//! does not need to be: the store rejects duplicates and draws again.

use std::collections::hash_map::RandomState;
use std::fmt;
use std::hash::{BuildHasher, Hasher};
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

/// Crockford base32, lowercase: no `i`, `l`, `o`, `u`.
const ALPHABET: &[u8; 32] = b"0123456789abcdefghjkmnpqrstvwxyz";

/// Random characters in a generated run id (60 bits).
const RUN_ID_LEN: usize = 12;
/// Random characters in a generated question id (30 bits; short enough to type).
const QUESTION_ID_LEN: usize = 6;
/// The longest id body accepted when parsing, to leave room for longer ids later.
const MAX_BODY_LEN: usize = 64;

/// An id string that does not have the expected shape.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{input}` is not a valid {what} id (expected `{prefix}` followed by letters and digits)")]
pub struct ParseIdError {
    what: &'static str,
    prefix: &'static str,
    input: String,
}

macro_rules! string_id {
    ($(#[$doc:meta])* $name:ident, $what:literal, $prefix:literal, $len:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(try_from = "String", into = "String")]
        pub struct $name(String);

        impl $name {
            /// The prefix every id of this kind starts with.
            pub const PREFIX: &'static str = $prefix;

            /// Draws a fresh random id. The store checks it is unused before writing it.
            pub fn generate() -> Self {
                Self(format!("{}{}", $prefix, random_body($len)))
            }

            /// The id as text, e.g. for a SQL parameter or a URL.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl FromStr for $name {
            type Err = ParseIdError;

            /// Parses an id, accepting upper case (humans type these) but storing lower case.
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                let lower = s.trim().to_ascii_lowercase();
                let valid = lower.strip_prefix($prefix).is_some_and(|body| {
                    !body.is_empty()
                        && body.len() <= MAX_BODY_LEN
                        && body.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
                });
                if valid {
                    Ok(Self(lower))
                } else {
                    Err(ParseIdError {
                        what: $what,
                        prefix: $prefix,
                        input: s.to_owned(),
                    })
                }
            }
        }

        impl TryFrom<String> for $name {
            type Error = ParseIdError;

            fn try_from(s: String) -> Result<Self, Self::Error> {
                s.parse()
            }
        }

        impl From<$name> for String {
            fn from(id: $name) -> String {
                id.0
            }
        }
    };
}

string_id!(
    /// Identifies a run: `r-` followed by 12 base32 characters, e.g. `r-3k9tq0w2mz7c`.
    RunId,
    "run",
    "r-",
    RUN_ID_LEN
);

string_id!(
    /// Identifies a question to a human: `q-` followed by 6 base32 characters, e.g. `q-7k2m9x`.
    QuestionId,
    "question",
    "q-",
    QUESTION_ID_LEN
);

/// The position of an event in the journal: strictly increasing, never reused.
///
/// `Seq(0)` is "before the first event" and is what readers pass to start from the beginning.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Seq(pub i64);

impl Seq {
    /// The position before every event.
    pub const START: Seq = Seq(0);
}

impl fmt::Display for Seq {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// `len` random characters from [`ALPHABET`] (at most 12, i.e. 60 bits of one draw).
fn random_body(len: usize) -> String {
    let mut bits = random_u64();
    let mut out = String::with_capacity(len);
    for _ in 0..len {
        // Masked to 5 bits, so the index is always in range.
        let index = usize::try_from(bits & 31).unwrap_or(0);
        out.push(char::from(ALPHABET[index]));
        bits >>= 5;
    }
    out
}

fn random_u64() -> u64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u128(nanos);
    hasher.write_u32(std::process::id());
    hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    hasher.finish()
}

#[cfg(test)]
#[path = "ids_tests.rs"]
mod tests;
