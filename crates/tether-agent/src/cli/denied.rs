//! Which of its own files an agent CLI could not read in the sandbox, from what it printed: a
//! CLI installed outside the places the sandbox grants (its install tree as tether finds it, the
//! system's trees) fails its first read there — refused, or not there at all beneath the
//! directories the sandbox covers (`/tmp`, the home directory) — and the fix is to name that
//! place in `[sandbox] readable`.

use std::path::PathBuf;
use std::sync::LazyLock;

use regex_lite::Regex;

/// How programs say a read was refused, each with the path in its first group: Node's
/// (`EACCES: permission denied, open '/x'`), Python's (`Permission denied: '/x'`), the shell's
/// and coreutils' (`cat: /x: Permission denied`).
static DENIED: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    regexes(&[
        r"(?i)EACCES: permission denied, \w+ '(/[^']+)'",
        r"Permission denied: '(/[^']+)'",
        r"(/[^\s:'\x22]+): Permission denied",
    ])
});

/// How they say a file is not there, the same way.
static MISSING: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    regexes(&[
        r"(?i)ENOENT: no such file or directory, \w+ '(/[^']+)'",
        r"No such file or directory: '(/[^']+)'",
        r"(/[^\s:'\x22]+): No such file or directory",
    ])
});

fn regexes(patterns: &[&str]) -> Vec<Regex> {
    patterns.iter().filter_map(|r| Regex::new(r).ok()).collect()
}

/// The first path `stderr` says a read of was refused, or that was not there though it is
/// (`exists` says, outside the sandbox): one the sandbox hid.
pub(crate) fn denied_path(stderr: &str, exists: impl Fn(&PathBuf) -> bool) -> Option<PathBuf> {
    let first = |list: &[Regex]| {
        list.iter()
            .find_map(|re| re.captures(stderr)?.get(1))
            .map(|m| PathBuf::from(m.as_str()))
    };
    first(&DENIED).or_else(|| first(&MISSING).filter(|p| exists(p)))
}

#[cfg(test)]
mod tests {
    use super::denied_path;
    use std::path::Path;

    #[test]
    fn the_refused_path_is_found_in_what_node_python_and_the_shell_print() {
        for (stderr, path) in [
            (
                "node:fs:440\nError: EACCES: permission denied, open '/opt/pi/package/package.json'\n    at readFileSync",
                "/opt/pi/package/package.json",
            ),
            (
                "PermissionError: [Errno 13] Permission denied: '/opt/agent/lib/x.py'",
                "/opt/agent/lib/x.py",
            ),
            (
                "cat: /srv/cli/lib/main.js: Permission denied",
                "/srv/cli/lib/main.js",
            ),
            (
                "sh: 1: /srv/cli/bin/real: Permission denied",
                "/srv/cli/bin/real",
            ),
        ] {
            assert_eq!(
                denied_path(stderr, |_| false).as_deref(),
                Some(Path::new(path)),
                "{stderr}"
            );
        }
        assert_eq!(
            denied_path("error: unknown option --version", |_| true),
            None
        );
    }

    #[test]
    fn a_file_not_there_is_one_the_sandbox_hid_only_when_it_is_there_outside() {
        for stderr in [
            "Error: ENOENT: no such file or directory, open '/tmp/cli/lib/x.js'",
            "cat: /tmp/cli/lib/x.js: No such file or directory",
            "FileNotFoundError: [Errno 2] No such file or directory: '/tmp/cli/lib/x.js'",
        ] {
            assert_eq!(
                denied_path(stderr, |_| true).as_deref(),
                Some(Path::new("/tmp/cli/lib/x.js")),
                "{stderr}"
            );
            assert_eq!(denied_path(stderr, |_| false), None, "{stderr}");
        }
    }
}
