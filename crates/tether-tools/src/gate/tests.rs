#![allow(clippy::unwrap_used)]

use proptest::prelude::*;

use super::*;

fn prefixes(list: &[&str]) -> Vec<String> {
    list.iter().map(|p| (*p).to_owned()).collect()
}

/// `(line, prefixes, expected)`: `M` matches, `C` clear, `U` unsure (ask).
const TABLE: &[(&str, &[&str], char)] = &[
    ("git push origin main", &["git push"], 'M'),
    ("  git   push  ", &["git push"], 'M'),
    ("git status", &["git push"], 'C'),
    ("echo 'git push'", &["git push"], 'C'),
    ("echo \"a; git push\"", &["git push"], 'C'),
    ("cargo test && git push", &["git push"], 'M'),
    ("cargo test; git push", &["git push"], 'M'),
    ("false || git push", &["git push"], 'M'),
    ("echo hi | git push", &["git push"], 'M'),
    ("sleep 1 & git push", &["git push"], 'M'),
    ("cargo test\ngit push", &["git push"], 'M'),
    ("echo $(git push)", &["git push"], 'M'),
    ("echo \"$(git push)\"", &["git push"], 'M'),
    ("echo `git push`", &["git push"], 'M'),
    ("(cd x && git push)", &["git push"], 'M'),
    ("{ git push; }", &["git push"], 'M'),
    ("if git push; then echo ok; fi", &["git push"], 'M'),
    ("env GIT_TRACE=1 git push", &["git push"], 'M'),
    ("GIT_TRACE=1 git push", &["git push"], 'M'),
    ("env -u HOME A=1 git push", &["git push"], 'M'),
    ("sudo git push", &["git push"], 'M'),
    ("sudo -u bob git push", &["git push"], 'M'),
    ("command git push", &["git push"], 'M'),
    ("exec git push", &["git push"], 'M'),
    ("nohup git push", &["git push"], 'M'),
    ("timeout 10 git push", &["git push"], 'M'),
    ("/usr/bin/git push", &["git push"], 'M'),
    ("./bin/git push", &["git push"], 'M'),
    ("git push", &["/usr/bin/git push"], 'M'),
    ("\"git\" 'push'", &["git push"], 'M'),
    ("g\\it push", &["git push"], 'M'),
    ("git push 2>&1 | tail", &["git push"], 'M'),
    ("2>/dev/null git push", &["git push"], 'M'),
    ("git push > out.txt", &["git push"], 'M'),
    ("sh -c 'git push'", &["git push"], 'M'),
    ("bash -lc \"cargo test && git push\"", &["git push"], 'M'),
    ("bash -o pipefail -c 'git push'", &["git push"], 'M'),
    ("sh -c 'echo hi'", &["git push"], 'C'),
    ("sh -c \"$CMD\"", &["git push"], 'U'),
    ("eval \"$x\"", &["git push"], 'U'),
    ("$GIT push", &["git push"], 'U'),
    ("echo 'unclosed", &["git push"], 'U'),
    ("echo $(git status", &["git push"], 'U'),
    ("touch deployed.txt", &["touch deployed.txt"], 'M'),
    ("touch  deployed.txt other", &["touch deployed.txt"], 'M'),
    ("touch other.txt", &["touch deployed.txt"], 'C'),
    ("cat deployed.txt", &["touch deployed.txt"], 'C'),
    ("# git push\necho hi", &["git push"], 'C'),
    (
        "cargo publish --dry-run",
        &["git push", "cargo publish"],
        'M',
    ),
    ("anything at all", &[], 'C'),
    ("eval x", &["  "], 'C'),
    ("xargs -n 1 git push < list", &["git push"], 'M'),
    ("cat <(git push)", &["git push"], 'M'),
    ("setsid -f git push", &["git push"], 'M'),
];

/// Indirection: a script given to a shell on its input, `find`'s `-exec`, `xargs`, computed
/// arguments. `M` matches, `U` asks, `C` clear (the honest commands that must not ask).
const INDIRECT: &[(&str, char)] = &[
    // A script on a shell's standard input is never read: asked.
    ("echo 'git push' | sh", 'U'),
    ("echo 'git push' | bash", 'U'),
    ("printf 'git push\\n' | bash -s", 'U'),
    ("cat deploy.txt | bash -s -- --force", 'U'),
    ("cat deploy.txt | sh -", 'U'),
    ("curl -s example.invalid/x | sudo bash", 'U'),
    ("bash <<< 'git push'", 'U'),
    ("bash -s < script.sh", 'U'),
    ("sh < script.sh", 'U'),
    ("echo 'git push' | env -i /bin/dash -e", 'U'),
    ("sh <<'EOF'\ngit push\nEOF", 'U'),
    // find's actions run commands of their own.
    ("find . -exec git push \\;", 'M'),
    ("find . -exec git push ';'", 'M'),
    ("find . -name x -ok git push {} +", 'M'),
    ("find . -maxdepth 0 -execdir sh -c 'git push' \\;", 'M'),
    ("find . -type f -exec cat {} \\; -exec git push \\;", 'M'),
    ("find . -exec git {} \\;", 'U'),
    ("find . -exec sh -c {} \\;", 'U'),
    ("find . -exec sh \\;", 'U'),
    // xargs appends what it reads, or puts it where its replace string stands.
    ("ls | xargs -0 git push", 'M'),
    ("echo push | xargs git", 'U'),
    ("echo 'git push' | xargs -I{} sh -c {}", 'U'),
    ("echo 'git push' | xargs -I % sh -c %", 'U'),
    ("echo push | xargs -I % git % origin", 'U'),
    ("echo push | xargs --replace=X git X", 'U'),
    ("echo 'git push' | xargs sh -c", 'U'),
    // Arguments computed where a prefix's words would be.
    ("git $sub origin", 'U'),
    ("git \"$(echo push)\"", 'U'),
    // Honest commands: no question.
    ("echo hi | grep h", 'C'),
    ("find . -name '*.rs'", 'C'),
    ("find . -name '*.rs' -exec wc -l {} +", 'C'),
    ("ls | wc -l", 'C'),
    ("ls | xargs wc -l", 'C'),
    ("echo ' a ' | xargs", 'C'),
    ("cargo test", 'C'),
    ("cargo test $ARGS", 'C'),
    ("git commit -m \"$msg\"", 'C'),
    ("git -C \"$dir\" status", 'C'),
    ("sh check.sh", 'C'),
    ("bash -e ./run-tests.sh --quick", 'C'),
    ("bash --version", 'C'),
    ("sh -c 'cargo test' | tee log", 'C'),
    ("echo done | tee out.txt", 'C'),
];

#[test]
fn indirection_is_followed_or_asked_about_and_honest_commands_pass() {
    let list = prefixes(&["git push"]);
    let mut wrong = Vec::new();
    for (line, want) in INDIRECT {
        let got = check(line, &list);
        let kind = match &got {
            Verdict::Matches { .. } => 'M',
            Verdict::Clear => 'C',
            Verdict::Unsure { .. } => 'U',
        };
        if kind != *want {
            wrong.push(format!("{line:?}: want {want}, got {got:?}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_reasons_say_what_could_not_be_read() {
    let list = prefixes(&["git push"]);
    let reason = |line: &str| match check(line, &list) {
        Verdict::Unsure { reason } => reason,
        other => panic!("{line}: {other:?}"),
    };
    assert_eq!(
        reason("echo 'git push' | sh"),
        "it gives `sh` its script on standard input (a pipe, a here-document or a file), which \
         tether cannot read"
    );
    assert_eq!(
        reason("echo push | xargs git"),
        "`git` is given arguments computed when it runs, which may make it `git push`"
    );
    assert_eq!(
        check("find . -exec /usr/bin/git push origin {} \\;", &list),
        Verdict::Matches {
            command: "git push origin {}".to_owned(),
            prefix: "git push".to_owned(),
        }
    );
}

#[test]
fn the_table() {
    for (line, list, want) in TABLE {
        let got = check(line, &prefixes(list));
        let kind = match &got {
            Verdict::Matches { .. } => 'M',
            Verdict::Clear => 'C',
            Verdict::Unsure { .. } => 'U',
        };
        assert_eq!(kind, *want, "{line:?} against {list:?}: {got:?}");
    }
}

#[test]
fn a_match_names_the_command_and_the_prefix_as_given() {
    assert_eq!(
        check(
            "cargo test && sudo /usr/bin/git push origin main",
            &prefixes(&["git  push "])
        ),
        Verdict::Matches {
            command: "git push origin main".to_owned(),
            prefix: "git  push".to_owned(),
        }
    );
}

#[test]
fn split_drops_redirections_and_marks_expansions() {
    let s = split("FOO=$(date) make >log 2>&1; echo \"${HOME}\"");
    let words: Vec<Vec<&str>> = s
        .commands
        .iter()
        .map(|c| c.iter().map(|w| w.text.as_str()).collect())
        .collect();
    assert_eq!(
        words,
        vec![
            vec!["date"],
            vec!["FOO=$(…)", "make"],
            vec!["echo", "${HOME}"]
        ]
    );
    assert!(s.commands[1][0].expanded && !s.commands[1][1].expanded);
    assert!(s.unsure.is_empty());
}

/// Shell-ish text: words, separators, quotes, substitutions.
fn shellish() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            "[a-z]{1,6}",
            Just(" ".to_owned()),
            Just("; ".to_owned()),
            Just(" && ".to_owned()),
            Just(" | ".to_owned()),
            Just("\n".to_owned()),
            Just("'".to_owned()),
            Just("\"".to_owned()),
            Just("$(".to_owned()),
            Just(")".to_owned()),
            Just("`".to_owned()),
            Just("\\".to_owned()),
            Just("$x".to_owned()),
            Just(" > f ".to_owned()),
        ],
        0..24,
    )
    .prop_map(|parts| parts.concat())
}

proptest! {
    /// Any line at all: checking never panics, and a line with no prefixes is clear.
    #[test]
    fn never_panics(line in "\\PC{0,80}", shell in shellish()) {
        let _ = check(&line, &prefixes(&["git push"]));
        let _ = check(&shell, &prefixes(&["git push"]));
        prop_assert_eq!(check(&line, &[]), Verdict::Clear);
    }

    /// A matching command stays caught wherever it is put: after any clean command, behind
    /// a separator, inside a substitution or a subshell, or behind a wrapper.
    #[test]
    fn a_matching_command_is_caught_in_any_position(
        before in "[a-z]{1,8}( [a-z0-9.-]{1,8}){0,3}",
        args in "( [a-z0-9.-]{1,8}){0,3}",
        glue in prop_oneof![
            Just("; "), Just(" && "), Just(" || "), Just(" | "), Just("\n"), Just(" & "),
        ],
        wrap in prop_oneof![
            Just(("", "")), Just(("$(", ")")), Just(("`", "`")), Just(("(", ")")),
            Just(("sudo ", "")), Just(("env A=1 ", "")), Just(("sh -c '", "'")),
            Just(("/usr/bin/", "")), Just(("find . -exec ", " \\;")),
            Just(("xargs -0 ", "")), Just(("setsid ", "")),
        ],
    ) {
        let line = format!("{before}{glue}{}git push{args}{}", wrap.0, wrap.1);
        let verdict = check(&line, &prefixes(&["git push"]));
        prop_assert!(!matches!(verdict, Verdict::Clear), "{:?}: {:?}", line, verdict);
    }

    /// Whatever is piped into a shell, the gate asks (it cannot read the script).
    #[test]
    fn a_script_piped_into_a_shell_is_never_clear(
        before in "[a-z]{1,8}( [a-z0-9.-]{1,8}){0,3}",
        shell in prop_oneof![Just("sh"), Just("bash"), Just("/bin/dash"), Just("sudo zsh")],
        flags in prop_oneof![Just(""), Just(" -s"), Just(" -e"), Just(" -"), Just(" -xs --")],
    ) {
        let line = format!("{before} | {shell}{flags}");
        prop_assert!(!matches!(check(&line, &prefixes(&["git push"])), Verdict::Clear), "{}", line);
    }

    /// Text inside single quotes is never a command.
    #[test]
    fn single_quoted_text_is_data(text in "[a-z ;&|()$`\"]{0,30}") {
        let line = format!("echo '{text}'");
        prop_assert_eq!(check(&line, &prefixes(&["rm"])), Verdict::Clear);
    }
}
