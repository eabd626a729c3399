//! `[notify_command]`: the command sink's table, read into [`NotifyCommandConfig`].

use std::sync::Arc;

use tether_config::{Config, KeyDecl, NoticeKind, Role, TableDecl, TableReader, values};

/// The command sink's settings (`[notify_command]`): a program given each notice or question
/// as JSON on stdin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotifyCommandConfig {
    /// The program (a path, or a name on `PATH`).
    pub program: Option<String>,
    /// Its arguments.
    pub args: Vec<String>,
    /// How long it may run before its process group is killed.
    pub timeout_secs: u64,
    /// The notices this sink gets, when not `[notify] on`.
    pub notify: Option<Vec<NoticeKind>>,
}

impl NotifyCommandConfig {
    /// Default for `notify_command.timeout_secs`.
    pub const DEFAULT_TIMEOUT_SECS: u64 = 10;
}

impl Default for NotifyCommandConfig {
    fn default() -> Self {
        NotifyCommandConfig {
            program: None,
            args: Vec::new(),
            timeout_secs: Self::DEFAULT_TIMEOUT_SECS,
            notify: None,
        }
    }
}

impl NotifyCommandConfig {
    /// The `[notify_command]` table of `config` (its defaults when `config` was read without
    /// it).
    pub fn of(config: &Config) -> std::borrow::Cow<'_, NotifyCommandConfig> {
        config.integration::<NotifyCommandConfig>()
    }

    /// What the sink lacks, each naming the setting to set.
    pub fn missing(&self) -> Vec<String> {
        if self.program.is_none() {
            vec!["`[notify_command] program`".to_owned()]
        } else {
            Vec::new()
        }
    }
}

/// `[notify_command]`.
pub const TABLE: TableDecl = TableDecl {
    name: "notify_command",
    intro: "The command sink (list \"notify_command\"): runs a program with the notice or question \
            as\none JSON object on stdin (the webhook's body), in its own process group.",
    role: Role::Sink { arg: None },
    keys: &[
        KeyDecl::new(
            "program",
            "The program: a path or a name on PATH.",
            "\"/usr/local/bin/tether-notice\"",
            "\"notify-me\"",
        ),
        KeyDecl::new("args", "Its arguments.", "[]", "[\"-x\"]"),
        KeyDecl::new(
            "timeout_secs",
            "Seconds it may run before it is killed: 1..3600.",
            "10",
            "5",
        ),
        super::notify(
            "The notices it gets, when not [notify] on.",
            "[\"done\", \"paused\", \"failed\"]",
        ),
    ],
    advice: None,
    read: |t| Arc::new(read(t)),
    default: || Arc::new(NotifyCommandConfig::default()),
};

/// Reads `[notify_command]` (if present); names what a listed sink lacks.
fn read(t: &mut TableReader<'_, '_>) -> NotifyCommandConfig {
    let mut out = NotifyCommandConfig::default();
    if t.present() {
        out.program = t.string("program", values::non_empty);
        if let Some(args) = t.string_list("args", |_| Ok(())) {
            out.args = args;
        }
        if let Some(secs) = t.int("timeout_secs", 1, 3600) {
            out.timeout_secs = secs;
        }
        out.notify = t.notices("notify");
    }
    for missing in out.missing() {
        t.lacks(missing);
    }
    out
}
