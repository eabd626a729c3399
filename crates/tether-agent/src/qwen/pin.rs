//! Qwen Code's system settings for a run, which it reads over its user and workspace settings:
//! the person's own system settings with `permissions.ask` rules for its shell, edit and write
//! tools added. An `ask` rule wins over every `allow` rule of any scope (a `tools.allowed` or
//! `permissions.allow` the agent writes into `.qwen/settings.json` or the run's `$QWEN_HOME`), so
//! each command and edit still reaches tether as a permission request.

use std::io::{self, Read as _};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::cli::Pinning;

/// The variable naming Qwen Code's system settings file.
const SYSTEM_VAR: &str = "QWEN_CODE_SYSTEM_SETTINGS_PATH";

/// Where its system settings are when the variable does not say.
const SYSTEM_DEFAULT: &str = "/etc/qwen-code/settings.json";

/// The run's system settings file, in the pinned directory.
const FILE: &str = "qwen-system-settings.json";

/// The rules that keep its shell, edit and write tools asking.
const ASKED: [&str; 3] = ["Bash", "Edit", "Write"];

/// The largest system settings file read.
const MAX_BYTES: u64 = 1024 * 1024;

/// Writes the run's system settings into `pinning.dir`; the variable pointing Qwen Code at them.
pub(crate) fn pin(pinning: &Pinning<'_>) -> io::Result<Vec<(String, String)>> {
    let person = pinning
        .var(SYSTEM_VAR)
        .map_or_else(|| PathBuf::from(SYSTEM_DEFAULT), PathBuf::from);
    let settings = asking(persons(&person)?).map_err(|what| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{}: {what}", person.display()),
        )
    })?;
    let path = pinning.dir.join(FILE);
    std::fs::write(&path, Value::Object(settings).to_string())?;
    Ok(vec![(SYSTEM_VAR.to_owned(), path.display().to_string())])
}

/// The person's system settings at `path` (none when it does not exist), at most 1 MiB of JSON.
fn persons(path: &Path) -> io::Result<Map<String, Value>> {
    let file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Map::new()),
        Err(e) => return Err(io::Error::new(e.kind(), format!("{}: {e}", path.display()))),
    };
    let mut text = String::new();
    file.take(MAX_BYTES + 1).read_to_string(&mut text)?;
    let invalid = |what: String| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{}: {what}", path.display()),
        )
    };
    if text.len() as u64 > MAX_BYTES {
        return Err(invalid(format!("larger than {MAX_BYTES} bytes")));
    }
    match serde_json::from_str(&text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(invalid("not a JSON object".to_owned())),
        Err(e) => Err(invalid(format!("not plain JSON ({e})"))),
    }
}

/// `settings` with [`ASKED`] in `permissions.ask`.
fn asking(mut settings: Map<String, Value>) -> Result<Map<String, Value>, &'static str> {
    let permissions = settings
        .entry("permissions")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .ok_or("`permissions` is not an object")?;
    let ask = permissions
        .entry("ask")
        .or_insert_with(|| Value::Array(Vec::new()))
        .as_array_mut()
        .ok_or("`permissions.ask` is not a list")?;
    for rule in ASKED {
        if !ask.iter().any(|r| r == rule) {
            ask.push(Value::String(rule.to_owned()));
        }
    }
    Ok(settings)
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::{FILE, SYSTEM_VAR, pin};
    use crate::cli::Pinning;

    fn pinned(env: &[(String, String)]) -> std::io::Result<Value> {
        let dir = tempfile::tempdir().unwrap();
        let vars = pin(&Pinning {
            dir: dir.path(),
            workspace: dir.path(),
            env,
        })?;
        assert_eq!(vars[0].0, SYSTEM_VAR);
        assert_eq!(vars[0].1, dir.path().join(FILE).display().to_string());
        Ok(serde_json::from_str(&std::fs::read_to_string(dir.path().join(FILE)).unwrap()).unwrap())
    }

    #[test]
    fn the_persons_system_settings_keep_theirs_and_ask_before_every_command_and_edit() {
        let person = tempfile::tempdir().unwrap();
        let file = person.path().join("settings.json");
        std::fs::write(
            &file,
            r#"{"model": {"name": "m"}, "permissions": {"ask": ["Bash", "WebFetch"], "deny": ["Read(.env)"]}}"#,
        )
        .unwrap();
        let env = [(SYSTEM_VAR.to_owned(), file.display().to_string())];
        assert_eq!(
            pinned(&env).unwrap(),
            json!({"model": {"name": "m"}, "permissions": {
                "ask": ["Bash", "WebFetch", "Edit", "Write"], "deny": ["Read(.env)"]}})
        );
        // None of the person's: only tether's rules.
        let none = [(
            SYSTEM_VAR.to_owned(),
            "/nonexistent/settings.json".to_owned(),
        )];
        assert_eq!(
            pinned(&none).unwrap(),
            json!({"permissions": {"ask": ["Bash", "Edit", "Write"]}})
        );
        // What tether cannot read as settings is said with its file.
        std::fs::write(&file, r#"{"permissions": ["Bash"]}"#).unwrap();
        let said = pinned(&env).unwrap_err().to_string();
        assert!(
            said.contains("settings.json") && said.contains("not an object"),
            "{said}"
        );
        std::fs::write(&file, "{ // nope").unwrap();
        assert!(
            pinned(&env)
                .unwrap_err()
                .to_string()
                .contains("not plain JSON")
        );
    }
}
