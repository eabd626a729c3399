//! The one-line summary of a tool call that the progress line, `tether status` and
//! `--events jsonl` show: the tool and the argument that says most about the call.

use serde_json::Value;

use super::SERVER;

/// How many characters of a tool call's argument the summary keeps.
pub(crate) const SUMMARY_CHARS: usize = 80;

/// `mcp__tether__ask_human` → `ask_human`; the CLI's own tools keep their names.
pub(crate) fn short_name(name: &str) -> String {
    name.strip_prefix(&format!("mcp__{SERVER}__"))
        .unwrap_or(name)
        .to_owned()
}

/// `tool` and the argument that says most about the call (a path, a command, a question),
/// whitespace folded and cut to a line.
pub(crate) fn summary(tool: &str, input: &Value) -> String {
    let key = [
        "file_path",
        "path",
        "command",
        "cmd",
        "pattern",
        "question",
        "url",
        "summary",
    ]
    .into_iter()
    .find(|k| input[k].is_string());
    let text = match key {
        Some(k) => input[k].as_str().unwrap_or_default().to_owned(),
        None => String::new(),
    };
    with_tool(tool, &text)
}

/// `tool` and `text`, whitespace folded and cut to a line.
pub(crate) fn with_tool(tool: &str, text: &str) -> String {
    let text: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let cut: String = text.chars().take(SUMMARY_CHARS).collect();
    let cut = if cut.len() < text.len() {
        format!("{cut}…")
    } else {
        cut
    };
    if cut.is_empty() {
        tool.to_owned()
    } else {
        format!("{tool} {cut}")
    }
}
