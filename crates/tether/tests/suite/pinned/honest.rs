//! The honest cases: a person's own change of tether.toml, accepted on resume (with
//! `--accept-config` or a yes on a terminal), is the run's from then on; a run recorded by an
//! older tether, which kept only some settings, is resumed once a person accepts the file's.

use std::fs;

use tether_model::scripted::{Script, Turn};
use tether_store::Event;

use super::support::{Env, WRITE_GIT, as_each_user, bash, connect, output, sandbox_off};
use crate::common;
use crate::suite::goal_run::support::PLAN;

/// The honest case: a person opens the network in tether.toml between two resumes. A plain
/// resume shows the change and is refused (the run's closed network is never left open to
/// it); with `--accept-config` the run has it.
#[test]
fn a_person_who_changes_tether_toml_and_accepts_it_gets_the_new_settings() {
    as_each_user(|as_user| {
        let e = Env::new(PLAN, as_user, |t| {
            let connect = connect(t.port);
            Script::from_fn(
                move |req: &tether_model::Request| match req.last_tool_result() {
                    Some(_) => Turn::text("Tried the network."),
                    None => bash(&connect),
                },
            )
        });
        let who = if as_user {
            "as an ordinary user"
        } else {
            "as this user"
        };
        let approved = e.run(&["plan", "approve", "add"]);
        assert_eq!(approved.status.code(), Some(0), "{}", output(&approved));
        let first = e.run(&["run", "--max-iterations", "1"]);
        assert_eq!(
            e.read("reached.txt"),
            "blocked\n",
            "{who}: {}",
            output(&first)
        );

        let toml = e.path().join("tether.toml");
        let mut text = fs::read_to_string(&toml).unwrap();
        text.push_str("\n[sandbox]\nnetwork = true\n");
        fs::write(&toml, text).unwrap();
        let kept = e.run(&["resume"]);
        assert_eq!(kept.status.code(), Some(2), "{who}: {}", output(&kept));
        assert!(
            output(&kept).contains("[sandbox] network: (absent) → true"),
            "{who}: {}",
            output(&kept)
        );
        assert_eq!(e.read("reached.txt"), "blocked\n", "{who}");

        let accepted = e.run(&["resume", "--accept-config"]);
        assert_eq!(
            e.read("reached.txt"),
            "blocked\nreached\n",
            "{who}: {}",
            output(&accepted)
        );
    });
}

/// On a terminal, a plain `tether resume` shows the change and asks; a yes applies it.
#[test]
fn on_a_terminal_resume_asks_before_it_applies_a_changed_tether_toml() {
    let attack = format!("{}\n{WRITE_GIT}", sandbox_off());
    let agent = Script::from_fn(
        move |req: &tether_model::Request| match req.last_tool_result() {
            Some((Some("bash"), said)) => Turn::text(format!("Tried: {said}")),
            _ => bash(&attack),
        },
    );
    let e = Env::new(PLAN, false, |_| agent);
    let approved = e.run(&["plan", "approve", "add"]);
    assert_eq!(approved.status.code(), Some(0), "{}", output(&approved));
    let first = e.run(&["run", "--max-iterations", "2"]);
    assert_eq!(first.status.code(), Some(4), "{}", output(&first));
    assert!(!e.path().join(".git/pwned").exists());
    e.assert_edits_refused();

    let mut t = common::pty::Pty::start_with(e.path(), "resume", |c| {
        c.env("HOME", e.home.path());
    });
    t.wait_for("[sandbox] mode: (absent) → \"off\"");
    t.wait_for("Apply tether.toml's configuration to the run? [y/N] ");
    t.type_line("y");
    let (code, screen) = t.wait();
    assert!(
        screen.contains("applied: the run keeps to tether.toml's configuration"),
        "{code}: {screen}"
    );
    assert!(
        e.path().join(".git/pwned").exists(),
        "the accepted settings apply: {screen}"
    );
}

/// A run recorded by an older tether (its spec holds a list of some settings, not the whole
/// configuration): a plain resume is refused, showing all of tether.toml as new; accepted, the
/// file's configuration is recorded, and from then on the run keeps to it like any run.
#[test]
fn a_run_recorded_by_an_older_tether_is_resumed_once_a_person_accepts_the_files() {
    let e = Env::new(PLAN, false, |t| {
        let connect = connect(t.port);
        Script::from_fn(
            move |req: &tether_model::Request| match req.last_tool_result() {
                Some(_) => Turn::text("Tried the network."),
                None => bash(&connect),
            },
        )
    });
    let approved = e.run(&["plan", "approve", "add"]);
    assert_eq!(approved.status.code(), Some(0), "{}", output(&approved));
    e.run(&["run", "--max-iterations", "1"]);
    // The same run as an older tether recorded it: its spec with the list, not the whole.
    let legacy = {
        let store = e.store();
        let mut spec = store.latest_run().unwrap().unwrap().spec;
        let fields = spec.as_object_mut().unwrap();
        assert!(fields.remove("config").is_some());
        fields.insert(
            "bounds".into(),
            serde_json::json!({"sandbox": {"mode": "enforce", "network": false}}),
        );
        let run = store
            .create_run(tether_store::RunKind::Goal, e.path(), &spec)
            .unwrap();
        store
            .append(
                Some(&run),
                &Event::Paused {
                    reason: "stopped".into(),
                },
            )
            .unwrap();
        run.to_string()
    };

    let toml = e.path().join("tether.toml");
    let opened = fs::read_to_string(&toml).unwrap() + "\n[sandbox]\nnetwork = true\n";
    fs::write(&toml, &opened).unwrap();
    let refused = e.run(&["resume", &legacy]);
    assert_eq!(refused.status.code(), Some(2), "{}", output(&refused));
    assert!(
        output(&refused).contains("[sandbox] network: (not recorded) → true"),
        "{}",
        output(&refused)
    );
    assert_eq!(e.read("reached.txt"), "blocked\n", "{}", output(&refused));
    let resumed = e.run(&["resume", &legacy, "--accept-config"]);
    assert_eq!(
        e.read("reached.txt"),
        "blocked\nreached\n",
        "{}",
        output(&resumed)
    );

    // Recorded now: a later change is shown and refused.
    fs::write(&toml, opened.replace("network = true", "network = false")).unwrap();
    let again = e.run(&["resume", &legacy]);
    assert_eq!(again.status.code(), Some(2), "{}", output(&again));
    assert!(
        output(&again).contains("[sandbox] network: true → false"),
        "{}",
        output(&again)
    );
    assert_eq!(e.read("reached.txt"), "blocked\nreached\n");
}
