//! The dashboard in a real browser: headless Chromium over WebDriver against `tether serve` and
//! the dashboard a `tether ralph` serves. A question asked by `tether ask` appears without a
//! reload and answering it in the page makes `tether ask` print the answer (with text, or a
//! choice's button); a verdict appears
//! in a live timeline; pause on the page stops a running loop at its next boundary; a run started
//! from the "New run" form goes on with the page closed, and "Resume" takes a paused one up
//! again; the phone layout has no horizontal scroll; a run page's charts and the runs list's
//! sparklines are drawn (each a box of some size), an iteration's bar arriving live; the runs
//! list is grouped, and a run that asks a question moves to *Needs input* live. Screenshots of
//! the main pages go to
//! `target/web-screenshots/`; the book and the README show copies of them, kept in
//! `docs/src/images/`.

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};
use tether_store::{Event, NewQuestion, NewVerdict, RunKind, Store, VerdictKind};
use tether_testkit::{Browser, wait_until};

use crate::common::{PATIENCE, cmd, spawn, wait_exit, wait_output};

fn shots() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/web-screenshots")
}

/// Lines of a child's pipe, read on a thread.
fn lines(pipe: impl std::io::Read + Send + 'static) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(pipe).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    rx
}

/// The first line of `rx` holding a dashboard URL.
fn dashboard_url(rx: &mpsc::Receiver<String>) -> String {
    wait_until("the dashboard URL", PATIENCE, || {
        let line = rx.recv_timeout(Duration::from_millis(100)).ok()?;
        line.find("http://").map(|i| line[i..].trim().to_owned())
    })
    .unwrap()
}

/// A child process killed (and reaped) when the test ends, passing or failing.
struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `tether serve` in `dir`, and its URL.
fn serve(dir: &Path) -> (Proc, String) {
    let mut child = cmd(dir, &["serve"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let out = lines(child.stdout.take().unwrap());
    let url = dashboard_url(&out);
    (Proc(child), url)
}

fn base(url: &str) -> &str {
    url.split("/?").next().unwrap()
}

/// Waits until `script` returns true in the page.
fn until(browser: &Browser, what: &str, script: &str) {
    wait_until(what, PATIENCE, || {
        (browser.execute(script, &[]).ok()? == Value::Bool(true)).then_some(())
    })
    .unwrap_or_else(|e| {
        let _ = browser.screenshot(&shots().join("failed.png"));
        panic!("{e}")
    });
}

/// Opens `url` and waits for the page: a navigation gets the shell, whose script fetches the
/// page with the token it keeps for this tab.
fn open(browser: &Browser, url: &str) {
    browser.goto(url).unwrap();
    until(
        browser,
        "the page fetched with the token",
        "return !!document.body && !document.body.hasAttribute('data-shell');",
    );
}

fn stop(server: Proc) {
    drop(server);
}

#[test]
fn a_question_from_tether_ask_is_answered_in_the_page() {
    let dir = tempfile::tempdir().unwrap();
    let (server, url) = serve(dir.path());
    let browser = Browser::start(1100, 900).unwrap();
    open(&browser, &url);
    browser
        .execute("window.notReloaded = true; return true;", &[])
        .unwrap();
    until(
        &browser,
        "the page to go live",
        "return document.body.dataset.connected === 'true';",
    );

    let ask = spawn(
        dir.path(),
        &[
            "ask",
            "Deploy to staging now?",
            "--context",
            "All 214 tests pass; the migration is reversible.",
            "--confidence",
            "35",
        ],
    );
    until(
        &browser,
        "the question card to appear without a reload",
        "return window.notReloaded === true && !!document.querySelector('#questions textarea');",
    );
    browser
        .screenshot(&shots().join("question-card.png"))
        .unwrap();
    assert!(
        browser
            .text("#questions h2")
            .unwrap()
            .contains("waiting for your answer")
    );
    assert!(
        browser
            .text("#questions")
            .unwrap()
            .contains("confidence 35")
    );

    browser
        .type_into("#questions textarea[name=text]", "Yes, go ahead")
        .unwrap();
    browser
        .type_into("#questions input.responder", "Ana")
        .unwrap();
    browser.click("#questions button[type=submit]").unwrap();
    let out = wait_output(ask);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "Yes, go ahead\n");
    until(
        &browser,
        "the notice that the answer was sent",
        "const n = document.querySelector('.notice'); \
         return !!n && n.textContent.includes('Your answer was sent');",
    );

    // The name is remembered in this browser; the history says who answered where.
    open(&browser, &format!("{}/history", base(&url)));
    let history = browser.text("#history").unwrap();
    assert!(history.contains("Answered on web by Ana"), "{history}");
    assert_eq!(
        browser
            .execute("return localStorage.getItem('tether.responder');", &[])
            .unwrap(),
        json!("Ana")
    );
    browser.screenshot(&shots().join("history.png")).unwrap();
    stop(server);
}

#[test]
fn a_choice_question_is_answered_with_a_button_in_the_page() {
    let dir = tempfile::tempdir().unwrap();
    let (server, url) = serve(dir.path());
    let browser = Browser::start(1100, 900).unwrap();
    open(&browser, &url);
    until(
        &browser,
        "the page to go live",
        "return document.body.dataset.connected === 'true';",
    );
    let ask = spawn(
        dir.path(),
        &[
            "ask",
            "Which database? I suggest Postgres.",
            "--option",
            "Postgres",
            "--option",
            "SQLite",
            "--json",
        ],
    );
    until(
        &browser,
        "the choice buttons to appear without a reload",
        "return document.querySelectorAll('#questions button.choice').length === 2;",
    );
    browser
        .screenshot(&shots().join("choice-card.png"))
        .unwrap();
    let card = browser.text("#questions").unwrap();
    assert!(card.contains("Pick one"), "{card}");
    assert!(card.contains("Or answer in your own words"), "{card}");
    browser
        .type_into("#questions input.responder", "Ana")
        .unwrap();
    // The text field is left empty: a choice needs no words.
    browser
        .click("#questions button.choice[value='1']")
        .unwrap();
    let out = wait_output(ask);
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (
            &answer["text"],
            &answer["choice"],
            &answer["responder"],
            &answer["channel"]
        ),
        (&json!("SQLite"), &json!(1), &json!("Ana"), &json!("web"))
    );
    until(
        &browser,
        "the notice that the answer was sent",
        "const n = document.querySelector('.notice'); \
         return !!n && n.textContent.includes('Your answer was sent');",
    );
    open(&browser, &format!("{}/history", base(&url)));
    let history = browser.text("#history").unwrap();
    assert!(history.contains("SQLite (option 2 of 2)"), "{history}");
    stop(server);
}

#[test]
fn pause_in_the_page_stops_a_running_loop_at_its_next_boundary() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("tether.toml"),
        "[executor]\nkind = \"command\"\ncommand = [\"sh\", \"-c\", \"sleep 0.3; echo one more step\"]\n",
    )
    .unwrap();
    let mut ralph = cmd(
        dir.path(),
        &["ralph", "Keep stepping", "--max-iterations", "500"],
    )
    .stdout(Stdio::null())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let err = lines(ralph.stderr.take().unwrap());
    let url = dashboard_url(&err);
    let browser = Browser::start(1100, 1000).unwrap();
    open(&browser, &url);
    until(
        &browser,
        "the run in the list",
        "return !!document.querySelector('#runs-list a');",
    );
    browser.screenshot(&shots().join("runs.png")).unwrap();
    let href = browser
        .execute(
            "return document.querySelector('#runs-list a').getAttribute('href');",
            &[],
        )
        .unwrap();
    open(
        &browser,
        &format!("{}{}", base(&url), href.as_str().unwrap()),
    );
    until(
        &browser,
        "the page to go live",
        "return document.body.dataset.connected === 'true';",
    );
    let before: i64 = browser
        .execute(
            "return document.querySelectorAll('#timeline li').length;",
            &[],
        )
        .unwrap()
        .as_i64()
        .unwrap();
    until(
        &browser,
        "new iterations in the timeline without a reload",
        &format!("return document.querySelectorAll('#timeline li').length > {before} + 2;"),
    );
    browser.click("form[action$='/pause'] button").unwrap();
    // The page the form answers with says so; once the loop has stopped, the live page moves on
    // to the run's new state (the notice may be gone by then), and the timeline keeps it.
    until(
        &browser,
        "the page to say the pause was requested",
        "const n = document.querySelector('.notice'); \
         const t = document.querySelector('#timeline'); \
         return (!!n && n.textContent.includes('Pause requested')) || \
                (!!t && t.textContent.includes('Pause requested by web'));",
    );
    let status = wait_exit(&mut ralph);
    assert_eq!(status.code(), Some(4), "a paused loop exits 4");
    until(
        &browser,
        "the timeline to show who asked for the pause",
        "const t = document.querySelector('#timeline'); \
         return !!t && t.textContent.includes('Pause requested by web');",
    );
}

#[test]
fn a_verdict_appears_live_and_the_phone_layout_does_not_scroll_sideways() {
    let dir = tempfile::tempdir().unwrap();
    let (server, url) = serve(dir.path());
    let store = Store::open(dir.path().join(".tether/tether.db")).unwrap();
    let run = store
        .create_run(
            RunKind::Goal,
            dir.path(),
            &json!({"plan": "plan.md", "max_iterations": 5}),
        )
        .unwrap();
    store
        .append(Some(&run), &Event::IterationStarted { n: 1 })
        .unwrap();
    let browser = Browser::start(1100, 1400).unwrap();
    open(&browser, &url);
    open(&browser, &format!("{}/runs/{run}", base(&url)));
    until(
        &browser,
        "the page to go live",
        "return document.body.dataset.connected === 'true';",
    );

    store
        .insert_verdict(&NewVerdict {
            run_id: Some(run.clone()),
            goal_id: "greet".into(),
            plan_path: "plan.md".into(),
            attempt: 1,
            verify_exit: Some(0),
            verdict: VerdictKind::Accepted.verdict(),
            kind: VerdictKind::Accepted,
            reason: "greet.sh prints the greeting from its argument".into(),
            checks: json!([{"path": "greet.sh", "quote": "echo \"Hello, $1!\"", "observation": "uses its argument", "line": 1}]),
            missing: vec![],
            judge_model: Some("judge-model".into()),
            transcript_path: None,
            contract_hash: None,
            judges: Vec::new(),
        })
        .unwrap();
    until(
        &browser,
        "the verdict in the live timeline",
        "var v = document.querySelector('#timeline li.verdict'); return !!v && v.textContent.includes('greet.sh:1') && v.textContent.includes('accept');",
    );
    browser
        .screenshot(&shots().join("run-verdict.png"))
        .unwrap();

    // A long, hostile question waits; the phone layout still fits the screen.
    store
        .insert_question(&NewQuestion {
            run_id: Some(run.clone()),
            thread_id: None,
            question: format!(
                "<script>alert(1)</script> \x1b[31m{}",
                "a-very-long-unbroken-word".repeat(400)
            ),
            context: "x".repeat(5000),
            confidence: Some(20),
            options: Vec::new(),
        })
        .unwrap();
    until(
        &browser,
        "the card",
        "return !!document.querySelector('#questions textarea');",
    );
    browser.resize(390, 844).unwrap();
    until(
        &browser,
        "the narrow window",
        "return window.innerWidth <= 400;",
    );
    until(
        &browser,
        "no horizontal scroll at phone width",
        "return document.documentElement.scrollWidth <= window.innerWidth;",
    );
    open(&browser, &format!("{}/runs/{run}", base(&url)));
    until(
        &browser,
        "no horizontal scroll after a reload at phone width",
        "return !!document.querySelector('#timeline li.verdict') && document.documentElement.scrollWidth <= window.innerWidth;",
    );
    assert_eq!(
        browser
            .execute("return document.querySelectorAll('script').length;", &[])
            .unwrap(),
        json!(1),
        "no script but the page's own"
    );
    browser.screenshot(&shots().join("phone.png")).unwrap();
    stop(server);
}

#[test]
fn the_demo_run_shows_both_verdicts_the_cited_quotes_and_the_qa() {
    let dir = tempfile::tempdir().unwrap();
    let demo = crate::common::run(dir.path(), &["demo", "--dir", "demo", "--yes"]);
    assert_eq!(demo.status.code(), Some(0));
    let ws = dir.path().join("demo");
    let (server, url) = serve(&ws);
    let browser = Browser::start(1100, 2600).unwrap();
    open(&browser, &url);
    let href = browser
        .execute(
            "return document.querySelector('#runs-list a').getAttribute('href');",
            &[],
        )
        .unwrap();
    open(
        &browser,
        &format!("{}{}", base(&url), href.as_str().unwrap()),
    );
    let timeline = browser.text("#timeline").unwrap();
    assert!(timeline.contains("Sign-off of greet: reject"), "{timeline}");
    assert!(timeline.contains("Sign-off of greet: accept"), "{timeline}");
    assert!(timeline.contains("greet.sh:1"), "{timeline}");
    assert!(timeline.contains("echo \"Hello, $1!\""), "{timeline}");
    assert!(timeline.contains("Missing:"), "{timeline}");
    let qa = browser.text("#run-qa").unwrap();
    assert!(qa.contains("Answered on demo by tether demo --yes"), "{qa}");
    browser.screenshot(&shots().join("demo-run.png")).unwrap();
    stop(server);
}

/// What a process printed so far, read on a thread.
fn collect(pipe: impl std::io::Read + Send + 'static) -> std::sync::Arc<std::sync::Mutex<String>> {
    let out = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let sink = out.clone();
    std::thread::spawn(move || {
        let mut pipe = pipe;
        let mut buf = [0u8; 4096];
        while let Ok(n) = pipe.read(&mut buf) {
            if n == 0 {
                return;
            }
            sink.lock()
                .unwrap()
                .push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    });
    out
}

#[test]
fn the_demo_on_a_terminal_is_answered_in_the_browser_and_keeps_serving_until_enter() {
    use std::io::Write as _;
    let dir = tempfile::tempdir().unwrap();
    let demo = format!("{} demo --dir demo", env!("CARGO_BIN_EXE_tether"));
    let mut script = std::process::Command::new("script");
    crate::common::isolate(&mut script)
        .args(["-qfec", &demo, "/dev/null"])
        .current_dir(dir.path())
        .env("TERM", "dumb")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    let mut child = Proc(script.spawn().unwrap());
    let mut stdin = child.0.stdin.take().unwrap();
    let out = collect(child.0.stdout.take().unwrap());
    let seen = |what: &str| out.lock().unwrap().contains(what);
    wait_until("the terminal card", PATIENCE, || {
        seen("Your answer:").then_some(())
    })
    .unwrap();
    let url = {
        let text = out.lock().unwrap().clone();
        let at = text.find("http://").unwrap();
        text[at..].split_whitespace().next().unwrap().to_owned()
    };

    let browser = Browser::start(1100, 900).unwrap();
    open(&browser, &url);
    until(
        &browser,
        "the card",
        "return !!document.querySelector('#questions textarea');",
    );
    browser
        .type_into("#questions textarea[name=text]", "Yes, with the comma")
        .unwrap();
    browser
        .type_into("#questions input.responder", "Ana")
        .unwrap();
    browser.click("#questions button[type=submit]").unwrap();
    wait_until("the end of the demo", PATIENCE, || {
        seen("Press Enter").then_some(())
    })
    .unwrap();
    let text = out.lock().unwrap().clone();
    assert!(
        text.contains("answered on web by Ana"),
        "the terminal card closes: {text}"
    );
    assert!(text.contains("signed off in iteration 2"), "{text}");

    // Still serving: the finished run, with both verdicts.
    let run_page = format!("{}/runs/", base(&url));
    let run_link = text[text.find(&run_page).unwrap()..]
        .split_whitespace()
        .next()
        .unwrap()
        .to_owned();
    open(&browser, &run_link);
    let timeline = browser.text("#timeline").unwrap();
    assert!(
        timeline.contains("Sign-off of greet: reject")
            && timeline.contains("Sign-off of greet: accept"),
        "{timeline}"
    );
    assert!(
        browser
            .text("#run-qa")
            .unwrap()
            .contains("Answered on web by Ana")
    );

    stdin.write_all(b"\n").unwrap();
    let status = wait_exit(&mut child.0);
    assert_eq!(status.code(), Some(0));
}

/// Another HTTP server on 127.0.0.1 (an agent's dev server, say): answers every request with a
/// small page and keeps the head of each request it received.
struct OtherServer {
    url: String,
    heads: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl OtherServer {
    fn start() -> OtherServer {
        use std::io::Write as _;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/", listener.local_addr().unwrap());
        let heads = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let kept = heads.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let mut reader = BufReader::new(stream);
                let mut head = String::new();
                let mut line = String::new();
                while reader.read_line(&mut line).unwrap_or(0) > 0 && line != "\r\n" {
                    head.push_str(&line);
                    line.clear();
                }
                kept.lock().unwrap().push(head);
                let page = "<!doctype html><title>dev server</title><p id=dev>dev server</p>";
                let _ = write!(
                    reader.get_mut(),
                    "HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: {}\r\n\
                     connection: close\r\n\r\n{page}",
                    page.len()
                );
            }
        });
        OtherServer { url, heads }
    }

    fn heads(&self) -> Vec<String> {
        self.heads.lock().unwrap().clone()
    }
}

#[test]
fn another_server_on_127_0_0_1_never_receives_the_token_while_the_dashboard_works() {
    let other = OtherServer::start();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("tether.toml"),
        "[executor]\nkind = \"command\"\ncommand = [\"sh\", \"-c\", \"sleep 0.3; echo one more step\"]\n",
    )
    .unwrap();
    let mut ralph = Proc(
        cmd(
            dir.path(),
            &["ralph", "Keep stepping", "--max-iterations", "500"],
        )
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap(),
    );
    let err = lines(ralph.0.stderr.take().unwrap());
    let url = dashboard_url(&err);
    let token = url.split("token=").nth(1).unwrap().to_owned();
    let browser = Browser::start(1100, 1000).unwrap();

    // The dashboard, opened with the printed URL: the token leaves the address bar.
    open(&browser, &url);
    let href = browser.execute("return location.href;", &[]).unwrap();
    assert!(!href.as_str().unwrap().contains(&token), "{href}");
    until(
        &browser,
        "the page to go live",
        "return document.body.dataset.connected === 'true';",
    );

    // The other server, in the same browser, between two uses of the dashboard.
    open_other(&browser, &other);

    // Answering a question still works, in the same tab, without the URL's token.
    open(&browser, &format!("{}/", base(&url)));
    until(
        &browser,
        "the page to go live again",
        "return document.body.dataset.connected === 'true';",
    );
    let ask = spawn(dir.path(), &["ask", "Deploy to staging now?"]);
    until(
        &browser,
        "the question card",
        "return !!document.querySelector('#questions textarea');",
    );
    browser
        .type_into("#questions textarea[name=text]", "Yes, go ahead")
        .unwrap();
    browser.click("#questions button[type=submit]").unwrap();
    let out = wait_output(ask);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "Yes, go ahead\n");
    until(
        &browser,
        "the page the answer leads to",
        "const n = document.querySelector('.notice'); \
         return !!n && n.textContent.includes('Your answer was sent');",
    );

    // The runs filter (a GET form, a navigation) shows the filtered list.
    browser
        .execute(
            "document.querySelector('form.filters select[name=state]').value = 'running'; \
             return true;",
            &[],
        )
        .unwrap();
    browser.click("form.filters button[type=submit]").unwrap();
    until(
        &browser,
        "the running runs, filtered",
        "return location.search.includes('state=running') && !!document.body \
         && !document.body.hasAttribute('data-shell') \
         && document.querySelectorAll('#runs-list a').length > 0;",
    );

    // So does pausing the running loop.
    let run = browser
        .execute(
            "return document.querySelector('#runs-list a').getAttribute('href');",
            &[],
        )
        .unwrap();
    open(
        &browser,
        &format!("{}{}", base(&url), run.as_str().unwrap()),
    );
    browser.click("form[action$='/pause'] button").unwrap();
    let status = wait_exit(&mut ralph.0);
    assert_eq!(status.code(), Some(4), "a paused loop exits 4");

    open_other(&browser, &other);
    let heads = other.heads();
    assert!(heads.len() >= 2, "{heads:?}");
    for head in &heads {
        assert!(
            !head.contains(&token),
            "another server on 127.0.0.1 received the dashboard's token:\n{head}"
        );
    }
}

/// Opens the other server in the browser and waits for its page.
fn open_other(browser: &Browser, other: &OtherServer) {
    let before = other.heads().len();
    browser.goto(&other.url).unwrap();
    until(
        browser,
        "the other server's page",
        "return !!document.getElementById('dev');",
    );
    assert!(other.heads().len() > before);
}

/// The run a page at `/runs/<id>` shows, once the browser is there.
fn run_of_page(browser: &Browser) -> String {
    until(
        browser,
        "a run's page",
        "return location.pathname.startsWith('/runs/r-');",
    );
    let path = browser.execute("return location.pathname;", &[]).unwrap();
    path.as_str()
        .unwrap()
        .trim_start_matches("/runs/")
        .to_owned()
}

#[test]
fn a_run_started_from_the_new_run_form_goes_on_with_the_page_closed_and_resumes_from_its_button() {
    let (dir, _model, _rt) = super::serve_runs::waiting_workspace("one done");
    let (server, url) = serve(dir.path());
    let browser = Browser::start(1100, 900).unwrap();
    open(&browser, &url);
    browser.click("details.new-run summary").unwrap();
    browser.type_into("#new-prompt", "Wait for go.").unwrap();
    browser.type_into("#new-promise", "DONE").unwrap();
    browser.type_into("#new-max", "3").unwrap();
    browser
        .click("details.new-run button[type=submit]")
        .unwrap();
    let id = run_of_page(&browser);
    until(
        &browser,
        "the notice that the run started",
        "const n = document.querySelector('.notice'); \
         return !!n && n.textContent.includes('The run started');",
    );
    // Paused by a person in a shell, the page closed: the serving process still drives it.
    let paused = crate::common::run(dir.path(), &["pause", &id]);
    assert!(paused.status.success());
    drop(browser);
    std::fs::write(dir.path().join("go"), "").unwrap();
    super::serve_runs::wait_status(dir.path(), &id, "paused");

    // A new page: the URL with the token first (this tab keeps it), then the run's page.
    let browser = Browser::start(1100, 900).unwrap();
    open(&browser, &url);
    open(&browser, &format!("{}/runs/{id}", base(&url)));
    browser.click("form[action$='/resume'] button").unwrap();
    until(
        &browser,
        "the notice that the run was resumed",
        "const n = document.querySelector('.notice'); \
         return !!n && n.textContent.includes('The run was resumed');",
    );
    super::serve_runs::wait_status(dir.path(), &id, "completed");
    stop(server);
}

#[test]
fn a_question_asked_about_a_run_in_the_page_is_answered_there_and_never_reaches_the_run() {
    let rt = crate::common::runtime();
    let side = rt
        .block_on(tether_testkit::model_server::FakeModelServer::start(
            tether_model::scripted::Script::turns([tether_model::scripted::Turn::text(
                "It stepped <twice> and kept its promise.",
            )]),
        ))
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("tether.toml"),
        format!(
            "[executor]\nkind = \"command\"\ncommand = [\"sh\", \"-c\", \"echo 'done <promise>OK</promise>'\"]\n\n{}",
            crate::common::model_table("side", tether_config::Api::OpenAiChat, &side, "side")
        ),
    )
    .unwrap();
    let out = crate::common::run(
        dir.path(),
        &["ralph", "Step.", "--completion-promise", "OK"],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        crate::common::text(&out.stderr)
    );
    let run = Store::open(dir.path().join(".tether/tether.db"))
        .unwrap()
        .latest_run()
        .unwrap()
        .unwrap();
    let (server, url) = serve(dir.path());
    let browser = Browser::start(1100, 1000).unwrap();
    open(&browser, &url);
    open(&browser, &format!("{}/runs/{}", base(&url), run.id));
    until(
        &browser,
        "the form to ask about the run",
        "return !!document.querySelector('form.side textarea');",
    );
    browser
        .type_into("form.side textarea[name=text]", "How did it go?")
        .unwrap();
    browser.click("form.side button").unwrap();
    until(
        &browser,
        "the answer in the page",
        "const a = document.querySelector('#side-answer'); \
         return !!a && a.textContent.includes('It stepped <twice> and kept its promise.');",
    );
    until(
        &browser,
        "the side question in the timeline",
        "const t = document.querySelector('#timeline'); \
         return !!t && t.textContent.includes('Side question from web') \
                && t.textContent.includes('How did it go?');",
    );
    browser.screenshot(&shots().join("side.png")).unwrap();
    let after = Store::open(dir.path().join(".tether/tether.db"))
        .unwrap()
        .run(&run.id)
        .unwrap();
    assert_eq!(after.status, run.status);
    assert_eq!(after.state.last_event_at_ms, run.state.last_event_at_ms);
    assert_eq!(side.requests().len(), 1);
    stop(server);
}

/// The time the charted run's store records (ms since the epoch): set as the seeding goes, so
/// its iterations and verdicts are spread over the last half hour as a real run's would be.
static SEEDED_AT: std::sync::atomic::AtomicI64 = std::sync::atomic::AtomicI64::new(0);

fn seeded_clock() -> i64 {
    SEEDED_AT.load(std::sync::atomic::Ordering::SeqCst)
}

/// Sets the seeded clock to `minutes` after the start of the last half hour.
fn seed_at(minutes: i64) {
    let start = tether_store::now_ms() - 32 * 60_000;
    SEEDED_AT.store(
        start + minutes * 60_000,
        std::sync::atomic::Ordering::SeqCst,
    );
}

/// A goal run of six iterations five minutes apart, each with what it used, and three
/// sign-offs of `greet` (rejected by verify, by the judge, then accepted) and one of `docs`
/// ruled out, recorded by a store whose clock says when.
fn seed_charted_run(dir: &Path) -> (Store, tether_store::RunId) {
    seed_at(0);
    let store = Store::open_with(
        dir.join(".tether/tether.db"),
        &tether_store::StoreOptions {
            clock: seeded_clock,
            ..tether_store::StoreOptions::default()
        },
    )
    .unwrap();
    let run = store
        .create_run(
            RunKind::Goal,
            dir,
            &json!({"plan": "plan.md", "max_iterations": 20}),
        )
        .unwrap();
    let verdict = |goal: &str, attempt: u32, kind: VerdictKind| NewVerdict {
        run_id: Some(run.clone()),
        goal_id: goal.into(),
        plan_path: "plan.md".into(),
        attempt,
        verify_exit: Some(i32::from(kind == VerdictKind::VerifyFailed)),
        verdict: kind.verdict(),
        kind,
        reason: "seeded".into(),
        checks: json!([]),
        missing: vec![],
        judge_model: Some("judge-model".into()),
        transcript_path: None,
        contract_hash: None,
        judges: Vec::new(),
    };
    for n in 1..=6u32 {
        seed_at(i64::from(n) * 5 - 4);
        store
            .append(Some(&run), &Event::IterationStarted { n })
            .unwrap();
        store
            .append(
                Some(&run),
                &iteration_usage(n, 9_000 * u64::from(n % 4 + 1)),
            )
            .unwrap();
        let decided = match n {
            2 => Some(verdict("greet", 1, VerdictKind::VerifyFailed)),
            4 => Some(verdict("greet", 2, VerdictKind::JudgeRejected)),
            5 => Some(verdict("docs", 1, VerdictKind::JudgeBlocked)),
            6 => Some(verdict("greet", 3, VerdictKind::Accepted)),
            _ => None,
        };
        seed_at(i64::from(n) * 5);
        if let Some(v) = decided {
            store
                .append(
                    Some(&run),
                    &Event::JudgeUsage {
                        judge: tether_store::JudgeRole::SignOff,
                        goal_id: Some(v.goal_id.clone()),
                        calls: 3,
                        input_tokens: 6_000,
                        cached_input_tokens: 0,
                        cache_write_input_tokens: 0,
                        output_tokens: 800,
                        cost_usd: Some(0.02),
                    },
                )
                .unwrap();
            store.insert_verdict(&v).unwrap();
        }
        store
            .append(
                Some(&run),
                &Event::IterationCompleted {
                    n,
                    summary: format!("step {n}"),
                },
            )
            .unwrap();
    }
    seed_at(31);
    (store, run)
}

fn iteration_usage(n: u32, input: u64) -> Event {
    Event::IterationUsage {
        n,
        input_tokens: input,
        cached_input_tokens: 0,
        cache_write_input_tokens: 0,
        output_tokens: input / 10,
        cost_usd: Some(f64::from(u32::try_from(input / 100).unwrap()) / 1000.0),
        goals: vec!["greet".into()],
        duration_ms: 30_000,
    }
}

/// Whether the element `selector` is drawn: in the page with a box of some size.
fn drawn(selector: &str) -> String {
    format!(
        "const e = document.querySelector({selector:?}); if (!e) return false; \
         const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0;"
    )
}

#[test]
fn the_run_page_draws_its_charts_and_the_runs_list_its_sparklines() {
    let dir = tempfile::tempdir().unwrap();
    let (server, url) = serve(dir.path());
    let (store, run) = seed_charted_run(dir.path());
    let browser = Browser::start(1100, 1000).unwrap();

    open(&browser, &url);
    until(
        &browser,
        "the run's sparkline drawn in the runs list",
        &drawn(&format!("#run-{run} svg.spark")),
    );
    assert_eq!(
        browser
            .execute(
                &format!("return document.querySelectorAll('#run-{run} svg.spark rect').length;"),
                &[]
            )
            .unwrap(),
        json!(6),
        "a bar per iteration"
    );
    browser
        .screenshot(&shots().join("runs-sparkline.png"))
        .unwrap();

    open(&browser, &format!("{}/runs/{run}", base(&url)));
    for chart in ["#chart-tokens", "#chart-cost", "#chart-verdicts"] {
        until(&browser, &format!("{chart} drawn"), &drawn(chart));
    }
    until(
        &browser,
        "a bar of some height per iteration, the verdicts marked",
        "return [...document.querySelectorAll('#chart-tokens rect.agent')]\
             .filter(r => r.getBoundingClientRect().height > 0).length === 6 \
         && document.querySelectorAll('#chart-verdicts .mark').length === 4 \
         && document.querySelectorAll('#chart-verdicts .mark.accept').length === 1;",
    );
    let words = browser
        .execute(
            "return document.querySelector('#chart-tokens title').textContent;",
            &[],
        )
        .unwrap();
    assert_eq!(
        words,
        json!("Tokens per iteration: 6 iterations, most 39.6k at iteration 3"),
    );
    browser
        .execute(
            "document.querySelector('#run-charts').scrollIntoView(); return true;",
            &[],
        )
        .unwrap();
    browser.screenshot(&shots().join("run-charts.png")).unwrap();

    // The next iteration's bar comes without a reload.
    until(
        &browser,
        "the page to go live",
        "return document.body.dataset.connected === 'true';",
    );
    store
        .append(Some(&run), &Event::IterationStarted { n: 7 })
        .unwrap();
    store
        .append(Some(&run), &iteration_usage(7, 20_000))
        .unwrap();
    until(
        &browser,
        "the seventh bar drawn live",
        "return document.querySelectorAll('#chart-tokens rect.agent').length === 7;",
    );

    // At phone width the charts shrink to the screen: still drawn, nothing scrolls sideways.
    browser.resize(390, 844).unwrap();
    until(
        &browser,
        "the narrow window",
        "return window.innerWidth <= 400;",
    );
    until(
        &browser,
        "the charts within a phone's width",
        "const c = document.querySelector('#chart-tokens').getBoundingClientRect(); \
         return c.width > 0 && c.right <= window.innerWidth \
             && document.documentElement.scrollWidth <= window.innerWidth;",
    );
    stop(server);
}

/// Whether the group `group`'s section of the runs list is shown.
fn group_shown(group: &str) -> String {
    format!(
        "const l = document.querySelector('#runs-{group}'); \
         return !!l && getComputedStyle(l.closest('section')).display !== 'none';"
    )
}

#[test]
fn the_runs_list_is_grouped_and_a_run_asking_a_question_moves_to_needs_input_live() {
    let dir = tempfile::tempdir().unwrap();
    let (server, url) = serve(dir.path());
    let store = Store::open(dir.path().join(".tether/tether.db")).unwrap();
    let run = |prompt: &str, event: Event| {
        let id = store
            .create_run(RunKind::Ralph, dir.path(), &json!({"prompt": prompt}))
            .unwrap();
        store.append(Some(&id), &event).unwrap();
        id
    };
    let paused = run(
        "Fix the parser",
        Event::Paused {
            reason: "a person asked".into(),
        },
    );
    run(
        "Tidy the docs",
        Event::RunFinished {
            outcome: tether_store::Outcome::Completed,
        },
    );
    let browser = Browser::start(1100, 900).unwrap();
    open(&browser, &url);
    until(&browser, "the paused group shown", &group_shown("paused"));
    until(&browser, "the done group shown", &group_shown("done"));
    assert_eq!(
        browser.execute(&group_shown("needs_input"), &[]).unwrap(),
        json!(false),
        "an empty group is not shown"
    );
    until(
        &browser,
        "the page to go live",
        "return document.body.dataset.connected === 'true';",
    );
    store
        .insert_question(&NewQuestion {
            run_id: Some(paused.clone()),
            question: "May I change the grammar?".into(),
            ..NewQuestion::default()
        })
        .unwrap();
    until(
        &browser,
        "the run moved into Needs input, first, and its old group gone",
        &format!(
            "const row = document.querySelector('#run-{paused}'); \
             return !!row && row.parentElement.id === 'runs-needs_input' \
               && document.querySelectorAll('#run-{paused}').length === 1 \
               && row.textContent.includes('waiting for input') \
               && getComputedStyle(document.querySelector('#runs-paused').closest('section')).display === 'none';"
        ),
    );
    let first = browser
        .execute(
            "return [...document.querySelectorAll('#runs-list section')] \
               .find(s => getComputedStyle(s).display !== 'none').querySelector('h2').textContent;",
            &[],
        )
        .unwrap();
    assert_eq!(
        first,
        json!("Needs input"),
        "the waiting run's group comes first"
    );
    browser
        .screenshot(&shots().join("runs-groups.png"))
        .unwrap();
    stop(server);
}
