use super::*;

#[test]
fn versions_are_read_from_what_the_clis_print() {
    assert_eq!(
        parse_version("2.1.330 (Claude Code)"),
        Some(Version::new(2, 1, 330))
    );
    assert_eq!(
        parse_version("codex-cli 0.169.0"),
        Some(Version::new(0, 169, 0))
    );
    assert_eq!(parse_version("1.5.2\n"), Some(Version::new(1, 5, 2)));
    assert_eq!(parse_version("v22.19.0"), Some(Version::new(22, 19, 0)));
    assert_eq!(parse_version("no version here 1.2"), None);
}

#[test]
fn versions_compare_by_number_not_text() {
    assert!(Version::new(0, 99, 0) < Version::new(0, 100, 0));
    assert!(Version::new(1, 5, 2) > Agent::Pi.minimum());
    assert!(Version::new(2, 1, 197) > Agent::Claude.minimum());
    assert!(Version::new(1, 0, 128) < Agent::Claude.minimum());
}

#[test]
fn errors_name_the_fix() {
    let too_old = CliError::TooOld {
        agent: Agent::Codex,
        found: Version::new(0, 50, 0),
        minimum: Agent::Codex.minimum(),
    };
    assert_eq!(
        too_old.to_string(),
        "Codex 0.50.0 is too old: tether needs 0.160.0 or newer; update it with `npm install \
         -g @openai/codex` or set [executor] program to a newer one"
    );
}
