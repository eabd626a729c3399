//! Notices through the desk: each channel gets the kinds its filter names (its own `notify`
//! list, else `[notify] on`), the desktop follows `[notify] on`, the notices a run's events make
//! are delivered in order and drained when the run ends, and the desktop notifier runs a
//! `notify-send` it finds (a script recording its arguments) without the keys tether reads —
//! and does nothing, without failing, when there is none; a hanging one is stopped at its
//! timeout with everything it started, and its body shows markup as written.

use std::fs;
use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::sync::{Arc, Mutex};

use tether_config::{Config, NoticeKind, Workspace};
use tether_human::desktop::Desktop;
use tether_human::terminal::notice_line;
use tether_human::{
    AskPolicy, Broker, Channel, ChannelAnswer, Desk, DynChannel, Notice, NoticeRoutes, NoticeSink,
};
use tether_store::{
    Event, EventSink as _, Journal, Outcome, Question, RunId, Seq, Store, StoredEvent,
};
use tokio_util::sync::CancellationToken;

/// A channel that only records the notices it is given.
struct Recording {
    name: &'static str,
    got: Mutex<Vec<Notice>>,
}

impl Recording {
    fn new(name: &'static str) -> Arc<Self> {
        Arc::new(Recording {
            name,
            got: Mutex::new(Vec::new()),
        })
    }

    fn kinds(&self) -> Vec<NoticeKind> {
        self.got.lock().unwrap().iter().map(|n| n.kind).collect()
    }
}

impl Channel for Recording {
    fn name(&self) -> &'static str {
        self.name
    }

    async fn offer(&self, _question: &Question, stop: CancellationToken) -> Option<ChannelAnswer> {
        stop.cancelled().await;
        None
    }

    async fn notice(&self, notice: &Notice) {
        self.got.lock().unwrap().push(notice.clone())
    }
}

fn run() -> RunId {
    "r-7k2m9x3tq0w2".parse().unwrap()
}

fn notice(kind: NoticeKind) -> Notice {
    Notice {
        kind,
        run_id: Some(run()),
        text: format!("Run {} {}.", run(), kind.as_str()),
        resume: None,
    }
}

/// A `notify-send` in `dir` appending its arguments, and whether it saw `HOME`, to `log`.
fn fake_notify_send(dir: &Path, log: &Path) -> std::path::PathBuf {
    let script = dir.join("notify-send");
    fs::write(
        &script,
        format!(
            "#!/bin/sh\n{{ printf '%s\\n' \"$@\"; echo \"key=${{HOME:-none}}\"; \
             echo ---; }} >> '{}'\n",
            log.display()
        ),
    )
    .unwrap();
    fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
    script
}

struct Setup {
    _dir: tempfile::TempDir,
    desk: Desk,
    zulip: Arc<Recording>,
    terminal: Arc<Recording>,
    log: std::path::PathBuf,
}

/// A desk with a `zulip` channel wanting failures only, a `terminal` following `[notify] on`
/// (done, paused), and a desktop notifier (a recording script).
fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::at(dir.path());
    let journal = Journal::new(Store::open(ws.db_path()).unwrap(), Vec::new()).unwrap();
    let zulip = Recording::new("zulip");
    let terminal = Recording::new("terminal");
    let broker = Broker::new(
        journal,
        ws.state_dir(),
        vec![zulip.clone() as Arc<dyn DynChannel>, terminal.clone()],
    );
    let config = tether_config::parse(
        &tether_human::registry::schema(),
        "[zulip]\nnotify = [\"failed\"]\n",
        std::path::Path::new("tether.toml"),
        &tether_config::MapEnv::new(),
    )
    .unwrap();
    let log = dir.path().join("notify.log");
    let script = fake_notify_send(dir.path(), &log);
    let routes = NoticeRoutes::from_config(&config)
        .with_desktop(Some(Desktop::new(script, vec!["HOME".to_owned()])));
    let desk = Desk::new(broker, AskPolicy::default()).with_notices(routes);
    Setup {
        _dir: dir,
        desk,
        zulip,
        terminal,
        log,
    }
}

#[tokio::test]
async fn each_channel_gets_the_kinds_its_filter_names() {
    // The variables named as keys are removed from the child's environment (HOME stands in
    // for a key: it is set wherever the tests run).
    assert!(std::env::var_os("HOME").is_some());
    let s = setup();
    for kind in [
        NoticeKind::Done,
        NoticeKind::Failed,
        NoticeKind::Paused,
        NoticeKind::SignedOff,
        NoticeKind::Rejected,
    ] {
        s.desk.notify(&notice(kind)).await;
    }
    assert_eq!(s.zulip.kinds(), vec![NoticeKind::Failed]);
    assert_eq!(
        s.terminal.kinds(),
        vec![NoticeKind::Done, NoticeKind::Paused]
    );
    let recorded = fs::read_to_string(&s.log).unwrap();
    let r = run();
    assert_eq!(
        recorded,
        format!(
            "--app-name=tether\n--urgency=low\ntether: run {r} is done\nRun {r} done.\nkey=none\n---\n\
             --app-name=tether\n--urgency=normal\ntether: run {r} paused\nRun {r} paused.\nkey=none\n---\n"
        )
    );
}

fn stored(seq: i64, event: Event) -> StoredEvent {
    StoredEvent {
        seq: Seq(seq),
        run_id: Some(run()),
        at_ms: 0,
        kind: event.kind().to_owned(),
        payload: serde_json::to_value(&event).unwrap(),
        event: Some(event),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_runs_notices_are_delivered_in_order_and_drained_at_its_end() {
    let s = setup();
    let (sink, queue) = NoticeSink::new(&Config::default().notify);
    let stop = CancellationToken::new();
    let desk = s.desk.clone();
    let delivery = tokio::spawn({
        let stop = stop.clone();
        async move { desk.deliver_notices(queue, stop).await }
    });
    sink.event(&stored(
        1,
        Event::Paused {
            reason: "paused by cli".to_owned(),
        },
    ));
    tether_testkit::wait_until(
        "the paused notice",
        std::time::Duration::from_secs(10),
        || (!s.terminal.kinds().is_empty()).then_some(()),
    )
    .unwrap();
    // Queued as the loop ends: still delivered before the delivery returns.
    sink.event(&stored(
        2,
        Event::RunFinished {
            outcome: Outcome::Completed,
        },
    ));
    stop.cancel();
    delivery.await.unwrap();
    assert_eq!(
        s.terminal.kinds(),
        vec![NoticeKind::Paused, NoticeKind::Done]
    );
    let paused = &s.terminal.got.lock().unwrap()[0];
    assert_eq!(paused.resume, Some(format!("tether resume {}", run())));
}

#[tokio::test]
async fn a_missing_notify_send_breaks_nothing() {
    let desktop = Desktop::new("/nonexistent/notify-send".into(), Vec::new());
    desktop.show(&notice(NoticeKind::Done)).await;
}

#[test]
fn notify_send_is_used_only_when_on_path_with_a_session_bus() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    fake_notify_send(dir.path(), &log);
    let path = || Some(dir.path().as_os_str().to_owned());
    let bus = || Some("unix:path=/run/user/1000/bus".into());
    assert!(Desktop::find(path(), bus(), Vec::new()).is_some());
    assert!(Desktop::find(path(), None, Vec::new()).is_none());
    assert!(Desktop::find(path(), Some("".into()), Vec::new()).is_none());
    assert!(Desktop::find(Some("/nonexistent".into()), bus(), Vec::new()).is_none());
    // Not executable: not a program.
    fs::set_permissions(
        dir.path().join("notify-send"),
        fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    assert!(Desktop::find(path(), bus(), Vec::new()).is_none());
}

#[test]
fn the_terminal_shows_a_notice_on_one_escaped_line() {
    let n = Notice {
        kind: NoticeKind::Paused,
        run_id: Some(run()),
        text: format!("Run {} paused: \x1b[2Jpaused by cli", run()),
        resume: Some(format!("tether resume {}", run())),
    };
    insta::assert_snapshot!(notice_line(&n));
}

#[test]
fn a_desktop_notification_shows_markup_as_written() {
    let desktop = Desktop::new("notify-send".into(), Vec::new());
    let n = Notice {
        kind: NoticeKind::Failed,
        run_id: Some(run()),
        text: format!(
            "Run {} failed: expected <b>bold</b> & <a href=\"x\">a link</a>",
            run()
        ),
        resume: None,
    };
    let argv = desktop.argv(&n);
    assert_eq!(
        argv.last().unwrap(),
        &format!(
            "Run {} failed: expected &lt;b&gt;bold&lt;/b&gt; &amp; \
             &lt;a href=\"x\"&gt;a link&lt;/a&gt;",
            run()
        )
    );
    // The title is plain text: the run and what happened.
    assert_eq!(argv[3], format!("tether: run {} failed", run()));
}

#[tokio::test]
async fn a_hanging_notify_send_is_stopped_with_its_process_group() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("notify-send");
    let pid_file = dir.path().join("pid");
    // Leaves a child of its own behind, then hangs waiting for it.
    fs::write(
        &script,
        format!(
            "#!/bin/sh\nsleep 600 &\necho $! > '{}'\nwait\n",
            pid_file.display()
        ),
    )
    .unwrap();
    fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
    let desktop = Desktop::new(script, Vec::new());

    tokio::time::timeout(
        std::time::Duration::from_secs(60),
        desktop.show(&notice(NoticeKind::Done)),
    )
    .await
    .expect("show returns once notify-send's timeout stops it");

    let pid = fs::read_to_string(&pid_file).unwrap().trim().to_owned();
    let proc_dir = Path::new("/proc").join(&pid);
    tether_testkit::wait_until(
        "the notifier's own child to be gone",
        std::time::Duration::from_secs(30),
        || {
            let state = fs::read_to_string(proc_dir.join("stat")).unwrap_or_default();
            // Gone, or a zombie waiting for its new parent to reap it.
            (state.is_empty() || state.contains(") Z")).then_some(())
        },
    )
    .unwrap();
}
