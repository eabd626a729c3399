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
];

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
            Just(("/usr/bin/", "")),
        ],
    ) {
        let line = format!("{before}{glue}{}git push{args}{}", wrap.0, wrap.1);
        let verdict = check(&line, &prefixes(&["git push"]));
        prop_assert!(!matches!(verdict, Verdict::Clear), "{:?}: {:?}", line, verdict);
    }

    /// Text inside single quotes is never a command.
    #[test]
    fn single_quoted_text_is_data(text in "[a-z ;&|()$`\"]{0,30}") {
        let line = format!("echo '{text}'");
        prop_assert_eq!(check(&line, &prefixes(&["rm"])), Verdict::Clear);
    }
}
