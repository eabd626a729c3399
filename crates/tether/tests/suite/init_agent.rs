//! `tether init --agent`: a short working tether.toml for each agent (snapshotted: a person
//! reads it) that validates, and with the agent installed (a fake CLI of a version tether
//! drives on PATH, the scripted ACP agent) and the judge's key set (against fake model servers,
//! the file's base URLs pointed at them) passes `tether doctor`'s config, executor and judge
//! checks. `--full` writes the whole commented reference, as plain `tether init` does; a
//! PROGRAM is for `--agent acp` alone.

use std::fs;
use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

use tether_config::Api;
use tether_model::scripted::Script;
use tether_testkit::model_server::FakeModelServer;

use crate::common::{Out, cmd, runtime};

/// `tether <args>` in `dir`, with `path` first on PATH and `env` set.
fn tether(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Out {
    let mut c = cmd(dir, args);
    let path = format!(
        "{}:{}",
        dir.join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    c.env("PATH", path).env("HOME", dir.join("home"));
    for (var, value) in env {
        c.env(var, value);
    }
    Out::new(dir, &c.output().unwrap())
}

/// An executable script `dir/bin/name` running `body`.
fn program(dir: &Path, name: &str, body: &str) {
    let bin = dir.join("bin");
    fs::create_dir_all(&bin).unwrap();
    let path = bin.join(name);
    fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
}

/// The line of doctor's check `name`, and the indented lines under it.
fn check(out: &Out, name: &str) -> String {
    let mut lines = out.stdout.lines().skip_while(|l| {
        !l.split_once(' ')
            .is_some_and(|(_, rest)| rest.starts_with(&format!("{name}: ")))
    });
    let first = lines
        .next()
        .unwrap_or_else(|| panic!("no {name} check in:\n{}", out.stdout));
    let mut all = vec![first];
    all.extend(lines.take_while(|l| l.starts_with(' ')));
    all.join("\n")
}

/// An agent's name, `init`'s arguments for it, the program standing for it installed (its name
/// and script), and its judge's key variable.
type Case = (
    &'static str,
    &'static [&'static str],
    Option<(&'static str, &'static str)>,
    &'static str,
);

#[test]
fn each_agent_gets_a_short_file_that_validates_and_passes_doctor() {
    let rt = runtime();
    let anthropic = rt
        .block_on(
            FakeModelServer::builder(Script::turns([]))
                .require_key("sk-anthropic")
                .start(),
        )
        .unwrap();
    let openai = rt
        .block_on(
            FakeModelServer::builder(Script::turns([]))
                .require_key("sk-openai")
                .start(),
        )
        .unwrap();
    // The agent, as each is installed: a CLI of a version tether drives, or the scripted ACP
    // agent; and the variable of its judge's key, of another vendor.
    let agents: [Case; 5] = [
        (
            "claude",
            &["--agent", "claude"],
            Some(("claude", "echo '2.1.0 (Claude Code)'")),
            "OPENAI_API_KEY",
        ),
        (
            "codex",
            &["--agent", "codex"],
            Some(("codex", "echo 'codex-cli 0.171.0'")),
            "ANTHROPIC_API_KEY",
        ),
        (
            "pi",
            &["--agent", "pi"],
            Some(("pi", "echo 0.99.0")),
            "OPENAI_API_KEY",
        ),
        ("builtin", &["--agent", "builtin"], None, "OPENAI_API_KEY"),
        (
            "acp",
            &["--agent", "acp", "scripted-acp"],
            Some((
                "scripted-acp",
                "exec python3 -u \"$(dirname \"$0\")/../agent.py\"",
            )),
            "ANTHROPIC_API_KEY",
        ),
    ];
    for (name, args, installed, judge_var) in agents {
        let ws = tempfile::tempdir().unwrap();
        let dir = ws.path();
        fs::create_dir(dir.join("home")).unwrap();
        let mut all = vec!["init"];
        all.extend_from_slice(args);
        let init = tether(dir, &all, &[]);
        assert_eq!((init.code, init.stderr.as_str()), (0, ""), "{name}");
        insta::assert_snapshot!(format!("init_{name}_output"), init.stdout);
        let written = fs::read_to_string(dir.join("tether.toml")).unwrap();
        insta::assert_snapshot!(format!("init_{name}"), written);
        assert!(written.lines().count() < 50, "{name}: {written}");

        let validate = tether(dir, &["validate"], &[]);
        assert_eq!(
            validate.code, 0,
            "{name}: {}{}",
            validate.stdout, validate.stderr
        );

        if let Some((program_name, body)) = installed {
            program(dir, program_name, body);
        }
        fs::write(dir.join("agent.py"), tether_testkit::SCRIPTED_ACP_AGENT).unwrap();
        fs::write(dir.join("acp-mode"), "promise").unwrap();
        let pointed = written
            .replace(
                "base_url = \"https://api.openai.com/v1\"",
                &format!("base_url = \"{}\"", openai.base_url(Api::OpenAiChat)),
            )
            .replace(
                "base_url = \"https://api.anthropic.com\"",
                &format!("base_url = \"{}\"", anthropic.base_url(Api::Anthropic)),
            );
        assert_ne!(
            pointed, written,
            "{name}: no base_url to point at a fake server"
        );
        fs::write(dir.join("tether.toml"), pointed).unwrap();
        let keys = [
            ("OPENAI_API_KEY", "sk-openai"),
            ("ANTHROPIC_API_KEY", "sk-anthropic"),
        ];
        let doctor = tether(dir, &["doctor"], &keys);
        let mut checks = vec!["config", "executor", "judge"];
        if name == "builtin" {
            checks.push("model");
        }
        for check_name in checks {
            let line = check(&doctor, check_name);
            assert!(
                line.starts_with('✓') && !line.contains("warning"),
                "{name}: {line}\n{}{}",
                doctor.stdout,
                doctor.stderr
            );
        }
        // Without the judge's key, doctor names the variable to export.
        let unset = tether(dir, &["doctor"], &[]);
        assert!(
            check(&unset, "judge").contains(&format!("export {judge_var}=")),
            "{name}: {}",
            unset.stdout
        );
    }
}

#[test]
fn full_writes_the_whole_reference_as_plain_init_does() {
    let plain = tempfile::tempdir().unwrap();
    let full = tempfile::tempdir().unwrap();
    assert_eq!(tether(plain.path(), &["init"], &[]).code, 0);
    assert_eq!(tether(full.path(), &["init", "--full"], &[]).code, 0);
    let read = |dir: &Path| fs::read_to_string(dir.join("tether.toml")).unwrap();
    assert_eq!(read(full.path()), read(plain.path()));
    assert!(read(full.path()).lines().count() > 200);
    // An agent's short file points at it, and replaces the full one only with --force.
    let out = tether(full.path(), &["init", "--agent", "claude"], &[]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    let out = tether(full.path(), &["init", "--agent", "claude", "--force"], &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        read(full.path())
            .ends_with("# The full reference, every setting commented: tether init --full\n")
    );
}

#[test]
fn a_program_is_for_acp_alone_and_acp_needs_one() {
    let dir = tempfile::tempdir().unwrap();
    let out = tether(dir.path(), &["init", "--agent", "acp"], &[]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("<PROGRAM>"), "{}", out.stderr);
    let out = tether(dir.path(), &["init", "--agent", "claude", "my-claude"], &[]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert_eq!(
        out.stderr,
        "error: only --agent acp takes a PROGRAM; claude is found by its own name on PATH (to \
         run my-claude, set `program` under [executor] in the tether.toml it writes)\n"
    );
    let out = tether(dir.path(), &["init", "--agent", "claude", "--full"], &[]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    let out = tether(dir.path(), &["init", "scripted-acp"], &[]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    // Nothing was written by any of them.
    assert!(!dir.path().join("tether.toml").exists());
}
