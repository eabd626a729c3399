//! Contract approvals: which version of a goal's contract a human agreed to.
//!
//! When a plan is agreed, each goal's contract (`done_when`, `verify`, `failure_modes`,
//! `ask_before`, `budget`, `network`) is hashed and the hash recorded here, with the terms of
//! it that bound the agent while the goal is worked on ([`ContractTerms`]). `complete_goal`
//! compares the plan's current hash with the approved one and refuses to sign off a goal whose
//! contract changed until a human approves again; a run reads the terms in force from here, not
//! from the plan the agent can edit. Rows are never updated: the newest one per goal is in
//! force and the older ones are the history.

use rusqlite::{OptionalExtension, params};
use serde::{Deserialize, Serialize};

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
    /// What the approved contract says of the settings that bound the agent; `None` for an
    /// approval recorded without them (by an older tether).
    pub terms: Option<ContractTerms>,
}

/// The terms of an approved contract that bound the agent while its goal is active: whether
/// the network is open, the goal's own budget, the commands that need a person's yes. A run
/// takes them from the approval, so an edit of the plan changes nothing until a person
/// approves it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ContractTerms {
    /// `network: on`.
    pub network: bool,
    /// The goal's `budget:` line as written (`400k tokens, $5`), if it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget: Option<String>,
    /// The goal's `ask_before:` prefixes.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ask_before: Vec<String>,
}

impl ContractTerms {
    /// The goal's budget, when its `budget:` line is a valid one.
    pub fn budget(&self) -> Option<tether_budget::Budget> {
        self.budget
            .as_deref()
            .and_then(|b| tether_budget::parse_budget(b).ok())
    }

    /// The terms as stored (a JSON object).
    pub fn to_json(&self) -> crate::error::Result<String> {
        Ok(serde_json::to_string(self)?)
    }

    /// Terms stored as [`ContractTerms::to_json`] wrote them; `None` for none.
    pub fn from_json(text: Option<&str>) -> crate::error::Result<Option<ContractTerms>> {
        text.map(|t| {
            serde_json::from_str(t).map_err(|e| crate::error::StoreError::Corrupt {
                detail: format!("contract_approvals.terms: {e}"),
            })
        })
        .transpose()
    }
}

impl Sqlite {
    pub fn approve_contract(
        &self,
        plan_path: &str,
        goal_id: &str,
        contract_hash: &str,
        by: &str,
    ) -> Result<Approval> {
        self.approve(plan_path, goal_id, contract_hash, None, by)
    }

    pub fn approve_contract_terms(
        &self,
        plan_path: &str,
        goal_id: &str,
        contract_hash: &str,
        terms: &ContractTerms,
        by: &str,
    ) -> Result<Approval> {
        self.approve(plan_path, goal_id, contract_hash, Some(terms), by)
    }

    fn approve(
        &self,
        plan_path: &str,
        goal_id: &str,
        contract_hash: &str,
        terms: Option<&ContractTerms>,
        by: &str,
    ) -> Result<Approval> {
        let stored = terms.map(ContractTerms::to_json).transpose()?;
        let tx = self.write()?;
        let now = self.now();
        tx.execute(
            "INSERT INTO contract_approvals (plan_path, goal_id, contract_hash, approved_by, \
             approved_at_ms, terms) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![plan_path, goal_id, contract_hash, by, now, stored],
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
            terms: terms.cloned(),
        })
    }

    pub fn approval(&self, plan_path: &str, goal_id: &str) -> Result<Option<Approval>> {
        let row = self
            .conn
            .prepare_cached(
                "SELECT id, plan_path, goal_id, contract_hash, approved_by, approved_at_ms, \
                 terms FROM contract_approvals WHERE plan_path = ?1 AND goal_id = ?2 \
                 ORDER BY id DESC LIMIT 1",
            )?
            .query_row([plan_path, goal_id], |r| {
                Ok((
                    Approval {
                        id: r.get(0)?,
                        plan_path: r.get(1)?,
                        goal_id: r.get(2)?,
                        contract_hash: r.get(3)?,
                        approved_by: r.get(4)?,
                        approved_at_ms: r.get(5)?,
                        terms: None,
                    },
                    r.get::<_, Option<String>>(6)?,
                ))
            })
            .optional()?;
        row.map(|(approval, terms)| {
            Ok(Approval {
                terms: ContractTerms::from_json(terms.as_deref())?,
                ..approval
            })
        })
        .transpose()
    }
}
