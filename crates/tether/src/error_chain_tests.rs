//! Every library error that names its cause in its message prints that cause once when `main`
//! prints the whole chain (`{:#}`): the cause is in the message or is the `source`, never both.

use std::io;
use std::path::PathBuf;

const CAUSE: &str = "disk on fire";

fn cause() -> io::Error {
    io::Error::other(CAUSE)
}

/// What `main` prints for `e`.
fn printed(e: impl std::error::Error + Send + Sync + 'static) -> String {
    format!("{:#}", anyhow::Error::new(e))
}

#[test]
fn each_cause_is_printed_once() {
    let path = PathBuf::from("/ws/x");
    let plan_io = || tether_plan::file::PlanFileError::Io {
        path: path.clone(),
        cause: cause(),
    };
    let all = [
        printed(tether_store::StoreError::Io {
            path: path.clone(),
            cause: cause(),
        }),
        printed(plan_io()),
        printed(tether_config::ConfigError::Io {
            path: path.clone(),
            cause: cause(),
        }),
        printed(tether_signoff::JudgeSetupError::from(
            tether_config::ConfigError::Io {
                path: path.clone(),
                cause: cause(),
            },
        )),
        printed(tether_signoff::SignoffError::Io {
            what: "writing the verify log",
            path: path.clone(),
            cause: cause(),
        }),
        printed(tether_signoff::SignoffError::VerifyStart {
            command: "true".into(),
            cause: cause(),
        }),
        printed(tether_signoff::SignoffError::PlanNotPatched {
            goal_id: "g".into(),
            note: "recorded",
            cause: plan_io(),
        }),
        printed(tether_core::run_lock::LockError::Io {
            path: path.clone(),
            cause: cause(),
        }),
        printed(tether_core::init::InitError::Io {
            path: path.clone(),
            cause: cause(),
        }),
        printed(tether_core::looping::LoopError::from(plan_io())),
        printed(tether_tools::SetupError::Root {
            path: path.clone(),
            cause: cause(),
        }),
        printed(tether_tools::PathError::Io {
            path: "x".into(),
            cause: cause(),
        }),
        printed(tether_mcp::ServeError::from(cause())),
        printed(tether_runtime::Error::io("creating /ws/x", cause())),
        printed(tether_runtime::Error::OpenStore {
            place: "/ws/x".into(),
            cause: tether_store::StoreError::Io {
                path: path.clone(),
                cause: cause(),
            },
        }),
        printed(tether_runtime::Error::PlanFile {
            what: "saving the plan's baseline for the drafting agent",
            cause: plan_io(),
        }),
        printed(tether_runtime::Error::Loop(
            tether_core::looping::LoopError::from(plan_io()),
        )),
    ];
    for text in all {
        assert_eq!(text.matches(CAUSE).count(), 1, "{text}");
    }
}
