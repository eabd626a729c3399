//! Questions to a human, their answers, and where each was posted.
//!
//! A question is stored (pending) before it is offered anywhere, so it survives any crash. The
//! first answer wins atomically: it is written with `UPDATE … WHERE status = 'pending'` inside a
//! `BEGIN IMMEDIATE` transaction, and every later answer, from any channel or process, gets
//! [`AnswerOutcome::AlreadyAnswered`] instead. `question_posts` remembers which channels a
//! question was offered on, so a resumed run waits on the existing post instead of posting
//! again.
//!
//! A question may offer choices (`options`, 2–6 short labels; free text is always allowed).
//! Whatever channel an answer comes from, it is read against them here, in one place
//! ([`read_choice`]): the exact text of a label, or its number, is that choice; anything else
//! is free text. So a button, a `2` typed on a terminal or in a chat, and `tether answer q-… 2`
//! all record the same choice, and the answer's text is the chosen label.

use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;
use serde_json::Value;

use crate::error::{Result, StoreError};
use crate::event::Event;
use crate::ids::{QuestionId, RunId};
use crate::journal::{append_in, ensure_run};
use crate::row;
use crate::runs::ID_ATTEMPTS;
use crate::store::Sqlite;
use crate::vocab::QuestionStatus;

const QUESTION_COLUMNS: &str = "id, run_id, thread_id, question, context, confidence, status, \
                                created_at_ms, answer, responder, channel, answered_at_ms, \
                                cancelled_at_ms, options, answer_choice";

/// A question about to be asked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NewQuestion {
    /// The run asking, if any (`tether ask` from a script has none).
    pub run_id: Option<RunId>,
    /// The conversation it continues (a Zulip topic, a web thread), if any.
    pub thread_id: Option<String>,
    /// What the agent needs decided.
    pub question: String,
    /// Error logs, code, options considered.
    pub context: String,
    /// The agent's confidence (0–100) that it could resolve this alone.
    pub confidence: Option<u8>,
    /// The choices offered (empty for a plain question); free text is always allowed too.
    pub options: Vec<String>,
}

/// A stored question and, once answered, its answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Question {
    /// Its id, e.g. `q-7k2m9x`.
    pub id: QuestionId,
    /// The run that asked, if any.
    pub run_id: Option<RunId>,
    /// The conversation it belongs to, if any.
    pub thread_id: Option<String>,
    /// What the agent needs decided.
    pub question: String,
    /// Supporting context.
    pub context: String,
    /// The agent's confidence (0–100).
    pub confidence: Option<u8>,
    /// Pending, answered or cancelled.
    pub status: QuestionStatus,
    /// When it was asked.
    pub created_at_ms: i64,
    /// The winning answer.
    pub answer: Option<String>,
    /// Who gave it.
    pub responder: Option<String>,
    /// Where it was given.
    pub channel: Option<String>,
    /// When it was given.
    pub answered_at_ms: Option<i64>,
    /// When the question was withdrawn, if it was.
    pub cancelled_at_ms: Option<i64>,
    /// The choices offered (empty for a plain question).
    pub options: Vec<String>,
    /// The option the answer chose (an index into `options`), or `None` for free text.
    pub choice: Option<usize>,
}

/// What happened to an answer handed to [`crate::Store::answer_question`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AnswerOutcome {
    /// This answer was the first; here is the question with it recorded.
    Answered(Box<Question>),
    /// Someone answered first; this answer was discarded.
    AlreadyAnswered {
        /// The answer that won.
        answer: String,
        /// The channel it came from.
        by_channel: String,
        /// Who gave it.
        responder: String,
    },
    /// The question was withdrawn; the answer was discarded.
    Cancelled,
}

/// A record that a question was offered on a channel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct QuestionPost {
    /// The question.
    pub question_id: QuestionId,
    /// The channel (`zulip`, `web`, ...).
    pub channel: String,
    /// Where it is on that channel, as the channel needs to find it again (for Zulip: stream,
    /// topic, message id and the last message seen).
    pub external_ref: Value,
    /// When it was posted.
    pub posted_at_ms: i64,
}

impl Sqlite {
    pub fn insert_question(&self, new: &NewQuestion) -> Result<Question> {
        let tx = self.write()?;
        if let Some(run_id) = &new.run_id {
            ensure_run(&tx, run_id)?;
        }
        let now = self.now();
        let id = unused_question_id(&tx)?;
        tx.execute(
            "INSERT INTO questions (id, run_id, thread_id, question, context, confidence, \
             status, created_at_ms, options) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            params![
                id.as_str(),
                new.run_id.as_ref().map(RunId::as_str),
                new.thread_id,
                new.question,
                new.context,
                new.confidence,
                QuestionStatus::Pending.as_str(),
                now,
                serde_json::to_string(&new.options)?,
            ],
        )?;
        append_in(
            &tx,
            new.run_id.as_ref(),
            now,
            &[Event::QuestionAsked {
                question_id: id.clone(),
            }],
        )?;
        let question = load_question(&tx, &id)?;
        tx.commit()?;
        Ok(question)
    }

    pub fn answer_question(
        &self,
        id: &QuestionId,
        answer: &str,
        channel: &str,
        responder: &str,
    ) -> Result<AnswerOutcome> {
        let tx = self.write()?;
        let now = self.now();
        let options = load_question(&tx, id)?.options;
        let choice = read_choice(&options, answer);
        let answer = choice
            .and_then(|i| options.get(i))
            .map_or(answer, String::as_str);
        let changed = tx
            .prepare_cached(
                "UPDATE questions SET status = 'answered', answer = ?2, channel = ?3, \
                 responder = ?4, answered_at_ms = ?5, answer_choice = ?6 \
                 WHERE id = ?1 AND status = 'pending'",
            )?
            .execute(params![
                id.as_str(),
                answer,
                channel,
                responder,
                now,
                choice.and_then(|i| i64::try_from(i).ok())
            ])?;
        let question = load_question(&tx, id)?;
        if changed == 0 {
            tx.commit()?;
            return Ok(match question.status {
                QuestionStatus::Cancelled => AnswerOutcome::Cancelled,
                // Pending cannot happen here (the update would have matched); treat it as the
                // answered case's empty fields rather than panic.
                QuestionStatus::Answered | QuestionStatus::Pending => {
                    AnswerOutcome::AlreadyAnswered {
                        answer: question.answer.unwrap_or_default(),
                        by_channel: question.channel.unwrap_or_default(),
                        responder: question.responder.unwrap_or_default(),
                    }
                }
            });
        }
        append_in(
            &tx,
            question.run_id.as_ref(),
            now,
            &[Event::QuestionAnswered {
                question_id: id.clone(),
                channel: channel.to_owned(),
                responder: responder.to_owned(),
            }],
        )?;
        tx.commit()?;
        Ok(AnswerOutcome::Answered(Box::new(question)))
    }

    pub fn cancel_question(&self, id: &QuestionId) -> Result<bool> {
        let tx = self.write()?;
        let now = self.now();
        let changed = tx.execute(
            "UPDATE questions SET status = 'cancelled', cancelled_at_ms = ?2 \
             WHERE id = ?1 AND status = 'pending'",
            params![id.as_str(), now],
        )?;
        let question = load_question(&tx, id)?;
        if changed > 0 {
            append_in(
                &tx,
                question.run_id.as_ref(),
                now,
                &[Event::QuestionCancelled {
                    question_id: id.clone(),
                }],
            )?;
        }
        tx.commit()?;
        Ok(changed > 0)
    }

    pub fn question(&self, id: &QuestionId) -> Result<Question> {
        load_question(&self.conn, id)
    }

    pub fn pending_questions(&self) -> Result<Vec<Question>> {
        self.query_questions(
            &format!(
                "SELECT {QUESTION_COLUMNS} FROM questions WHERE status = 'pending' \
                 ORDER BY created_at_ms, rowid"
            ),
            params![],
        )
    }

    pub fn question_history(&self, limit: usize) -> Result<Vec<Question>> {
        self.query_questions(
            &format!(
                "SELECT {QUESTION_COLUMNS} FROM questions \
                 ORDER BY created_at_ms DESC, rowid DESC LIMIT ?1"
            ),
            params![row::limit(limit)],
        )
    }

    pub fn questions_for_run(&self, run_id: &RunId) -> Result<Vec<Question>> {
        self.query_questions(
            &format!(
                "SELECT {QUESTION_COLUMNS} FROM questions WHERE run_id = ?1 \
                 ORDER BY created_at_ms, rowid"
            ),
            params![run_id.as_str()],
        )
    }

    pub fn record_post(
        &self,
        question_id: &QuestionId,
        channel: &str,
        external_ref: &Value,
    ) -> Result<bool> {
        let tx = self.write()?;
        load_question(&tx, question_id)?;
        let inserted = tx.execute(
            "INSERT INTO question_posts (question_id, channel, external_ref, posted_at_ms) \
             VALUES (?1, ?2, ?3, ?4) ON CONFLICT (question_id, channel) DO NOTHING",
            params![
                question_id.as_str(),
                channel,
                serde_json::to_string(external_ref)?,
                self.now()
            ],
        )?;
        tx.commit()?;
        Ok(inserted > 0)
    }

    pub fn update_post_ref(
        &self,
        question_id: &QuestionId,
        channel: &str,
        external_ref: &Value,
    ) -> Result<()> {
        let tx = self.write()?;
        let changed = tx.execute(
            "UPDATE question_posts SET external_ref = ?3 WHERE question_id = ?1 AND channel = ?2",
            params![
                question_id.as_str(),
                channel,
                serde_json::to_string(external_ref)?
            ],
        )?;
        tx.commit()?;
        if changed == 0 {
            return Err(StoreError::NotFound {
                what: "question post",
                id: format!("{question_id} on {channel}"),
            });
        }
        Ok(())
    }

    pub fn posts(&self, question_id: &QuestionId) -> Result<Vec<QuestionPost>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT channel, external_ref, posted_at_ms FROM question_posts \
             WHERE question_id = ?1 ORDER BY posted_at_ms, channel",
        )?;
        let rows = stmt.query_map([question_id.as_str()], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, i64>(2)?,
            ))
        })?;
        rows.map(|r| {
            let (channel, external_ref, posted_at_ms) = r?;
            Ok(QuestionPost {
                question_id: question_id.clone(),
                channel,
                external_ref: row::json("question_posts.external_ref", &external_ref)?,
                posted_at_ms,
            })
        })
        .collect()
    }

    fn query_questions(&self, sql: &str, params: &[&dyn rusqlite::ToSql]) -> Result<Vec<Question>> {
        let mut stmt = self.conn.prepare_cached(sql)?;
        let rows = stmt.query_map(params, raw_question)?;
        rows.map(|raw| decode_question(raw?)).collect()
    }
}

/// The option `answer` chooses among `options`: the exact text of a label (ignoring case and
/// surrounding space) or, failing that, its number counted from 1 (`2`, `2.`, `#2`). `None`
/// means free text.
pub fn read_choice(options: &[String], answer: &str) -> Option<usize> {
    let answer = answer.trim();
    if answer.is_empty() {
        return None;
    }
    if let Some(i) = options
        .iter()
        .position(|o| o.trim().eq_ignore_ascii_case(answer) || o.trim() == answer)
    {
        return Some(i);
    }
    let digits = answer.trim_start_matches('#').trim_end_matches(['.', ')']);
    let n: usize = digits.parse().ok()?;
    (1..=options.len()).contains(&n).then(|| n - 1)
}

fn unused_question_id(conn: &Connection) -> Result<QuestionId> {
    let mut exists = conn.prepare_cached("SELECT 1 FROM questions WHERE id = ?1")?;
    for _ in 0..ID_ATTEMPTS {
        let id = QuestionId::generate();
        if !exists.exists([id.as_str()])? {
            return Ok(id);
        }
    }
    Err(StoreError::corrupt("could not draw an unused question id"))
}

pub(crate) fn load_question(conn: &Connection, id: &QuestionId) -> Result<Question> {
    let raw = conn
        .prepare_cached(&format!(
            "SELECT {QUESTION_COLUMNS} FROM questions WHERE id = ?1"
        ))?
        .query_row([id.as_str()], raw_question)
        .optional()?;
    decode_question(raw.ok_or_else(|| StoreError::NotFound {
        what: "question",
        id: id.to_string(),
    })?)
}

struct RawQuestion {
    id: String,
    run_id: Option<String>,
    thread_id: Option<String>,
    question: String,
    context: String,
    confidence: Option<u8>,
    status: String,
    created_at_ms: i64,
    answer: Option<String>,
    responder: Option<String>,
    channel: Option<String>,
    answered_at_ms: Option<i64>,
    cancelled_at_ms: Option<i64>,
    options: String,
    answer_choice: Option<i64>,
}

fn raw_question(r: &rusqlite::Row<'_>) -> rusqlite::Result<RawQuestion> {
    Ok(RawQuestion {
        id: r.get(0)?,
        run_id: r.get(1)?,
        thread_id: r.get(2)?,
        question: r.get(3)?,
        context: r.get(4)?,
        confidence: r.get(5)?,
        status: r.get(6)?,
        created_at_ms: r.get(7)?,
        answer: r.get(8)?,
        responder: r.get(9)?,
        channel: r.get(10)?,
        answered_at_ms: r.get(11)?,
        cancelled_at_ms: r.get(12)?,
        options: r.get(13)?,
        answer_choice: r.get(14)?,
    })
}

fn decode_question(raw: RawQuestion) -> Result<Question> {
    Ok(Question {
        id: row::parse("questions.id", &raw.id)?,
        run_id: row::parse_opt("questions.run_id", raw.run_id)?,
        thread_id: raw.thread_id,
        question: raw.question,
        context: raw.context,
        confidence: raw.confidence,
        status: row::parse("questions.status", &raw.status)?,
        created_at_ms: raw.created_at_ms,
        answer: raw.answer,
        responder: raw.responder,
        channel: raw.channel,
        answered_at_ms: raw.answered_at_ms,
        cancelled_at_ms: raw.cancelled_at_ms,
        options: row::json("questions.options", &raw.options)?,
        choice: raw.answer_choice.and_then(|i| usize::try_from(i).ok()),
    })
}
