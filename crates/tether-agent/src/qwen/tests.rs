use std::time::Duration;

use serde_json::Value;

use super::mcp_config;
use crate::acp::ServerSpec;

#[test]
fn tethers_server_is_declared_trusted_and_patient_on_the_command_line() {
    let spec = ServerSpec {
        name: "tether",
        command: "/opt/tether".to_owned(),
        args: vec!["mcp".to_owned(), "--run".to_owned(), "r1".to_owned()],
        run: Some("r1".to_owned()),
        tool_timeout: Duration::from_secs(7 * 24 * 3600),
    };
    let args = mcp_config(&spec);
    assert_eq!(args[0], "--mcp-config");
    let config: Value = serde_json::from_str(&args[1]).unwrap();
    let server = &config["mcpServers"]["tether"];
    assert_eq!(server["command"], "/opt/tether");
    assert_eq!(server["args"][2], "r1");
    assert_eq!(server["env"]["TETHER_RUN_ID"], "r1");
    assert_eq!(server["alwaysLoadTools"], true);
    assert_eq!(server["trust"], true);
    assert_eq!(server["timeout"], 7 * 24 * 3600 * 1000);
    // Before the run exists, no run is named.
    let early = mcp_config(&ServerSpec { run: None, ..spec });
    let config: Value = serde_json::from_str(&early[1]).unwrap();
    assert!(config["mcpServers"]["tether"].get("env").is_none());
}
