//! Reading and answering from any machine; driving only from the run's own.

use serde_json::Value;
use tether_store::{Origin, RunKind};
use tether_store_pg::TeamStore;

use super::{Machine, database};
use crate::common::{pending_question_by, text, wait_output};

#[test]
fn a_question_asked_on_one_machine_is_answered_from_another() {
    let db = database();
    let alpha = Machine::new("alpha", &db.url());
    let beta = Machine::new("beta", &db.url());
    let asking = alpha.spawn(&["ask", "Postgres or SQLite?", "--json"]);
    let q = pending_question_by(|args| beta.run(args));
    let id = q["id"].as_str().unwrap();

    let out = beta.run(&["answer", id, "Postgres", "--as", "bob"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let asked = wait_output(asking);
    assert_eq!(asked.status.code(), Some(0), "{}", text(&asked.stderr));
    let a: Value = serde_json::from_slice(&asked.stdout).unwrap();
    assert_eq!(
        (a["text"].as_str(), a["responder"].as_str()),
        (Some("Postgres"), Some("bob"))
    );

    // Nothing went to either workspace's own file.
    assert!(!alpha.path().join(".tether/tether.db").exists());
    assert!(!beta.path().join(".tether/tether.db").exists());
    let history = text(&alpha.run(&["history"]).stdout);
    assert!(history.contains("→ Postgres — bob via cli"), "{history}");
}

/// A run created on `machine` in `workspace`, straight through the team store.
fn run_of(url: &str, machine: &str, workspace: &std::path::Path) -> tether_store::RunId {
    let team = TeamStore::connect(url.parse().unwrap()).unwrap();
    let origin = Origin {
        machine: machine.to_owned(),
        workspace_root: workspace.to_path_buf(),
        repo_remote: Some("https://example.com/team/app.git".into()),
    };
    let spec = serde_json::json!({"prompt": "make the tests pass", "max_iterations": 5});
    team.block(
        team.pg()
            .create_run_from(RunKind::Ralph, workspace, &spec, &origin),
    )
    .unwrap()
}

#[test]
fn another_machine_reads_and_asks_a_run_but_cannot_drive_it() {
    let db = database();
    let alpha = Machine::new("alpha", &db.url());
    let beta = Machine::new("beta", &db.url());
    let run = run_of(&db.url(), "alpha", alpha.path());
    let id = run.as_str();

    let status = beta.run(&["status", id]);
    let shown = text(&status.stdout);
    assert_eq!(status.status.code(), Some(0), "{}", text(&status.stderr));
    assert!(shown.contains("on machine alpha in "), "{shown}");
    assert!(!shown.contains("no process is driving it"), "{shown}");
    let json: Value = serde_json::from_slice(&beta.run(&["status", id, "--json"]).stdout).unwrap();
    assert_eq!(
        (json["machine"].as_str(), json["elsewhere"].as_bool()),
        (Some("alpha"), Some(true))
    );

    let resume = beta.run(&["resume", id]);
    assert_eq!(resume.status.code(), Some(2));
    let said = text(&resume.stderr);
    assert!(
        said.contains("belongs to machine alpha") && said.contains("resume it there"),
        "{said}"
    );

    // Pausing from beta only asks: alpha's loop (or its resume) acts on it.
    let pause = beta.run(&["pause", id]);
    assert_eq!(pause.status.code(), Some(0), "{}", text(&pause.stderr));
    let json: Value = serde_json::from_slice(&alpha.run(&["status", id, "--json"]).stdout).unwrap();
    assert_eq!(json["status"], "running");
    assert_eq!(json["elsewhere"], false);
    assert_eq!(
        json["orphaned"], true,
        "alpha sees that nothing drives it: {json}"
    );

    // Another workspace of the same machine is told where to resume it from.
    let other = Machine::new("alpha", &db.url());
    let resume = other.run(&["resume", id]);
    assert_eq!(resume.status.code(), Some(2));
    assert!(
        text(&resume.stderr).contains("resume it from there"),
        "{}",
        text(&resume.stderr)
    );
}

/// `tether serve --store` on machine `gamma`: its URL (with the token) once it listens.
fn team_dashboard(gamma: &Machine, url: &str) -> (std::process::Child, String, String) {
    use std::io::BufRead as _;
    let mut serve = gamma
        .cmd(&["serve", "--store", url])
        .env_remove("TETHER_STORE_URL")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(serve.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let (base, token) = line.trim().split_once("/?token=").unwrap();
    (
        serve,
        base.trim_start_matches("http://").to_owned(),
        token.to_owned(),
    )
}

/// One HTTP/1.1 request with the token; the status and body.
fn http(addr: &str, token: &str, method: &str, path: &str, body: &str) -> (u16, String) {
    use std::io::{Read as _, Write as _};
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut response = String::new();
    s.read_to_string(&mut response).unwrap();
    let status = response[9..12].parse().unwrap();
    let body = response
        .split_once("\r\n\r\n")
        .map_or("", |(_, b)| b)
        .to_owned();
    (status, body)
}

#[test]
fn the_team_dashboard_shows_every_machine_and_its_answer_reaches_another() {
    let db = database();
    let alpha = Machine::new("alpha", &db.url());
    let gamma = Machine::new("gamma", &db.url());
    let run = run_of(&db.url(), "alpha", alpha.path());
    let (mut serve, addr, token) = team_dashboard(&gamma, &db.url());

    let (status, runs) = http(&addr, &token, "GET", "/api/runs?machine=alpha", "");
    assert_eq!(status, 200, "{runs}");
    assert!(
        runs.contains(run.as_str()) && runs.contains("\"machine\":\"alpha\""),
        "{runs}"
    );
    let (_, none) = http(&addr, &token, "GET", "/api/runs?machine=beta", "");
    assert!(!none.contains(run.as_str()), "{none}");

    let asking = alpha.spawn(&["ask", "Merge the branch?", "--json"]);
    let q = pending_question_by(|args| gamma.run(args));
    let id = q["id"].as_str().unwrap();
    let (status, body) = http(
        &addr,
        &token,
        "POST",
        &format!("/api/questions/{id}/answer"),
        r#"{"text":"Merge it","responder":"dana"}"#,
    );
    assert_eq!(status, 200, "{body}");
    let asked = wait_output(asking);
    let a: Value = serde_json::from_slice(&asked.stdout).unwrap();
    assert_eq!(
        (a["text"].as_str(), a["channel"].as_str()),
        (Some("Merge it"), Some("web"))
    );
    let _ = serve.kill();
    let _ = serve.wait();
}

#[test]
fn doctor_checks_the_team_store_and_never_shows_its_password() {
    let db = database();
    let alpha = Machine::new("alpha", &db.url());
    run_of(&db.url(), "alpha", alpha.path());
    let store_check = |out: std::process::Output| -> Value {
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        report["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == "store")
            .cloned()
            .unwrap()
    };
    let healthy = store_check(alpha.run(&["doctor", "--json"]));
    assert_eq!(healthy["status"], "pass", "{healthy}");
    let detail = healthy["detail"].as_str().unwrap();
    assert!(
        detail.contains(&format!(
            "schema {}, 1 runs, journal in step",
            tether_store_pg::SCHEMA_VERSION
        )),
        "{detail}"
    );

    // Nothing listens on port 9; the password given in the URL is never repeated.
    let down = alpha
        .cmd(&["doctor", "--json"])
        .env(
            "TETHER_STORE_URL",
            "postgres://tether:s3cret-pw@127.0.0.1:9/team?connect_timeout=2",
        )
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&down.stdout).into_owned();
    assert!(!shown.contains("s3cret-pw"), "{shown}");
    let failed = store_check(down);
    assert_eq!(failed["status"], "fail", "{failed}");
    assert!(
        failed["fix"].as_str().unwrap().contains("~/.pgpass"),
        "{failed}"
    );
}

#[test]
fn a_run_of_another_machine_is_asked_about_on_the_side_from_this_one() {
    let rt = crate::common::runtime();
    let side = rt
        .block_on(tether_testkit::model_server::FakeModelServer::start(
            tether_model::scripted::Script::turns([tether_model::scripted::Turn::text(
                "It has not started an iteration yet.",
            )]),
        ))
        .unwrap();
    let db = database();
    let alpha = Machine::new("alpha", &db.url());
    let beta = Machine::new("beta", &db.url());
    std::fs::write(
        beta.path().join("tether.toml"),
        crate::common::model_table("side", tether_config::Api::OpenAiChat, &side, "side"),
    )
    .unwrap();
    let run = run_of(&db.url(), "alpha", alpha.path());
    let id = run.as_str();
    let before: Value =
        serde_json::from_slice(&beta.run(&["status", id, "--json"]).stdout).unwrap();

    let out = beta.run(&["side", "Where is it?", "--run", id]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "It has not started an iteration yet.\n");
    let told = &side.requests()[0].raw_body;
    assert!(told.contains("make the tests pass"), "{told}");
    // Recorded in the team store, where alpha sees it; the run is as it was.
    let team = TeamStore::connect(db.url().parse().unwrap()).unwrap();
    let store =
        tether_store::Connector::connect(&team.scoped(&Origin::local(alpha.path()))).unwrap();
    let kinds: Vec<String> = store
        .events(&run, tether_store::Seq(0), 100)
        .unwrap()
        .into_iter()
        .map(|e| e.kind)
        .collect();
    assert_eq!(kinds.last().map(String::as_str), Some("side_question"));
    let after: Value = serde_json::from_slice(&beta.run(&["status", id, "--json"]).stdout).unwrap();
    assert_eq!(after["status"], before["status"]);
    assert_eq!(after["last_event"], before["last_event"]);
    assert!(!beta.path().join(".tether/tether.db").exists());
}
