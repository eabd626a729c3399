//! The run's whole configuration is the person's: with the sandbox off (recorded at the start,
//! so the agent can write tether.toml) a scripted hostile agent adds what no list of settings
//! covered — a `[notify_command]`, an `[executor]` of its choosing, an ntfy reply token read
//! from the model key's variable, a `[webhook] url` — or the person's tether.toml changes under
//! a running, sandboxed run (`[sandbox] network = true`). The run pauses for a person and uses
//! nothing of it; the person's `tether resume` and the dashboard's Resume are refused, showing
//! the difference, until a person accepts it. Each case runs as this user and, when the tests
//! run as root, as an ordinary one too.

use std::path::PathBuf;

use serde_json::json;
use tether_model::scripted::{Script, Turn};
use tether_store::Rule;
use tether_testkit::ntfy_server::FakeNtfyServer;

use super::support::{Env, MODEL_KEY, MODEL_KEY_VAR, TETHER, as_each_user, bash, connect, output};
use crate::common::PATIENCE;
use crate::common::webhook::Webhook;
use crate::suite::goal_run::support::PLAN;
use crate::suite::secrets::support::Running;
use crate::suite::serve_runs;

/// Every notice kind, so a sink the agent adds would hear of anything the run does.
const EVERY_NOTICE: &str =
    "[notify]\non = [\"done\", \"paused\", \"failed\", \"signed_off\", \"rejected\"]\n";

/// An agent that appends `toml` to tether.toml in its first turn, then only talks.
fn appending(toml: &str) -> Script {
    let edit = format!("cat >> tether.toml <<'EOF'\n\n{toml}EOF\necho edited");
    Script::turns([bash(&edit), Turn::text("Edited.")]).then_repeat(Turn::text("Nothing more."))
}

fn who(as_user: bool) -> &'static str {
    if as_user {
        "as an ordinary user"
    } else {
        "as this user"
    }
}

/// A workspace with the sandbox off (recorded when the run starts), whose agent appends `toml`
/// to tether.toml during the run.
fn hostile(as_user: bool, toml: &str) -> Env {
    let e = Env::new(PLAN, as_user, |_| appending(toml));
    e.sandbox_off();
    let approved = e.run(&["plan", "approve", "add"]);
    assert_eq!(approved.status.code(), Some(0), "{}", output(&approved));
    e
}

/// Runs the workspace until it stops: paused for a person at the boundary after the edit.
fn paused_by_the_edit(e: &Env, who: &str) {
    let out = e.run(&["run", "--max-iterations", "3"]);
    assert_eq!(out.status.code(), Some(4), "{who}: {}", output(&out));
    assert_eq!(
        e.rules(),
        [Rule::SettingsChanged],
        "{who}: {}",
        output(&out)
    );
}

/// The person's plain `tether resume`: refused (exit 2), naming `setting` and how to accept.
fn resume_refused(e: &Env, who: &str, setting: &str) {
    let resumed = e.run(&["resume"]);
    let said = output(&resumed);
    assert_eq!(resumed.status.code(), Some(2), "{who}: {said}");
    assert!(
        said.contains(setting) && said.contains("--accept-config"),
        "{who}: the refusal names {setting}: {said}"
    );
}

/// The dashboard's Resume of the latest run, from `tether serve` run by the test's user:
/// refused (409) with the differences, one naming `setting`.
fn dashboard_refused(e: &Env, who: &str, setting: &str) {
    let run = e.run_id();
    let served = serve_runs::spawn(e.tether(&["serve"]));
    let (status, body) = served.post(&format!("/api/runs/{run}/resume"), &json!({}));
    assert_eq!(status, 409, "{who}: {body}");
    let changes = body["changes"].as_array().cloned().unwrap_or_default();
    assert!(
        changes
            .iter()
            .any(|c| c.as_str().unwrap_or_default().starts_with(setting)),
        "{who}: {body}"
    );
}

/// A directory any user may write a marker into (the ordinary user's commands too).
fn markers() -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    dir
}

/// A `[notify_command]` (and the notices to send it) added by the agent: the run pauses, and
/// neither the person's `tether resume` nor the dashboard's Resume runs it — both refuse,
/// naming it.
#[test]
fn a_notify_command_the_agent_adds_never_runs_without_a_person() {
    as_each_user(|as_user| {
        let who = who(as_user);
        let dir = markers();
        let ran: PathBuf = dir.path().join("notified");
        let toml = format!(
            "[human]\nchannels = [\"terminal\", \"cli\", \"notify_command\"]\n\
             [notify_command]\nprogram = \"sh\"\nargs = [\"-c\", \"echo ran >> {}\"]\n\
             {EVERY_NOTICE}",
            ran.display()
        );
        let e = hostile(as_user, &toml);
        paused_by_the_edit(&e, who);
        assert!(
            !ran.exists(),
            "{who}: the run itself ran the agent's command"
        );
        resume_refused(&e, who, "[notify_command] program");
        assert!(
            !ran.exists(),
            "{who}: a plain resume ran the agent's command"
        );
        dashboard_refused(&e, who, "[notify_command] program");
        assert!(!ran.exists(), "{who}: the dashboard's resume ran it");
    });
}

/// The executor switched by the agent, to a command of its own, then (by someone) to `pi`: a
/// resume is refused naming `[executor] kind`, and the command never runs.
#[test]
fn an_executor_the_agent_switches_to_is_never_started() {
    as_each_user(|as_user| {
        let who = who(as_user);
        let dir = markers();
        let ran = dir.path().join("switched");
        let toml = format!(
            "[executor]\nkind = \"command\"\ncommand = [\"sh\", \"-c\", \"echo ran >> {}\"]\n",
            ran.display()
        );
        let e = hostile(as_user, &toml);
        paused_by_the_edit(&e, who);
        resume_refused(&e, who, "[executor] kind: (absent) → \"command\"");
        assert!(!ran.exists(), "{who}: the agent's executor ran");
        let pi = e
            .read("tether.toml")
            .replace(&toml, "[executor]\nkind = \"pi\"\n");
        std::fs::write(e.path().join("tether.toml"), pi).unwrap();
        resume_refused(&e, who, "[executor] kind: (absent) → \"pi\"");
        dashboard_refused(&e, who, "[executor] kind");
        assert!(!ran.exists(), "{who}");
    });
}

/// `[ntfy] reply_token_env` pointed by the agent at the variable holding the model's key (the
/// reply token travels in every question's buttons): tether.toml is refused by validation,
/// naming the key and its line, nothing of it is used by the run or a resume, and ntfy is sent
/// nothing.
#[test]
fn a_reply_token_pointed_at_the_model_key_is_refused_and_never_published() {
    as_each_user(|as_user| {
        let who = who(as_user);
        let rt = crate::common::runtime();
        let ntfy = rt.block_on(FakeNtfyServer::start()).unwrap();
        let toml = format!(
            "[human]\nchannels = [\"terminal\", \"cli\", \"ntfy\"]\n\
             [ntfy]\nserver = \"{}\"\ntopic = \"tether-pinned\"\nreply_token_env = \"{MODEL_KEY_VAR}\"\n\
             {EVERY_NOTICE}",
            ntfy.url()
        );
        let e = hostile(as_user, &toml);
        e.model_key();
        // The file is invalid from the edit on: nothing of it is used, the run goes on.
        let out = e.run(&["run", "--max-iterations", "2"]);
        assert!(e.read("tether.toml").contains(MODEL_KEY_VAR), "{who}");
        assert_eq!(out.status.code(), Some(3), "{who}: {}", output(&out));
        let validated = e.run(&["validate"]);
        let said = output(&validated);
        assert_ne!(validated.status.code(), Some(0), "{who}: {said}");
        assert!(
            said.contains("ntfy.reply_token_env: names PINNED_MODEL_KEY")
                && said.contains("tether.toml:"),
            "{who}: {said}"
        );
        let resumed = e.run(&["resume", "--add-iterations", "1"]);
        assert_eq!(
            resumed.status.code(),
            Some(2),
            "{who}: {}",
            output(&resumed)
        );
        assert!(
            output(&resumed).contains("ntfy.reply_token_env"),
            "{who}: {}",
            output(&resumed)
        );
        let published = ntfy.messages("tether-pinned");
        assert!(published.is_empty(), "{who}: {published:?}");
        assert!(
            !format!("{:?}", ntfy.authorizations()).contains(MODEL_KEY),
            "{who}"
        );
    });
}

/// A `[webhook] url` (and every notice) added by the agent: a webhook on 127.0.0.1 counts what
/// it is sent — nothing, from the run's pause, the person's resume, or the dashboard's.
#[test]
fn a_webhook_the_agent_adds_is_sent_nothing() {
    as_each_user(|as_user| {
        let who = who(as_user);
        let hook = Webhook::start();
        let toml = format!(
            "[human]\nchannels = [\"terminal\", \"cli\", \"webhook\"]\n\
             [webhook]\nurl = \"{}\"\n{EVERY_NOTICE}",
            hook.url
        );
        let e = hostile(as_user, &toml);
        paused_by_the_edit(&e, who);
        resume_refused(&e, who, "[webhook] url: (absent) → (hidden)");
        dashboard_refused(&e, who, "[webhook] url");
        assert!(
            hook.bodies().is_empty(),
            "{who}: the webhook was sent {:?}",
            hook.kinds()
        );
    });
}

/// tether.toml changed by someone while a sandboxed run works: `[sandbox] network = true`. The
/// agent's command in that iteration still cannot reach a local port, the run pauses at the
/// boundary, a plain resume is refused, and the network opens only once a person accepts it.
#[test]
fn the_network_opened_during_a_run_stays_shut_until_a_person_accepts_it() {
    as_each_user(|as_user| {
        let who = who(as_user);
        let e = Env::new(PLAN, as_user, |t| {
            // Waits (at most a minute) for the change, then tries the port.
            let attempt = format!(
                "touch waiting; for i in $(seq 1 600); do \
                 grep -q '^network = true' tether.toml && break; sleep 0.1; done; {}",
                connect(t.port)
            );
            Script::from_fn(
                move |req: &tether_model::Request| match req.last_tool_result() {
                    Some(_) => Turn::text("Tried the network."),
                    None => bash(&attempt),
                },
            )
        });
        let approved = e.run(&["plan", "approve", "add"]);
        assert_eq!(approved.status.code(), Some(0), "{}", output(&approved));
        let run = Running::start(e.tether(&["run", "--max-iterations", "2"]));
        tether_testkit::wait_until("the agent's command to start", PATIENCE, || {
            e.path().join("waiting").exists().then_some(())
        })
        .unwrap();
        e.append("\n[sandbox]\nnetwork = true\n");
        let out = run.wait();
        assert_eq!(out.status.code(), Some(4), "{who}: {}", output(&out));
        assert_eq!(
            e.read("reached.txt"),
            "blocked\n",
            "{who}: {}",
            output(&out)
        );
        assert_eq!(e.rules(), [Rule::SettingsChanged], "{who}");

        resume_refused(&e, who, "[sandbox] network: (absent) → true");
        assert_eq!(e.read("reached.txt"), "blocked\n", "{who}");
        let accepted = e.run(&["resume", "--accept-config"]);
        assert_eq!(
            e.read("reached.txt"),
            "blocked\nreached\n",
            "{who}: the accepted network: {}",
            output(&accepted)
        );
    });
}

/// `[store] url` pointed elsewhere in tether.toml while a sandboxed run works: the tether
/// command the agent then runs through the bridge (`tether status`) keeps to the run's own
/// store — it answers from it, and nothing connects to the other.
#[test]
fn a_store_named_during_a_run_is_not_the_bridged_commands() {
    as_each_user(|as_user| {
        let who = who(as_user);
        let elsewhere = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = elsewhere.local_addr().unwrap().port();
        elsewhere.set_nonblocking(true).unwrap();
        let e = Env::new(PLAN, as_user, |_| {
            let status = format!(
                "touch waiting; for i in $(seq 1 600); do \
                 grep -q '^url = ' tether.toml && break; sleep 0.1; done; \
                 '{TETHER}' status --json > status.out 2>&1; echo $? > status.code"
            );
            Script::turns([bash(&status), Turn::text("Asked.")])
                .then_repeat(Turn::text("Nothing more."))
        });
        let approved = e.run(&["plan", "approve", "add"]);
        assert_eq!(approved.status.code(), Some(0), "{}", output(&approved));
        let run = Running::start(e.tether(&["run", "--max-iterations", "2"]));
        tether_testkit::wait_until("the agent's command to start", PATIENCE, || {
            e.path().join("waiting").exists().then_some(())
        })
        .unwrap();
        e.append(&format!(
            "\n[store]\nurl = \"postgres://tether@127.0.0.1:{port}/elsewhere\"\n"
        ));
        let out = run.wait();
        assert_eq!(
            e.read("status.code").trim(),
            "0",
            "{who}: {}\n{}",
            e.read("status.out"),
            output(&out)
        );
        assert!(
            e.read("status.out").contains("\"running\""),
            "{who}: the run's own store answered: {}",
            e.read("status.out")
        );
        assert!(
            elsewhere.accept().is_err(),
            "{who}: something connected to the store named during the run"
        );
        assert_eq!(out.status.code(), Some(4), "{who}: {}", output(&out));
        assert_eq!(e.rules(), [Rule::SettingsChanged], "{who}");
    });
}

/// The honest case: a comment and blank lines added to tether.toml during a run change no
/// setting, so the run goes on to its budget without pausing.
#[test]
fn a_comment_added_during_a_run_pauses_nothing() {
    let e = hostile(false, "# a note, and nothing else\n\n\n");
    let out = e.run(&["run", "--max-iterations", "2"]);
    assert!(e.read("tether.toml").contains("# a note"));
    assert!(
        !e.rules().contains(&Rule::SettingsChanged),
        "{:?}: {}",
        e.rules(),
        output(&out)
    );
    assert!(
        !output(&out).contains("tether.toml changed"),
        "{}",
        output(&out)
    );
}
