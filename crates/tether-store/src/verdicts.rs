//! Sign-off decisions (`complete_goal`).
//!
//! Every attempt to sign a goal off is kept, accepted or not, with the judge's cited checks and
//! the path of its transcript, so `tether plan` can flag a `done` goal that was never signed off
//! and the dashboard can show why a goal was rejected. Each record also writes a `goal_verdict`
//! event in the same transaction, so the journal stays the complete record.

use rusqlite::params;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::Result;
use crate::event::Event;
use crate::ids::RunId;
use crate::journal::{append_in, ensure_run};
use crate::row;
use crate::store::Sqlite;
use crate::vocab::{Verdict, VerdictKind};

/// A sign-off decision about to be recorded.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NewVerdict {
    /// The run that made the attempt, if any (`tether goal complete` by hand has none).
    pub run_id: Option<RunId>,
    /// The goal's id in the plan.
    pub goal_id: String,
    /// The plan file, as the caller names it (relative to the workspace).
    pub plan_path: String,
    /// Which attempt this is for the goal (from 1).
    pub attempt: u32,
    /// The verify command's exit code; `None` if the goal has no verify or it timed out.
    pub verify_exit: Option<i32>,
    /// Accept or reject.
    pub verdict: Verdict,
    /// Which kind of accept or reject (verify failed, the judge rejected, the judge was
    /// unavailable); its [`VerdictKind::verdict`] is `verdict`.
    pub kind: VerdictKind,
    /// Why (the judge's summary, "verify failed", "judge unavailable: …").
    pub reason: String,
    /// The judge's checks (`[{"path","quote","observation"}]`), as JSON.
    pub checks: Value,
    /// What the judge found missing.
    pub missing: Vec<String>,
    /// The judge's model; `None` when signed off by verify alone (`--no-judge`).
    pub judge_model: Option<String>,
    /// Where the judge's transcript was saved.
    pub transcript_path: Option<String>,
    /// The hash of the contract the attempt was judged against.
    pub contract_hash: Option<String>,
    /// Each judge's vote when a panel judged (in the order they were asked); empty for one
    /// judge, whose verdict is the record itself.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub judges: Vec<JudgeVote>,
}

/// One judge's vote in a panel's sign-off: its model, what it decided (its own quotes checked:
/// an accept they do not back is its reject) and what its session used.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgeVote {
    /// Its model, as the verdict names it.
    pub model: String,
    /// What it decided: accepted, judge_rejected, judge_unavailable, judge_impossible or
    /// judge_blocked.
    pub kind: VerdictKind,
    /// Why (its summary, or what was wrong with its quotes, or why it could not judge).
    pub reason: String,
    /// Its model calls.
    #[serde(default)]
    pub calls: u32,
    /// Tokens sent, cache reads and writes included.
    #[serde(default)]
    pub input_tokens: u64,
    /// Tokens produced.
    #[serde(default)]
    pub output_tokens: u64,
    /// What its calls cost in US dollars, from its price.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// Where its transcript was saved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript_path: Option<String>,
}

/// A recorded sign-off decision.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VerdictRecord {
    /// Its row id (increasing in recording order).
    pub id: i64,
    /// When it was recorded.
    pub created_at_ms: i64,
    /// What was recorded.
    #[serde(flatten)]
    pub decision: NewVerdict,
}

const VERDICT_COLUMNS: &str = "id, created_at_ms, run_id, goal_id, plan_path, attempt, \
                               verify_exit, verdict, reason, checks, missing, judge_model, \
                               transcript_path, contract_hash, kind, judges";

impl Sqlite {
    pub fn insert_verdict(&self, new: &NewVerdict) -> Result<i64> {
        let tx = self.write()?;
        if let Some(run_id) = &new.run_id {
            ensure_run(&tx, run_id)?;
        }
        let now = self.now();
        tx.execute(
            "INSERT INTO verdicts (run_id, goal_id, plan_path, attempt, verify_exit, verdict, \
             reason, checks, missing, judge_model, transcript_path, contract_hash, \
             created_at_ms, kind, judges) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, \
             ?12, ?13, ?14, ?15)",
            params![
                new.run_id.as_ref().map(RunId::as_str),
                new.goal_id,
                new.plan_path,
                new.attempt,
                new.verify_exit,
                new.verdict.as_str(),
                new.reason,
                serde_json::to_string(&new.checks)?,
                serde_json::to_string(&new.missing)?,
                new.judge_model,
                new.transcript_path,
                new.contract_hash,
                now,
                new.kind.as_str(),
                serde_json::to_string(&new.judges)?,
            ],
        )?;
        let id = tx.last_insert_rowid();
        append_in(
            &tx,
            new.run_id.as_ref(),
            now,
            &[Event::GoalVerdict {
                goal_id: new.goal_id.clone(),
                verdict: new.verdict,
                reason: new.reason.clone(),
            }],
        )?;
        tx.commit()?;
        Ok(id)
    }

    pub fn verdicts_for_goal(&self, plan_path: &str, goal_id: &str) -> Result<Vec<VerdictRecord>> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {VERDICT_COLUMNS} FROM verdicts WHERE plan_path = ?1 AND goal_id = ?2 \
             ORDER BY id"
        ))?;
        let rows = stmt.query_map([plan_path, goal_id], raw_verdict)?;
        rows.map(|raw| decode_verdict(raw?)).collect()
    }

    pub fn verdicts_for_run(&self, run_id: &RunId) -> Result<Vec<VerdictRecord>> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {VERDICT_COLUMNS} FROM verdicts WHERE run_id = ?1 ORDER BY id"
        ))?;
        let rows = stmt.query_map([run_id.as_str()], raw_verdict)?;
        rows.map(|raw| decode_verdict(raw?)).collect()
    }

    pub fn verdicts_after(&self, plan_path: &str, after_id: i64) -> Result<Vec<VerdictRecord>> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {VERDICT_COLUMNS} FROM verdicts WHERE plan_path = ?1 AND id > ?2 ORDER BY id"
        ))?;
        let rows = stmt.query_map(rusqlite::params![plan_path, after_id], raw_verdict)?;
        rows.map(|raw| decode_verdict(raw?)).collect()
    }

    pub fn last_verdict_id(&self) -> Result<i64> {
        Ok(self
            .conn
            .prepare_cached("SELECT COALESCE(MAX(id), 0) FROM verdicts")?
            .query_row([], |r| r.get(0))?)
    }

    pub fn has_accepted_signoff(&self, plan_path: &str, goal_id: &str) -> Result<bool> {
        Ok(self
            .conn
            .prepare_cached(
                "SELECT 1 FROM verdicts WHERE plan_path = ?1 AND goal_id = ?2 \
                 AND verdict = 'accept'",
            )?
            .exists([plan_path, goal_id])?)
    }
}

struct RawVerdict {
    id: i64,
    created_at_ms: i64,
    run_id: Option<String>,
    goal_id: String,
    plan_path: String,
    attempt: u32,
    verify_exit: Option<i32>,
    verdict: String,
    reason: String,
    checks: String,
    missing: String,
    judge_model: Option<String>,
    transcript_path: Option<String>,
    contract_hash: Option<String>,
    kind: String,
    judges: String,
}

fn raw_verdict(r: &rusqlite::Row<'_>) -> rusqlite::Result<RawVerdict> {
    Ok(RawVerdict {
        id: r.get(0)?,
        created_at_ms: r.get(1)?,
        run_id: r.get(2)?,
        goal_id: r.get(3)?,
        plan_path: r.get(4)?,
        attempt: r.get(5)?,
        verify_exit: r.get(6)?,
        verdict: r.get(7)?,
        reason: r.get(8)?,
        checks: r.get(9)?,
        missing: r.get(10)?,
        judge_model: r.get(11)?,
        transcript_path: r.get(12)?,
        contract_hash: r.get(13)?,
        kind: r.get(14)?,
        judges: r.get(15)?,
    })
}

fn decode_verdict(raw: RawVerdict) -> Result<VerdictRecord> {
    Ok(VerdictRecord {
        id: raw.id,
        created_at_ms: raw.created_at_ms,
        decision: NewVerdict {
            run_id: row::parse_opt("verdicts.run_id", raw.run_id)?,
            goal_id: raw.goal_id,
            plan_path: raw.plan_path,
            attempt: raw.attempt,
            verify_exit: raw.verify_exit,
            verdict: row::parse("verdicts.verdict", &raw.verdict)?,
            kind: row::parse("verdicts.kind", &raw.kind)?,
            reason: raw.reason,
            checks: row::json("verdicts.checks", &raw.checks)?,
            missing: row::json("verdicts.missing", &raw.missing)?,
            judge_model: raw.judge_model,
            transcript_path: raw.transcript_path,
            contract_hash: raw.contract_hash,
            judges: row::json("verdicts.judges", &raw.judges)?,
        },
    })
}
