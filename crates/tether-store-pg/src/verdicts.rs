//! Sign-off decisions and contract approvals, kept per workspace ([`PgStore::scoped`]); each
//! writes its event in the same transaction, as in the embedded store.

use tether_store::{Approval, ContractTerms, Event, NewVerdict, RunId, VerdictRecord};
use tokio_postgres::Row;
use tokio_postgres::types::Json;

use crate::error::Result;
use crate::journal::{append_in, get, parse};
use crate::store::PgStore;

const VERDICT_COLUMNS: &str = "id, created_at_ms, run_id, goal_id, plan_path, attempt, \
                               verify_exit, verdict, reason, checks, missing, judge_model, \
                               transcript_path, contract_hash, kind, judges";

impl PgStore {
    /// Records a sign-off decision with its `goal_verdict` event; returns its id.
    pub async fn insert_verdict(&self, new: &NewVerdict) -> Result<i64> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let now = self.now();
        let stmt = tx
            .prepare_cached(
                "INSERT INTO verdicts (scope, run_id, goal_id, plan_path, attempt, verify_exit, \
                 verdict, reason, checks, missing, judge_model, transcript_path, contract_hash, \
                 created_at_ms, kind, judges) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, \
                 $11, $12, $13, $14, $15, $16) RETURNING id",
            )
            .await?;
        let row = tx
            .query_one(
                &stmt,
                &[
                    &self.scope,
                    &new.run_id.as_ref().map(RunId::as_str),
                    &new.goal_id,
                    &new.plan_path,
                    &i64::from(new.attempt),
                    &new.verify_exit.map(i64::from),
                    &new.verdict.as_str(),
                    &new.reason,
                    &Json(&new.checks),
                    &Json(&new.missing),
                    &new.judge_model,
                    &new.transcript_path,
                    &new.contract_hash,
                    &now,
                    &new.kind.as_str(),
                    &Json(&new.judges),
                ],
            )
            .await
            .map_err(|e| crate::journal::missing_run_or(e, new.run_id.as_ref()))?;
        let event = Event::GoalVerdict {
            goal_id: new.goal_id.clone(),
            verdict: new.verdict,
            reason: new.reason.clone(),
        };
        append_in(&tx, new.run_id.as_ref(), now, &[event]).await?;
        tx.commit().await?;
        Ok(row.get(0))
    }

    /// Every decision about a goal of this workspace, oldest first.
    pub async fn verdicts_for_goal(
        &self,
        plan_path: &str,
        goal_id: &str,
    ) -> Result<Vec<VerdictRecord>> {
        self.verdicts_where(
            "scope = $1 AND plan_path = $2 AND goal_id = $3",
            &[&self.scope, &plan_path, &goal_id],
        )
        .await
    }

    /// Every decision made in a run, oldest first.
    pub async fn verdicts_for_run(&self, run_id: &RunId) -> Result<Vec<VerdictRecord>> {
        self.verdicts_where("run_id = $1", &[&run_id.as_str()])
            .await
    }

    /// Decisions about a plan of this workspace recorded after `after_id`, oldest first.
    pub async fn verdicts_after(
        &self,
        plan_path: &str,
        after_id: i64,
    ) -> Result<Vec<VerdictRecord>> {
        self.verdicts_where(
            "scope = $1 AND plan_path = $2 AND id > $3",
            &[&self.scope, &plan_path, &after_id],
        )
        .await
    }

    /// The newest verdict's id (0 when there is none).
    pub async fn last_verdict_id(&self) -> Result<i64> {
        let client = self.client().await?;
        let row = client
            .query_one("SELECT COALESCE(MAX(id), 0)::BIGINT FROM verdicts", &[])
            .await?;
        Ok(row.get(0))
    }

    /// Whether the goal of this workspace was ever signed off.
    pub async fn has_accepted_signoff(&self, plan_path: &str, goal_id: &str) -> Result<bool> {
        let client = self.client().await?;
        let stmt = client
            .prepare_cached(
                "SELECT EXISTS (SELECT 1 FROM verdicts WHERE scope = $1 AND plan_path = $2 \
                 AND goal_id = $3 AND verdict = 'accept')",
            )
            .await?;
        let row = client
            .query_one(&stmt, &[&self.scope, &plan_path, &goal_id])
            .await?;
        Ok(row.get(0))
    }

    /// Records that `by` approved the goal's contract, with its `contract_approved` event.
    pub async fn approve_contract(
        &self,
        plan_path: &str,
        goal_id: &str,
        contract_hash: &str,
        by: &str,
    ) -> Result<Approval> {
        self.approve(plan_path, goal_id, contract_hash, None, by)
            .await
    }

    /// [`PgStore::approve_contract`] with the terms of the contract that bound the agent.
    pub async fn approve_contract_terms(
        &self,
        plan_path: &str,
        goal_id: &str,
        contract_hash: &str,
        terms: &ContractTerms,
        by: &str,
    ) -> Result<Approval> {
        self.approve(plan_path, goal_id, contract_hash, Some(terms), by)
            .await
    }

    async fn approve(
        &self,
        plan_path: &str,
        goal_id: &str,
        contract_hash: &str,
        terms: Option<&ContractTerms>,
        by: &str,
    ) -> Result<Approval> {
        let stored = terms.map(Json);
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let now = self.now();
        let stmt = tx
            .prepare_cached(
                "INSERT INTO contract_approvals (scope, plan_path, goal_id, contract_hash, \
                 approved_by, approved_at_ms, terms) VALUES ($1, $2, $3, $4, $5, $6, $7) \
                 RETURNING id",
            )
            .await?;
        let row = tx
            .query_one(
                &stmt,
                &[
                    &self.scope,
                    &plan_path,
                    &goal_id,
                    &contract_hash,
                    &by,
                    &now,
                    &stored,
                ],
            )
            .await?;
        let event = Event::ContractApproved {
            plan_path: plan_path.to_owned(),
            goal_id: goal_id.to_owned(),
            contract_hash: contract_hash.to_owned(),
            by: by.to_owned(),
        };
        append_in(&tx, None, now, &[event]).await?;
        tx.commit().await?;
        Ok(Approval {
            id: row.get(0),
            plan_path: plan_path.to_owned(),
            goal_id: goal_id.to_owned(),
            contract_hash: contract_hash.to_owned(),
            approved_by: by.to_owned(),
            approved_at_ms: now,
            terms: terms.cloned(),
        })
    }

    /// The approval in force for the goal of this workspace (the newest), if any.
    pub async fn approval(&self, plan_path: &str, goal_id: &str) -> Result<Option<Approval>> {
        let client = self.client().await?;
        let stmt = client
            .prepare_cached(
                "SELECT id, plan_path, goal_id, contract_hash, approved_by, approved_at_ms, \
                 terms FROM contract_approvals WHERE scope = $1 AND plan_path = $2 \
                 AND goal_id = $3 ORDER BY id DESC LIMIT 1",
            )
            .await?;
        let row = client
            .query_opt(&stmt, &[&self.scope, &plan_path, &goal_id])
            .await?;
        row.map(|r| {
            let terms: Option<Json<ContractTerms>> = get(&r, 6, "contract_approvals.terms")?;
            Ok(Approval {
                id: get(&r, 0, "contract_approvals.id")?,
                plan_path: get(&r, 1, "contract_approvals.plan_path")?,
                goal_id: get(&r, 2, "contract_approvals.goal_id")?,
                contract_hash: get(&r, 3, "contract_approvals.contract_hash")?,
                approved_by: get(&r, 4, "contract_approvals.approved_by")?,
                approved_at_ms: get(&r, 5, "contract_approvals.approved_at_ms")?,
                terms: terms.map(|Json(t)| t),
            })
        })
        .transpose()
    }

    async fn verdicts_where(
        &self,
        filter: &str,
        params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
    ) -> Result<Vec<VerdictRecord>> {
        let client = self.client().await?;
        let stmt = client
            .prepare_cached(&format!(
                "SELECT {VERDICT_COLUMNS} FROM verdicts WHERE {filter} ORDER BY id"
            ))
            .await?;
        let rows = client.query(&stmt, params).await?;
        rows.iter().map(decode_verdict).collect()
    }
}

fn decode_verdict(row: &Row) -> Result<VerdictRecord> {
    let run_id: Option<String> = get(row, 2, "verdicts.run_id")?;
    let attempt: i64 = get(row, 5, "verdicts.attempt")?;
    let verify_exit: Option<i64> = get(row, 6, "verdicts.verify_exit")?;
    let Json(checks) = get(row, 9, "verdicts.checks")?;
    let Json(missing) = get(row, 10, "verdicts.missing")?;
    let Json(judges) = get(row, 15, "verdicts.judges")?;
    Ok(VerdictRecord {
        id: get(row, 0, "verdicts.id")?,
        created_at_ms: get(row, 1, "verdicts.created_at_ms")?,
        decision: NewVerdict {
            run_id: run_id.map(|id| parse("verdicts.run_id", &id)).transpose()?,
            goal_id: get(row, 3, "verdicts.goal_id")?,
            plan_path: get(row, 4, "verdicts.plan_path")?,
            attempt: u32::try_from(attempt).unwrap_or(u32::MAX),
            verify_exit: verify_exit.and_then(|v| i32::try_from(v).ok()),
            verdict: parse("verdicts.verdict", get(row, 7, "verdicts.verdict")?)?,
            kind: parse("verdicts.kind", get(row, 14, "verdicts.kind")?)?,
            reason: get(row, 8, "verdicts.reason")?,
            checks,
            missing,
            judge_model: get(row, 11, "verdicts.judge_model")?,
            transcript_path: get(row, 12, "verdicts.transcript_path")?,
            contract_hash: get(row, 13, "verdicts.contract_hash")?,
            judges,
        },
    })
}
