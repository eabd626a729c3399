//! A throwaway PostgreSQL cluster for tests: `initdb` and `pg_ctl` in a temporary directory, a
//! Unix socket in that directory and a random TCP port on 127.0.0.1; no docker, no system
//! service.
//!
//! Tests share one cluster per test process ([`database`]), each in a database of its own so
//! they run in parallel; the cluster is stopped (`pg_ctl stop -m immediate`) and its directory
//! removed when the last test holding it drops its [`TestDatabase`]. A test that restarts the
//! server starts a [`PgCluster`] of its own.
//!
//! The binaries come from `TETHER_TEST_PG_BIN` (a directory, set by `./test.sh`), else from the
//! newest `/usr/lib/postgresql/<version>/bin`, else from `PATH`. When none is found the helpers
//! fail with [`PgError::NotInstalled`]: a test needing PostgreSQL fails, never skips.
//!
//! `initdb` refuses to run as root, so as root the cluster runs as an unprivileged user
//! (`TETHER_TEST_PG_USER`, default `tether-pg`, created by `./test.sh`) through `runuser`, with
//! the temporary directory given to that user.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};

/// The superuser name of every test cluster (connections are trusted; there is no password).
pub const SUPERUSER: &str = "postgres";

/// A test cluster could not be started, used or stopped.
#[derive(Debug, thiserror::Error)]
pub enum PgError {
    /// No PostgreSQL binaries were found; run the tests through `./test.sh`, which installs
    /// Debian's `postgresql`.
    #[error("PostgreSQL is not installed (looked for `{program}` in {looked}); run ./test.sh")]
    NotInstalled {
        /// The program looked for.
        program: &'static str,
        /// Where it was looked for.
        looked: String,
    },
    /// A PostgreSQL command failed; its output (and the server log) says why.
    #[error("`{what}` failed ({status}): {output}")]
    Command {
        /// The command.
        what: String,
        /// How it ended.
        status: String,
        /// Its stderr and stdout, and the server log's end when there is one.
        output: String,
    },
    /// The temporary directory could not be prepared.
    #[error("preparing the cluster directory: {0}")]
    Io(#[from] std::io::Error),
}

/// A running throwaway cluster; stopped and removed on drop.
#[derive(Debug)]
pub struct PgCluster {
    dir: tempfile::TempDir,
    bin: PathBuf,
    run_as: Option<String>,
    port: u16,
}

/// A database of its own in a test cluster: connect to `host`:`port` as `user` (no password).
#[derive(Debug, Clone)]
pub struct TestDatabase {
    /// `127.0.0.1`.
    pub host: String,
    /// The cluster's TCP port.
    pub port: u16,
    /// The directory holding the cluster's Unix socket.
    pub socket_dir: PathBuf,
    /// The superuser ([`SUPERUSER`]).
    pub user: String,
    /// The database's name, unique in its cluster.
    pub dbname: String,
    _cluster: Arc<PgCluster>,
}

static SHARED: Mutex<Weak<PgCluster>> = Mutex::new(Weak::new());
static NEXT_DB: AtomicU64 = AtomicU64::new(1);

impl TestDatabase {
    /// The database as a URL (`postgres://user@host:port/dbname`; the test clusters trust
    /// local connections, so there is no password).
    pub fn url(&self) -> String {
        format!(
            "postgres://{}@{}:{}/{}",
            self.user, self.host, self.port, self.dbname
        )
    }
}

/// A fresh database in this process's shared cluster, starting the cluster if no test holds it.
pub fn database() -> Result<TestDatabase, PgError> {
    let cluster = {
        let mut shared = SHARED
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        match shared.upgrade() {
            Some(cluster) => cluster,
            None => {
                let cluster = Arc::new(PgCluster::start()?);
                *shared = Arc::downgrade(&cluster);
                cluster
            }
        }
    };
    PgCluster::create_database(&cluster)
}

impl PgCluster {
    /// Initialises and starts a cluster in a new temporary directory.
    pub fn start() -> Result<PgCluster, PgError> {
        let bin = bin_dir()?;
        let run_as = run_as_user();
        let dir = tempfile::Builder::new().prefix("tether-pg-").tempdir()?;
        if let Some(user) = &run_as {
            run(
                Command::new("chown").arg(user).arg(dir.path()),
                "chown",
                None,
            )?;
        }
        let port = free_port()?;
        let cluster = PgCluster {
            dir,
            bin,
            run_as,
            port,
        };
        cluster.initdb()?;
        cluster.pg_ctl(&["start", "-w", "-t", "60"])?;
        Ok(cluster)
    }

    /// The TCP port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The directory holding the Unix socket.
    pub fn socket_dir(&self) -> &Path {
        self.dir.path()
    }

    /// Restarts the server (`pg_ctl restart -m fast`): every open connection is cut.
    pub fn restart(&self) -> Result<(), PgError> {
        self.pg_ctl(&["restart", "-m", "fast", "-w", "-t", "60"])
    }

    /// Creates a database with a name no other test of this process uses.
    pub fn create_database(cluster: &Arc<PgCluster>) -> Result<TestDatabase, PgError> {
        let n = NEXT_DB.fetch_add(1, Ordering::Relaxed);
        let dbname = format!("t_{}_{n}", std::process::id());
        let createdb = cluster.program("createdb");
        let mut cmd = Command::new(&createdb);
        cmd.args(["-h", "127.0.0.1", "-p", &cluster.port.to_string()])
            .args(["-U", SUPERUSER, &dbname])
            .env("PGCONNECT_TIMEOUT", "10");
        run(&mut cmd, "createdb", Some(&cluster.log()))?;
        Ok(TestDatabase {
            host: "127.0.0.1".into(),
            port: cluster.port,
            socket_dir: cluster.dir.path().to_path_buf(),
            user: SUPERUSER.into(),
            dbname,
            _cluster: Arc::clone(cluster),
        })
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    fn log(&self) -> PathBuf {
        self.dir.path().join("server.log")
    }

    fn program(&self, name: &str) -> PathBuf {
        self.bin.join(name)
    }

    fn initdb(&self) -> Result<(), PgError> {
        let data = self.data();
        let mut cmd = self.as_owner(&self.program("initdb"));
        cmd.arg("-D").arg(&data).args(["-U", SUPERUSER]);
        cmd.args(["--auth=trust", "-E", "UTF8", "--no-locale", "--no-sync"]);
        run(&mut cmd, "initdb", None)?;
        // Settings live in the configuration file so that `pg_ctl restart` keeps them.
        let settings = format!(
            "\nport = {}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '{}'\n\
             fsync = off\nfull_page_writes = off\nsynchronous_commit = off\nmax_connections = 200\n",
            self.port,
            self.dir.path().display()
        );
        let conf = data.join("postgresql.conf");
        let mut text = std::fs::read_to_string(&conf)?;
        text.push_str(&settings);
        std::fs::write(&conf, text)?;
        Ok(())
    }

    fn pg_ctl(&self, args: &[&str]) -> Result<(), PgError> {
        let mut cmd = self.as_owner(&self.program("pg_ctl"));
        cmd.arg("-D").arg(self.data()).arg("-l").arg(self.log());
        cmd.args(args);
        run(&mut cmd, &format!("pg_ctl {}", args[0]), Some(&self.log()))
    }

    /// A command run as the cluster's owner.
    fn as_owner(&self, program: &Path) -> Command {
        match &self.run_as {
            Some(user) => {
                let mut cmd = Command::new("runuser");
                cmd.args(["-u", user, "--"]).arg(program);
                cmd
            }
            None => Command::new(program),
        }
    }
}

impl Drop for PgCluster {
    fn drop(&mut self) {
        if let Err(err) = self.pg_ctl(&["stop", "-m", "immediate", "-w", "-t", "30"]) {
            report_stop_failure(&err);
        }
    }
}

/// Drop cannot fail; what went wrong goes to stderr where the test harness shows it.
#[allow(clippy::print_stderr)]
fn report_stop_failure(err: &PgError) {
    eprintln!("tether-testkit: stopping a test cluster: {err}");
}

fn bin_dir() -> Result<PathBuf, PgError> {
    let mut looked = Vec::new();
    if let Some(dir) = std::env::var_os("TETHER_TEST_PG_BIN") {
        let dir = PathBuf::from(dir);
        if dir.join("initdb").is_file() {
            return Ok(dir);
        }
        looked.push(format!("TETHER_TEST_PG_BIN={}", dir.display()));
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| Some((e.file_name().to_str()?.parse().ok()?, e.path().join("bin"))))
        .filter(|(_, bin)| bin.join("initdb").is_file())
        .collect();
    versions.sort();
    if let Some((_, bin)) = versions.pop() {
        return Ok(bin);
    }
    looked.push("/usr/lib/postgresql/*/bin".into());
    let path = std::env::var_os("PATH").unwrap_or_default();
    if let Some(dir) = std::env::split_paths(&path).find(|d| d.join("initdb").is_file()) {
        return Ok(dir);
    }
    looked.push("PATH".into());
    Err(PgError::NotInstalled {
        program: "initdb",
        looked: looked.join(", "),
    })
}

/// The user to run the cluster as when this process is root (whose `initdb` is refused).
fn run_as_user() -> Option<String> {
    let root = std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0);
    root.then(|| std::env::var("TETHER_TEST_PG_USER").unwrap_or_else(|_| "tether-pg".into()))
}

fn free_port() -> Result<u16, PgError> {
    let listener = std::net::TcpListener::bind(("127.0.0.1", 0))?;
    Ok(listener.local_addr()?.port())
}

fn run(cmd: &mut Command, what: &str, log: Option<&Path>) -> Result<(), PgError> {
    let out = cmd.stdin(Stdio::null()).output()?;
    if out.status.success() {
        return Ok(());
    }
    let mut output = String::from_utf8_lossy(&out.stderr).into_owned();
    output.push_str(&String::from_utf8_lossy(&out.stdout));
    if let Some(text) = log.and_then(|l| std::fs::read_to_string(l).ok()) {
        let tail: Vec<&str> = text.lines().rev().take(20).collect();
        output.push_str("\nserver log (end):\n");
        output.push_str(&tail.into_iter().rev().collect::<Vec<_>>().join("\n"));
    }
    Err(PgError::Command {
        what: what.to_owned(),
        status: out.status.to_string(),
        output,
    })
}
