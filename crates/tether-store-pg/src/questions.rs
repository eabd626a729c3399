//! Questions to a human, their answers, where each was posted, and topic numbers.
//!
//! The first answer wins atomically, from any machine: it is written with
//! `UPDATE … WHERE status = 'pending'`, which PostgreSQL serialises on the row, so every later
//! answer finds the row answered and gets [`AnswerOutcome::AlreadyAnswered`]. An answer or a
//! withdrawal wakes the waiters ([`crate::Channel::Answers`]) when it commits. Choices are read
//! with the embedded store's [`read_choice`], so both stores record a choice alike.

use serde_json::Value;
use tether_store::{
    AnswerOutcome, Event, NewQuestion, Question, QuestionId, QuestionPost, QuestionStatus, RunId,
    read_choice,
};
use tokio_postgres::Row;
use tokio_postgres::types::Json;

use crate::error::{PgStoreError, Result};
use crate::journal::{append_in, get, limit_of, notify, parse};
use crate::listen::Channel;
use crate::runs::ID_ATTEMPTS;
use crate::store::PgStore;

const QUESTION_COLUMNS: &str = "id, run_id, thread_id, question, context, confidence, status, \
                                created_at_ms, answer, responder, channel, answered_at_ms, \
                                cancelled_at_ms, options, answer_choice";

type Tx<'a> = deadpool_postgres::Transaction<'a>;

impl PgStore {
    /// Stores a pending question and its `question_asked` event in one transaction.
    pub async fn insert_question(&self, new: &NewQuestion) -> Result<Question> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let now = self.now();
        let insert = tx
            .prepare_cached(
                "INSERT INTO questions (id, run_id, thread_id, question, context, confidence, \
                 status, created_at_ms, options) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) \
                 ON CONFLICT (id) DO NOTHING",
            )
            .await?;
        let confidence = new.confidence.map(i16::from);
        let mut created = None;
        for _ in 0..ID_ATTEMPTS {
            let id = QuestionId::generate();
            let params: [&(dyn tokio_postgres::types::ToSql + Sync); 9] = [
                &id.as_str(),
                &new.run_id.as_ref().map(RunId::as_str),
                &new.thread_id,
                &new.question,
                &new.context,
                &confidence,
                &QuestionStatus::Pending.as_str(),
                &now,
                &Json(&new.options),
            ];
            if tx
                .execute(&insert, &params)
                .await
                .map_err(missing_run(new))?
                == 1
            {
                created = Some(id);
                break;
            }
        }
        let id =
            created.ok_or_else(|| PgStoreError::corrupt("could not draw an unused question id"))?;
        let asked = Event::QuestionAsked {
            question_id: id.clone(),
        };
        append_in(&tx, new.run_id.as_ref(), now, &[asked]).await?;
        let question = load_question(&tx, &id).await?;
        tx.commit().await?;
        Ok(question)
    }

    /// Records `answer` if it is the first; see [`AnswerOutcome`]. The `question_answered`
    /// event is written in the same transaction, and waiters are woken when it commits.
    pub async fn answer_question(
        &self,
        id: &QuestionId,
        answer: &str,
        channel: &str,
        responder: &str,
    ) -> Result<AnswerOutcome> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let now = self.now();
        let options = load_question(&tx, id).await?.options;
        let choice = read_choice(&options, answer);
        let answer = choice
            .and_then(|i| options.get(i))
            .map_or(answer, String::as_str);
        let update = tx
            .prepare_cached(
                "UPDATE questions SET status = 'answered', answer = $2, channel = $3, \
                 responder = $4, answered_at_ms = $5, answer_choice = $6 \
                 WHERE id = $1 AND status = 'pending'",
            )
            .await?;
        let choice = choice.and_then(|i| i64::try_from(i).ok());
        let changed = tx
            .execute(
                &update,
                &[&id.as_str(), &answer, &channel, &responder, &now, &choice],
            )
            .await?;
        let question = load_question(&tx, id).await?;
        if changed == 0 {
            tx.commit().await?;
            return Ok(match question.status {
                QuestionStatus::Cancelled => AnswerOutcome::Cancelled,
                QuestionStatus::Answered | QuestionStatus::Pending => {
                    AnswerOutcome::AlreadyAnswered {
                        answer: question.answer.unwrap_or_default(),
                        by_channel: question.channel.unwrap_or_default(),
                        responder: question.responder.unwrap_or_default(),
                    }
                }
            });
        }
        let answered = Event::QuestionAnswered {
            question_id: id.clone(),
            channel: channel.to_owned(),
            responder: responder.to_owned(),
        };
        append_in(&tx, question.run_id.as_ref(), now, &[answered]).await?;
        notify(&tx, Channel::Answers, id.as_str()).await?;
        tx.commit().await?;
        Ok(AnswerOutcome::Answered(Box::new(question)))
    }

    /// Withdraws a pending question (writing `question_cancelled`). Returns `false`, changing
    /// nothing, if it was already answered or cancelled.
    pub async fn cancel_question(&self, id: &QuestionId) -> Result<bool> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let now = self.now();
        let update = tx
            .prepare_cached(
                "UPDATE questions SET status = 'cancelled', cancelled_at_ms = $2 \
                 WHERE id = $1 AND status = 'pending'",
            )
            .await?;
        let changed = tx.execute(&update, &[&id.as_str(), &now]).await?;
        let question = load_question(&tx, id).await?;
        if changed > 0 {
            let cancelled = Event::QuestionCancelled {
                question_id: id.clone(),
            };
            append_in(&tx, question.run_id.as_ref(), now, &[cancelled]).await?;
            notify(&tx, Channel::Answers, id.as_str()).await?;
        }
        tx.commit().await?;
        Ok(changed > 0)
    }

    /// The question with this id.
    pub async fn question(&self, id: &QuestionId) -> Result<Question> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let question = load_question(&tx, id).await?;
        tx.commit().await?;
        Ok(question)
    }

    /// Every pending question, oldest first.
    pub async fn pending_questions(&self) -> Result<Vec<Question>> {
        self.query_questions("WHERE status = 'pending' ORDER BY created_at_ms, ord", &[])
            .await
    }

    /// Up to `limit` questions of any status, newest first.
    pub async fn question_history(&self, limit: usize) -> Result<Vec<Question>> {
        self.query_questions(
            "ORDER BY created_at_ms DESC, ord DESC LIMIT $1",
            &[&limit_of(limit)],
        )
        .await
    }

    /// Every question a run asked, oldest first.
    pub async fn questions_for_run(&self, run_id: &RunId) -> Result<Vec<Question>> {
        self.query_questions(
            "WHERE run_id = $1 ORDER BY created_at_ms, ord",
            &[&run_id.as_str()],
        )
        .await
    }

    /// Records that the question was posted on `channel`. Returns `false`, keeping the earlier
    /// record, if it had already been posted there.
    pub async fn record_post(
        &self,
        question_id: &QuestionId,
        channel: &str,
        external_ref: &Value,
    ) -> Result<bool> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        load_question(&tx, question_id).await?;
        let insert = tx
            .prepare_cached(
                "INSERT INTO question_posts (question_id, channel, external_ref, posted_at_ms) \
                 VALUES ($1, $2, $3, $4) ON CONFLICT (question_id, channel) DO NOTHING",
            )
            .await?;
        let inserted = tx
            .execute(
                &insert,
                &[&question_id.as_str(), &channel, external_ref, &self.now()],
            )
            .await?;
        tx.commit().await?;
        Ok(inserted > 0)
    }

    /// Replaces a post's `external_ref` (e.g. to advance the last chat message seen).
    pub async fn update_post_ref(
        &self,
        question_id: &QuestionId,
        channel: &str,
        external_ref: &Value,
    ) -> Result<()> {
        let client = self.client().await?;
        let update = client
            .prepare_cached(
                "UPDATE question_posts SET external_ref = $3 \
                 WHERE question_id = $1 AND channel = $2",
            )
            .await?;
        let changed = client
            .execute(&update, &[&question_id.as_str(), &channel, external_ref])
            .await?;
        if changed == 0 {
            return Err(PgStoreError::NotFound {
                what: "question post",
                id: format!("{question_id} on {channel}"),
            });
        }
        Ok(())
    }

    /// Where the question has been posted, in posting order.
    pub async fn posts(&self, question_id: &QuestionId) -> Result<Vec<QuestionPost>> {
        let client = self.client().await?;
        let stmt = client
            .prepare_cached(
                "SELECT channel, external_ref, posted_at_ms FROM question_posts \
                 WHERE question_id = $1 ORDER BY posted_at_ms, channel",
            )
            .await?;
        let rows = client.query(&stmt, &[&question_id.as_str()]).await?;
        rows.iter()
            .map(|row| {
                Ok(QuestionPost {
                    question_id: question_id.clone(),
                    channel: get(row, 0, "question_posts.channel")?,
                    external_ref: get(row, 1, "question_posts.external_ref")?,
                    posted_at_ms: get(row, 2, "question_posts.posted_at_ms")?,
                })
            })
            .collect()
    }

    /// Takes the next topic number for `stream` (1, 2, 3, ...), atomically across machines.
    pub async fn next_topic_number(&self, stream: &str) -> Result<u64> {
        let client = self.client().await?;
        let stmt = client
            .prepare_cached(
                "INSERT INTO topic_counters (stream, \"next\") VALUES ($1, 2) \
                 ON CONFLICT (stream) DO UPDATE SET \"next\" = topic_counters.\"next\" + 1 \
                 RETURNING \"next\" - 1",
            )
            .await?;
        let taken: i64 = get(&client.query_one(&stmt, &[&stream]).await?, 0, "next")?;
        // The counter starts at 1 and only grows, so it is never negative.
        Ok(u64::try_from(taken).unwrap_or_default())
    }

    async fn query_questions(
        &self,
        clause: &str,
        params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
    ) -> Result<Vec<Question>> {
        let client = self.client().await?;
        let stmt = client
            .prepare_cached(&format!(
                "SELECT {QUESTION_COLUMNS} FROM questions {clause}"
            ))
            .await?;
        let rows = client.query(&stmt, params).await?;
        rows.iter().map(decode_question).collect()
    }
}

/// A foreign-key failure on `questions.run_id` means the asking run does not exist.
fn missing_run(new: &NewQuestion) -> impl Fn(tokio_postgres::Error) -> PgStoreError + '_ {
    move |err| crate::journal::missing_run_or(err, new.run_id.as_ref())
}

pub(crate) async fn load_question(tx: &Tx<'_>, id: &QuestionId) -> Result<Question> {
    let stmt = tx
        .prepare_cached(&format!(
            "SELECT {QUESTION_COLUMNS} FROM questions WHERE id = $1"
        ))
        .await?;
    let row = tx.query_opt(&stmt, &[&id.as_str()]).await?;
    decode_question(&row.ok_or_else(|| PgStoreError::NotFound {
        what: "question",
        id: id.to_string(),
    })?)
}

fn decode_question(row: &Row) -> Result<Question> {
    let run_id: Option<&str> = get(row, 1, "questions.run_id")?;
    let confidence: Option<i16> = get(row, 5, "questions.confidence")?;
    let Json(options): Json<Vec<String>> = get(row, 13, "questions.options")?;
    let choice: Option<i64> = get(row, 14, "questions.answer_choice")?;
    Ok(Question {
        id: parse("questions.id", get(row, 0, "questions.id")?)?,
        run_id: run_id.map(|id| parse("questions.run_id", id)).transpose()?,
        thread_id: get(row, 2, "questions.thread_id")?,
        question: get(row, 3, "questions.question")?,
        context: get(row, 4, "questions.context")?,
        confidence: confidence.and_then(|c| u8::try_from(c).ok()),
        status: parse("questions.status", get(row, 6, "questions.status")?)?,
        created_at_ms: get(row, 7, "questions.created_at_ms")?,
        answer: get(row, 8, "questions.answer")?,
        responder: get(row, 9, "questions.responder")?,
        channel: get(row, 10, "questions.channel")?,
        answered_at_ms: get(row, 11, "questions.answered_at_ms")?,
        cancelled_at_ms: get(row, 12, "questions.cancelled_at_ms")?,
        options,
        choice: choice.and_then(|i| usize::try_from(i).ok()),
    })
}
