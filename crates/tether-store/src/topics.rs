//! The per-stream counter behind Zulip topic names (`Agent Q #<n> — <summary>`).
//!
//! Kept in the store rather than derived from Zulip so two tether processes posting to the same
//! stream never pick the same number, and so numbering survives restarts.

use crate::error::Result;
use crate::store::Sqlite;

impl Sqlite {
    pub fn next_topic_number(&self, stream: &str) -> Result<u64> {
        let tx = self.write()?;
        let taken: i64 = tx.query_row(
            "INSERT INTO topic_counters (stream, \"next\") VALUES (?1, 2) \
             ON CONFLICT (stream) DO UPDATE SET \"next\" = \"next\" + 1 \
             RETURNING \"next\" - 1",
            [stream],
            |row| row.get(0),
        )?;
        tx.commit()?;
        // The counter starts at 1 and only grows, so it is never negative.
        Ok(u64::try_from(taken).unwrap_or_default())
    }
}
