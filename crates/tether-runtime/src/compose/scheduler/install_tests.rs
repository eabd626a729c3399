//! The unit and the crontab line for paths systemd, cron and the shell would read otherwise:
//! a space, `%`, `$`, and for the shell a quote and a backslash; the paths neither can hold.

use std::path::Path;

use super::{crontab_line, systemd_unit};

/// A workspace and a tether whose paths hold every character that needs care.
const ROOT: &str = "/srv/my app/100% $HOME";
const EXE: &str = "/opt/my tether/50% $x/bin/tether";
/// A tether at a path the shell needs quoting for, and systemd refuses to run.
const QUOTED_EXE: &str = "/opt/te\"ther $x/50%\\bin/tether";

#[test]
fn the_unit_quotes_and_escapes_what_systemd_would_read_otherwise() {
    let unit = systemd_unit(Path::new(ROOT), Path::new(EXE)).unwrap();
    insta::assert_snapshot!(unit);
    assert!(
        unit.contains("\nWorkingDirectory=/srv/my app/100%% $HOME\n"),
        "{unit}"
    );
    assert!(
        unit.contains("\nExecStart=\"/opt/my tether/50%% $x/bin/tether\" schedule run\n"),
        "{unit}"
    );
    assert!(unit.contains("\nSuccessExitStatus=130\n"), "{unit}");
    assert!(
        unit.contains("\nEnvironmentFile=-%h/.config/tether/schedule.env\n"),
        "{unit}"
    );
}

#[test]
fn a_plain_path_is_written_plainly() {
    let unit = systemd_unit(Path::new("/srv/app"), Path::new("/usr/bin/tether")).unwrap();
    assert!(unit.contains("\nWorkingDirectory=/srv/app\n"), "{unit}");
    assert!(
        unit.contains("\nExecStart=\"/usr/bin/tether\" schedule run\n"),
        "{unit}"
    );
    let cron = crontab_line(Path::new("/srv/app"), Path::new("/usr/bin/tether")).unwrap();
    assert!(
        cron.ends_with(
            "\n@reboot cd /srv/app && /usr/bin/tether schedule run >> \
             /srv/app/.tether/schedule.log 2>&1\n"
        ),
        "{cron}"
    );
}

#[test]
fn the_crontab_line_quotes_for_the_shell_and_escapes_percent_for_cron() {
    let cron = crontab_line(Path::new(ROOT), Path::new(QUOTED_EXE)).unwrap();
    insta::assert_snapshot!(cron);
    let line = cron.lines().last().unwrap();
    assert_eq!(
        line,
        "@reboot cd '/srv/my app/100\\% $HOME' && '/opt/te\"ther $x/50\\%\\bin/tether' \
         schedule run >> '/srv/my app/100\\% $HOME/.tether/schedule.log' 2>&1"
    );
    assert!(
        cron.starts_with("# cron starts it with a bare PATH"),
        "{cron}"
    );
    // A quote of the path is closed and opened again around it.
    let quoted = crontab_line(Path::new("/srv/it's"), Path::new("/usr/bin/tether")).unwrap();
    assert!(quoted.contains("cd '/srv/it'\\''s' && "), "{quoted}");
}

#[test]
fn a_path_with_a_newline_is_refused() {
    let root = Path::new("/srv/a\n@reboot rm -rf ~");
    let said = crontab_line(root, Path::new("/usr/bin/tether"))
        .unwrap_err()
        .to_string();
    assert!(
        said.starts_with("/srv/a\\n@reboot rm -rf ~: the path holds a control character"),
        "{said}"
    );
    assert!(systemd_unit(root, Path::new("/usr/bin/tether")).is_err());
    assert!(systemd_unit(Path::new("/srv/app"), Path::new("/bin/te\nther")).is_err());
}

#[test]
fn a_program_path_systemd_would_not_run_is_refused_for_the_unit_alone() {
    let said = systemd_unit(Path::new(ROOT), Path::new(QUOTED_EXE))
        .unwrap_err()
        .to_string();
    assert!(
        said.ends_with(
            "systemd runs no program whose path holds a quote or a backslash: install \
             tether at a path without one, or start the scheduler with cron (--crontab)"
        ),
        "{said}"
    );
    // A workspace with them is only a directory to systemd.
    let unit = systemd_unit(Path::new("/srv/it's \"q\""), Path::new(EXE)).unwrap();
    assert!(
        unit.contains("\nWorkingDirectory=/srv/it's \"q\"\n"),
        "{unit}"
    );
}
