//! The hostile agent these tests share: the built-in agent, driven by a fake model server, runs
//! one `bash` command per turn (each an attack or a probe), then ends the iteration. Probes
//! write `<what>: done|refused` lines to `probes.txt` in the workspace.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::json;
use tether_config::Api;
use tether_model::scripted::{Script, Turn};
use tether_testkit::model_server::FakeModelServer;

use crate::common::{cmd, model_table, runtime, text, unprivileged};

/// A shell function: `p <what> <command…>` appends `<what>: done` or `<what>: refused` to
/// `probes.txt`, as the command succeeds or fails.
pub const PROBE: &str = r#"p() { name=$1; shift; if "$@" > /dev/null 2>&1; then echo "$name: done" >> probes.txt; else echo "$name: refused" >> probes.txt; fi; }
"#;

/// The variables that move a toolchain out of the home directory.
pub const TOOLCHAIN_VARS: [&str; 6] = [
    "CARGO_HOME",
    "RUSTUP_HOME",
    "RUSTUP_TOOLCHAIN",
    "GOPATH",
    "NVM_DIR",
    "PYENV_ROOT",
];

/// A workspace (a git repository), a home directory of its own, and the agent's model.
pub struct Hostile {
    pub dir: tempfile::TempDir,
    pub home: tempfile::TempDir,
    _server: FakeModelServer,
    _rt: tokio::runtime::Runtime,
}

impl Hostile {
    /// The agent runs each of `commands` with `bash`, one per turn, then says it is done;
    /// `toml` is added to tether.toml.
    pub fn new(commands: &[String], toml: &str) -> Hostile {
        Hostile::with_home(tempfile::tempdir().unwrap(), commands, toml)
    }

    /// [`Hostile::new`], with `home` as the home directory.
    pub fn with_home(home: tempfile::TempDir, commands: &[String], toml: &str) -> Hostile {
        Hostile::runs(home, &[commands.to_vec()], toml, true)
    }

    /// A workspace (a git repository when `repository`) whose agent plays `runs`, one run of
    /// `tether ralph` after another: each run's commands with `bash`, one per turn, then it says
    /// it is done; `toml` is added to tether.toml.
    pub fn runs(
        home: tempfile::TempDir,
        runs: &[Vec<String>],
        toml: &str,
        repository: bool,
    ) -> Hostile {
        Hostile::runs_in(tempfile::tempdir().unwrap(), home, runs, toml, repository)
    }

    /// [`Hostile::runs`], in the workspace `dir`.
    pub fn runs_in(
        dir: tempfile::TempDir,
        home: tempfile::TempDir,
        runs: &[Vec<String>],
        toml: &str,
        repository: bool,
    ) -> Hostile {
        let rt = runtime();
        let turns: Vec<Turn> = runs
            .iter()
            .flat_map(|commands| {
                commands
                    .iter()
                    .map(|c| Turn::tool("bash", json!({"command": c})))
                    .chain([Turn::text("Done. <promise>DONE</promise>")])
            })
            .collect();
        let server = rt
            .block_on(FakeModelServer::start(
                Script::turns(turns).then_repeat(Turn::text("<promise>DONE</promise>")),
            ))
            .unwrap();
        fs::write(
            dir.path().join("tether.toml"),
            format!(
                "{}{toml}",
                model_table("model", Api::OpenAiChat, &server, "fake")
            ),
        )
        .unwrap();
        if repository {
            let out = Command::new("sh")
                .args([
                    "-c",
                    "git init -q && git -c user.name=a -c user.email=a@b commit -q --allow-empty -m start",
                ])
                .current_dir(dir.path())
                .output()
                .unwrap();
            assert!(out.status.success(), "{}", text(&out.stderr));
        }
        Hostile {
            dir,
            home,
            _server: server,
            _rt: rt,
        }
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    /// Writes `content` to `name` in the home directory (its parents made).
    pub fn home_file(&self, name: &str, content: &str) -> PathBuf {
        let path = self.home.path().join(name);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, content).unwrap();
        path
    }

    /// The arguments of one iteration of `tether ralph`.
    pub fn ralph_args() -> [&'static str; 6] {
        [
            "ralph",
            "probe",
            "--completion-promise",
            "DONE",
            "--max-iterations",
            "1",
        ]
    }

    /// `tether ralph` for one iteration (the binary at `bin`, else the built one), as this user
    /// or as an ordinary one, with this home directory and a plain `PATH`.
    pub fn ralph(&self, bin: Option<&Path>, unprivileged_user: bool) -> Command {
        let mut c = if unprivileged_user {
            if unprivileged::is_root() {
                unprivileged::chown_tree(self.home.path());
            }
            let bin = bin.unwrap_or(Path::new(env!("CARGO_BIN_EXE_tether")));
            unprivileged::tether_at(bin, self.root())
        } else {
            match bin {
                Some(bin) => {
                    let mut c = Command::new(bin);
                    crate::common::isolate(&mut c).current_dir(self.root());
                    c
                }
                None => cmd(self.root(), &[]),
            }
        };
        c.args(Self::ralph_args())
            .env("HOME", self.home.path())
            .env("PATH", "/usr/local/bin:/usr/bin:/bin");
        // The toolchains are those of this home directory (rustup sets its variables for the
        // tests' own process).
        for var in TOOLCHAIN_VARS {
            c.env_remove(var);
        }
        c
    }

    /// Every probe named in `refused` was refused and every one in `done` done, each having run.
    pub fn assert_probes(&self, out: &Output, refused: &[&str], done: &[&str]) {
        assert_probes_in(self.root(), out, refused, done);
    }
}

/// Each probe's outcome, in order, as the agent wrote them in the working tree `tree`.
fn probes_in(tree: &Path) -> Vec<(String, String)> {
    let text = fs::read_to_string(tree.join("probes.txt")).unwrap_or_default();
    text.lines()
        .filter_map(|l| l.rsplit_once(": "))
        .map(|(a, b)| (a.to_owned(), b.to_owned()))
        .collect()
}

/// Every probe named in `refused` was refused and every one in `done` done, each having run in
/// the working tree `tree`.
pub fn assert_probes_in(tree: &Path, out: &Output, refused: &[&str], done: &[&str]) {
    let said = probes_in(tree);
    let why = || format!("{said:#?}\n{}", text(&out.stderr));
    for (names, should) in [(refused, "refused"), (done, "done")] {
        for name in names {
            let outcome = said.iter().find(|(n, _)| n == name).map(|(_, o)| o);
            assert_eq!(
                outcome.map(String::as_str),
                Some(should),
                "{name}: {}",
                why()
            );
        }
    }
}
