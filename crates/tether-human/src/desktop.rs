//! Desktop notifications: a notice shown by the freedesktop notification service of the
//! terminal user's session, through `notify-send`, when `[notify] desktop` is on and one is
//! available.
//!
//! Available means `notify-send` is on `PATH` and the session has a message bus
//! (`DBUS_SESSION_BUS_ADDRESS`); anywhere else (a server, a container, CI) nothing is tried.
//! `notify-send` runs as a supervised child like every program tether starts — its own process
//! group, a null stdin, a timeout, the secret-holding variables removed — and whatever it does
//! (missing after all, failing, hanging) never touches the run: it is logged and forgotten.
//!
//! A notification's body may be read as markup (`<b>`, `<a href>`, entities) by the service, so
//! the notice — which quotes the agent, the judge and the verify output — is shown with `&`, `<`
//! and `>` escaped: as written, never as markup.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tether_config::NoticeKind;
use tether_tools::{ProgramCommand, run_program};
use tokio_util::sync::CancellationToken;

use crate::notices::Notice;

/// The program that shows a notification.
const PROGRAM: &str = "notify-send";
/// How long `notify-send` may take before its process group is stopped.
const TIMEOUT: Duration = Duration::from_secs(5);
/// Between SIGTERM and SIGKILL for a `notify-send` that overstays.
const KILL_GRACE: Duration = Duration::from_millis(500);
/// How much of its output is kept (for the log).
const OUTPUT_CAP: usize = 2048;

/// Shows notices as desktop notifications.
#[derive(Debug, Clone)]
pub struct Desktop {
    program: PathBuf,
    env_remove: Vec<String>,
}

impl Desktop {
    /// `notify-send` from `path` (a `PATH` value), when there is one and `bus` (the value of
    /// `DBUS_SESSION_BUS_ADDRESS`) says the session has a message bus. `env_remove` names the
    /// variables the child must not see (the keys tether reads).
    pub fn find(
        path: Option<OsString>,
        bus: Option<OsString>,
        env_remove: Vec<String>,
    ) -> Option<Self> {
        if bus.is_none_or(|b| b.is_empty()) {
            return None;
        }
        let program = std::env::split_paths(&path?)
            .map(|dir| dir.join(PROGRAM))
            .find(|p| is_executable(p))?;
        Some(Desktop::new(program, env_remove))
    }

    /// [`Desktop::find`] in this process's environment.
    pub fn detect(env_remove: Vec<String>) -> Option<Self> {
        Desktop::find(
            std::env::var_os("PATH"),
            std::env::var_os("DBUS_SESSION_BUS_ADDRESS"),
            env_remove,
        )
    }

    /// Notifications shown by `program` (taking `notify-send`'s arguments).
    pub fn new(program: PathBuf, env_remove: Vec<String>) -> Self {
        Desktop {
            program,
            env_remove,
        }
    }

    /// The arguments shown for `notice`: the app name, a title, and the notice as its body
    /// (markup characters escaped).
    pub fn argv(&self, notice: &Notice) -> Vec<String> {
        let urgency = match notice.kind {
            NoticeKind::Failed
            | NoticeKind::Paused
            | NoticeKind::SchedulePaused
            | NoticeKind::Overdue => "normal",
            NoticeKind::Done | NoticeKind::SignedOff | NoticeKind::Rejected => "low",
        };
        vec![
            self.program.to_string_lossy().into_owned(),
            "--app-name=tether".to_owned(),
            format!("--urgency={urgency}"),
            title(notice),
            escape_markup(&notice.plain()),
        ]
    }

    /// Shows `notice`; any failure is only logged.
    pub async fn show(&self, notice: &Notice) {
        let spec = ProgramCommand {
            argv: self.argv(notice),
            cwd: std::env::temp_dir(),
            input: None,
            timeout: TIMEOUT,
            kill_grace: KILL_GRACE,
            stdout_cap: OUTPUT_CAP,
            stderr_cap: OUTPUT_CAP,
            env_remove: self.env_remove.clone(),
            env: Vec::new(),
            // tether's own notification, not the agent's.
            sandbox: None,
        };
        match run_program(&spec, &CancellationToken::new()).await {
            Ok(run) => {
                tracing::debug!(end = ?run.end, stderr = %run.stderr, "desktop notification")
            }
            Err(e) => tracing::debug!(error = %e, "no desktop notification"),
        }
    }
}

/// The notification's title: `tether: run r-… paused` (a person's sign-off belongs to no run).
fn title(notice: &Notice) -> String {
    let what = match notice.kind {
        NoticeKind::Done => "is done",
        NoticeKind::Paused => "paused",
        NoticeKind::Failed => "failed",
        NoticeKind::SignedOff => "signed a goal off",
        NoticeKind::Rejected => "keeps being rejected",
        NoticeKind::SchedulePaused => return "tether: a schedule paused itself".to_owned(),
        NoticeKind::Overdue => return "tether: a schedule is overdue".to_owned(),
    };
    match &notice.run_id {
        Some(run) => format!("tether: run {run} {what}"),
        None => "tether: a goal was signed off".to_owned(),
    }
}

/// `text` with the characters of the notification body's markup (`&`, `<`, `>`) as entities.
fn escape_markup(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
    out
}

/// Whether `path` is a file someone may execute.
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    path.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}
