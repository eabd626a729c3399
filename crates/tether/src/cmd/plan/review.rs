//! The review menu of `tether plan new` and the `[y/N]` question of approval, over any reader
//! and writer: the command passes the terminal's stdin and stderr, the tests pass memory.

use std::io::{self, BufRead, Write};

/// What the human chose at the review menu.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice {
    /// Accept the draft and lock its contracts.
    Ready,
    /// Send this revision request to the agent.
    Edit(String),
    /// Open the plan in `$EDITOR`.
    Editor,
    /// Restore the plan as it was before drafting.
    Cancel,
    /// Input ended (Ctrl+D): leave the draft as it is, unapproved.
    Closed,
}

/// Reads one line; `None` at the end of input.
fn line(input: &mut dyn BufRead) -> io::Result<Option<String>> {
    let mut s = String::new();
    if input.read_line(&mut s)? == 0 {
        return Ok(None);
    }
    Ok(Some(s.trim().to_owned()))
}

/// Shows the menu on `out` and reads choices from `input` until one is valid. Edit asks for the
/// revision on the next line; an empty revision goes back to the menu.
pub fn choose(input: &mut dyn BufRead, out: &mut dyn Write, plan_file: &str) -> io::Result<Choice> {
    loop {
        write!(
            out,
            "\nReview the draft: [r] Ready, lock these contracts · [e] Edit, ask the agent for \
             changes · [o] open {plan_file} in $EDITOR · [c] Cancel, restore {plan_file}\n> "
        )?;
        out.flush()?;
        let Some(answer) = line(input)? else {
            return Ok(Choice::Closed);
        };
        match answer.to_ascii_lowercase().as_str() {
            "r" | "ready" => return Ok(Choice::Ready),
            "o" | "open" | "editor" | "$editor" => return Ok(Choice::Editor),
            "c" | "cancel" => return Ok(Choice::Cancel),
            "e" | "edit" => {
                write!(out, "What should change? ")?;
                out.flush()?;
                match line(input)? {
                    None => return Ok(Choice::Closed),
                    Some(request) if request.is_empty() => {}
                    Some(request) => return Ok(Choice::Edit(request)),
                }
            }
            "" => {}
            other => writeln!(out, "`{other}` is not a choice; type r, e, o or c.")?,
        }
    }
}

/// Asks `question` with `[y/N]`; only `y` or `yes` is a yes.
pub fn confirm(input: &mut dyn BufRead, out: &mut dyn Write, question: &str) -> io::Result<bool> {
    write!(out, "{question} [y/N] ")?;
    out.flush()?;
    Ok(line(input)?.is_some_and(|a| matches!(a.to_ascii_lowercase().as_str(), "y" | "yes")))
}

#[cfg(test)]
#[path = "review_tests.rs"]
mod tests;
