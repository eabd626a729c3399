//! A goal's contract and its hash.
//!
//! The contract is what a human agrees to before work starts: `done_when`, `verify`,
//! `failure_modes`, `ask_before`, and the goal's `budget`, `network` and `after` when it has them.
//! Its hash is recorded when the plan is approved; a later edit of any of those lines changes the hash, and `complete_goal` refuses to sign the goal off until
//! a human approves again. Titles, statuses, subtasks and whitespace around values do not count:
//! ticking a box or renaming a goal is not a change of contract.

use sha2::{Digest as _, Sha256};

use crate::model::Goal;

impl Goal {
    /// The hash of the goal's contract: `sha256:` and 64 hex digits.
    pub fn contract_hash(&self) -> String {
        let mut h = Sha256::new();
        let mut field = |name: &str, value: &str| {
            h.update(name.as_bytes());
            h.update([0]);
            h.update(value.as_bytes());
            h.update([0]);
        };
        field(
            "done_when",
            self.done_when.as_ref().map_or("", |l| &l.value),
        );
        field("verify", self.verify.as_ref().map_or("", |l| &l.value));
        for mode in &self.failure_modes {
            field("failure_mode", &mode.value);
        }
        for prefix in &self.ask_before {
            field("ask_before", &prefix.value);
        }
        // Only when present, so the hashes of goals without a budget stay as they were.
        if let Some(budget) = &self.budget {
            field("budget", &budget.value);
        }
        // The same for the network: opening it is a human's decision.
        if let Some(on) = self.network.as_ref().and_then(|f| f.value) {
            field("network", if on { "on" } else { "off" });
        }
        // And for `after:`: which goals must be signed off first is part of the agreement. A
        // set of ids, so neither their order nor a repeat counts.
        if let Some(after) = &self.after {
            let mut ids: Vec<&str> = after.value.iter().map(String::as_str).collect();
            ids.sort_unstable();
            ids.dedup();
            field("after", &ids.join(","));
        }
        let digest = h.finalize();
        let mut out = String::with_capacity(7 + 64);
        out.push_str("sha256:");
        for byte in digest.iter() {
            out.push(char::from(HEX[usize::from(byte >> 4)]));
            out.push(char::from(HEX[usize::from(byte & 0xf)]));
        }
        out
    }
}

const HEX: &[u8; 16] = b"0123456789abcdef";

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use crate::PlanDoc;

    const PLAN: &str = "# Plan: p\n\n## Goal: Cache\n<!-- id: cache -->\nstatus: active\n\
        done_when: p95 < 50ms\nverify: cargo test\nfailure_modes:\n- bypassed\n- trivial test\n\
        ask_before: git push\n\n- [ ] wire\n";

    fn hash(text: &str) -> String {
        PlanDoc::parse("plan.md", text).plan().goals[0].contract_hash()
    }

    #[test]
    fn the_hash_is_stable_and_shaped() {
        let h = hash(PLAN);
        assert_eq!(h, hash(PLAN));
        assert!(h.starts_with("sha256:"));
        assert_eq!(h.len(), 7 + 64);
    }

    #[test]
    fn status_subtasks_and_title_are_not_the_contract() {
        let edited = PLAN
            .replace("status: active", "status: done")
            .replace("- [ ] wire", "- [x] wire\n- [ ] more")
            .replace("Goal: Cache", "Goal: Cache layer");
        assert_eq!(hash(PLAN), hash(&edited));
    }

    #[test]
    fn every_contract_line_counts() {
        for (from, to) in [
            ("p95 < 50ms", "p95 < 500ms"),
            ("cargo test", "true"),
            ("- trivial test", "- trivial tests"),
            ("ask_before: git push", "ask_before: git pushx"),
            ("- bypassed\n", ""),
        ] {
            assert_ne!(hash(PLAN), hash(&PLAN.replace(from, to)), "{from} -> {to}");
        }
    }

    #[test]
    fn the_budget_and_the_network_are_the_contract_when_present() {
        let with = |extra: &str| {
            PLAN.replace(
                "ask_before: git push\n",
                &format!("ask_before: git push\n{extra}"),
            )
        };
        let budget = with("budget: 60 tokens\n");
        let network = with("network: on\n");
        // Adding either line, raising the budget or opening the network changes the hash.
        for (a, b) in [
            (PLAN.to_owned(), budget.clone()),
            (PLAN.to_owned(), network.clone()),
            (budget.clone(), budget.replace("60 tokens", "900M tokens")),
            (with("network: off\n"), network),
        ] {
            assert_ne!(hash(&a), hash(&b), "{a}\n---\n{b}");
        }
    }

    #[test]
    fn after_is_the_contract_when_present() {
        let with = |after: &str| PLAN.replace("verify:", &format!("after: {after}\nverify:"));
        // Adding `after:`, or naming another goal in it, changes the hash.
        assert_ne!(hash(PLAN), hash(&with("config")));
        assert_ne!(hash(&with("config")), hash(&with("config, api")));
        assert_ne!(hash(&with("config")), hash(&with("configs")));
        // Its order, spacing and repeats do not.
        assert_eq!(hash(&with("config, api")), hash(&with("api,config ,  api")));
    }

    #[test]
    fn the_hash_of_a_goal_without_after_is_unchanged() {
        // The hash as the format defined it before `after:` existed (computed outside this code):
        // approvals already in stores must stay valid.
        assert_eq!(
            hash(PLAN),
            "sha256:b4486d3b5fb1f4645cab9606607985a12ef32da4b84b290fda695fa405d20b74"
        );
    }
}
