//! Whether anyone still waits for a pending question.
//!
//! A question stays pending until it is answered or withdrawn, but whoever asked it may stop
//! waiting first: an MCP client times out and cancels its `ask_human` call, or `tether mcp`
//! ends. That is recorded as `question_abandoned`, so `tether questions` can say that nobody is
//! waiting, and a run the question belongs to is not shown blocked on it; its answer, when it
//! comes, is owed to the run's next prompt ([`crate::RunState::late_answers`]). Someone waiting
//! again records `question_awaited`.

use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;

use crate::error::Result;
use crate::event::Event;
use crate::ids::{QuestionId, RunId};
use crate::journal::append_in;
use crate::questions::load_question;
use crate::store::Sqlite;
use crate::vocab::QuestionStatus;

/// Nobody waits for a pending question any more.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Abandoned {
    /// Since when (ms since the Unix epoch).
    pub at_ms: i64,
    /// Who gave up, in words for people.
    pub reason: String,
}

/// A pending question, and whether anyone still waits for its answer: what `tether
/// questions` and the dashboard list.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PendingQuestion {
    /// The question.
    #[serde(flatten)]
    pub question: crate::Question,
    /// Set when nobody waits for the answer any more.
    pub abandoned: Option<Abandoned>,
}

impl crate::Store {
    /// Every pending question, oldest first, each with whether anyone still waits for it.
    pub fn pending_with_waiters(&self) -> Result<Vec<PendingQuestion>> {
        self.pending_questions()?
            .into_iter()
            .map(|question| {
                Ok(PendingQuestion {
                    abandoned: self.abandoned(&question)?,
                    question,
                })
            })
            .collect()
    }
}

impl Sqlite {
    pub fn abandon_question(&self, id: &QuestionId, reason: &str) -> Result<bool> {
        let tx = self.write()?;
        let question = load_question(&tx, id)?;
        let open = question.status == QuestionStatus::Pending
            && latest(&tx, question.run_id.as_ref(), id)?.is_none_or(|a| a.is_none());
        if open {
            append_in(
                &tx,
                question.run_id.as_ref(),
                self.now(),
                &[Event::QuestionAbandoned {
                    question_id: id.clone(),
                    reason: reason.to_owned(),
                }],
            )?;
        }
        tx.commit()?;
        Ok(open)
    }

    pub fn await_question(&self, id: &QuestionId) -> Result<bool> {
        let tx = self.write()?;
        let question = load_question(&tx, id)?;
        let abandoned = question.status == QuestionStatus::Pending
            && latest(&tx, question.run_id.as_ref(), id)?.is_some_and(|a| a.is_some());
        if abandoned {
            append_in(
                &tx,
                question.run_id.as_ref(),
                self.now(),
                &[Event::QuestionAwaited {
                    question_id: id.clone(),
                }],
            )?;
        }
        tx.commit()?;
        Ok(abandoned)
    }

    pub fn abandoned(&self, question: &crate::Question) -> Result<Option<Abandoned>> {
        if question.status != QuestionStatus::Pending {
            return Ok(None);
        }
        Ok(latest(&self.conn, question.run_id.as_ref(), &question.id)?.flatten())
    }
}

/// The newest `question_abandoned` or `question_awaited` event of question `id` (filed under
/// `run`), if there is one: what it says if it is an abandonment, `None` if someone waits again.
fn latest(
    conn: &Connection,
    run: Option<&RunId>,
    id: &QuestionId,
) -> Result<Option<Option<Abandoned>>> {
    let row = conn
        .prepare_cached(
            "SELECT at_ms, payload FROM events WHERE run_id IS ?1 \
             AND kind IN ('question_abandoned', 'question_awaited') \
             AND json_extract(payload, '$.question_id') = ?2 ORDER BY seq DESC LIMIT 1",
        )?
        .query_row(params![run.map(RunId::as_str), id.as_str()], |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?))
        })
        .optional()?;
    let Some((at_ms, payload)) = row else {
        return Ok(None);
    };
    let abandoned = match serde_json::from_str::<Event>(&payload) {
        Ok(Event::QuestionAbandoned { reason, .. }) => Some(Abandoned { at_ms, reason }),
        _ => None,
    };
    Ok(Some(abandoned))
}

#[cfg(test)]
mod tests {
    use crate::{NewQuestion, Store};

    #[test]
    fn a_question_is_abandoned_once_awaited_again_and_never_once_answered() {
        let store = Store::open_in_memory().unwrap();
        let q = store
            .insert_question(&NewQuestion {
                question: "Ship?".into(),
                ..NewQuestion::default()
            })
            .unwrap();
        assert_eq!(store.abandoned(&q).unwrap(), None);
        assert!(!store.await_question(&q.id).unwrap(), "nobody gave up yet");
        assert!(store.abandon_question(&q.id, "the client gave up").unwrap());
        assert!(!store.abandon_question(&q.id, "again").unwrap());
        let why = store.abandoned(&q).unwrap().unwrap();
        assert_eq!(why.reason, "the client gave up");
        assert!(store.await_question(&q.id).unwrap());
        assert_eq!(store.abandoned(&q).unwrap(), None);
        assert!(store.abandon_question(&q.id, "gave up twice").unwrap());
        store.answer_question(&q.id, "yes", "cli", "ana").unwrap();
        let answered = store.question(&q.id).unwrap();
        assert_eq!(store.abandoned(&answered).unwrap(), None);
        assert!(!store.abandon_question(&q.id, "too late").unwrap());
    }
}
