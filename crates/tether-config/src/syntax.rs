//! A TOML syntax error as a [`Problem`]: the line and column it is at, and for a duplicate key
//! the key's dotted name and the line that set it first, since the parser's own words
//! (`duplicate key`) name neither.

use std::path::Path;

use crate::Problem;
use crate::reader::Reader;

/// The problem `err` describes in `text`.
pub(crate) fn problem(text: &str, file: &Path, reader: &Reader, err: &toml::de::Error) -> Problem {
    let (line, column) = match err.span() {
        Some(span) => {
            let (line, column) = reader.line_col(text, span.start);
            (Some(line), Some(column))
        }
        None => (None, None),
    };
    let mut problem = Problem {
        file: file.to_path_buf(),
        line,
        column,
        key: String::new(),
        message: format!("syntax error: {}", err.message()),
    };
    if err.message().starts_with("duplicate key")
        && let (Some(span), Some(line)) = (err.span(), line)
        && let Some(name) = text.get(span).map(str::trim).filter(|k| !k.is_empty())
    {
        let header_line = text.lines().nth(line - 1).and_then(header);
        problem.key = match &header_line {
            Some(table) => table.clone(),
            None => {
                let table = table_of(text, line);
                if table.is_empty() {
                    name.to_owned()
                } else {
                    format!("{table}.{name}")
                }
            }
        };
        problem.message = match (
            &header_line,
            first_set(text, line, name, header_line.is_some()),
        ) {
            (Some(_), Some(first)) => {
                format!("duplicate table: already opened on line {first}; merge the two")
            }
            (Some(_), None) => "duplicate table; merge the two".to_owned(),
            (None, Some(first)) => {
                format!("duplicate key: already set on line {first}; set it once")
            }
            (None, None) => "duplicate key: already set above; set it once".to_owned(),
        };
    }
    problem
}

/// The header of the table that line `line` (1-based) is in: `loop` for a line under
/// `[loop]`, empty at the top of the file.
fn table_of(text: &str, line: usize) -> String {
    text.lines()
        .take(line.saturating_sub(1))
        .filter_map(header)
        .last()
        .unwrap_or_default()
}

/// The line (1-based) before `line` that first set `name`: in the same table for a key, the
/// earlier header for a `table`.
fn first_set(text: &str, line: usize, name: &str, table: bool) -> Option<usize> {
    let lines: Vec<&str> = text.lines().take(line.saturating_sub(1)).collect();
    if table {
        let full = text.lines().nth(line - 1).and_then(header)?;
        return lines
            .iter()
            .position(|l| header(l).as_deref() == Some(full.as_str()))
            .map(|i| i + 1);
    }
    let table_start = lines
        .iter()
        .rposition(|l| header(l).is_some())
        .map_or(0, |i| i + 1);
    lines[table_start..]
        .iter()
        .position(|l| {
            l.trim_start()
                .strip_prefix(name)
                .is_some_and(|rest| rest.trim_start().starts_with('='))
        })
        .map(|i| table_start + i + 1)
}

/// The table name of a `[table]` or `[[array]]` header line.
fn header(line: &str) -> Option<String> {
    let l = line.trim();
    let inner = l
        .strip_prefix("[[")
        .and_then(|r| r.split("]]").next())
        .or_else(|| l.strip_prefix('[').and_then(|r| r.split(']').next()))?;
    Some(inner.trim().to_owned())
}
