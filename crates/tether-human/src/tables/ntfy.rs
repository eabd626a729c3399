//! `[ntfy]`: the ntfy sink's table, read into [`NtfyConfig`].

use std::sync::Arc;

use tether_config::{
    Config, EscalationArg, KeyDecl, NoticeKind, Role, Secret, TableDecl, TableReader, values,
};

/// The ntfy sink's settings (`[ntfy]`): pushes to a topic, questions with answer buttons.
#[derive(Clone, PartialEq, Eq)]
pub struct NtfyConfig {
    /// The ntfy server, `https://ntfy.sh` by default.
    pub server: String,
    /// The topic notices and questions are published to: `topic`, or the value of the variable
    /// `topic_env` names (which wins).
    pub topic: Option<String>,
    /// The NAME of the variable holding the topic, kept out of tether.toml: the agent reads the
    /// file, and whoever knows a topic can read what is pushed there (a question's buttons
    /// included) and press them. Like a key, the variable is kept from the agent.
    pub topic_env: Option<String>,
    /// Whether `topic` came from `topic_env`'s variable rather than the file.
    pub topic_from_env: bool,
    /// The topic the answer buttons post to (default `<topic>-reply`).
    pub reply_topic: Option<String>,
    /// The NAME of the variable holding an access token, if the topics are protected.
    pub token_env: Option<String>,
    /// The access token, read from `token_env` at load.
    pub token: Option<Secret>,
    /// The NAME of the variable holding a token the answer buttons send: one that may only
    /// write to the reply topic (it travels inside each notification).
    pub reply_token_env: Option<String>,
    /// That token, read from `reply_token_env` at load.
    pub reply_token: Option<Secret>,
    /// The priority of what is published, 1 (min) to 5 (max).
    pub priority: u8,
    /// The notices this sink gets, when not `[notify] on`.
    pub notify: Option<Vec<NoticeKind>>,
}

/// A topic read from `topic_env` is as good as a key: shown redacted.
impl std::fmt::Debug for NtfyConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let topic = match (&self.topic, self.topic_from_env) {
            (Some(_), true) => Some("[redacted]"),
            (topic, false) => topic.as_deref(),
            (None, true) => None,
        };
        f.debug_struct("NtfyConfig")
            .field("server", &self.server)
            .field("topic", &topic)
            .field("topic_env", &self.topic_env)
            .field("reply_topic", &self.reply_topic)
            .field("token_env", &self.token_env)
            .field("token", &self.token)
            .field("reply_token_env", &self.reply_token_env)
            .field("reply_token", &self.reply_token)
            .field("priority", &self.priority)
            .field("notify", &self.notify)
            .finish()
    }
}

impl NtfyConfig {
    /// Default for `ntfy.server`.
    pub const DEFAULT_SERVER: &'static str = "https://ntfy.sh";
    /// Default for `ntfy.priority` (ntfy's own default).
    pub const DEFAULT_PRIORITY: u8 = 3;

    /// The `[ntfy]` table of `config` (its defaults when `config` was read without it).
    pub fn of(config: &Config) -> std::borrow::Cow<'_, NtfyConfig> {
        config.integration::<NtfyConfig>()
    }

    /// The reply topic: `reply_topic`, or `<topic>-reply`.
    pub fn reply_topic(&self) -> Option<String> {
        self.reply_topic
            .clone()
            .or_else(|| self.topic.as_ref().map(|t| format!("{t}-reply")))
    }
}

impl Default for NtfyConfig {
    fn default() -> Self {
        NtfyConfig {
            server: Self::DEFAULT_SERVER.to_owned(),
            topic: None,
            topic_env: None,
            topic_from_env: false,
            reply_topic: None,
            token_env: None,
            token: None,
            reply_token_env: None,
            reply_token: None,
            priority: Self::DEFAULT_PRIORITY,
            notify: None,
        }
    }
}

impl NtfyConfig {
    /// What the sink lacks, each naming the setting or variable to set.
    pub fn missing(&self) -> Vec<String> {
        let mut missing = Vec::new();
        match (&self.topic, &self.topic_env) {
            (Some(_), _) => {}
            (None, Some(var)) => missing.push(format!(
                "the topic (set {var}, named by `[ntfy] topic_env`)"
            )),
            (None, None) => missing.push("`[ntfy] topic` (or `[ntfy] topic_env`)".to_owned()),
        }
        if let (Some(var), None) = (&self.token_env, &self.token) {
            missing.push(format!(
                "the access token (set {var}, named by `[ntfy] token_env`)"
            ));
        }
        missing
    }
}

/// `[ntfy]`.
pub const TABLE: TableDecl = TableDecl {
    name: "ntfy",
    intro: "The ntfy sink (list \"ntfy\" in human.channels): pushes to a phone; a question's options \
            are\nbuttons that answer it through ntfy itself, so tether needs no public address.",
    role: Role::Sink {
        arg: Some(EscalationArg {
            name: "topic",
            example: "oncall",
            check: topic,
        }),
    },
    keys: &[
        KeyDecl::new(
            "server",
            "The ntfy server: an http:// or https:// URL.",
            "\"https://ntfy.sh\"",
            "\"http://127.0.0.1:2\"",
        ),
        KeyDecl::new(
            "topic",
            "The topic notices and questions go to (letters, digits, _ and -; hard to guess on \
             ntfy.sh).",
            "\"tether-7f3k2q\"",
            "\"other-topic\"",
        ),
        KeyDecl::new(
            "topic_env",
            "Or the NAME of the environment variable holding it (it wins): the agent reads \
             tether.toml, and\nwith the network it could follow a topic written here and press \
             its own questions' buttons,\nso tether then takes no answers on ntfy (`tether \
             doctor` says so). The variable is kept from\nthe agent like a key.",
            "\"NTFY_TOPIC\"",
            "\"N_TOPIC\"",
        )
        .secret_var(None),
        KeyDecl::new(
            "reply_topic",
            "The topic the answer buttons post to and tether reads (default: the topic + \
             \"-reply\").",
            "\"tether-7f3k2q-reply\"",
            "\"t-answers\"",
        ),
        KeyDecl::new(
            "token_env",
            "The NAME of the environment variable holding an access token, for protected topics.",
            "\"NTFY_TOKEN\"",
            "\"N_TOKEN\"",
        )
        .secret_var(None),
        KeyDecl::new(
            "reply_token_env",
            "The NAME of the one holding the token the answer buttons send, when the reply topic \
             is\nprotected: make it write-only to the reply topic (it travels inside each \
             notification).",
            "\"NTFY_REPLY_TOKEN\"",
            "\"N_REPLY\"",
        )
        .secret_var(None),
        KeyDecl::new(
            "priority",
            "Priority of what is published: 1 (min) .. 5 (max).",
            "3",
            "5",
        ),
        super::notify(
            "The notices pushed, when not [notify] on.",
            "[\"done\", \"paused\"]",
        ),
    ],
    advice: Some("token_env"),
    read: |t| Arc::new(read(t)),
    default: || Arc::new(NtfyConfig::default()),
};

/// Reads `[ntfy]` (if present); names what a listed sink lacks.
fn read(t: &mut TableReader<'_, '_>) -> NtfyConfig {
    let mut out = NtfyConfig::default();
    if t.present() {
        read_present(t, &mut out);
    }
    for missing in out.missing() {
        t.lacks(missing);
    }
    out
}

fn read_present(t: &mut TableReader<'_, '_>, out: &mut NtfyConfig) {
    if let Some(server) = t.string("server", values::http_url) {
        out.server = server.trim_end_matches('/').to_owned();
    }
    out.topic = t.string("topic", topic);
    out.topic_env = t.secret_var("topic_env");
    if let (Some(var), Some(from_env)) = (&out.topic_env, t.secret("topic_env")) {
        // Never said back: the topic is as good as a key.
        if topic(from_env.expose()).is_ok() {
            out.topic = Some(from_env.expose().to_owned());
            out.topic_from_env = true;
        } else {
            let message = format!("{var} must hold an ntfy topic: 1 to 64 letters, digits, _ or -");
            t.report("topic_env", message);
        }
    }
    out.reply_topic = t.string("reply_topic", topic);
    if let (Some(topic), Some(reply)) = (&out.topic, &out.reply_topic)
        && topic == reply
    {
        t.report(
            "reply_topic",
            "must differ from `ntfy.topic`: answers are read from it",
        );
        out.reply_topic = None;
    }
    if let Some(p) = t.int("priority", 1, 5) {
        out.priority = p;
    }
    out.token_env = t.secret_var("token_env");
    out.token = t.secret("token_env");
    out.reply_token_env = t.secret_var("reply_token_env");
    out.reply_token = t.secret("reply_token_env");
    out.notify = t.notices("notify");
}

/// A topic name as ntfy accepts it: 1 to 64 of letters, digits, `_` and `-`.
pub(crate) fn topic(value: &str) -> Result<(), String> {
    let ok = !value.is_empty()
        && value.len() <= 64
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "must be an ntfy topic: 1 to 64 letters, digits, _ or -, got {value:?}"
        ))
    }
}
