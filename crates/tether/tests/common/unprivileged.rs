//! Running tether as an ordinary user. When the tests run as root, root (with
//! `CAP_SYS_PTRACE`) reads any process's `/proc` files, non-dumpable or not, and passes every
//! permission check; only a run as an ordinary user shows what tether's defences do against an
//! agent running as that same user. So when the tests run as root the workspace is handed to an
//! unprivileged user and tether is started as that user; otherwise tether runs as the tests do.

use std::fs;
use std::path::Path;
use std::process::Command;

use super::isolate;

/// The unprivileged user (and group) tether is started as when the tests run as root.
pub const NOBODY: &str = "65534";

/// Whether the tests run as root.
pub fn is_root() -> bool {
    std::os::unix::fs::MetadataExt::uid(&fs::metadata("/proc/self").unwrap()) == 0
}

/// `tether` in `dir`, isolated, with no arguments yet: as [`NOBODY`] when the tests run as root
/// (everything in `dir` is handed to that user first, so make the workspace before).
pub fn tether(dir: &Path) -> Command {
    tether_at(Path::new(env!("CARGO_BIN_EXE_tether")), dir)
}

/// [`tether`], with the tether binary at `bin` (a copy kept elsewhere; the ordinary user must be
/// able to run it).
pub fn tether_at(bin: &Path, dir: &Path) -> Command {
    let mut c = if is_root() {
        chown_tree(dir);
        let mut c = Command::new("setpriv");
        c.args([
            &format!("--reuid={NOBODY}"),
            &format!("--regid={NOBODY}"),
            "--clear-groups",
            "--",
        ]);
        c.arg(bin);
        c
    } else {
        Command::new(bin)
    };
    isolate(&mut c).current_dir(dir);
    c
}

/// Hands `dir` and everything in it to [`NOBODY`].
pub fn chown_tree(dir: &Path) {
    let id = Some(NOBODY.parse().unwrap());
    let mut dirs = vec![dir.to_owned()];
    while let Some(d) = dirs.pop() {
        std::os::unix::fs::chown(&d, id, id).unwrap();
        for entry in fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            let meta = fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                dirs.push(path);
            } else {
                std::os::unix::fs::lchown(&path, id, id).unwrap();
            }
        }
    }
}
