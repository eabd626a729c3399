//! How often is a judge fooled? This crate answers it for the configured `[judge]`:
//! `tether judge test` runs it through the real sign-off check (the goal's verify command, the
//! judge's session over the files, tether's quote check) on a corpus of cases and counts false
//! accepts (a gamed completion signed off) and false rejects (an honest one refused), with the
//! model calls, tokens, cost and time each case took.
//!
//! A judge panel is measured the same way, judge by judge, and as a panel ([`panel_case`]).
//!
//! A case ([`Case`]) is a small repository written into a temporary directory, one goal's
//! contract (approved in a throwaway store, so the check runs as in a real run), the agent's
//! claimed evidence, and the truth: should it be signed off? The corpus that ships in the
//! binary ([`builtin`]) holds honest completions and the ways agents game a goal: a verify that
//! proves nothing, `assert True`, skipped or deleted tests, hard-coded outputs, the function
//! under test mocked out, a test edited to match the bug, evidence citing lines that do not
//! exist, `done_when` only partly met, verify passing on another target — and the quote check's
//! own cases: honest one-line fixes in many languages and file kinds, each with the quote of
//! its changed line that must count, and judges accepting on boilerplate or common lines of
//! files the run did not touch, whose quotes must not. Each case is a git repository with a
//! commit before the run and the run's change, so the lines the run changed are real. Users add
//! their own cases, in the same text format ([`parse`]), from a directory.

#![deny(missing_docs)]

mod case;
mod corpus;
mod panel;
mod repo;
mod run;

pub use case::{Case, CaseError, Expect, parse};
pub use corpus::{builtin, from_dir};
pub use panel::panel_case;
pub use repo::RepoError;
pub use run::{
    CaseResult, Got, QuoteCheck, QuoteTotals, RunError, RunOptions, Totals, check_scripted_quotes,
    run_case, totals,
};
