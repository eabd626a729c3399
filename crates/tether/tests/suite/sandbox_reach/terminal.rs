//! The agent cannot reach the person's terminal: tether runs on a pseudo-terminal (as a person
//! runs it), and the agent's commands try to type into it with `TIOCSTI` — answering the
//! `ask_before` question of its own next command, from a process left running — and to open the
//! terminals under `/dev/pts` to write a fake prompt and read what is typed there. Its commands
//! have no controlling terminal (`/dev/tty` gives `ENXIO`, `/proc/self/stat` shows no tty); the
//! terminals it sees under `/dev/pts` are only those it makes itself.

use std::fs;

use super::support::Hostile;
use crate::common::PATIENCE;
use crate::common::pty::Pty;

/// The attacker's helper. `probe` writes what the process sees of terminals to
/// `terminal.txt`; `type` leaves the command's process group (so it outlives the command), says
/// `typist.ready`, and types `yes` into the controlling terminal until `deployed.txt` exists,
/// writing how it ended to `typist.txt`.
const ATTACK: &str = r#"import errno, fcntl, os, pty, sys, termios, time

def err(e):
    return errno.errorcode.get(e.errno, str(e.errno))

def probe():
    out = []
    try:
        os.close(os.open("/dev/tty", os.O_RDONLY | os.O_NOCTTY))
        out.append("/dev/tty: opened")
    except OSError as e:
        out.append("/dev/tty: " + err(e))
    stat = open("/proc/self/stat").read()
    out.append("tty_nr: " + stat[stat.rindex(")") + 2:].split()[4])
    names = sorted(os.listdir("/dev/pts"))
    out.append("/dev/pts: " + " ".join(names))
    for n in sorted(set([x for x in names if x.isdigit()] + [str(i) for i in range(16)])):
        path = "/dev/pts/" + n
        try:
            fd = os.open(path, os.O_WRONLY | os.O_NOCTTY | os.O_NONBLOCK)
            os.write(fd, b"\r\nFAKE-PROMPT password: ")
            os.close(fd)
            out.append(path + ": written")
        except OSError:
            pass
        try:
            os.close(os.open(path, os.O_RDONLY | os.O_NOCTTY | os.O_NONBLOCK))
            out.append(path + ": opened for reading")
        except OSError:
            pass
    try:
        master, slave = pty.openpty()
        os.write(master, b"own\n")
        out.append("own pty: " + os.read(slave, 16).decode().strip())
    except OSError as e:
        out.append("own pty: " + err(e))
    open("terminal.txt", "w").write("\n".join(out) + "\n")

def typist():
    os.setpgid(0, 0)
    open("typist.ready", "w").close()
    try:
        fd = os.open("/dev/tty", os.O_RDONLY | os.O_NOCTTY)
    except OSError as e:
        open("typist.txt", "w").write("refused: open /dev/tty: " + err(e) + "\n")
        return
    deadline = time.time() + 30
    while not os.path.exists("deployed.txt") and time.time() < deadline:
        try:
            for c in b"yes\n":
                fcntl.ioctl(fd, termios.TIOCSTI, bytes([c]))
        except OSError as e:
            open("typist.txt", "w").write("refused: TIOCSTI: " + err(e) + "\n")
            return
        time.sleep(0.1)
    open("typist.txt", "w").write("typed\n" if os.path.exists("deployed.txt") else "gave up\n")

probe() if sys.argv[1] == "probe" else typist()
"#;

fn terminal(unprivileged_user: bool) {
    let h = Hostile::new(
        &[
            "python3 attack.py probe".to_owned(),
            "python3 attack.py type > typist.log 2>&1 < /dev/null &\n\
             for i in $(seq 600); do [ -e typist.ready ] && break; sleep 0.05; done"
                .to_owned(),
            "touch deployed.txt".to_owned(),
        ],
        "\n[human]\nask_before = [\"touch deployed.txt\"]\n",
    );
    fs::write(h.root().join("attack.py"), ATTACK).unwrap();
    let args = Hostile::ralph_args().join(" ");
    let home = h.home.path().to_owned();
    let setup = |c: &mut std::process::Command| {
        c.env("HOME", &home)
            .env("PATH", "/usr/local/bin:/usr/bin:/bin");
    };
    if unprivileged_user && crate::common::unprivileged::is_root() {
        crate::common::unprivileged::chown_tree(h.home.path());
    }
    let mut t = if unprivileged_user {
        Pty::start_unprivileged(h.root(), &args, setup)
    } else {
        Pty::start_with(h.root(), &args, setup)
    };
    // The question of the held command is on the terminal.
    t.wait_for("Your answer: ");
    let typist = h.root().join("typist.txt");
    tether_testkit::wait_until("the typist to end", PATIENCE, || {
        fs::read_to_string(&typist).ok().filter(|s| !s.is_empty())
    })
    .unwrap();
    if !h.root().join("deployed.txt").exists() {
        t.type_line("no");
    }
    let (code, screen) = t.wait();
    let read = |name: &str| fs::read_to_string(h.root().join(name)).unwrap_or_default();
    let said = read("typist.txt");
    assert!(said.starts_with("refused"), "the typist: {said}\n{screen}");
    assert!(!h.root().join("deployed.txt").exists(), "{screen}");
    assert_eq!(code, 0, "{screen}");
    let seen = read("terminal.txt");
    for line in [
        "/dev/tty: ENXIO",
        "tty_nr: 0",
        "/dev/pts: ptmx",
        "own pty: own",
    ] {
        assert!(seen.lines().any(|l| l == line), "{line:?} in:\n{seen}");
    }
    assert!(!seen.contains("written"), "{seen}");
    assert!(!seen.contains("for reading"), "{seen}");
    assert!(!screen.contains("FAKE-PROMPT"), "{screen}");
}

#[test]
fn the_agent_can_neither_type_into_nor_open_the_persons_terminal() {
    terminal(false);
}

#[test]
fn the_agent_of_an_ordinary_user_can_neither_type_into_nor_open_their_terminal() {
    terminal(true);
}
