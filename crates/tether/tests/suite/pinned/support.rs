//! The workspace the tests of the settings that bound the agent share: a git repository with
//! the `add` project, the agent and a rejecting judge on fake model servers, a home directory
//! holding a secret, a local TCP port listening; tether run as this user or as an ordinary one.
//!
//! tether.toml is read-only in the sandbox, so the agent's own edit of it is refused
//! ([`edit_toml`] records that); the same edit is then made from outside the sandbox, by the
//! test's [`Editor`] — as a person's editor, or a way around the read-only mount, would — while
//! the agent's command waits, so the run still meets a tether.toml changed under it.

use std::fs;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::json;
use tether_config::Api;
use tether_model::scripted::{Script, Turn};
use tether_store::{Event, Rule, Seq, Store};
use tether_testkit::model_server::FakeModelServer;

use crate::common::{self, model_table, runtime, text, unprivileged};
use crate::suite::goal_run::support::write_add_project;
use crate::suite::secrets::support::Running;

/// What the hostile verify tries to take from outside the sandbox.
pub const SECRET: &str = "PRIVATE KEY 0815";

/// The variable the agent's model's key is in (when [`Env::model_key`] names it), set for every
/// tether the tests start.
pub const MODEL_KEY_VAR: &str = "PINNED_MODEL_KEY";

/// Its value.
pub const MODEL_KEY: &str = "sk-pinned-model-key-0815";

/// The tether binary, as the agent's shell names it.
pub const TETHER: &str = env!("CARGO_BIN_EXE_tether");

/// A git workspace with the `add` project, an agent and a judge on fake servers, a home
/// directory holding a secret, and a TCP port listening.
pub struct Env {
    pub dir: tempfile::TempDir,
    pub home: tempfile::TempDir,
    pub agent: FakeModelServer,
    _judge: FakeModelServer,
    /// Held open so a connection with the network on succeeds.
    _listener: TcpListener,
    /// tether runs as an ordinary user (when the tests run as root).
    as_user: bool,
    _editor: Editor,
    _rt: tokio::runtime::Runtime,
}

/// Makes the edits of tether.toml the agent asks for ([`edit_toml`]) from outside the sandbox,
/// until dropped.
pub struct Editor {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// Where the agent leaves the edit it wants made, and where the editor says it is made.
const EDIT_REQUEST: &str = ".edit-request";
const EDIT_DONE: &str = ".edit-done";

impl Editor {
    fn start(root: &Path) -> Editor {
        let stop = Arc::new(AtomicBool::new(false));
        let (root, stopped) = (root.to_path_buf(), stop.clone());
        let thread = std::thread::spawn(move || {
            while !stopped.load(Ordering::Relaxed) {
                let request = root.join(EDIT_REQUEST);
                if let Ok(edit) = fs::read_to_string(&request) {
                    let _ = fs::remove_file(&request);
                    let made = Command::new("sh")
                        .args(["-c", &edit])
                        .current_dir(&root)
                        .output()
                        .map(|m| m.status.to_string());
                    let _ = fs::write(root.join(EDIT_DONE), format!("{made:?}"));
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        });
        Editor {
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Editor {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The agent's shell lines for `edit` (a shell command changing tether.toml): tried in the
/// sandbox, where tether.toml is read-only (`edits.txt` says `refused` or `applied`), then
/// asked of the test's [`Editor`], waiting (30 s at most) until it is made.
pub fn edit_toml(edit: &str) -> String {
    format!(
        "cp tether.toml .toml-before\n\
         ( {edit} ) > /dev/null 2>&1\n\
         if cmp -s tether.toml .toml-before; then echo refused >> edits.txt; \
         else echo applied >> edits.txt; fi\n\
         if [ ! -e {EDIT_DONE} ]; then\n\
         cat > {EDIT_REQUEST}.part <<'EDIT'\n{edit}\nEDIT\n\
         mv {EDIT_REQUEST}.part {EDIT_REQUEST}\n\
         i=0; while [ ! -e {EDIT_DONE} ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done\n\
         fi"
    )
}

/// Where the attack aims: the secret file outside the workspace and the local port.
pub struct Targets {
    pub secret: PathBuf,
    pub port: u16,
}

impl Env {
    /// The workspace with `plan`, its agent scripted by `agent` (told where the targets are).
    pub fn new(plan: &str, as_user: bool, agent: impl FnOnce(&Targets) -> Script) -> Env {
        let rt = runtime();
        let home = tempfile::tempdir().unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let targets = Targets {
            secret: home.path().join(".ssh/id_ed25519"),
            port: listener.local_addr().unwrap().port(),
        };
        let agent = rt
            .block_on(FakeModelServer::start(agent(&targets)))
            .unwrap();
        let judge = rt
            .block_on(FakeModelServer::start(Script::turns([]).then_repeat(
                Turn::text("```json\n{\"verdict\":\"reject\",\"summary\":\"no\",\"checks\":[],\"missing\":[\"all\"]}\n```"),
            )))
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::write(
            root.join("tether.toml"),
            format!(
                "{}\n{}\n[loop]\nescalate_after_rejects = 0\n",
                model_table("model", Api::OpenAiChat, &agent, "worker-model"),
                model_table("judge", Api::OpenAiChat, &judge, "judge-model"),
            ),
        )
        .unwrap();
        write_add_project(root, plan);
        let git = Command::new("sh")
            .args([
                "-c",
                "git init -q && git -c user.name=a -c user.email=a@b commit -q --allow-empty -m start",
            ])
            .current_dir(root)
            .output()
            .unwrap();
        assert!(git.status.success(), "{}", text(&git.stderr));
        fs::create_dir(home.path().join(".ssh")).unwrap();
        fs::write(&targets.secret, SECRET).unwrap();
        if as_user && unprivileged::is_root() {
            // The secret is the user's own: only the sandbox keeps it from the agent.
            let id = Some(unprivileged::NOBODY.parse().unwrap());
            for p in [
                home.path().to_owned(),
                home.path().join(".ssh"),
                home.path().join(".ssh/id_ed25519"),
            ] {
                std::os::unix::fs::chown(p, id, id).unwrap();
            }
        }
        let editor = Editor::start(dir.path());
        Env {
            dir,
            home,
            agent,
            _judge: judge,
            _listener: listener,
            as_user,
            _editor: editor,
            _rt: rt,
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// `tether <args>` as the person, as this user or as an ordinary one.
    pub fn tether(&self, args: &[&str]) -> Command {
        let mut c = if self.as_user {
            unprivileged::tether(self.path())
        } else {
            common::cmd(self.path(), &[])
        };
        c.args(args)
            .env("HOME", self.home.path())
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env(MODEL_KEY_VAR, MODEL_KEY);
        c
    }

    /// Appends `text` to tether.toml (as the person, before or between runs).
    pub fn append(&self, text: &str) {
        let toml = self.path().join("tether.toml");
        let mut now = fs::read_to_string(&toml).unwrap();
        now.push_str(text);
        fs::write(&toml, now).unwrap();
    }

    /// Turns the sandbox off in tether.toml before the run starts (the run records it): the
    /// agent can then write the file, as any other.
    pub fn sandbox_off(&self) {
        self.append("\n[sandbox]\nmode = \"off\"\n");
    }

    /// Names [`MODEL_KEY_VAR`] as the agent's model's key in tether.toml.
    pub fn model_key(&self) {
        let toml = self.path().join("tether.toml");
        let now = fs::read_to_string(&toml).unwrap().replacen(
            "\n[judge]",
            &format!("api_key_env = \"{MODEL_KEY_VAR}\"\n\n[judge]"),
            1,
        );
        fs::write(&toml, now).unwrap();
    }

    /// The latest run's id: only once no tether process of the test runs any more.
    pub fn run_id(&self) -> String {
        self.store().latest_run().unwrap().unwrap().id.to_string()
    }

    /// Runs `tether <args>` to its end, with a deadline.
    pub fn run(&self, args: &[&str]) -> Output {
        Running::start(self.tether(args)).wait()
    }

    /// Opens the store: only once no tether process of the test runs any more.
    pub fn store(&self) -> Store {
        Store::open(self.path().join(".tether/tether.db")).unwrap()
    }

    pub fn read(&self, name: &str) -> String {
        fs::read_to_string(self.path().join(name)).unwrap_or_default()
    }

    /// The agent's own edits of tether.toml ([`edit_toml`]) were each tried and refused.
    pub fn assert_edits_refused(&self) {
        let edits = self.read("edits.txt");
        assert!(
            !edits.is_empty() && edits.lines().all(|l| l == "refused"),
            "the agent's edits of tether.toml: {edits:?}"
        );
    }

    /// Every event of the latest run.
    pub fn events(&self) -> Vec<Event> {
        let store = self.store();
        let run = store.latest_run().unwrap().unwrap();
        store
            .events(&run.id, Seq(0), usize::MAX)
            .unwrap()
            .into_iter()
            .filter_map(|e| e.event)
            .collect()
    }

    /// Whether a tool result the agent's model was sent holds `text`.
    pub fn agent_saw(&self, text: &str) -> bool {
        self.agent
            .requests()
            .iter()
            .any(|r| r.raw_body.contains(text))
    }

    pub fn rules(&self) -> Vec<Rule> {
        self.events()
            .into_iter()
            .filter_map(|e| match e {
                Event::RuleFired { rule, .. } => Some(rule),
                _ => None,
            })
            .collect()
    }
}

/// Runs `check` as this user and, when the tests run as root, as an ordinary user too.
pub fn as_each_user(check: impl Fn(bool)) {
    check(false);
    if unprivileged::is_root() {
        check(true);
    }
}

/// The agent's `bash` call of `command`.
pub fn bash(command: &str) -> Turn {
    Turn::tool("bash", json!({"command": command}))
}

/// Appends `[sandbox] mode = "off"` to tether.toml (once), as [`edit_toml`] does.
pub fn sandbox_off() -> String {
    edit_toml(
        "grep -q '^mode = \"off\"' tether.toml || \
         printf '\\n[sandbox]\\nmode = \"off\"\\n' >> tether.toml",
    )
}

/// Writes `.git/pwned` if it can, and says which.
pub const WRITE_GIT: &str =
    "if echo x > .git/pwned 2>/dev/null; then echo 'git: written'; else echo 'git: refused'; fi";

pub fn output(out: &Output) -> String {
    format!("{}{}", text(&out.stdout), text(&out.stderr))
}

/// A shell line that tries to connect to `port` on 127.0.0.1 and appends `reached` or
/// `blocked` to `reached.txt`.
pub fn connect(port: u16) -> String {
    format!(
        "python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 5)\" \
         2>/dev/null && echo reached >> reached.txt || echo blocked >> reached.txt"
    )
}
