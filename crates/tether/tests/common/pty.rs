//! tether on a terminal, the way a person runs it: the real binary under a pseudo-terminal
//! (`script(1)` allocates it and makes it the controlling terminal of a new session), with
//! stdin, stdout and stderr all that terminal. The test reads the screen as it grows, types
//! lines and presses Ctrl+C; every wait has a deadline.

use std::io::{Read as _, Write as _};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex};

use super::{PATIENCE, isolate, wait_exit};

/// A tether command running on a pseudo-terminal.
pub struct Pty {
    child: Child,
    keys: ChildStdin,
    screen: Arc<Mutex<Vec<u8>>>,
    reader: Option<std::thread::JoinHandle<()>>,
}

impl Pty {
    /// Starts `tether <args>` in `dir` on a new terminal (`args` as a shell would split them;
    /// quote with single quotes), with tether's own variables cleared.
    pub fn start(dir: &Path, args: &str) -> Pty {
        Pty::start_with(dir, args, |_| {})
    }

    /// [`Pty::start`], with `setup` adding to the command's environment.
    pub fn start_with(dir: &Path, args: &str, setup: impl FnOnce(&mut Command)) -> Pty {
        Pty::launch(Command::new("script"), dir, args, setup)
    }

    /// [`Pty::start_with`] on a terminal of `rows` by `cols` that says it is an xterm in colour
    /// (for a full-screen program: `tether watch`).
    pub fn start_sized(dir: &Path, args: &str, (rows, cols): (u16, u16)) -> Pty {
        let tether = env!("CARGO_BIN_EXE_tether");
        let line = format!(
            "exec sh -c 'stty rows {rows} cols {cols} && exec \"$0\" \"$@\"' {tether} {args}"
        );
        Pty::launch_line(Command::new("script"), dir, &line, |cmd| {
            cmd.env("TERM", "xterm-256color").env_remove("NO_COLOR");
        })
    }

    /// Presses keys: `bytes` as the terminal would send them (`\r` for Enter).
    pub fn press(&mut self, bytes: &[u8]) {
        self.keys.write_all(bytes).unwrap();
        self.keys.flush().unwrap();
    }

    /// Everything shown so far, as a terminal of `rows` by `cols` would show it now.
    pub fn rendered(&self, (rows, cols): (u16, u16)) -> String {
        let nonzero = |n: u16| std::num::NonZero::new(n).unwrap();
        let mut parser = vt100::Parser::new(nonzero(rows), nonzero(cols), 0);
        parser.process(&self.screen.lock().unwrap());
        parser.screen().contents()
    }

    /// The screen now as an HTML page (each cell's character and colours), for the book's
    /// picture of a full-screen program.
    pub fn html(&self, (rows, cols): (u16, u16)) -> String {
        let nonzero = |n: u16| std::num::NonZero::new(n).unwrap();
        let mut parser = vt100::Parser::new(nonzero(rows), nonzero(cols), 0);
        parser.process(&self.screen.lock().unwrap());
        let screen = parser.screen();
        let css = |c: vt100::Color, default: &str| match c {
            vt100::Color::Default => default.to_owned(),
            vt100::Color::Idx(i) => {
                const BASE: [&str; 16] = [
                    "#1e1e1e", "#e06c75", "#98c379", "#e5c07b", "#61afef", "#c678dd", "#56b6c2",
                    "#abb2bf", "#5c6370", "#e06c75", "#98c379", "#e5c07b", "#61afef", "#c678dd",
                    "#56b6c2", "#ffffff",
                ];
                BASE.get(usize::from(i))
                    .copied()
                    .unwrap_or("#abb2bf")
                    .to_owned()
            }
            vt100::Color::Rgb(r, g, b) => format!("#{r:02x}{g:02x}{b:02x}"),
        };
        let mut body = String::new();
        for row in 0..rows {
            for col in 0..cols {
                let Some(cell) = screen.cell(row, col) else {
                    continue;
                };
                let (mut fg, mut bg) = (
                    css(cell.fgcolor(), "#d7dae0"),
                    css(cell.bgcolor(), "#1e1e1e"),
                );
                if cell.inverse() {
                    std::mem::swap(&mut fg, &mut bg);
                }
                let weight = if cell.bold() { "bold" } else { "normal" };
                let text = match cell.contents() {
                    "" => " ".to_owned(),
                    "<" => "&lt;".to_owned(),
                    ">" => "&gt;".to_owned(),
                    "&" => "&amp;".to_owned(),
                    other => other.to_owned(),
                };
                body.push_str(&format!(
                    "<span style=\"color:{fg};background:{bg};font-weight:{weight}\">{text}</span>"
                ));
            }
            body.push('\n');
        }
        format!(
            "<!doctype html><meta charset=utf-8><body style=\"margin:0;background:#1e1e1e\">\
             <pre style=\"margin:8px;font:14px/1.2 'DejaVu Sans Mono',monospace\">{body}</pre>"
        )
    }

    /// [`Pty::start_with`] as an ordinary user when the tests run as root (see
    /// [`unprivileged`](super::unprivileged)): the terminal, the workspace and tether are that
    /// user's, as a person's own terminal is theirs.
    pub fn start_unprivileged(dir: &Path, args: &str, setup: impl FnOnce(&mut Command)) -> Pty {
        use super::unprivileged::{NOBODY, chown_tree, is_root};
        if !is_root() {
            return Pty::start_with(dir, args, setup);
        }
        chown_tree(dir);
        let mut setpriv = Command::new("setpriv");
        setpriv.args([
            &format!("--reuid={NOBODY}"),
            &format!("--regid={NOBODY}"),
            "--clear-groups",
            "--",
            "script",
        ]);
        Pty::launch(setpriv, dir, args, setup)
    }

    /// Runs `tether <args>` through `script` (`launcher` runs it, with what follows added).
    fn launch(launcher: Command, dir: &Path, args: &str, setup: impl FnOnce(&mut Command)) -> Pty {
        let line = format!("exec {} {args}", env!("CARGO_BIN_EXE_tether"));
        Pty::launch_line(launcher, dir, &line, setup)
    }

    /// Runs the shell line `line` through `script`.
    fn launch_line(
        mut launcher: Command,
        dir: &Path,
        line: &str,
        setup: impl FnOnce(&mut Command),
    ) -> Pty {
        let script = &mut launcher;
        isolate(script)
            // -e: script exits with tether's code; -f: the screen is flushed as it is written.
            .args(["-qfec", line, "/dev/null"])
            .current_dir(dir)
            .env("TERM", "dumb");
        setup(script);
        let mut child = script
            // The keys typed: script passes them to the terminal.
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let keys = child.stdin.take().unwrap();
        let screen = Arc::new(Mutex::new(Vec::new()));
        let sink = screen.clone();
        let mut out = child.stdout.take().unwrap();
        let reader = std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = out.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        Pty {
            child,
            keys,
            screen,
            reader: Some(reader),
        }
    }

    /// Everything shown so far, with the terminal's CRLF as LF.
    pub fn screen(&self) -> String {
        String::from_utf8_lossy(&self.screen.lock().unwrap()).replace("\r\n", "\n")
    }

    /// Waits (up to [`PATIENCE`]) until the screen shows `text`; fails showing the screen.
    pub fn wait_for(&self, text: &str) {
        self.wait_for_after(text, 0);
    }

    /// Waits until `text` shows at least `count + 1` times.
    pub fn wait_for_after(&self, text: &str, count: usize) {
        let seen =
            tether_testkit::wait_until(&format!("the screen to show {text:?}"), PATIENCE, || {
                (self.screen().matches(text).count() > count).then_some(())
            });
        if let Err(e) = seen {
            panic!("{e}\n--- screen ---\n{}", self.screen());
        }
    }

    /// Types `line` and presses Enter.
    pub fn type_line(&mut self, line: &str) {
        self.keys.write_all(format!("{line}\n").as_bytes()).unwrap();
        self.keys.flush().unwrap();
    }

    /// The pid of the program on the terminal: `script`'s child (tether, once the shell line
    /// has exec'd it).
    pub fn program_pid(&self) -> i32 {
        let script = self.child.id();
        let children =
            std::fs::read_to_string(format!("/proc/{script}/task/{script}/children")).unwrap();
        children
            .split_whitespace()
            .next()
            .and_then(|pid| pid.parse().ok())
            .unwrap_or_else(|| panic!("script {script} has no child: {children:?}"))
    }

    /// Presses Ctrl+C (the terminal sends SIGINT to its foreground process group).
    pub fn ctrl_c(&mut self) {
        self.keys.write_all(b"\x03").unwrap();
        self.keys.flush().unwrap();
    }

    /// Waits (up to [`PATIENCE`]) for the exit; its code (-1 for a signal) and the whole screen.
    pub fn wait(mut self) -> (i32, String) {
        let code = wait_exit(&mut self.child).code().unwrap_or(-1);
        if let Some(reader) = self.reader.take() {
            reader.join().unwrap();
        }
        (code, self.screen())
    }
}

impl Drop for Pty {
    /// A failed test leaves nothing running.
    fn drop(&mut self) {
        if self.reader.is_some() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
