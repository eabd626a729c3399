//! A table an integration declares is all it takes: with `[pager]` handed in, tether-config
//! reads it, checks its keys, writes it into the template, lists it among `human.channels` and
//! `human.escalate_to`, hides its credential from a run's record and keeps its secret's
//! variable from the agent; without it, `[pager]` is an unknown table.

use std::path::Path;
use std::sync::Arc;

use tether_config::{
    Channel, EscalationTarget, KeyDecl, MapEnv, Recorded, Role, Schema, Source, TableDecl,
};

use super::test_table::{PAGER, PagerSettings, schema};
use super::{config, problem};

#[test]
fn without_its_declaration_the_table_is_unknown() {
    let err = tether_config::parse(
        &Schema::core(),
        "[pager]\nroom = \"ops\"\n",
        Path::new("tether.toml"),
        &MapEnv::new(),
    )
    .unwrap_err();
    assert_eq!(
        err.problems()[0].to_string(),
        "tether.toml:1: pager: unknown table; the top level has plan, model, planning, judge, \
         loop_judge, side, loop, human, notify, executor, server, store, sandbox, run, schedule"
    );
}

#[test]
fn with_it_the_table_is_read_checked_listed_and_its_secret_kept() {
    let text = "[human]\nchannels = [\"pager\"]\nescalate_after = \"1h\"\n\
                escalate_to = [\"pager\", \"pager:555\"]\n[pager]\nroom = \"ops\"\n\
                token_env = \"MY_PAGER\"\n";
    let config = config(text);
    assert_eq!(config.human.channels, [Channel::named("pager")]);
    assert_eq!(
        config.human.escalate_to,
        [
            EscalationTarget {
                kind: Channel::named("pager"),
                arg: None
            },
            EscalationTarget {
                kind: Channel::named("pager"),
                arg: Some("555".into())
            },
        ]
    );
    assert_eq!(config.human.escalate_to[1].spelling(), "pager:555");
    assert_eq!(PagerSettings::of(&config).room.as_deref(), Some("ops"));
    assert_eq!(config.key_vars(), ["MY_PAGER"]);
    assert_eq!(
        config.key_setting("MY_PAGER").as_deref(),
        Some("[pager] token_env")
    );
    assert_eq!(
        schema().key_settings().last(),
        Some(&("pager", "token_env"))
    );
    assert!(schema().settings().contains(&("pager", "level")));
    assert_eq!(
        problem("[human]\nescalate_after = \"1h\"\nescalate_to = [\"pager:five\"]\n"),
        "tether.toml:3: human.escalate_to: item 1: must be a number, got \"five\""
    );
    assert_eq!(
        problem("[human]\nescalate_after = \"1h\"\nescalate_to = [\"pagr\"]\n"),
        "tether.toml:3: human.escalate_to: item 1: must be \"pager\" or \"pager:<number>\", got \
         \"pagr\""
    );
}

#[test]
fn its_credential_is_hidden_from_a_runs_record() {
    let source = Source {
        text: "[pager]\nurl = \"https://pager.example/s3cr3t\"\n".to_owned(),
        schema: schema(),
        ..Source::default()
    };
    let recorded = Recorded::of(&source);
    assert!(!recorded.text.contains("s3cr3t"), "{}", recorded.text);
    assert_eq!(recorded.hidden.keys().collect::<Vec<_>>(), ["pager.url"]);
    assert_eq!(recorded.restore(&source), Some(source));
}

/// A read function reading a key its table does not declare.
const SLOPPY: TableDecl = TableDecl {
    name: "sloppy",
    intro: "A table whose read function reads a key it does not declare.",
    role: Role::Settings,
    keys: &[KeyDecl::new("level", "Declared.", "1", "2")],
    advice: None,
    read: |t| Arc::new(t.int::<i64>("loudness", 0, 9)),
    default: || Arc::new(None::<i64>),
};

#[test]
fn a_key_read_without_being_declared_reads_as_absent_and_is_unknown() {
    let schema = Schema::core().with([&SLOPPY]);
    let text = "[sloppy]\nloudness = 3\n";
    let err =
        tether_config::parse(&schema, text, Path::new("tether.toml"), &MapEnv::new()).unwrap_err();
    assert_eq!(
        err.problems()[0].to_string(),
        "tether.toml:2: sloppy.loudness: unknown key; [sloppy] has level"
    );
    let config = tether_config::parse(
        &schema,
        "[sloppy]\nlevel = 3\n",
        Path::new("tether.toml"),
        &MapEnv::new(),
    )
    .unwrap();
    assert_eq!(*config.integration::<Option<i64>>(), None);
}

#[test]
fn a_name_taken_twice_is_a_conflict() {
    const LOOP: TableDecl = TableDecl {
        name: "loop",
        ..SLOPPY
    };
    assert_eq!(Schema::conflicts(&[&PAGER]), Vec::<String>::new());
    assert_eq!(
        Schema::conflicts(&[&PAGER, &PAGER, &LOOP]),
        [
            "[pager] is declared twice",
            "[pager] is read into the type of a table before it: each is read back by its type",
            "[loop] is declared twice"
        ]
    );
    const LEAKY: TableDecl = TableDecl {
        name: "leaky",
        keys: &[KeyDecl::new(
            "token_env",
            "Not declared a secret's.",
            "\"T\"",
            "\"U\"",
        )],
        default: || Arc::new(0_u8),
        ..SLOPPY
    };
    assert_eq!(
        Schema::conflicts(&[&LEAKY]),
        [
            "leaky.token_env names a variable but is not declared as a secret's: it would not be \
          kept from the agent"
        ]
    );
    // The first is kept.
    assert_eq!(Schema::core().with([&PAGER, &PAGER]).declared().len(), 1);
    assert!(Schema::core().with([&LOOP]).declared().is_empty());
}

#[test]
fn an_agent_clis_kind_is_its_registrys_spelling() {
    let core = tether_config::parse(
        &Schema::core(),
        "[executor]\nkind = \"claude\"\n",
        Path::new("tether.toml"),
        &MapEnv::new(),
    )
    .unwrap_err();
    assert_eq!(
        core.problems()[0].to_string(),
        "tether.toml:2: executor.kind: must be one of builtin | command | acp, got \"claude\""
    );
    let kinds: Vec<&str> = schema()
        .executor_kinds()
        .into_iter()
        .map(|(name, _)| name)
        .collect();
    assert_eq!(
        kinds,
        ["builtin", "claude", "codex", "pi", "command", "acp"]
    );
    assert_eq!(
        config("[executor]\nkind = \"pi\"\n").executor.kind,
        tether_config::ExecutorKind::Cli("pi")
    );
    let template = schema().template().replace("\n# ", " ");
    assert!(
        template.contains(
            "\"builtin\" (tether's own agent on [model]) | \"claude\" (Claude Code, with tether's \
             tools over MCP) | \"codex\" (the Codex CLI, the same way) | \"pi\" (the pi coding \
             agent, the same way) | \"command\""
        ),
        "{template}"
    );
    assert!(template.contains("Only for an agent CLI (claude, codex, pi, acp): the program"));
    let core = Schema::core().template().replace("\n# ", " ");
    assert!(core.contains("\"builtin\" (tether's own agent on [model]) | \"command\""));
    assert!(core.contains("Only for an agent CLI (acp): the program"));
}

/// `s` as a TOML basic string.
fn quoted(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

proptest::proptest! {
    /// Whatever `human.escalate_to` holds, it is one of the schema's sinks (with a valid
    /// argument, when one follows the colon) or a problem at its line; never a panic, never a
    /// kind the schema does not declare.
    #[test]
    fn any_escalation_target_is_a_declared_sink_or_a_problem(
        value in "(pager|pagr|loop|)(:[0-9a-z ]{0,6})?|\\PC{0,12}",
    ) {
        let text = format!(
            "[human]\nescalate_after = \"1h\"\nescalate_to = [{}]\n",
            quoted(&value)
        );
        match tether_config::parse(&schema(), &text, Path::new("tether.toml"), &MapEnv::new()) {
            Ok(config) => {
                let target = &config.human.escalate_to[0];
                proptest::prop_assert_eq!(target.kind, Channel::named("pager"));
                match &target.arg {
                    None => proptest::prop_assert_eq!(value.as_str(), "pager"),
                    Some(arg) => {
                        proptest::prop_assert!(value.starts_with("pager:"));
                        proptest::prop_assert!(arg.bytes().all(|b| b.is_ascii_digit()));
                    }
                }
            }
            Err(err) => {
                let problem = &err.problems()[0];
                proptest::prop_assert_eq!(problem.key.as_str(), "human.escalate_to");
                proptest::prop_assert_eq!(problem.line, Some(3));
            }
        }
    }
}
