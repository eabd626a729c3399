use super::TEMPLATE;
use crate::keys;

/// The template's settings (active or commented out), as `table.key`, in order.
fn settings() -> Vec<String> {
    let mut table = String::new();
    let mut out = Vec::new();
    for line in TEMPLATE.lines() {
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
    let mut expected = vec!["plan".to_owned()];
    for (table, table_keys) in keys::TABLES {
        expected.push(format!("[{table}]"));
        expected.extend(table_keys.iter().map(|k| format!("{table}.{k}")));
    }
    assert_eq!(settings(), expected);
}

/// Whether a line (with any `# ` removed) is a `key = value` setting.
fn is_key_line(line: &str) -> bool {
    let bare = line.strip_prefix("# ").unwrap_or(line);
    bare.split_once(" = ")
        .is_some_and(|(k, _)| k.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
}

#[test]
fn every_setting_has_a_description_on_the_line_above() {
    let lines: Vec<&str> = TEMPLATE.lines().collect();
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
    for line in TEMPLATE.lines() {
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
        assert!(TEMPLATE.contains(&format!("{min}..{max}")), "{min}..{max}");
    }
    let (min, max) = range::THRESHOLD;
    assert!(TEMPLATE.contains(&format!("{min} (never ask) .. {max}")));
}

/// The book's configuration reference: the template, a section per table, each with the
/// template's own comments (so the book says what `tether init` writes, word for word).
fn reference() -> String {
    let mut out = String::from(
        "# Configuration reference\n\n\
         <!-- Generated from the configuration schema's template \
         (crates/tether-config/src/template.rs) by \
         `TETHER_BLESS=1 cargo test -p tether-config reference`; do not edit. -->\n\n\
         `tether.toml` at the workspace root; `tether init` writes it with every setting below, \
         commented. Unknown keys are errors (the closest valid key is suggested), and `tether \
         validate` names every problem with its file, line and key. Keys never live in the \
         file: a setting ending in `_env` names the environment variable that holds one.\n",
    );
    for paragraph in TEMPLATE.split("\n\n") {
        let table = paragraph.lines().find_map(|line| {
            let line = line.strip_prefix("# ").unwrap_or(line);
            line.strip_prefix('[')
                .and_then(|l| l.strip_suffix(']'))
                .filter(|name| name.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
        });
        let heading = match table {
            Some(name) => format!("`[{name}]`"),
            None if paragraph.contains("\nplan = ") || paragraph.starts_with("# The plan") => {
                "Top level".to_owned()
            }
            None => continue,
        };
        out.push_str(&format!(
            "\n## {heading}\n\n```toml\n{}\n```\n",
            paragraph.trim_end()
        ));
    }
    out
}

#[test]
fn the_books_configuration_reference_is_generated_from_the_template() {
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../docs/src/reference/configuration.md");
    let generated = reference();
    if std::env::var_os("TETHER_BLESS").is_some() {
        std::fs::write(&file, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(&file).unwrap_or_default();
    assert!(
        committed == generated,
        "{} is not what the template gives; regenerate it with \
         `TETHER_BLESS=1 cargo test -p tether-config reference`",
        file.display()
    );
    for (table, _) in keys::TABLES {
        assert!(
            generated.contains(&format!("## `[{table}]`")),
            "the reference has a section for [{table}]"
        );
    }
}
