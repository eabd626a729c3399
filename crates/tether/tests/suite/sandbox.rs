//! The sandbox, end to end: the agent's shell (the built-in agent's `bash`) and a command
//! executor (a shell script) each try every act the sandbox must stop — and the acts it must
//! allow — as root and as an ordinary user; a kernel that cannot enforce it stops the run
//! loudly; `mode = "off"` warns.

use std::fs;
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Output};

use serde_json::json;
use tether_config::Api;
use tether_model::scripted::{Script, Turn};
use tether_testkit::model_server::FakeModelServer;

use crate::common::{cmd, model_table, runtime, text, unprivileged};

/// A key of tether's own: in its environment, never in a child's.
const KEY: &str = "sk-sandbox-secret-4711";

/// Every probe, one `name: done|refused` line each, written to `probes.txt`.
fn probes(port: u16) -> String {
    format!(
        r#"# The parent as /proc numbers it ($PPID reads 0 in the run's PID namespace, whose
# processes' parents are outside it).
read -r _ _ _ T _ < /proc/self/stat
# tether is the nearest ancestor named so (an agent CLI's shell is further down).
while [ "$T" -gt 1 ] && [ "$(cat /proc/$T/comm 2>/dev/null)" != tether ]; do
  T=$(awk '/^PPid:/ {{print $2}}' /proc/$T/status 2>/dev/null || echo 1)
done
p() {{ name=$1; shift; if "$@" > /dev/null 2>&1; then echo "$name: done"; else echo "$name: refused"; fi; }}
{{
p "write the store" sh -c 'echo x >> .tether/tether.db'
p "link the store" ln .tether/tether.db stolen.db
p "read the store" cat .tether/tether.db
p "read tether's key in /proc" grep -q sk-sandbox /proc/$T/environ
p "find a key in its own environment" sh -c 'env | grep -q sk-sandbox'
p "write a git hook" sh -c 'echo "touch pwned" > .git/hooks/post-checkout'
p "write the git config" sh -c 'echo "[core]" >> .git/config'
p "read ~/.ssh" cat "$HOME/.ssh/id_ed25519"
p "connect to 127.0.0.1" python3 -c "import socket; socket.create_connection(('127.0.0.1', {port}), 5)"
p "signal tether" kill -0 $T
p "set the hostname" sh -c 'hostname "$(hostname)"'
p "edit a file" sh -c 'echo "// more" >> src/lib.rs'
p "create files" sh -c 'mkdir -p new/dir && echo hi > new/dir/file && echo top > top.txt'
p "run the project's tests" sh run-tests.sh
}} > probes.txt 2>&1
"#
    )
}

/// The acts that must fail, and those that must work with the network off.
const REFUSED: [&str; 11] = [
    "write the store",
    "link the store",
    "read the store",
    "read tether's key in /proc",
    "find a key in its own environment",
    "write a git hook",
    "write the git config",
    "read ~/.ssh",
    "connect to 127.0.0.1",
    "signal tether",
    "set the hostname",
];
const DONE: [&str; 3] = ["edit a file", "create files", "run the project's tests"];

struct Fixture {
    dir: tempfile::TempDir,
    home: tempfile::TempDir,
    /// Held open so a connection with the network on succeeds.
    _listener: TcpListener,
    _model: Option<FakeModelServer>,
    _rt: tokio::runtime::Runtime,
}

/// A git workspace with a project and its tests, a home with an SSH key, a TCP port listening,
/// and `executor` (a tether.toml tail) as the agent; the built-in agent's model runs `probes`.
fn fixture(executor: &str, sandbox: &str) -> Fixture {
    let rt = runtime();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let script = probes(port);
    let model = (executor == "builtin").then(|| {
        rt.block_on(FakeModelServer::start(Script::turns([
            Turn::tool("bash", json!({"command": script})),
            Turn::text("Probed. <promise>DONE</promise>"),
        ])))
        .unwrap()
    });
    let toml = match &model {
        Some(server) => model_table("model", Api::OpenAiChat, server, "fake"),
        None => "[executor]\nkind = \"command\"\ncommand = [\"sh\", \"agent.sh\"]\n".to_owned(),
    };
    fs::write(root.join("tether.toml"), format!("{toml}{sandbox}")).unwrap();
    fs::write(root.join("agent.sh"), &script).unwrap();
    fs::create_dir(root.join("src")).unwrap();
    fs::write(root.join("src/lib.rs"), "pub fn one() -> i32 { 1 }\n").unwrap();
    fs::write(
        root.join("run-tests.sh"),
        "grep -q 'fn one' src/lib.rs && echo 'tests pass'\n",
    )
    .unwrap();
    let out = Command::new("sh")
        .args([
            "-c",
            "git init -q && git -c user.name=a -c user.email=a@b commit -q --allow-empty -m start",
        ])
        .current_dir(root)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let home = tempfile::tempdir().unwrap();
    fs::create_dir(home.path().join(".ssh")).unwrap();
    fs::write(home.path().join(".ssh/id_ed25519"), "PRIVATE KEY").unwrap();
    Fixture {
        dir,
        home,
        _listener: listener,
        _model: model,
        _rt: rt,
    }
}

impl Fixture {
    fn root(&self) -> &Path {
        self.dir.path()
    }

    /// `tether ralph` for one iteration, as this user or as an ordinary one.
    fn ralph(&self, unprivileged_user: bool, env: &[(&str, &str)]) -> Output {
        let args = [
            "ralph",
            "probe",
            "--completion-promise",
            "DONE",
            "--max-iterations",
            "1",
        ];
        let mut c = if unprivileged_user {
            // The home directory is the user's own too.
            if unprivileged::is_root() {
                let id = Some(unprivileged::NOBODY.parse().unwrap());
                for p in [self.home.path(), &self.home.path().join(".ssh")] {
                    std::os::unix::fs::chown(p, id, id).unwrap();
                }
                std::os::unix::fs::chown(self.home.path().join(".ssh/id_ed25519"), id, id).unwrap();
            }
            let mut c = unprivileged::tether(self.root());
            c.args(args);
            c
        } else {
            cmd(self.root(), &args)
        };
        c.env("HOME", self.home.path())
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("ZULIP_BOT_API_KEY", KEY);
        for (k, v) in env {
            c.env(k, v);
        }
        c.output().unwrap()
    }

    /// Each probe's outcome.
    fn probes(&self) -> Vec<(String, String)> {
        let text = fs::read_to_string(self.root().join("probes.txt")).unwrap_or_default();
        text.lines()
            .filter_map(|l| l.rsplit_once(": "))
            .map(|(a, b)| (a.to_owned(), b.to_owned()))
            .collect()
    }

    fn assert_held(&self, out: &Output, network: bool) {
        let said = self.probes();
        assert_eq!(
            said.len(),
            REFUSED.len() + DONE.len(),
            "{said:?}\n{}",
            text(&out.stderr)
        );
        for (name, outcome) in &said {
            let should =
                if DONE.contains(&name.as_str()) || (network && name == "connect to 127.0.0.1") {
                    "done"
                } else {
                    "refused"
                };
            assert_eq!(outcome, should, "{name}: {said:?}\n{}", text(&out.stderr));
        }
        assert!(self.root().join("top.txt").exists());
        assert!(!self.root().join("stolen.db").exists());
        assert!(!self.root().join(".git/hooks/post-checkout").exists());
        for (stream, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
            assert!(!text(bytes).contains(KEY), "the key in tether's {stream}");
        }
    }
}

#[test]
fn the_built_in_agents_shell_can_work_but_not_escape() {
    let f = fixture("builtin", "");
    let out = f.ralph(false, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    f.assert_held(&out, false);
}

#[test]
fn a_command_executor_can_work_but_not_escape() {
    let f = fixture("command", "");
    let out = f.ralph(false, &[]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    f.assert_held(&out, false);
}

#[test]
fn as_an_ordinary_user_the_same_holds() {
    for executor in ["builtin", "command"] {
        let f = fixture(executor, "");
        let out = f.ralph(true, &[]);
        assert!(
            matches!(out.status.code(), Some(0 | 3)),
            "{}",
            text(&out.stderr)
        );
        f.assert_held(&out, false);
    }
}

#[test]
fn the_network_opens_when_the_config_says_so() {
    let f = fixture("builtin", "[sandbox]\nnetwork = true\n");
    let out = f.ralph(false, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    f.assert_held(&out, true);
}

#[test]
fn a_kernel_that_cannot_enforce_it_stops_the_run_naming_what_is_missing() {
    let f = fixture("builtin", "");
    let out = f.ralph(false, &[("TETHER_SANDBOX_PRETEND_ABI", "0")]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let said = text(&out.stderr);
    assert!(said.contains("Landlock (Linux 5.13 or later"), "{said}");
    assert!(said.contains("[sandbox] mode = \"off\""), "{said}");
    assert!(!f.root().join("probes.txt").exists(), "the agent ran");
    let out = f.ralph(false, &[("TETHER_SANDBOX_PRETEND_ABI", "5")]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("signal scoping"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn with_the_sandbox_off_every_run_warns_and_nothing_is_held() {
    let f = fixture("builtin", "[sandbox]\nmode = \"off\"\n");
    let out = f.ralph(false, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("the sandbox is off"),
        "{}",
        text(&out.stderr)
    );
    let said = f.probes();
    assert!(
        said.iter()
            .any(|(n, o)| n == "write a git hook" && o == "done"),
        "{said:?}"
    );
}

#[test]
fn tethers_own_keys_are_gone_from_its_proc_environ() {
    let f = fixture("command", "");
    let mut asking = cmd(f.root(), &["ask", "Which way?", "--context", "a fork"])
        .env("ZULIP_BOT_API_KEY", KEY)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = asking.id();
    // Once the question is stored, tether is well past its start.
    crate::common::pending_question(f.root());
    let environ = fs::read(format!("/proc/{pid}/environ")).unwrap();
    let environ = String::from_utf8_lossy(&environ);
    asking.kill().unwrap();
    asking.wait().unwrap();
    assert!(!environ.contains(KEY), "the key is in /proc/{pid}/environ");
    assert!(environ.contains("ZULIP_BOT_API_KEY=xxxx"), "{environ}");
}

#[test]
fn in_the_sandbox_tethers_commands_reach_the_run_through_its_driver() {
    let f = fixture("command", "");
    let bin = env!("CARGO_BIN_EXE_tether");
    fs::write(
        f.root().join("agent.sh"),
        format!(
            "T='{bin}'\n\
             \"$T\" ask 'Which way?' --context 'a fork in the road' > answer.txt 2> ask.err; echo $? > ask.code\n\
             \"$T\" plan new 'take over' > new.out 2>&1; echo $? > new.code\n\
             \"$T\" status > status.out 2>&1; echo $? > status.code\n"
        ),
    )
    .unwrap();
    let mut run = cmd(f.root(), &["ralph", "go", "--max-iterations", "1"])
        .env("HOME", f.home.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let question = crate::common::pending_question(f.root());
    let id = question["id"].as_str().unwrap();
    let answered = cmd(f.root(), &["answer", id, "left"]).output().unwrap();
    assert_eq!(
        answered.status.code(),
        Some(0),
        "{}",
        text(&answered.stderr)
    );
    let status = crate::common::wait_exit(&mut run);
    assert_eq!(status.code(), Some(3));
    let read = |name: &str| fs::read_to_string(f.root().join(name)).unwrap_or_default();
    assert_eq!(read("ask.code").trim(), "0", "{}", read("ask.err"));
    assert_eq!(read("answer.txt").trim(), "left");
    assert_eq!(read("new.code").trim(), "2");
    assert!(
        read("new.out").contains("not available inside the sandbox"),
        "{}",
        read("new.out")
    );
    assert_eq!(read("status.code").trim(), "0", "{}", read("status.out"));
    assert!(
        read("status.out").contains("(ralph)"),
        "{}",
        read("status.out")
    );
}

#[test]
fn claude_codes_own_shell_can_work_but_not_escape() {
    for unprivileged_user in [false, true] {
        claude_probes(unprivileged_user);
    }
}

/// Claude Code's Bash tool runs the probes, as this user or as an ordinary one.
fn claude_probes(unprivileged_user: bool) {
    let f = fixture("command", "");
    let rt = runtime();
    let port = f._listener.local_addr().unwrap().port();
    let script = probes(port);
    let server = rt
        .block_on(FakeModelServer::start(Script::from_fn(
            move |req: &tether_model::Request| match req.last_tool_result() {
                None => Turn::tool("Bash", json!({"command": script, "description": "probe"})),
                Some(_) => Turn::text("Probed. <promise>DONE</promise>"),
            },
        )))
        .unwrap();
    crate::suite::claude_cli::configure_with(
        f.root(),
        &server,
        "args = [\"--allowedTools\", \"Bash\"]\n",
        "",
    );
    let out = f.ralph(unprivileged_user, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // An agent CLI keeps the network: it needs its model's API.
    f.assert_held(&out, true);
}

/// A goal that opens the network (`network: on`, part of its contract): the agent's commands and
/// its verify reach a local port while it is active; without the line they cannot.
#[test]
fn a_goal_with_network_on_opens_it_for_the_agents_commands_and_its_verify() {
    use super::goal_run::support::{PLAN, accepting_judge, complete, env, fix_add};
    for open in [true, false] {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let connect = format!(
            "python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 5)\""
        );
        let network = if open { "network: on\n" } else { "" };
        let plan = PLAN.replace(
            "verify: sh check.sh\n",
            &format!("verify: sh check.sh && {connect}\n{network}"),
        );
        let probe =
            format!("{connect} && echo reached > reached.txt || echo blocked > reached.txt");
        let e = env(
            &plan,
            Script::turns([
                Turn::tool("bash", json!({"command": probe})),
                fix_add(),
                complete("add"),
                Turn::text("Done."),
            ]),
            Script::turns(accepting_judge()),
            "[loop]\nescalate_after_rejects = 0\n",
        );
        let out = e.run(&["run", "--approve", "--max-iterations", "1"]);
        let reached = fs::read_to_string(e.path().join("reached.txt")).unwrap_or_default();
        let report = || {
            let runs = e.path().join(".tether/runs");
            fs::read_dir(runs)
                .unwrap()
                .flatten()
                .map(|r| {
                    let log =
                        fs::read_to_string(r.path().join("verify-add-1.log")).unwrap_or_default();
                    fs::read_to_string(r.path().join("report.md")).unwrap_or_default() + &log
                })
                .collect::<String>()
                + &fs::read_to_string(e.path().join("reached.txt")).unwrap_or_default()
        };
        if open {
            assert_eq!(
                out.status.code(),
                Some(0),
                "{}{}\n{}",
                text(&out.stdout),
                text(&out.stderr),
                report()
            );
            assert_eq!(reached, "reached\n");
            assert_eq!(e.status_of("add"), "done");
        } else {
            assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
            assert_eq!(reached, "blocked\n");
            let verdicts = e.verdicts("add");
            assert_eq!(verdicts.last().unwrap().decision.verify_exit, Some(1));
        }
        drop(listener);
    }
}
