//! `tether serve` at rest, measured on the release binary: VmRSS and VmHWM after it served the
//! runs page and while one live stream is open and nothing happens (bar: VmRSS < 20 MB), and
//! the CPU time it uses over 5 idle seconds.
//!
//! Run with `cargo bench -p tether --bench serve`. Exits non-zero when the bar is missed.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout
)]

#[allow(dead_code)]
#[path = "../tests/common/mod.rs"]
mod common;

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpStream;
use std::process::{ExitCode, Stdio};
use std::time::Duration;

fn status(pid: u32, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse().ok())
        .unwrap()
}

fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    let f: Vec<&str> = after.split(' ').collect();
    f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap()
}

fn main() -> ExitCode {
    let dir = tempfile::tempdir().unwrap();
    assert!(common::run(dir.path(), &["init"]).status.success());
    let mut serve = common::cmd(dir.path(), &["serve"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut url = String::new();
    BufReader::new(serve.stdout.take().unwrap())
        .read_line(&mut url)
        .unwrap();
    let (base, token) = url.trim().split_once("/?token=").unwrap();
    let addr = base.trim_start_matches("http://").to_owned();
    let get = |path: &str, close: bool| {
        let mut s = TcpStream::connect(&addr).unwrap();
        let conn = if close { "Connection: close\r\n" } else { "" };
        write!(
            s,
            "GET {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\n{conn}\r\n"
        )
        .unwrap();
        s
    };
    let mut page = Vec::new();
    get("/", true).read_to_end(&mut page).unwrap();
    assert!(page.starts_with(b"HTTP/1.1 200"));
    let _stream = get("/live?page=runs", false);
    std::thread::sleep(Duration::from_secs(2));
    let pid = serve.id();
    let ticks = cpu_ticks(pid);
    std::thread::sleep(Duration::from_secs(5));
    let cpu = cpu_ticks(pid) - ticks;
    let rss = status(pid, "VmRSS:");
    let hwm = status(pid, "VmHWM:");
    let threads = status(pid, "Threads:");
    let _ = serve.kill();
    let _ = serve.wait();
    let ok = rss < 20 * 1024;
    println!(
        "tether serve idle (one page served, one live stream open): VmRSS {:.1} MB, VmHWM {:.1} MB, \
         {threads} threads, CPU over 5 idle s: {cpu} ticks — {}",
        rss as f64 / 1024.0,
        hwm as f64 / 1024.0,
        if ok {
            "ok (bar < 20 MB)"
        } else {
            "MISSED (bar < 20 MB)"
        }
    );
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
