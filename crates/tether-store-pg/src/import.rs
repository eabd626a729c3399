//! Moving history into the team store (`tether store push`): a workspace's runs with their
//! original ids and timestamps, their journals, questions, posts and verdicts, and the
//! workspace's contract approvals — idempotently.
//!
//! A run is written in one transaction, so an interrupted push leaves whole runs. A run already
//! in the team store gets only the events it lacks, when its team copy is the start of the
//! local journal (a run pushed while it was still running); a copy that went another way (say,
//! paused from another machine since) is left alone and reported as [`Imported::Diverged`].
//! Events of no run are not copied (their rows are: approvals, questions of no run).

use tether_store::{
    Approval, Question, QuestionPost, Run, RunState, Seq, StoredEvent, VerdictRecord,
};
use tokio_postgres::types::Json;

use crate::error::{PgStoreError, Result};
use crate::journal::{EVENT_COLUMNS, decode_event, load_state, save_state};
use crate::store::PgStore;

type Tx<'a> = deadpool_postgres::Transaction<'a>;

/// One run as the workspace's store holds it.
#[derive(Debug, Clone)]
pub struct RunHistory {
    /// The run (its machine is this one when the local store did not record it).
    pub run: Run,
    /// Its whole journal, oldest first.
    pub events: Vec<StoredEvent>,
    /// Its questions, each with where it was posted.
    pub questions: Vec<(Question, Vec<QuestionPost>)>,
    /// Its sign-off decisions.
    pub verdicts: Vec<VerdictRecord>,
}

/// What a push did with one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Imported {
    /// The run was new: copied with this many events.
    Copied(usize),
    /// The team store had the start of its journal: this many events were added.
    Extended(usize),
    /// The team store had all of it.
    AlreadyThere,
    /// The team store's copy is not the start of the local journal; nothing was changed.
    Diverged,
}

impl PgStore {
    /// Copies `history` into the team store (see the module docs); its questions, posts and
    /// verdicts are added when missing, whatever happened to its events.
    pub async fn import_run(&self, history: &RunHistory) -> Result<Imported> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let lock = tx
            .prepare_cached("SELECT pg_advisory_xact_lock_shared($1)")
            .await?;
        tx.execute(&lock, &[&crate::journal::JOURNAL_LOCK]).await?;
        let run = &history.run;
        let created = insert_run(&tx, run).await?;
        let there = if created {
            Vec::new()
        } else {
            team_events(&tx, run).await?
        };
        let same_start = there.len() <= history.events.len()
            && there
                .iter()
                .zip(&history.events)
                .all(|(t, l)| t.kind == l.kind && t.at_ms == l.at_ms && t.payload == l.payload);
        let outcome = if !same_start {
            Imported::Diverged
        } else {
            let missing = &history.events[there.len()..];
            append_original(&tx, run, missing).await?;
            match (created, missing.len()) {
                (true, n) => Imported::Copied(n),
                (false, 0) => Imported::AlreadyThere,
                (false, n) => Imported::Extended(n),
            }
        };
        for (question, posts) in &history.questions {
            insert_question(&tx, question).await?;
            for post in posts {
                insert_post(&tx, post).await?;
            }
        }
        for verdict in &history.verdicts {
            insert_verdict(&tx, &self.scope, verdict).await?;
        }
        tx.commit().await?;
        Ok(outcome)
    }

    /// Adds a question of no run, with its posts, unless the team store has it.
    pub async fn import_question(
        &self,
        question: &Question,
        posts: &[QuestionPost],
    ) -> Result<bool> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let added = insert_question(&tx, question).await?;
        for post in posts {
            insert_post(&tx, post).await?;
        }
        tx.commit().await?;
        Ok(added)
    }

    /// Adds a sign-off decision of this workspace made outside a run (`tether goal complete`)
    /// unless the team store has that attempt.
    pub async fn import_verdict(&self, verdict: &VerdictRecord) -> Result<()> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        insert_verdict(&tx, &self.scope, verdict).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Adds a contract approval of this workspace unless the team store has the same one.
    pub async fn import_approval(&self, approval: &Approval) -> Result<bool> {
        let client = self.client().await?;
        let stmt = client
            .prepare_cached(
                "INSERT INTO contract_approvals (scope, plan_path, goal_id, contract_hash, \
                 approved_by, approved_at_ms, terms) SELECT $1, $2, $3, $4, $5, $6, $7 \
                 WHERE NOT EXISTS \
                 (SELECT 1 FROM contract_approvals WHERE scope = $1 AND plan_path = $2 \
                 AND goal_id = $3 AND contract_hash = $4 AND approved_at_ms = $6)",
            )
            .await?;
        let added = client
            .execute(
                &stmt,
                &[
                    &self.scope,
                    &approval.plan_path,
                    &approval.goal_id,
                    &approval.contract_hash,
                    &approval.approved_by,
                    &approval.approved_at_ms,
                    &approval.terms.as_ref().map(Json),
                ],
            )
            .await?;
        Ok(added > 0)
    }
}

/// Inserts the run's row unless it is there; whether it was new.
async fn insert_run(tx: &Tx<'_>, run: &Run) -> Result<bool> {
    let text = |p: &std::path::Path| {
        p.to_str()
            .map(str::to_owned)
            .ok_or_else(|| PgStoreError::NonUtf8Path {
                path: p.to_path_buf(),
            })
    };
    let workspace = text(&run.workspace)?;
    let machine = run
        .machine
        .clone()
        .unwrap_or_else(tether_store::this_machine);
    let stmt = tx
        .prepare_cached(
            "INSERT INTO runs (id, kind, created_at_ms, workspace, machine, workspace_root, \
             repo_remote, spec, status, updated_at_ms) \
             VALUES ($1, $2, $3, $4, $5, $4, $6, $7, 'running', $3) ON CONFLICT (id) DO NOTHING",
        )
        .await?;
    let added = tx
        .execute(
            &stmt,
            &[
                &run.id.as_str(),
                &run.kind.as_str(),
                &run.created_at_ms,
                &workspace,
                &machine,
                &run.repo_remote,
                &run.spec,
            ],
        )
        .await?;
    Ok(added > 0)
}

/// The team copy's journal of `run`, oldest first.
async fn team_events(tx: &Tx<'_>, run: &Run) -> Result<Vec<StoredEvent>> {
    let stmt = tx
        .prepare_cached(&format!(
            "SELECT {EVENT_COLUMNS} FROM events WHERE run_id = $1 ORDER BY seq"
        ))
        .await?;
    let rows = tx.query(&stmt, &[&run.id.as_str()]).await?;
    rows.iter().map(decode_event).collect()
}

/// Appends `events` to `run` with their original times, keeping its projection in step.
async fn append_original(tx: &Tx<'_>, run: &Run, events: &[StoredEvent]) -> Result<()> {
    if events.is_empty() {
        return Ok(());
    }
    let mut state: RunState = load_state(tx, &run.id, true).await?;
    let draw = tx
        .prepare_cached("SELECT nextval(pg_get_serial_sequence('events', 'seq'))")
        .await?;
    let insert = tx
        .prepare_cached(
            "INSERT INTO events (seq, run_id, at_ms, kind, payload) OVERRIDING SYSTEM VALUE \
             VALUES ($1, $2, $3, $4, $5)",
        )
        .await?;
    for stored in events {
        let seq = Seq(tx.query_one(&draw, &[]).await?.get(0));
        tx.execute(
            &insert,
            &[
                &seq.0,
                &run.id.as_str(),
                &stored.at_ms,
                &stored.kind,
                &stored.payload,
            ],
        )
        .await?;
        match &stored.event {
            Some(event) => {
                for write in tether_store::writes_for(&state, event) {
                    crate::iterations::write_iteration(tx, &run.id, stored.at_ms, &write).await?;
                }
                state.apply(seq, stored.at_ms, event);
            }
            None => state.apply_stored(&StoredEvent {
                seq,
                ..stored.clone()
            }),
        }
    }
    let at_ms = events.last().map_or(run.updated_at_ms, |e| e.at_ms);
    save_state(tx, &run.id, at_ms, &state).await
}

/// Inserts a question unless it is there; an answer the team copy lacks is recorded (the first
/// answer wins). Whether it was new.
async fn insert_question(tx: &Tx<'_>, q: &Question) -> Result<bool> {
    let stmt = tx
        .prepare_cached(
            "INSERT INTO questions (id, run_id, thread_id, question, context, confidence, \
             status, created_at_ms, answer, responder, channel, answered_at_ms, \
             cancelled_at_ms, options, answer_choice) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, \
             $9, $10, $11, $12, $13, $14, $15) ON CONFLICT (id) DO NOTHING",
        )
        .await?;
    let choice = q.choice.and_then(|c| i64::try_from(c).ok());
    let added = tx
        .execute(
            &stmt,
            &[
                &q.id.as_str(),
                &q.run_id.as_ref().map(tether_store::RunId::as_str),
                &q.thread_id,
                &q.question,
                &q.context,
                &q.confidence.map(i16::from),
                &q.status.as_str(),
                &q.created_at_ms,
                &q.answer,
                &q.responder,
                &q.channel,
                &q.answered_at_ms,
                &q.cancelled_at_ms,
                &Json(&q.options),
                &choice,
            ],
        )
        .await?;
    if added == 0 && q.status != tether_store::QuestionStatus::Pending {
        let settle = tx
            .prepare_cached(
                "UPDATE questions SET status = $2, answer = $3, responder = $4, channel = $5, \
                 answered_at_ms = $6, cancelled_at_ms = $7, answer_choice = $8 \
                 WHERE id = $1 AND status = 'pending'",
            )
            .await?;
        tx.execute(
            &settle,
            &[
                &q.id.as_str(),
                &q.status.as_str(),
                &q.answer,
                &q.responder,
                &q.channel,
                &q.answered_at_ms,
                &q.cancelled_at_ms,
                &choice,
            ],
        )
        .await?;
    }
    Ok(added > 0)
}

async fn insert_post(tx: &Tx<'_>, post: &QuestionPost) -> Result<()> {
    let stmt = tx
        .prepare_cached(
            "INSERT INTO question_posts (question_id, channel, external_ref, posted_at_ms) \
             VALUES ($1, $2, $3, $4) ON CONFLICT (question_id, channel) DO NOTHING",
        )
        .await?;
    tx.execute(
        &stmt,
        &[
            &post.question_id.as_str(),
            &post.channel,
            &post.external_ref,
            &post.posted_at_ms,
        ],
    )
    .await?;
    Ok(())
}

async fn insert_verdict(tx: &Tx<'_>, scope: &str, v: &VerdictRecord) -> Result<()> {
    let d = &v.decision;
    let stmt = tx
        .prepare_cached(
            "INSERT INTO verdicts (scope, run_id, goal_id, plan_path, attempt, verify_exit, \
             verdict, reason, checks, missing, judge_model, transcript_path, contract_hash, \
             created_at_ms, kind, judges) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, \
             $12, $13, $14, $15, $16) ON CONFLICT (scope, plan_path, goal_id, attempt) DO NOTHING",
        )
        .await?;
    tx.execute(
        &stmt,
        &[
            &scope,
            &d.run_id.as_ref().map(tether_store::RunId::as_str),
            &d.goal_id,
            &d.plan_path,
            &i64::from(d.attempt),
            &d.verify_exit.map(i64::from),
            &d.verdict.as_str(),
            &d.reason,
            &Json(&d.checks),
            &Json(&d.missing),
            &d.judge_model,
            &d.transcript_path,
            &d.contract_hash,
            &v.created_at_ms,
            &d.kind.as_str(),
            &Json(&d.judges),
        ],
    )
    .await?;
    Ok(())
}
