//! Decoding helpers shared by the table modules.
//!
//! Text columns holding enums, ids and JSON are parsed here so that a value this build does not
//! understand becomes a [`StoreError::Corrupt`] naming the column, not a panic or a silent
//! default.

use std::str::FromStr;

use crate::error::{Result, StoreError};

/// Parses a text column into `T`, naming the column if it does not parse.
pub(crate) fn parse<T>(column: &str, text: &str) -> Result<T>
where
    T: FromStr,
    T::Err: std::fmt::Display,
{
    text.parse()
        .map_err(|err| StoreError::corrupt(format!("column {column}: {err}")))
}

/// Parses an optional text column.
pub(crate) fn parse_opt<T>(column: &str, text: Option<String>) -> Result<Option<T>>
where
    T: FromStr,
    T::Err: std::fmt::Display,
{
    text.map(|text| parse(column, &text)).transpose()
}

/// Decodes a JSON text column.
pub(crate) fn json<T: serde::de::DeserializeOwned>(column: &str, text: &str) -> Result<T> {
    serde_json::from_str(text).map_err(|err| StoreError::corrupt(format!("column {column}: {err}")))
}

/// Converts a count the caller passed into a SQL `LIMIT` (saturating; SQLite limits are i64).
pub(crate) fn limit(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}
