use std::path::PathBuf;
use std::sync::Arc;

use super::*;

fn cli(run: Option<&'static str>) -> Cli {
    let settings = CliSettings {
        workspace: PathBuf::from("/work/it's here"),
        tether: PathBuf::from("/opt/tether/bin/tether"),
        ..crate::cli::test_support::settings("claude")
    };
    Cli::new(
        &crate::claude::CLI,
        settings,
        Arc::new(move || run.map(str::to_owned)),
    )
}

#[test]
fn the_gate_hook_runs_tether_gate_for_the_run_on_bash_with_a_week_to_answer() {
    let settings: serde_json::Value =
        serde_json::from_str(&gate_settings(&cli(Some("r-ab12cd")))).unwrap();
    insta::assert_json_snapshot!(settings, @r#"
    {
      "hooks": {
        "PreToolUse": [
          {
            "matcher": "Bash",
            "hooks": [
              {
                "type": "command",
                "command": "'/opt/tether/bin/tether' 'gate' '--run' 'r-ab12cd' '-C' '/work/it'\\''s here'",
                "timeout": 604800
              }
            ]
          }
        ]
      }
    }
    "#);
}

#[test]
fn only_a_working_turn_gets_the_hook() {
    let executor = ClaudeExecutor {
        cli: cli(Some("r-ab12cd")),
        kept: crate::session::Kept::default(),
    };
    let work = executor.turn_argv(Path::new("/m.json"), Access::Work);
    let at = work.iter().position(|a| a == "--settings").unwrap();
    assert!(work[at + 1].contains("PreToolUse"));
    let read = executor.turn_argv(Path::new("/m.json"), Access::ReadOnly);
    assert!(!read.iter().any(|a| a == "--settings"));
}
