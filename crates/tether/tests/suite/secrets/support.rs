//! The secrets test's tools: what to search for, searching files and output, and running
//! tether with its output drained as it runs.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::thread::JoinHandle;

use super::{MODEL_KEY, WRONG_KEY, ZULIP_KEY};
use crate::common::wait_exit;

/// What must never be found: each key, its distinctive part, and the Zulip Basic credentials.
pub fn needles(zulip_email: &str) -> Vec<String> {
    let mut n = Vec::new();
    for key in [MODEL_KEY, ZULIP_KEY, WRONG_KEY] {
        n.push(key.to_owned());
        n.push(key.split_once("LEAKCHECK").map_or_else(
            || key.split_once("WRONGKEY").unwrap().1.to_owned(),
            |(_, rest)| rest.to_owned(),
        ));
    }
    n.push(base64(format!("{zulip_email}:{ZULIP_KEY}").as_bytes()));
    n
}

pub fn base64(bytes: &[u8]) -> String {
    const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let v = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(A[(v >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// `where: needle` for every needle found in `bytes`.
pub fn hits_in(place: &str, bytes: &[u8], needles: &[String]) -> Vec<String> {
    needles
        .iter()
        .filter(|n| bytes.windows(n.len()).any(|w| w == n.as_bytes()))
        .map(|n| format!("{place}: {n}"))
        .collect()
}

/// Every regular file under `root`, searched as bytes: the hits and the files searched.
pub fn scan_tree(root: &Path, needles: &[String]) -> (Vec<String>, Vec<PathBuf>) {
    let (mut hits, mut files, mut dirs) = (Vec::new(), Vec::new(), vec![root.to_owned()]);
    while let Some(dir) = dirs.pop() {
        for entry in fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            let Ok(meta) = fs::symlink_metadata(&path) else {
                continue;
            };
            if meta.is_dir() {
                dirs.push(path);
            } else if meta.is_file()
                && let Ok(bytes) = fs::read(&path)
            {
                hits.extend(hits_in(&path.display().to_string(), &bytes, needles));
                files.push(path);
            }
        }
    }
    (hits, files)
}

/// A child whose stdout and stderr are drained as it runs (trace logging fills a pipe fast).
pub struct Running {
    child: Child,
    out: JoinHandle<Vec<u8>>,
    err: JoinHandle<Vec<u8>>,
}

fn drain(mut r: impl Read + Send + 'static) -> JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = r.read_to_end(&mut buf);
        buf
    })
}

impl Running {
    pub fn start(mut cmd: Command) -> Running {
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let out = drain(child.stdout.take().unwrap());
        let err = drain(child.stderr.take().unwrap());
        Running { child, out, err }
    }

    /// Waits (with a deadline) for the process to exit; what it printed.
    pub fn wait(mut self) -> Output {
        let status = wait_exit(&mut self.child);
        Output {
            status,
            stdout: self.out.join().unwrap(),
            stderr: self.err.join().unwrap(),
        }
    }
}
