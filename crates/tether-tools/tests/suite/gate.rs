//! `bash` with a gate: a command the gate refuses is not run, and the refusal is the result.

use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;
use serde_json::json;
use tether_tools::gate::{CommandGate, Verdict, check};
use tether_tools::{ToolContext, ToolOptions};

use super::Fixture;

/// Refuses what matches its prefixes, as tether's gate would after a human's "no".
#[derive(Debug, Default)]
struct Refusing {
    prefixes: Vec<String>,
    asked: Mutex<Vec<String>>,
}

impl CommandGate for Refusing {
    fn allow<'a>(
        &'a self,
        command: &'a str,
        _ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            self.asked.lock().unwrap().push(command.to_owned());
            match check(command, &self.prefixes) {
                Verdict::Clear => Ok(()),
                other => Err(format!("not run: {other:?}")),
            }
        })
    }
}

#[tokio::test]
async fn a_refused_command_is_not_run_and_the_reason_is_the_result() {
    let gate = Arc::new(Refusing {
        prefixes: vec!["touch deployed.txt".to_owned()],
        ..Refusing::default()
    });
    let fx = Fixture::with_options(&ToolOptions {
        bash_gate: Some(gate.clone()),
        ..ToolOptions::default()
    });
    let out = fx
        .call("bash", json!({"command": "echo hi && touch deployed.txt"}))
        .await;
    assert!(out.output.is_error);
    assert!(
        out.output.content.starts_with("not run: Matches"),
        "{}",
        out.output.content
    );
    assert!(!fx.root.join("deployed.txt").exists());
    assert_eq!(
        out.summary,
        "bash: echo hi && touch deployed.txt (refused by ask_before)"
    );

    let ok = fx.ok("bash", json!({"command": "touch other.txt"})).await;
    assert!(ok.ends_with("[exit code 0]"), "{ok}");
    assert!(fx.root.join("other.txt").exists());
    assert_eq!(
        *gate.asked.lock().unwrap(),
        ["echo hi && touch deployed.txt", "touch other.txt"]
    );
}
