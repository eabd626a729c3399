//! The message of the commit tether makes for a signed-off goal.

use std::fmt::Write as _;

/// A quote the judge cited.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Quote {
    /// Where: `path` or `path:line`.
    pub at: String,
    /// The quoted text.
    pub text: String,
}

/// What the commit message says.
#[derive(Debug, Clone)]
pub struct CommitInfo<'a> {
    /// The goal's title.
    pub title: &'a str,
    /// The verdict, with who gave it ("accepted by the judge (model)").
    pub verdict: &'a str,
    /// The goal's verify command, if it has one.
    pub verify_command: Option<&'a str>,
    /// How it ended ("exit 0").
    pub verify_result: Option<&'a str>,
    /// The judge's cited quotes.
    pub quotes: &'a [Quote],
    /// The run.
    pub run_id: &'a str,
    /// The hash of the goal's approved contract.
    pub contract_hash: &'a str,
}

/// Longest subject line, in characters.
const SUBJECT: usize = 72;
/// Longest quote, in characters.
const QUOTE: usize = 200;

/// The goal's title as the subject, then the verdict, the verify command and its result, the
/// judge's quotes, and trailers naming the run and the contract.
pub fn commit_message(info: &CommitInfo<'_>) -> String {
    let mut m = format!("{}\n\n", one_line(info.title, SUBJECT));
    let _ = writeln!(m, "Judge: {}", one_line(info.verdict, QUOTE));
    match info.verify_command {
        Some(command) => {
            let result = info.verify_result.unwrap_or("not run");
            let _ = writeln!(m, "Verify: {} ({result})", one_line(command, QUOTE));
        }
        None => m.push_str("Verify: none\n"),
    }
    if !info.quotes.is_empty() {
        m.push_str("Evidence:\n");
        for q in info.quotes {
            let _ = writeln!(
                m,
                "- {}: {}",
                one_line(&q.at, QUOTE),
                one_line(&q.text, QUOTE)
            );
        }
    }
    let _ = write!(
        m,
        "\nTether-Run: {}\nTether-Contract: {}\n",
        info.run_id, info.contract_hash
    );
    m
}

/// `text` on one line (whitespace runs made single spaces), at most `max` characters.
fn one_line(text: &str, max: usize) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        return flat;
    }
    let mut cut: String = flat.chars().take(max - 1).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_has_the_title_the_evidence_and_the_trailers() {
        let quotes = [
            Quote {
                at: "src/lib.rs:3".into(),
                text: "  a +\n b ".into(),
            },
            Quote {
                at: "tests/add.rs:9".into(),
                text: "assert_eq!(add(2, 2), 4);".into(),
            },
        ];
        let message = commit_message(&CommitInfo {
            title: "Fix add\nso it adds",
            verdict: "accepted by the judge (judge-model)",
            verify_command: Some("cargo test add"),
            verify_result: Some("exit 0"),
            quotes: &quotes,
            run_id: "r-ab12cd",
            contract_hash: "c0ffee",
        });
        insta::assert_snapshot!(message, @r"
        Fix add so it adds

        Judge: accepted by the judge (judge-model)
        Verify: cargo test add (exit 0)
        Evidence:
        - src/lib.rs:3: a + b
        - tests/add.rs:9: assert_eq!(add(2, 2), 4);

        Tether-Run: r-ab12cd
        Tether-Contract: c0ffee
        ");
    }

    #[test]
    fn a_long_title_is_cut_and_no_verify_is_said() {
        let title = "x".repeat(100);
        let message = commit_message(&CommitInfo {
            title: &title,
            verdict: "accepted",
            verify_command: None,
            verify_result: None,
            quotes: &[],
            run_id: "r-1",
            contract_hash: "h",
        });
        let subject = message.lines().next().unwrap();
        assert_eq!(subject.chars().count(), 72);
        assert!(subject.ends_with('…'));
        assert!(message.contains("Verify: none\n"));
    }
}
