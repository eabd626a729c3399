//! A run's PID namespace: what its sandboxed children start lives as long as the namespace,
//! however it left their process group or tree (`setsid`, a double fork, `nohup`), and no
//! longer; the child the spawner holds still ends as the program does, and killing it kills
//! the program.

use std::os::unix::process::ExitStatusExt as _;
use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use tether_sandbox::{RunNamespace, Sandbox, SandboxError, Support};

use super::{policy, says, trees};

/// How long processes have to appear or go.
const PATIENCE: Duration = Duration::from_secs(20);

/// A `sleep` duration no other process has.
fn marker() -> String {
    static NEXT: AtomicU32 = AtomicU32::new(1);
    format!(
        "86401.{:07}{:03}",
        std::process::id() % 10_000_000,
        NEXT.fetch_add(1, Ordering::SeqCst)
    )
}

/// How many live (not zombie) processes have `marker` as an argument.
fn alive(marker: &str) -> usize {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let zombie = stat
                .rsplit_once(')')
                .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'));
            !zombie && cmdline.split(|b| *b == 0).any(|a| a == marker.as_bytes())
        })
        .count()
}

/// Polls `cond` until it holds or [`PATIENCE`] has passed.
fn eventually(mut cond: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + PATIENCE;
    while Instant::now() < end {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    cond()
}

/// Kills whatever still carries one of the markers when a test ends.
struct Leftovers(Vec<String>);

impl Drop for Leftovers {
    fn drop(&mut self) {
        for marker in &self.0 {
            let _ = Command::new("pkill").args(["-9", "-f", marker]).status();
        }
    }
}

struct Run {
    _trees: super::Trees,
    work: std::path::PathBuf,
    ns: Arc<RunNamespace>,
    sandbox: Sandbox,
}

fn run_namespace() -> Run {
    let t = trees();
    let ns = Arc::new(RunNamespace::start().unwrap());
    let sandbox = Sandbox::new(policy(&t), Support::probe())
        .unwrap()
        .within(ns.clone());
    Run {
        work: t.work.clone(),
        _trees: t,
        ns,
        sandbox,
    }
}

impl Run {
    fn command(&self, script: &str) -> Result<Command, SandboxError> {
        let mut cmd = Command::new("/bin/sh");
        cmd.arg("-c")
            .arg(script)
            .current_dir(&self.work)
            .stdin(Stdio::null())
            .env("PATH", "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin");
        self.sandbox.confine(&mut cmd)?;
        Ok(cmd)
    }

    fn run(&self, script: &str) -> Output {
        self.command(script).unwrap().output().unwrap()
    }
}

/// `command`, then a wait until it runs `sleep mark`.
fn started(command: &str, mark: &str) -> String {
    let pattern = format!("[{}]{}", &mark[..1], &mark[1..]);
    format!("{command}\nuntil grep -qs {pattern} /proc/[0-9]*/cmdline; do sleep 0.02; done\n")
}

#[test]
fn what_leaves_the_group_lives_as_long_as_the_namespace_and_no_longer() {
    let r = run_namespace();
    let marks = [marker(), marker(), marker()];
    let _left = Leftovers(marks.to_vec());
    let quiet = "> /dev/null 2>&1 < /dev/null";
    let script = [
        started(&format!("setsid sleep {} {quiet} &", marks[0]), &marks[0]),
        started(
            &format!("sh -c '(sleep {} {quiet} &) &'", marks[1]),
            &marks[1],
        ),
        started(&format!("nohup sleep {} {quiet} &", marks[2]), &marks[2]),
    ]
    .concat();
    let out = r.run(&script);
    assert!(out.status.success(), "{}", says(&out));
    // The shell is gone; what it started is still there (nobody killed its group here).
    for mark in &marks {
        assert_eq!(
            alive(mark),
            1,
            "{mark} runs after the command that started it"
        );
    }
    assert!(r.ns.is_running());
    r.ns.end();
    assert!(
        eventually(|| marks.iter().all(|m| alive(m) == 0)),
        "still alive after the end: {:?}",
        marks.iter().map(|m| (m, alive(m))).collect::<Vec<_>>()
    );
    assert!(!r.ns.is_running());
}

#[test]
fn the_program_runs_inside_the_namespace() {
    let r = run_namespace();
    let out = r.run("grep NSpid /proc/self/status");
    let text = says(&out);
    assert!(out.status.success(), "{text}");
    // Its pid in tether's namespace, then in the run's (where the holder is 1).
    let pids: Vec<u32> = text
        .split_whitespace()
        .skip(1)
        .map(|p| p.parse().unwrap())
        .collect();
    assert_eq!(pids.len(), 2, "{text}");
    assert!(pids[1] > 1, "{text}");
}

#[test]
fn the_spawned_child_ends_as_the_program_does() {
    let r = run_namespace();
    let out = r.run("echo out; echo err >&2; exit 7");
    assert_eq!(out.status.code(), Some(7), "{}", says(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "out\n");
    assert_eq!(String::from_utf8_lossy(&out.stderr), "err\n");
    let out = r.run("kill -TERM $$");
    assert_eq!(out.status.signal(), Some(libc::SIGTERM), "{}", says(&out));
}

#[test]
fn killing_the_spawned_child_kills_the_program() {
    let r = run_namespace();
    let mark = marker();
    let _left = Leftovers(vec![mark.clone()]);
    let mut child = r
        .command(&format!("exec sleep {mark}"))
        .unwrap()
        .spawn()
        .unwrap();
    assert!(eventually(|| alive(&mark) == 1), "the program started");
    child.kill().unwrap();
    assert_eq!(child.wait().unwrap().signal(), Some(libc::SIGKILL));
    assert!(eventually(|| alive(&mark) == 0), "the program died with it");
}

#[test]
fn the_agent_cannot_end_the_namespace_and_nothing_starts_after_its_end() {
    let r = run_namespace();
    let out = r.run("kill -KILL 1; kill -TERM 1; kill -INT 1");
    assert!(r.ns.is_running(), "{}", says(&out));
    assert!(r.run("true").status.success());
    r.ns.end();
    assert!(matches!(r.command("true"), Err(SandboxError::Ended)));
}

#[test]
fn dropping_the_namespace_ends_it() {
    let r = run_namespace();
    let mark = marker();
    let _left = Leftovers(vec![mark.clone()]);
    let out = r.run(&started(
        &format!("setsid sleep {mark} > /dev/null 2>&1 < /dev/null &"),
        &mark,
    ));
    assert!(out.status.success(), "{}", says(&out));
    let Run { ns, sandbox, .. } = r;
    drop((ns, sandbox));
    assert!(
        eventually(|| alive(&mark) == 0),
        "still alive after the drop"
    );
}
