//! The exit codes tether promises, in one place.

use std::process::ExitCode;

/// How a command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// 0: done.
    Done,
    /// 1: an error.
    Error,
    /// 2: a usage or configuration error (including a plan or config that does not validate).
    Usage,
    /// 3: the iteration budget is exhausted.
    Budget,
    /// 4: paused, or blocked waiting for a human.
    Paused,
    /// 130: interrupted (Ctrl+C, or `tether cancel`).
    Interrupted,
}

impl Exit {
    /// The numeric code.
    pub fn code(self) -> u8 {
        match self {
            Exit::Done => 0,
            Exit::Error => 1,
            Exit::Usage => 2,
            Exit::Budget => 3,
            Exit::Paused => 4,
            Exit::Interrupted => 130,
        }
    }
}

impl From<Exit> for ExitCode {
    fn from(e: Exit) -> Self {
        ExitCode::from(e.code())
    }
}

/// The help text's summary of the codes.
pub const HELP: &str = "Exit codes: 0 done · 1 error · 2 usage or configuration error · \
                        3 budget exhausted · 4 paused or blocked waiting for a human · \
                        130 interrupted";
