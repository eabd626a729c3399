use std::collections::HashMap;

use proptest::prelude::*;

use super::*;

fn vars(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    move |name| map.get(name).cloned()
}

#[test]
fn lines_split_on_unescaped_colons() {
    let entry = parse_line(r"db.example:5432:app:alice:pa\:ss\\word").unwrap();
    assert_eq!(entry.fields[4], r"pa:ss\word");
    assert_eq!(parse_line("# a comment"), None);
    assert_eq!(parse_line("host:5432:db:user"), None);
    // A colon in the password field itself needs no escape.
    assert_eq!(parse_line("h:1:d:u:a:b").unwrap().fields[4], "a:b");
}

#[test]
fn the_password_comes_from_the_environment_then_the_password_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("pgpass");
    std::fs::write(
        &file,
        "other:5432:*:*:wrong\n127.0.0.1:5433:team:*:from-file\n",
    )
    .unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let url = "postgres://alice@127.0.0.1:5433/team";
    let file_var = file.display().to_string();

    let config = config_with(url, &vars(&[("PGPASSFILE", &file_var)])).unwrap();
    assert_eq!(config.get_password(), Some(&b"from-file"[..]));
    let config = config_with(
        url,
        &vars(&[("PGPASSFILE", &file_var), ("PGPASSWORD", "env")]),
    )
    .unwrap();
    assert_eq!(config.get_password(), Some(&b"env"[..]));

    // Readable by others: ignored, as psql ignores it.
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let config = config_with(url, &vars(&[("PGPASSFILE", &file_var)])).unwrap();
    assert_eq!(config.get_password(), None);
}

#[test]
fn a_bad_url_is_named_without_its_password() {
    let err = config_with("postgres://bob:hunter2@host:notaport/db", &vars(&[])).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("postgres://bob:***@host:notaport/db"),
        "{text}"
    );
    assert!(!text.contains("hunter2"), "{text}");
    assert_eq!(redacted("postgres://u@h/db"), "postgres://u@h/db");
}

proptest! {
    #[test]
    fn any_line_parses_or_is_refused_without_panicking(line in ".{0,200}") {
        let _ = parse_line(&line);
    }

    #[test]
    fn escaped_fields_come_back_as_written(fields in proptest::array::uniform5("[a-z:\\\\*]{0,12}")) {
        let escape = |f: &str| f.replace('\\', "\\\\").replace(':', "\\:");
        let line = fields.iter().map(|f| escape(f)).collect::<Vec<_>>().join(":");
        prop_assume!(!line.trim_start().starts_with('#') && !line.trim().is_empty());
        let entry = parse_line(&line).unwrap();
        prop_assert_eq!(entry.fields.to_vec(), fields.to_vec());
    }
}
