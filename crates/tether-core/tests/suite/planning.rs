//! Contract approval against a real plan file and a real store: states, a changed contract,
//! re-approval, and ids added as a patch that leaves every other byte as it was.

use std::fs;

use tether_config::Workspace;
use tether_core::planning::approve::{self, Selection};
use tether_core::planning::{ContractState, PlanRef, PlanningError, contract_states};
use tether_plan::PatchError;
use tether_plan::file::PlanFileError;
use tether_store::Store;

const PLAN: &str = "# Plan: p\r\n\r\n## Goal: Cache layer\r\n<!-- id: cache -->\r\nstatus: active\r\n\
done_when: p95 < 50ms\r\nverify: cargo test\r\nfailure_modes:\r\n- bypassed\r\n- trivial test\r\n\r\n\
## Goal: Write the docs\r\nstatus: open\r\ndone_when: README explains it\r\n\r\n\
## Goal: Old work\r\n<!-- id: old -->\r\nstatus: done\r\ndone_when: shipped\r\n\r\n\
## Log\r\n- started\r\n";

struct Fixture {
    _dir: tempfile::TempDir,
    plan: PlanRef,
    store: Store,
}

fn fixture(text: &str) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::at(dir.path());
    fs::write(dir.path().join("plan.md"), text).unwrap();
    let config = tether_config::Config::default();
    let plan = PlanRef::new(&ws, &config);
    assert_eq!(plan.key, "plan.md");
    let store = Store::open(ws.db_path()).unwrap();
    Fixture {
        _dir: dir,
        plan,
        store,
    }
}

impl Fixture {
    fn text(&self) -> String {
        fs::read_to_string(&self.plan.path).unwrap()
    }
    fn states(&self) -> Vec<(String, ContractState)> {
        let doc = tether_plan::file::read(&self.plan.path).unwrap();
        contract_states(&self.store, &self.plan.key, doc.plan())
            .unwrap()
            .into_iter()
            .map(|g| (g.id, g.state))
            .collect()
    }
    fn edit(&self, from: &str, to: &str) {
        let text = self.text();
        assert!(text.contains(from));
        fs::write(&self.plan.path, text.replacen(from, to, 1)).unwrap();
    }
}

#[test]
fn ids_are_added_as_a_patch_and_pending_goals_approved() {
    let f = fixture(PLAN);
    // Before: the id-less goal has no state; the others were never approved.
    assert_eq!(
        f.states(),
        [
            ("cache".to_owned(), ContractState::NeverApproved),
            ("old".to_owned(), ContractState::NeverApproved)
        ]
    );

    let done = approve::approve(&f.store, &f.plan, &Selection::Pending, "alice").unwrap();
    assert_eq!(done.assigned.len(), 1);
    assert_eq!(done.assigned[0].id, "write-the-docs");
    // Exactly one line was inserted, with the file's CRLF ending; every other byte is as it was.
    assert_eq!(
        f.text(),
        PLAN.replace(
            "## Goal: Write the docs\r\n",
            "## Goal: Write the docs\r\n<!-- id: write-the-docs -->\r\n"
        )
    );
    // Pending means open or active: the done goal is left alone.
    let ids: Vec<&str> = done.approved.iter().map(|(g, _)| g.id.as_str()).collect();
    assert_eq!(ids, ["cache", "write-the-docs"]);
    assert!(done.approved.iter().all(|(g, a)| a.approved_by == "alice"
        && a.contract_hash == g.hash
        && g.state == ContractState::NeverApproved));
    assert_eq!(
        f.states(),
        [
            ("cache".to_owned(), ContractState::Approved),
            ("write-the-docs".to_owned(), ContractState::Approved),
            ("old".to_owned(), ContractState::NeverApproved),
        ]
    );
    // Nothing left to approve; approving again records nothing.
    let again = approve::approve(&f.store, &f.plan, &Selection::Pending, "alice").unwrap();
    assert!(again.approved.is_empty() && again.assigned.is_empty());
}

#[test]
fn a_changed_contract_is_detected_and_re_approved() {
    let f = fixture(PLAN);
    approve::approve(&f.store, &f.plan, &Selection::Pending, "alice").unwrap();
    let approved_at = f
        .store
        .approval("plan.md", "cache")
        .unwrap()
        .unwrap()
        .approved_at_ms;

    // Ticking boxes, renaming and status changes are not contract changes.
    f.edit("## Goal: Cache layer", "## Goal: The cache layer");
    f.edit("status: active", "status: open");
    assert_eq!(f.states()[0].1, ContractState::Approved);

    // Softening the verify command is.
    f.edit("verify: cargo test", "verify: true");
    assert_eq!(
        f.states()[0].1,
        ContractState::Changed {
            approved_by: "alice".to_owned(),
            approved_at_ms: approved_at,
        }
    );
    let pending = approve::prepare(&f.store, &f.plan, &Selection::Pending).unwrap();
    assert_eq!(pending.goals.len(), 1);
    assert_eq!(pending.goals[0].id, "cache");

    // Re-approval by id records the new hash; the old approval stays as history.
    let done = approve::approve(
        &f.store,
        &f.plan,
        &Selection::Ids(vec!["cache".to_owned()]),
        "bob",
    )
    .unwrap();
    assert_eq!(done.approved.len(), 1);
    assert!(matches!(
        done.approved[0].0.state,
        ContractState::Changed { .. }
    ));
    assert_eq!(f.states()[0].1, ContractState::Approved);
    assert_eq!(
        f.store
            .approval("plan.md", "cache")
            .unwrap()
            .unwrap()
            .approved_by,
        "bob"
    );

    // Naming an approved goal again records nothing and says so.
    let done = approve::approve(
        &f.store,
        &f.plan,
        &Selection::Ids(vec!["cache".to_owned()]),
        "bob",
    )
    .unwrap();
    assert!(done.approved.is_empty());
    assert_eq!(done.already.len(), 1);
}

#[test]
fn a_done_goal_can_be_approved_by_id() {
    let f = fixture(PLAN);
    let done = approve::approve(
        &f.store,
        &f.plan,
        &Selection::Ids(vec!["old".to_owned()]),
        "alice",
    )
    .unwrap();
    assert_eq!(done.approved.len(), 1);
    assert_eq!(f.states()[2].1, ContractState::Approved);
}

#[test]
fn unknown_ids_and_broken_plans_are_clear_usage_errors() {
    let f = fixture(PLAN);
    let err = approve::approve(
        &f.store,
        &f.plan,
        &Selection::Ids(vec!["nope".to_owned()]),
        "alice",
    )
    .unwrap_err();
    assert!(err.is_usage());
    let msg = err.to_string();
    assert!(msg.contains("no goal with id `nope`"), "{msg}");
    assert!(
        msg.contains("known ids: cache, write-the-docs, old"),
        "{msg}"
    );
    assert!(f.store.approval("plan.md", "cache").unwrap().is_none());

    let broken = PLAN.replace("status: open", "status: later");
    let f = fixture(&broken);
    let err = approve::approve(&f.store, &f.plan, &Selection::Pending, "alice").unwrap_err();
    assert!(err.is_usage());
    assert!(matches!(
        err,
        PlanningError::Plan(PlanFileError::Patch(PatchError::Invalid(_)))
    ));
    let msg = err.to_string();
    assert!(msg.contains("plan.md:13: `later` is not a status"), "{msg}");
    // Nothing was rewritten.
    assert_eq!(f.text(), broken);

    fs::remove_file(&f.plan.path).unwrap();
    let err = approve::approve(&f.store, &f.plan, &Selection::Pending, "alice").unwrap_err();
    assert!(err.is_usage(), "{err}");
}

#[test]
fn goals_with_unusable_ids_have_no_state() {
    let text = "# Plan: p\n\n## Goal: A\n<!-- id: same -->\nstatus: active\ndone_when: a\n\n\
                ## Goal: B\n<!-- id: same -->\nstatus: active\ndone_when: b\n\n\
                ## Goal: C\n<!-- id: has spaces -->\nstatus: active\ndone_when: c\n";
    let f = fixture(text);
    assert!(f.states().is_empty());
}
