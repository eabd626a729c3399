//! tether-core against real directories: init, plan-file reads and patches, validate.

use std::fs;
use std::os::unix::fs::PermissionsExt as _;

use tether_config::MapEnv;
use tether_config::Workspace;
use tether_core::init::{self, InitAction, InitError, InitOptions};
use tether_core::validate;
use tether_human::registry::schema;
use tether_plan::file::{self as plan_file, PlanFileError};
use tether_plan::{PatchError, Severity, Status};

fn ws() -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::at(dir.path());
    (dir, ws)
}

#[test]
fn init_writes_everything_and_the_result_validates_clean() {
    let (_d, ws) = ws();
    let actions = init::init(&ws, &schema(), InitOptions::default()).unwrap();
    assert_eq!(actions.len(), 4, "{actions:?}");
    assert!(matches!(actions[2], InitAction::CreatedStore(_)));
    assert_eq!(
        fs::read_to_string(ws.root().join("tether.toml")).unwrap(),
        schema().template()
    );
    assert_eq!(
        fs::read_to_string(ws.root().join("plan.md")).unwrap(),
        init::PLAN_TEMPLATE
    );
    assert_eq!(
        fs::read_to_string(ws.gitignore_path()).unwrap(),
        ".tether/\n"
    );
    assert!(ws.db_path().is_file());
    let report = validate::validate(&ws, &schema(), &MapEnv::new());
    assert!(report.is_clean(), "{:?}", report.findings);
    assert_eq!(report.goals, 1);
}

#[test]
fn init_refuses_to_overwrite_and_writes_nothing() {
    let (_d, ws) = ws();
    fs::write(ws.root().join("plan.md"), "mine\n").unwrap();
    fs::write(ws.root().join("tether.toml"), "# mine\n").unwrap();
    let err = init::init(&ws, &schema(), InitOptions::default()).unwrap_err();
    assert!(matches!(err, InitError::Exists { ref paths } if paths.len() == 1));
    assert_eq!(
        err.to_string(),
        "tether.toml already exists; nothing was written (use --force to overwrite)"
    );
    assert_eq!(
        fs::read_to_string(ws.root().join("tether.toml")).unwrap(),
        "# mine\n"
    );
    assert!(!ws.state_dir().exists() && !ws.gitignore_path().exists());

    // --force replaces the configuration; the plan, with its goals and log, is the person's.
    let actions = init::init(
        &ws,
        &schema(),
        InitOptions {
            force: true,
            ..InitOptions::default()
        },
    )
    .unwrap();
    assert!(matches!(actions[0], InitAction::Overwrote(_)));
    assert_eq!(actions[1], InitAction::Kept(ws.root().join("plan.md")));
    assert_eq!(
        fs::read_to_string(ws.root().join("plan.md")).unwrap(),
        "mine\n"
    );
}

#[test]
fn an_existing_plan_is_kept_and_the_configuration_written_beside_it() {
    let (_d, ws) = ws();
    fs::write(ws.root().join("plan.md"), "# My plan\n").unwrap();
    let actions = init::init(&ws, &schema(), InitOptions::default()).unwrap();
    assert!(matches!(actions[0], InitAction::Created(_)));
    assert_eq!(actions[1], InitAction::Kept(ws.root().join("plan.md")));
    assert_eq!(
        fs::read_to_string(ws.root().join("plan.md")).unwrap(),
        "# My plan\n"
    );
    assert!(ws.default_config_path().is_file());
}

#[test]
fn init_keeps_a_gitignore_that_already_ignores_the_state_dir() {
    for (before, after) in [
        ("target\n/.tether/\n", "target\n/.tether/\n"),
        ("target\n.tether\n", "target\n.tether\n"),
        ("target", "target\n.tether/\n"),
        ("target\r\n", "target\r\n.tether/\r\n"),
    ] {
        let (_d, ws) = ws();
        fs::write(ws.gitignore_path(), before).unwrap();
        init::init(&ws, &schema(), InitOptions::default()).unwrap();
        assert_eq!(fs::read_to_string(ws.gitignore_path()).unwrap(), after);
    }
}

#[test]
fn init_twice_with_force_keeps_the_store() {
    let (_d, ws) = ws();
    init::init(&ws, &schema(), InitOptions::default()).unwrap();
    let actions = init::init(
        &ws,
        &schema(),
        InitOptions {
            force: true,
            ..InitOptions::default()
        },
    )
    .unwrap();
    assert!(actions.contains(&InitAction::KeptStore(ws.db_path())));
    assert!(actions.contains(&InitAction::AlreadyIgnored(ws.gitignore_path())));
}

#[test]
fn discover_walks_up_to_the_workspace() {
    let (_d, ws) = ws();
    init::init(&ws, &schema(), InitOptions::default()).unwrap();
    let deep = ws.root().join("a/b/c");
    fs::create_dir_all(&deep).unwrap();
    assert_eq!(Workspace::discover(&deep).root(), ws.root());
    let elsewhere = tempfile::tempdir().unwrap();
    assert_eq!(
        Workspace::discover(elsewhere.path()).root(),
        elsewhere.path()
    );
}

#[test]
fn reading_a_missing_or_non_utf8_plan_names_the_problem() {
    let (_d, ws) = ws();
    let path = ws.root().join("plan.md");
    assert!(matches!(
        plan_file::read(&path),
        Err(PlanFileError::Missing { .. })
    ));
    fs::write(&path, b"# ok\nline two \xff here\n").unwrap();
    let err = plan_file::read(&path).unwrap_err();
    assert!(
        matches!(
            err,
            PlanFileError::NotUtf8 {
                line: 2,
                column: 10,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(
        err.to_string()
            .ends_with("plan.md:2: not UTF-8 text (invalid byte at column 10)")
    );
}

const PLAN: &str = "## Goal: G\n<!-- id: g -->\nstatus: active\ndone_when: x\n";

#[test]
fn patch_writes_atomically_and_keeps_permissions() {
    let (_d, ws) = ws();
    let path = ws.root().join("plan.md");
    fs::write(&path, PLAN).unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).unwrap();
    let doc = plan_file::patch(&path, |d| d.set_status("g", Status::Done)).unwrap();
    assert_eq!(doc.plan().goals[0].status(), Status::Done);
    assert_eq!(
        fs::read_to_string(&path).unwrap(),
        PLAN.replace("active", "done")
    );
    assert_eq!(
        fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o640
    );
    let leftovers: Vec<_> = fs::read_dir(ws.root())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n != "plan.md")
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn an_edit_made_while_patching_is_kept_and_the_patch_recomputed() {
    let (_d, ws) = ws();
    let path = ws.root().join("plan.md");
    fs::write(&path, PLAN).unwrap();
    let mut calls = 0;
    let doc = plan_file::patch(&path, |d| {
        calls += 1;
        if calls == 1 {
            // The agent appends a subtask between tether's read and its write.
            fs::write(&path, format!("{PLAN}- [ ] added by the agent\n")).unwrap();
        }
        d.set_status("g", Status::Done)
    })
    .unwrap();
    assert_eq!(calls, 2);
    let text = fs::read_to_string(&path).unwrap();
    assert_eq!(
        text,
        format!(
            "{}- [ ] added by the agent\n",
            PLAN.replace("active", "done")
        )
    );
    assert_eq!(doc.text(), text);
}

#[test]
fn a_file_that_never_stops_changing_is_not_written() {
    let (_d, ws) = ws();
    let path = ws.root().join("plan.md");
    fs::write(&path, PLAN).unwrap();
    let mut n = 0;
    let err = plan_file::patch(&path, |d| {
        n += 1;
        fs::write(&path, format!("{PLAN}- [ ] edit {n}\n")).unwrap();
        d.set_status("g", Status::Done)
    })
    .unwrap_err();
    assert!(matches!(err, PlanFileError::Changed { .. }), "{err:?}");
    assert!(
        fs::read_to_string(&path)
            .unwrap()
            .contains("status: active")
    );
}

#[test]
fn a_plan_with_errors_is_not_patched_on_disk() {
    let (_d, ws) = ws();
    let path = ws.root().join("plan.md");
    let bad = PLAN.replace("active", "finished");
    fs::write(&path, &bad).unwrap();
    let err = plan_file::patch(&path, |d| d.append_log("x")).unwrap_err();
    assert!(matches!(err, PlanFileError::Patch(PatchError::Invalid(_))));
    assert_eq!(fs::read_to_string(&path).unwrap(), bad);
}

#[test]
fn validate_lists_config_and_plan_problems_together() {
    let (_d, ws) = ws();
    fs::write(
        ws.root().join("tether.toml"),
        "plan = \"goals.md\"\n[loop]\nspin_guard = 0\n",
    )
    .unwrap();
    fs::write(
        ws.root().join("plan.md"),
        "ignored, the config names goals.md\n",
    )
    .unwrap();
    let report = validate::validate(&ws, &schema(), &MapEnv::new());
    // The config is invalid, so the default plan path is checked.
    let files: Vec<_> = report
        .findings
        .iter()
        .map(|f| f.file.display().to_string())
        .collect();
    assert_eq!(files, ["tether.toml"]);
    assert_eq!(report.findings[0].key.as_deref(), Some("loop.spin_guard"));

    fs::write(ws.root().join("tether.toml"), "plan = \"goals.md\"\n").unwrap();
    let report = validate::validate(&ws, &schema(), &MapEnv::new());
    assert_eq!(report.findings.len(), 1);
    assert_eq!(report.findings[0].code, "unreadable");
    assert!(
        report.findings[0]
            .message
            .contains("goals.md does not exist")
    );

    fs::write(ws.root().join("goals.md"), "## Goal: G\nstatus: nope\n").unwrap();
    let report = validate::validate(&ws, &schema(), &MapEnv::new());
    let codes: Vec<_> = report
        .findings
        .iter()
        .map(|f| (f.code.as_str(), f.severity))
        .collect();
    assert_eq!(
        codes,
        [
            ("missing_id", Severity::Warning),
            ("missing_done_when", Severity::Warning),
            ("invalid_status", Severity::Error)
        ]
    );
}

#[test]
fn validate_follows_tether_config_from_the_environment() {
    let (_d, ws) = ws();
    fs::write(ws.root().join("plan.md"), init::PLAN_TEMPLATE).unwrap();
    fs::write(ws.root().join("alt.toml"), "[human]\nthreshold = 9\n").unwrap();
    let env = MapEnv::new().with("TETHER_CONFIG", "alt.toml");
    let report = validate::validate(&ws, &schema(), &env);
    assert_eq!(report.findings.len(), 1);
    assert_eq!(report.findings[0].file.display().to_string(), "alt.toml");
    assert_eq!(report.findings[0].key.as_deref(), Some("human.threshold"));
}

#[test]
fn validate_warns_about_a_zulip_channel_without_its_settings() {
    let (_d, ws) = ws();
    fs::write(ws.root().join("plan.md"), init::PLAN_TEMPLATE).unwrap();
    fs::write(
        ws.root().join("tether.toml"),
        "[human]\nchannels = [\"cli\", \"zulip\"]\n",
    )
    .unwrap();
    let env = MapEnv::new()
        .with("ZULIP_SERVER_URL", "https://chat.example.com")
        .with("ZULIP_BOT_EMAIL", "bot@example.com")
        .with("ZULIP_STREAM", "repo");
    let report = validate::validate(&ws, &schema(), &env);
    assert_eq!(report.findings.len(), 1, "{:#?}", report.findings);
    let f = &report.findings[0];
    assert_eq!(
        (f.severity, f.key.as_deref(), f.line),
        (Severity::Warning, Some("human.channels"), Some(2))
    );
    assert!(f.message.contains("ZULIP_BOT_API_KEY"), "{}", f.message);
}
