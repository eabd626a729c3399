//! Team mode: "machines" are processes with workspaces of their own and their own
//! `TETHER_MACHINE`, sharing one real PostgreSQL database through `TETHER_STORE_URL`.

mod chat;
mod fleet;
mod machines;
mod mcp;
mod outage;
mod push;
mod resume;
mod schedules;
mod workers;

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};

use tether_testkit::postgres::{self, TestDatabase};

use crate::common::cmd;

/// A fresh team database (the test cluster is set up by `./test.sh`).
fn database() -> TestDatabase {
    postgres::database().expect("PostgreSQL for the tests (run ./test.sh)")
}

/// One machine of the team: a workspace and a name, on the team store at `url`.
struct Machine {
    dir: tempfile::TempDir,
    name: &'static str,
    url: String,
}

impl Machine {
    fn new(name: &'static str, url: &str) -> Machine {
        Machine {
            dir: tempfile::tempdir().unwrap(),
            name,
            url: url.to_owned(),
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = cmd(self.path(), args);
        c.env("TETHER_STORE_URL", &self.url)
            .env("TETHER_MACHINE", self.name);
        c
    }

    fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().unwrap()
    }

    fn spawn(&self, args: &[&str]) -> Child {
        self.cmd(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }
}
