//! The agents of opencode's configuration that set their own `bash` or `edit` permission, which
//! wins over the `ask` tether sets for every agent: a command of theirs may run without
//! reaching `[human] ask_before`.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// What tether sets to `ask`.
const ASKED: [&str; 2] = ["bash", "edit"];

/// Each agent of the configuration files opencode reads in a run from the person's
/// configuration directory `person` (never the workspace's: see `pin`) that sets `bash` or `edit` for itself to anything but
/// `ask`, or a file that cannot be read as JSON, said with its file and key.
pub fn overrides(_workspace: &Path, person: &Path) -> Vec<String> {
    let mut said = Vec::new();
    for file in files(person) {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        match parse(&text) {
            Some(config) => said.extend(loosened(&config, &file)),
            None => said.push(format!(
                "{} is not plain JSON, so tether cannot tell whether an agent there allows \
                 commands without asking",
                file.display()
            )),
        }
    }
    said
}

/// The files of `person`'s directory opencode reads its configuration from.
fn files(person: &Path) -> Vec<PathBuf> {
    ["opencode.json", "opencode.jsonc"]
        .into_iter()
        .map(|name| person.join(name))
        .collect()
}

/// `text` as JSON, line comments (`// …` at a line's start) left out.
fn parse(text: &str) -> Option<Value> {
    let plain: String = text
        .lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    serde_json::from_str(&plain).ok()
}

/// The agents of `config` (in `file`) whose own permission lets `bash` or `edit` run unasked.
fn loosened(config: &Value, file: &Path) -> Vec<String> {
    let mut said = Vec::new();
    for table in ["agent", "mode"] {
        let Some(agents) = config[table].as_object() else {
            continue;
        };
        for (name, agent) in agents {
            let permission = &agent["permission"];
            for asked in ASKED {
                let action = match &permission[asked] {
                    Value::Null => permission.as_str(),
                    Value::String(action) => Some(action.as_str()),
                    // Patterns: any not asking lets some command through.
                    Value::Object(patterns) => patterns
                        .values()
                        .filter_map(Value::as_str)
                        .find(|action| *action != "ask"),
                    _ => None,
                };
                if let Some(action) = action.filter(|action| *action != "ask") {
                    said.push(format!(
                        "{}: {table}.{name}.permission.{asked} is \"{action}\", which wins over \
                         the \"ask\" tether sets, so that agent's commands may run without asking",
                        file.display()
                    ));
                }
            }
        }
    }
    said
}

#[cfg(test)]
mod tests {
    use super::overrides;

    #[test]
    fn an_agent_allowing_its_own_commands_is_said_with_its_file_and_key() {
        let ws = tempfile::tempdir().unwrap();
        let person = tempfile::tempdir().unwrap();
        std::fs::write(
            person.path().join("opencode.json"),
            r#"{"agent": {"build": {"permission": {"bash": {"git *": "allow", "*": "ask"}}},
                          "plan": {"permission": {"edit": "ask"}}}}"#,
        )
        .unwrap();
        std::fs::write(
            person.path().join("opencode.jsonc"),
            "// mine\n{\"agent\": {\"docs\": {\"permission\": \"allow\"}}}",
        )
        .unwrap();
        // The workspace's is never read in a run: nothing of it is said.
        std::fs::write(
            ws.path().join("opencode.json"),
            r#"{"agent": {"x": {"permission": "allow"}}}"#,
        )
        .unwrap();
        let said = overrides(ws.path(), person.path());
        assert_eq!(said.len(), 3, "{said:#?}");
        assert!(said[0].contains("opencode.json: agent.build.permission.bash"));
        assert!(said[1].contains("agent.docs.permission.bash is \"allow\""));
        // Nothing loosened: nothing said.
        std::fs::remove_file(person.path().join("opencode.jsonc")).unwrap();
        std::fs::write(person.path().join("opencode.json"), r#"{"permission": {}}"#).unwrap();
        assert!(overrides(ws.path(), person.path()).is_empty());
        std::fs::write(person.path().join("opencode.json"), "{ nope").unwrap();
        assert!(overrides(ws.path(), person.path())[0].contains("not plain JSON"));
    }
}
