//! Fuzz the plan parser and patcher: no input may panic, every line number must be in range, and
//! on a plan without errors each patch must keep every line it does not target.

#![no_main]

use libfuzzer_sys::fuzz_target;
use tether_plan::{PlanDoc, Status, render};

/// The line without the one terminator (`\n` or `\r\n`) it gained.
fn gained_terminator(line: &str) -> Option<&str> {
    let s = line.strip_suffix('\n')?;
    Some(s.strip_suffix('\r').unwrap_or(s))
}

fn lines(s: &str) -> Vec<&str> {
    s.split_inclusive('\n').collect()
}

/// Every old line survives in order; the old last line may only gain a terminator.
fn kept(before: &str, after: &str) {
    let old = lines(before);
    let new = lines(after);
    let mut j = 0;
    for (i, line) in old.iter().enumerate() {
        let unterminated = i + 1 == old.len() && !line.ends_with('\n');
        while j < new.len()
            && !(new[j] == *line || (unterminated && gained_terminator(new[j]) == Some(*line)))
        {
            j += 1;
        }
        assert!(j < new.len(), "line {} lost", i + 1);
        j += 1;
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let doc = PlanDoc::parse("plan.md", text);
    let count = text.split_inclusive('\n').count().max(1);
    for p in &doc.plan().problems {
        assert!(p.line >= 1 && p.line <= count);
    }
    let _ = render::task_list("plan.md", doc.plan(), &render::Options::default());
    if doc.check().is_err() {
        return;
    }
    if let Ok((patch, _)) = doc.add_missing_ids() {
        let after = doc.apply(&patch);
        kept(text, after.text());
        assert!(after.check().is_ok());
        assert!(after.plan().goals.iter().all(|g| g.id.is_some()));
    }
    if let Ok(patch) = doc.append_log("fuzz entry") {
        let after = doc.apply(&patch);
        kept(text, after.text());
        let last = after.plan().log.as_ref().and_then(|l| l.entries.last());
        assert_eq!(last.map(|e| e.text.as_str()), Some("fuzz entry"));
    }
    let targets: Vec<(String, Option<usize>)> = doc
        .plan()
        .goals
        .iter()
        .filter_map(|g| Some((g.id()?.to_owned(), g.status.as_ref().map(|f| f.line))))
        .collect();
    for (id, status_line) in targets {
        let Ok(patch) = doc.set_status(&id, Status::Done) else {
            panic!("a valid plan refused a status patch for its own goal `{id}`");
        };
        let after = doc.apply(&patch);
        match status_line {
            // Replaced in place: only that line differs.
            Some(target) => {
                let (old, new) = (lines(text), lines(after.text()));
                assert_eq!(old.len(), new.len());
                for (i, (a, b)) in old.iter().zip(&new).enumerate() {
                    assert!(i + 1 == target || a == b, "line {} changed", i + 1);
                }
            }
            None => kept(text, after.text()),
        }
        assert_eq!(
            after.plan().goal(&id).map(|g| g.status()),
            Some(Status::Done)
        );
    }
});
