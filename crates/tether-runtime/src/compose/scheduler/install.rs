//! What `tether schedule install` prints: a systemd user unit, or a crontab line, that keeps
//! `tether schedule run` going in a workspace. Each is written for the syntax that reads it, so
//! a path with a space, `%` or `$` reaches the scheduler as it is: systemd expands `%`
//! specifiers in every setting and splits a command line at spaces outside quotes (it expands
//! no variable in the program's own path, so a `$` there stays as it is); cron turns a `%` into
//! a newline, then hands the line to a shell, which the paths are quoted for. Neither starts the
//! scheduler with the person's login shell, so each says where the `PATH` of the agent's CLI and
//! the keys go. A path a file cannot hold (a newline in it), or a program path systemd refuses to
//! run (a quote or a backslash in it), is refused.

use std::path::Path;

/// Where the unit reads the variables the scheduler needs (`PATH`, the keys) from, as a systemd
/// path (`%h`: the home directory).
const ENV_FILE: &str = "%h/.config/tether/schedule.env";

/// A path a unit or a crontab line cannot hold: each says what to do instead.
#[derive(Debug, thiserror::Error)]
pub enum Unwritable {
    /// A control character (a newline) in a path.
    #[error(
        "{}: the path holds a control character (such as a newline), which neither a systemd \
         unit nor a crontab line can hold: move it to a path without one",
        path.escape_debug()
    )]
    Control {
        /// The path, as text.
        path: String,
    },
    /// A path that is not UTF-8.
    #[error("{path}: the path is not UTF-8, which tether writes no unit nor crontab line for")]
    NotUtf8 {
        /// The path, its bytes that are not UTF-8 replaced.
        path: String,
    },
    /// A quote or a backslash in tether's own path, which systemd refuses to run.
    #[error(
        "{path}: systemd runs no program whose path holds a quote or a backslash: install tether \
         at a path without one, or start the scheduler with cron (--crontab)"
    )]
    Program {
        /// The path, as text.
        path: String,
    },
}

/// The systemd user unit that keeps `exe schedule run` going in `root`.
pub fn systemd_unit(root: &Path, exe: &Path) -> Result<String, Unwritable> {
    let (root, exe) = (writable(root)?, writable(exe)?);
    if exe.contains(['"', '\'', '\\']) {
        return Err(Unwritable::Program {
            path: exe.to_owned(),
        });
    }
    Ok(format!(
        "# tether's scheduler for {root}: fires its schedules (`tether schedule list`).\n\
         # Install: save as ~/.config/systemd/user/tether-schedule.service, then\n\
         #   systemctl --user daemon-reload\n\
         #   systemctl --user enable --now tether-schedule.service\n\
         # and, to keep it running while you are logged out: loginctl enable-linger \"$USER\"\n\
         # systemd starts it without your login shell's PATH and variables: put the PATH your\n\
         # agent's CLI is found on and the keys (the model's, the judge's), one VARIABLE=value a\n\
         # line, in ~/.config/tether/schedule.env (chmod 600), never in this file.\n\
         [Unit]\n\
         Description=tether scheduler ({description})\n\
         After=network-online.target\n\
         Wants=network-online.target\n\
         \n\
         [Service]\n\
         Type=simple\n\
         WorkingDirectory={directory}\n\
         EnvironmentFile=-{ENV_FILE}\n\
         ExecStart={command} schedule run\n\
         Restart=on-failure\n\
         RestartSec=10\n\
         # SIGTERM stops it and its runs after their current step (each resumable); it then\n\
         # exits 130, which is its way of stopping, not a failure.\n\
         KillSignal=SIGTERM\n\
         SuccessExitStatus=130\n\
         TimeoutStopSec=60\n\
         \n\
         [Install]\n\
         WantedBy=default.target\n",
        description = specifiers(root),
        directory = specifiers(root),
        command = exec_word(exe),
    ))
}

/// The crontab line that starts `exe schedule run` in `root` at boot (cron does not restart
/// it: prefer the systemd unit where there is systemd), after a comment saying where `PATH`
/// and the keys go.
pub fn crontab_line(root: &Path, exe: &Path) -> Result<String, Unwritable> {
    let (root_text, exe) = (writable(root)?, writable(exe)?);
    let log = root.join(".tether/schedule.log");
    let line = format!(
        "@reboot cd {root} && {exe} schedule run >> {log} 2>&1",
        root = shell_quote(root_text),
        exe = shell_quote(exe),
        log = shell_quote(writable(&log)?),
    );
    Ok(format!(
        "# cron starts it with a bare PATH and none of your variables: set PATH= (where your \
         agent's CLI is) and the keys, VARIABLE=value, on lines above this one.\n{}\n",
        cron_escape(&line)
    ))
}

/// `path` as text, unless it holds a control character.
fn writable(path: &Path) -> Result<&str, Unwritable> {
    let text = path.to_str().ok_or_else(|| Unwritable::NotUtf8 {
        path: path.to_string_lossy().into_owned(),
    })?;
    if text.chars().any(char::is_control) {
        return Err(Unwritable::Control {
            path: text.to_owned(),
        });
    }
    Ok(text)
}

/// `text` in a systemd setting: each `%` doubled, so none starts a specifier.
fn specifiers(text: &str) -> String {
    text.replace('%', "%%")
}

/// A program's path (with no quote nor backslash) as the first word of a systemd command line:
/// quoted, so it is not split at a space, and each `%` doubled, so none starts a specifier. A
/// `$` stays as it is: systemd expands no variable in the program's path (a `$$` would stay
/// doubled in it).
fn exec_word(path: &str) -> String {
    format!("\"{}\"", specifiers(path))
}

/// `text` quoted for a POSIX shell.
fn shell_quote(text: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+:@".contains(c);
    if !text.is_empty() && text.chars().all(plain) {
        return text.to_owned();
    }
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// A crontab command with each `%` escaped, so cron hands it to the shell as a `%`.
fn cron_escape(line: &str) -> String {
    line.replace('%', "\\%")
}

#[cfg(test)]
#[path = "install_tests.rs"]
mod tests;
