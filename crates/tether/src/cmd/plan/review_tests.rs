//! The review menu and the `[y/N]` question over memory.

use super::{Choice, choose, confirm};

fn run(input: &str) -> (Vec<Choice>, String) {
    let mut reader = std::io::Cursor::new(input.as_bytes().to_vec());
    let mut out = Vec::new();
    let mut choices = Vec::new();
    loop {
        let c = choose(&mut reader, &mut out, "plan.md").unwrap();
        let end = c == Choice::Closed;
        choices.push(c);
        if end {
            break;
        }
    }
    (choices, String::from_utf8(out).unwrap())
}

#[test]
fn every_choice_and_the_edit_request() {
    let (choices, out) = run("e\nSplit the docs goal.\nx\n\nE\n\nO\nready\nc\n");
    assert_eq!(
        choices,
        [
            Choice::Edit("Split the docs goal.".into()),
            Choice::Editor,
            Choice::Ready,
            Choice::Cancel,
            Choice::Closed
        ]
    );
    assert!(out.contains("`x` is not a choice; type r, e, o or c."));
    assert_eq!(out.matches("What should change? ").count(), 2);
    assert!(out.starts_with(
        "\nReview the draft: [r] Ready, lock these contracts · [e] Edit, ask the agent for \
         changes · [o] open plan.md in $EDITOR · [c] Cancel, restore plan.md\n> "
    ));
}

#[test]
fn confirm_needs_a_yes() {
    for (input, want) in [
        ("y\n", true),
        ("YES\n", true),
        ("\n", false),
        ("n\n", false),
        ("", false),
    ] {
        let mut out = Vec::new();
        let got = confirm(&mut input.as_bytes(), &mut out, "Approve?").unwrap();
        assert_eq!(got, want, "{input:?}");
        assert_eq!(String::from_utf8(out).unwrap(), "Approve? [y/N] ");
    }
}
