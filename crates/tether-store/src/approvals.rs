//! Contract approvals: which version of a goal's contract a human agreed to.
//!
//! When a plan is agreed, each goal's contract (`done_when`, `verify`, `failure_modes`,
//! `ask_before`) is hashed and the hash recorded here. `complete_goal` compares the plan's
//! current hash with the approved one and refuses to sign off a goal whose contract changed
//! until a human approves again. Rows are never updated: the newest one per goal is in force
//! and the older ones are the history.

use rusqlite::{OptionalExtension, params};
use serde::Serialize;

use crate::error::Result;
use crate::event::Event;
use crate::journal::append_in;
use crate::store::Sqlite;

/// An approval of a goal's contract.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Approval {
    /// Its row id (increasing in approval order).
    pub id: i64,
    /// The plan file, as the caller names it (relative to the workspace).
    pub plan_path: String,
    /// The goal's id in the plan.
    pub goal_id: String,
    /// The hash of the approved contract.
    pub contract_hash: String,
    /// Who approved it.
    pub approved_by: String,
    /// When.
    pub approved_at_ms: i64,
}

impl Sqlite {
    pub fn approve_contract(
        &self,
        plan_path: &str,
        goal_id: &str,
        contract_hash: &str,
        by: &str,
    ) -> Result<Approval> {
        let tx = self.write()?;
        let now = self.now();
        tx.execute(
            "INSERT INTO contract_approvals (plan_path, goal_id, contract_hash, approved_by, \
             approved_at_ms) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![plan_path, goal_id, contract_hash, by, now],
        )?;
        let id = tx.last_insert_rowid();
        append_in(
            &tx,
            None,
            now,
            &[Event::ContractApproved {
                plan_path: plan_path.to_owned(),
                goal_id: goal_id.to_owned(),
                contract_hash: contract_hash.to_owned(),
                by: by.to_owned(),
            }],
        )?;
        tx.commit()?;
        Ok(Approval {
            id,
            plan_path: plan_path.to_owned(),
            goal_id: goal_id.to_owned(),
            contract_hash: contract_hash.to_owned(),
            approved_by: by.to_owned(),
            approved_at_ms: now,
        })
    }

    pub fn approval(&self, plan_path: &str, goal_id: &str) -> Result<Option<Approval>> {
        Ok(self
            .conn
            .prepare_cached(
                "SELECT id, plan_path, goal_id, contract_hash, approved_by, approved_at_ms \
                 FROM contract_approvals WHERE plan_path = ?1 AND goal_id = ?2 \
                 ORDER BY id DESC LIMIT 1",
            )?
            .query_row([plan_path, goal_id], |r| {
                Ok(Approval {
                    id: r.get(0)?,
                    plan_path: r.get(1)?,
                    goal_id: r.get(2)?,
                    contract_hash: r.get(3)?,
                    approved_by: r.get(4)?,
                    approved_at_ms: r.get(5)?,
                })
            })
            .optional()?)
    }
}
