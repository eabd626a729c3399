//! Patches change exactly the bytes they mean to: checked against literal before/after texts.

use tether_plan::{PatchError, PlanDoc, Status};

const PLAN: &str = "# Plan: p\n\n## Goal: Cache layer\n<!-- id: cache -->\nstatus:   active  \ndone_when: fast\n\n- [x] wire\n- [ ] evict\n\n## Log\n- one\n- two\n\ntrailing prose\n";

fn apply(doc: &PlanDoc, patch: &tether_plan::Patch) -> String {
    doc.apply(patch).text().to_owned()
}

#[test]
fn set_status_replaces_only_the_value() {
    let doc = PlanDoc::parse("plan.md", PLAN);
    let p = doc.set_status("cache", Status::Done).unwrap();
    assert_eq!(
        apply(&doc, &p),
        PLAN.replace("status:   active  ", "status:   done  ")
    );
}

#[test]
fn set_status_inserts_a_line_when_there_is_none() {
    let text = "## Goal: G\n<!-- id: g -->\ndone_when: x\n";
    let doc = PlanDoc::parse("plan.md", text);
    let p = doc.set_status("g", Status::Active).unwrap();
    assert_eq!(
        apply(&doc, &p),
        "## Goal: G\n<!-- id: g -->\nstatus: active\ndone_when: x\n"
    );
}

#[test]
fn set_subtask_flips_one_byte() {
    let doc = PlanDoc::parse("plan.md", PLAN);
    let tick = doc.set_subtask("cache", 2, true).unwrap();
    assert_eq!(
        apply(&doc, &tick),
        PLAN.replace("- [ ] evict", "- [x] evict")
    );
    let untick = doc.set_subtask("cache", 1, false).unwrap();
    assert_eq!(
        apply(&doc, &untick),
        PLAN.replace("- [x] wire", "- [ ] wire")
    );
    assert!(doc.set_subtask("cache", 1, true).unwrap().is_empty());
    let err = doc.set_subtask("cache", 3, true).unwrap_err();
    assert_eq!(
        err.to_string(),
        "goal `cache` has 2 subtask(s); there is no subtask number 3"
    );
}

#[test]
fn append_log_goes_after_the_last_entry() {
    let doc = PlanDoc::parse("plan.md", PLAN);
    let p = doc.append_log("three\nlines\r\n joined ").unwrap();
    assert_eq!(
        apply(&doc, &p),
        PLAN.replace("- two\n", "- two\n- three lines joined\n")
    );
    assert_eq!(
        doc.append_log(" \n ").unwrap_err(),
        PatchError::EmptyLogEntry
    );
}

#[test]
fn append_log_creates_the_section_when_absent() {
    let cases = [
        ("", "## Log\n- e\n"),
        ("# P\n", "# P\n\n## Log\n- e\n"),
        ("# P\n\n", "# P\n\n## Log\n- e\n"),
        ("# P", "# P\n\n## Log\n- e"),
        ("# P\r\n", "# P\r\n\r\n## Log\r\n- e\r\n"),
    ];
    for (before, after) in cases {
        let doc = PlanDoc::parse("plan.md", before);
        let p = doc.append_log("e").unwrap();
        assert_eq!(apply(&doc, &p), after, "from {before:?}");
    }
}

#[test]
fn append_log_to_an_empty_log_section_and_without_trailing_newline() {
    let doc = PlanDoc::parse("plan.md", "## Log\n");
    assert_eq!(apply(&doc, &doc.append_log("e").unwrap()), "## Log\n- e\n");
    let doc = PlanDoc::parse("plan.md", "## Log\n- a");
    assert_eq!(
        apply(&doc, &doc.append_log("e").unwrap()),
        "## Log\n- a\n- e"
    );
}

#[test]
fn crlf_files_stay_crlf() {
    let crlf = PLAN.replace('\n', "\r\n");
    let doc = PlanDoc::parse("plan.md", crlf.as_str());
    let p = doc.set_status("cache", Status::Done).unwrap();
    let doc = doc.apply(&p);
    let p = doc.append_log("three").unwrap();
    let out = apply(&doc, &p);
    assert_eq!(
        out,
        crlf.replace("status:   active", "status:   done")
            .replace("- two\r\n", "- two\r\n- three\r\n")
    );
    assert!(!out.replace("\r\n", "").contains('\n'));
}

#[test]
fn missing_ids_are_derived_from_titles_and_unique() {
    let text = "## Goal: Cache Layer!\nstatus: open\n## Goal: cache layer\n## Goal: Ünïcode ✓\n<!-- id: cache-layer-2 -->\n## Goal: Cache layer\n";
    let doc = PlanDoc::parse("plan.md", text);
    let (patch, assigned) = doc.add_missing_ids().unwrap();
    let ids: Vec<_> = assigned.iter().map(|a| a.id.as_str()).collect();
    assert_eq!(ids, ["cache-layer", "cache-layer-3", "cache-layer-4"]);
    assert_eq!(
        apply(&doc, &patch),
        "## Goal: Cache Layer!\n<!-- id: cache-layer -->\nstatus: open\n## Goal: cache layer\n<!-- id: cache-layer-3 -->\n## Goal: Ünïcode ✓\n<!-- id: cache-layer-2 -->\n## Goal: Cache layer\n<!-- id: cache-layer-4 -->\n"
    );
    let after = doc.apply(&patch);
    assert!(after.plan().goals.iter().all(|g| g.id.is_some()));
    let (again, none) = after.add_missing_ids().unwrap();
    assert!(again.is_empty() && none.is_empty());
}

#[test]
fn an_id_is_inserted_even_after_a_heading_at_the_end_of_the_file() {
    let doc = PlanDoc::parse("plan.md", "## Goal: Last");
    let (patch, _) = doc.add_missing_ids().unwrap();
    assert_eq!(apply(&doc, &patch), "## Goal: Last\n<!-- id: last -->");
}

#[test]
fn a_plan_with_errors_is_never_patched() {
    let text = "## Goal: G\n<!-- id: g -->\nstatus: finished\ndone_when: x\n";
    let doc = PlanDoc::parse("plan.md", text);
    let errs = [
        doc.set_status("g", Status::Done).unwrap_err(),
        doc.set_subtask("g", 1, true).unwrap_err(),
        doc.append_log("x").unwrap_err(),
        doc.add_missing_ids().unwrap_err(),
    ];
    for e in errs {
        let PatchError::Invalid(plan_error) = e else {
            panic!("expected Invalid, got {e:?}")
        };
        assert_eq!(
            plan_error.to_string(),
            "plan.md has 1 error\n  plan.md:3: `finished` is not a status; expected one of open, active, done, cancelled"
        );
    }
}

#[test]
fn unknown_goal_names_the_known_ids() {
    let doc = PlanDoc::parse("plan.md", PLAN);
    let err = doc.set_status("nope", Status::Done).unwrap_err();
    assert_eq!(
        err.to_string(),
        "no goal with id `nope` in plan.md; known ids: cache"
    );
}

#[test]
fn a_bare_cr_at_the_end_of_the_file_stays_its_own_line() {
    // Found by the fuzzer: appending `\n` after a final bare `\r` fused into one CRLF.
    for before in ["# P\n\r", "## Log\n- a\r", "## Goal: G\r"] {
        let doc = PlanDoc::parse("plan.md", before);
        let patch = if before.starts_with("## Goal") {
            doc.add_missing_ids().unwrap().0
        } else {
            doc.append_log("e").unwrap()
        };
        let after = apply(&doc, &patch);
        assert!(after.starts_with(before), "{after:?}");
        assert_eq!(&after[before.len()..before.len() + 2], "\r\n", "{after:?}");
    }
}
