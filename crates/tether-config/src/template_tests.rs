use crate::Schema;
use crate::test_table::schema;

/// The template of the core tables and the test's declared `[pager]`.
fn template() -> String {
    schema().template()
}

/// The template's settings (active or commented out), as `table.key`, in order.
fn settings(template: &str) -> Vec<String> {
    let mut table = String::new();
    let mut out = Vec::new();
    for line in template.lines() {
        let line = line.strip_prefix("# ").unwrap_or(line);
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            table = name.to_owned();
            out.push(format!("[{name}]"));
        } else if let Some((key, _)) = line.split_once(" = ")
            && key.chars().all(|c| c.is_ascii_lowercase() || c == '_')
        {
            out.push(if table.is_empty() {
                key.to_owned()
            } else {
                format!("{table}.{key}")
            });
        }
    }
    out
}

#[test]
fn names_every_table_and_key_in_schema_order() {
    for schema in [Schema::core(), schema()] {
        let mut expected = vec!["plan".to_owned()];
        for (table, table_keys) in schema.tables() {
            expected.push(format!("[{table}]"));
            expected.extend(table_keys.iter().map(|k| format!("{table}.{k}")));
        }
        assert_eq!(settings(&schema.template()), expected);
    }
}

#[test]
fn a_declared_table_is_written_between_notify_and_executor_and_named_in_the_lists() {
    let template = template();
    let pager = template.find("\n[pager]\n").unwrap();
    assert!(template.find("\n[notify]\n").unwrap() < pager);
    assert!(pager < template.find("\n[executor]\n").unwrap());
    assert!(template.contains(
        "# The pager sink (list \"pager\" in human.channels): a test's, paging a room.\n\
         [pager]\n\
         # Where pages go: an http:// or https:// URL (itself a credential).\n\
         # url = \"https://pager.example/hook\"\n"
    ));
    assert!(
        template.contains("\ntoken_env = \"PAGER_TOKEN\"\n"),
        "active: its default"
    );
    // The filled lists, their comments' lines joined.
    let joined = template.replace("\n# ", " ");
    assert!(
        joined.contains("(PAGER_ROOM, TETHER_STORE_URL)"),
        "{template}"
    );
    assert!(joined.contains("are always on; add the notice sinks \"pager\".\n"));
    assert!(joined.contains("escalated to: \"pager\", \"pager:<number>\" (each"));
    assert!(template.contains("# escalate_to = [\"pager:555\"]\n"));
    let core = Schema::core().template();
    assert!(!core.contains("pager"));
    assert!(
        core.replace("\n# ", " ")
            .contains("dashboard are always on.\n"),
        "{core}"
    );
}

/// Whether a line (with any `# ` removed) is a `key = value` setting.
fn is_key_line(line: &str) -> bool {
    let bare = line.strip_prefix("# ").unwrap_or(line);
    bare.split_once(" = ")
        .is_some_and(|(k, _)| k.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
}

#[test]
fn every_setting_has_a_description_on_the_line_above() {
    let template = template();
    let lines: Vec<&str> = template.lines().collect();
    for (i, pair) in lines.windows(2).enumerate() {
        let (above, line) = (pair[0], pair[1]);
        if is_key_line(line) {
            let described = above.starts_with("# ")
                && !is_key_line(above)
                && !above.trim_start_matches("# ").starts_with('[');
            assert!(
                described,
                "line {}: `{line}` has no description above it",
                i + 2
            );
        }
    }
}

#[test]
fn lines_fit_in_100_columns() {
    for line in template().lines() {
        assert!(line.chars().count() <= 100, "too long: {line}");
    }
}

#[test]
fn every_range_is_documented() {
    use crate::schema::range;
    for (min, max) in [
        range::JUDGE_TIMEOUT_SECS,
        range::MAX_ITERATIONS,
        range::SPIN_GUARD,
        range::OSCILLATION_REPEATS,
        range::REMINDER_AFTER,
        range::CLEAN_END_REMINDERS,
        range::VERIFY_TIMEOUT_SECS,
        range::MAX_CONSECUTIVE_FAILURES,
        range::HUMAN_TIMEOUT_SECS,
    ] {
        assert!(
            template().contains(&format!("{min}..{max}")),
            "{min}..{max}"
        );
    }
    let (min, max) = range::THRESHOLD;
    assert!(template().contains(&format!("{min} (never ask) .. {max}")));
}
