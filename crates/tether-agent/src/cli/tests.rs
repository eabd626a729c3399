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
    assert!(Version::new(1, 5, 2) > crate::pi::CLI.minimum);
    assert!(Version::new(2, 1, 197) > crate::claude::CLI.minimum);
    assert!(Version::new(1, 0, 128) < crate::claude::CLI.minimum);
}

#[test]
fn errors_name_the_fix() {
    let too_old = CliError::TooOld {
        agent: &crate::codex::CLI,
        found: Version::new(0, 50, 0),
        minimum: crate::codex::CLI.minimum,
    };
    assert_eq!(
        too_old.to_string(),
        "Codex 0.50.0 is too old: tether needs 0.160.0 or newer; update it with `npm install \
         -g @openai/codex` or set [executor] program to a newer one"
    );
}

#[test]
fn every_agent_cli_is_registered_once_under_its_kind() {
    for cli in AGENT_CLIS {
        assert_eq!(find(cli.kind), Some(*cli), "{}", cli.kind);
        assert_eq!(
            AGENT_CLIS.iter().filter(|c| c.kind == cli.kind).count(),
            1,
            "{}",
            cli.kind
        );
        assert!(!cli.title.is_empty() && !cli.program.is_empty() && !cli.install.is_empty());
        assert!(!cli.env_prefixes.is_empty(), "{}", cli.kind);
    }
    assert_eq!(find("builtin"), None);
}
