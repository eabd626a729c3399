use super::*;

#[test]
fn migrations_are_numbered_from_one_without_gaps_and_end_at_the_schema_version() {
    for (index, migration) in MIGRATIONS.iter().enumerate() {
        let expected = i64::try_from(index + 1).unwrap();
        assert_eq!(migration.version, expected, "{}", migration.name);
        assert!(
            migration.name.starts_with(&format!("{expected:04}_")),
            "{} should start with its version",
            migration.name
        );
    }
    assert_eq!(MIGRATIONS.last().map(|m| m.version), Some(SCHEMA_VERSION));
}
