//! The notice sinks (`[ntfy]`, `[webhook]`, `[email]`, `[notify_command]`) and question
//! escalation (`human.remind_after`, `human.escalate_after`, `human.escalate_to`): their types,
//! defaults and schema walk.
//!
//! Sinks are where a person is reached rather than where a conversation happens: a push to a
//! phone, a POST to an incoming webhook, an email, a program of the user's. Like the chat
//! channels, a sink is on when `human.channels` lists it, takes its own `notify = [...]`, and
//! never holds a credential in the file: tokens, passwords and secret webhook URLs come from
//! variables the table names, read at load into [`Secret`]s. A value that is wrong in the file is
//! a problem with its line; what is missing (a topic, a variable) is left to the human desk, which
//! leaves the sink out with an error naming the setting.

use crate::chat::{NoticeKind, read_channel_notify};
use crate::env::{Env, non_empty_key};
use crate::reader::{Reader, Table, entry, path_of};
use crate::{Secret, values};

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

/// The body a webhook receives (`webhook.format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WebhookFormat {
    /// tether's own JSON body (documented in the README).
    #[default]
    Json,
    /// A Slack incoming webhook: `{"text": ...}`.
    Slack,
    /// A Discord webhook: `{"content": ...}`.
    Discord,
}

impl WebhookFormat {
    /// Every format with its spelling in `tether.toml`.
    pub const CHOICES: [(&'static str, WebhookFormat); 3] = [
        ("json", WebhookFormat::Json),
        ("slack", WebhookFormat::Slack),
        ("discord", WebhookFormat::Discord),
    ];
}

/// The webhook sink's settings (`[webhook]`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WebhookConfig {
    /// The NAME of the variable holding the URL (a webhook URL is itself a credential).
    pub url_env: Option<String>,
    /// The URL: `url` from the file, or the value of `url_env` (which wins), unchecked.
    pub url: Option<Secret>,
    /// The body's shape.
    pub format: WebhookFormat,
    /// The notices this sink gets, when not `[notify] on`.
    pub notify: Option<Vec<NoticeKind>>,
}

/// How the email sink talks to its SMTP server (`email.tls`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EmailTls {
    /// STARTTLS, required.
    #[default]
    StartTls,
    /// Plain text: only to a server on this machine (loopback), e.g. a local relay or a test.
    None,
}

impl EmailTls {
    /// Every mode with its spelling in `tether.toml`.
    pub const CHOICES: [(&'static str, EmailTls); 2] =
        [("starttls", EmailTls::StartTls), ("none", EmailTls::None)];
}

/// The email sink's settings (`[email]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmailConfig {
    /// The SMTP server's host name.
    pub smtp_host: Option<String>,
    /// Its port (587, submission, by default).
    pub smtp_port: u16,
    /// The sender's address.
    pub from: Option<String>,
    /// The recipients.
    pub to: Vec<String>,
    /// The NAME of the variable holding the SMTP user name.
    pub username_env: Option<String>,
    /// The NAME of the variable holding the SMTP password.
    pub password_env: Option<String>,
    /// The user name, read from `username_env` at load.
    pub username: Option<Secret>,
    /// The password, read from `password_env` at load.
    pub password: Option<Secret>,
    /// STARTTLS or (loopback only) plain text.
    pub tls: EmailTls,
    /// The notices this sink gets, when not `[notify] on`.
    pub notify: Option<Vec<NoticeKind>>,
}

impl EmailConfig {
    /// Default for `email.smtp_port`.
    pub const DEFAULT_PORT: u16 = 587;
}

impl Default for EmailConfig {
    fn default() -> Self {
        EmailConfig {
            smtp_host: None,
            smtp_port: Self::DEFAULT_PORT,
            from: None,
            to: Vec::new(),
            username_env: None,
            password_env: None,
            username: None,
            password: None,
            tls: EmailTls::default(),
            notify: None,
        }
    }
}

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

/// A sink a question is escalated to (`human.escalate_to`), built only for escalation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EscalationTarget {
    /// `"ntfy"` (the `[ntfy]` topic) or `"ntfy:<topic>"` (another topic on the same server).
    Ntfy {
        /// The other topic, if named.
        topic: Option<String>,
    },
    /// `"email"` (the `[email]` recipients) or `"email:<address>"` (another recipient).
    Email {
        /// The other recipient, if named.
        to: Option<String>,
    },
    /// `"webhook"`: the `[webhook]` sink.
    Webhook,
    /// `"notify_command"`: the `[notify_command]` sink.
    Command,
}

impl EscalationTarget {
    /// The spelling in `tether.toml`.
    pub fn spelling(&self) -> String {
        match self {
            EscalationTarget::Ntfy { topic: Some(t) } => format!("ntfy:{t}"),
            EscalationTarget::Ntfy { topic: None } => "ntfy".to_owned(),
            EscalationTarget::Email { to: Some(to) } => format!("email:{to}"),
            EscalationTarget::Email { to: None } => "email".to_owned(),
            EscalationTarget::Webhook => "webhook".to_owned(),
            EscalationTarget::Command => "notify_command".to_owned(),
        }
    }

    fn parse(value: &str) -> Result<Self, String> {
        let (kind, arg) = match value.split_once(':') {
            Some((kind, arg)) => (kind, Some(arg)),
            None => (value, None),
        };
        let arg = arg.map(str::trim);
        if arg == Some("") {
            return Err(format!("{value:?} names nothing after the colon"));
        }
        match (kind, arg) {
            ("ntfy", topic) => {
                if let Some(t) = topic {
                    ntfy_topic(t)?;
                }
                Ok(EscalationTarget::Ntfy {
                    topic: topic.map(str::to_owned),
                })
            }
            ("email", to) => {
                if let Some(to) = to {
                    values::email(to)?;
                }
                Ok(EscalationTarget::Email {
                    to: to.map(str::to_owned),
                })
            }
            ("webhook", None) => Ok(EscalationTarget::Webhook),
            ("notify_command", None) => Ok(EscalationTarget::Command),
            _ => Err(format!(
                "must be \"ntfy\", \"ntfy:<topic>\", \"email\", \"email:<address>\", \"webhook\" \
                 or \"notify_command\", got {value:?}"
            )),
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

impl WebhookConfig {
    /// What the sink lacks, each naming the setting or variable to set.
    pub fn missing(&self) -> Vec<String> {
        match (&self.url, &self.url_env) {
            (Some(_), _) => Vec::new(),
            (None, Some(var)) => vec![format!(
                "the webhook's URL (set {var}, named by `[webhook] url_env`)"
            )],
            (None, None) => vec!["`[webhook] url_env` (or `[webhook] url`)".to_owned()],
        }
    }
}

impl EmailConfig {
    /// What the sink lacks, each naming the setting or variable to set.
    pub fn missing(&self) -> Vec<String> {
        let mut missing = Vec::new();
        if self.smtp_host.is_none() {
            missing.push("`[email] smtp_host`".to_owned());
        }
        if self.from.is_none() {
            missing.push("`[email] from`".to_owned());
        }
        if self.to.is_empty() {
            missing.push("`[email] to`".to_owned());
        }
        if let (Some(var), None) = (&self.username_env, &self.username) {
            missing.push(format!(
                "the SMTP user name (set {var}, named by `[email] username_env`)"
            ));
        }
        if let (Some(var), None) = (&self.password_env, &self.password) {
            missing.push(format!(
                "the SMTP password (set {var}, named by `[email] password_env`)"
            ));
        }
        missing
    }
}

impl NotifyCommandConfig {
    /// What the sink lacks, each naming the setting to set.
    pub fn missing(&self) -> Vec<String> {
        if self.program.is_none() {
            vec!["`[notify_command] program`".to_owned()]
        } else {
            Vec::new()
        }
    }
}

/// A topic name as ntfy accepts it: 1 to 64 of letters, digits, `_` and `-`.
fn ntfy_topic(value: &str) -> Result<(), String> {
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

/// An SMTP host name: not empty, no whitespace, no scheme.
fn host(value: &str) -> Result<(), String> {
    if value.is_empty() || value.chars().any(char::is_whitespace) || value.contains("://") {
        Err(format!(
            "must be a host name such as smtp.example.com (no scheme, no port), got {value:?}"
        ))
    } else {
        Ok(())
    }
}

/// The value of the variable `var` named by `key`, as a secret.
fn secret_from(env: &dyn Env, var: Option<&String>) -> Option<Secret> {
    var.and_then(|v| non_empty_key(env, v)).map(Secret::new)
}

/// Reads `[ntfy]` (if present).
pub(crate) fn read_ntfy(r: &mut Reader, t: Option<&Table>, env: &dyn Env, out: &mut NtfyConfig) {
    let Some(t) = t else { return };
    let var = r.string(t, "token_env", values::env_var_name);
    let advice = format!(
        "set the environment variable {} instead and name it with `ntfy.token_env`",
        var.as_deref().unwrap_or("NTFY_TOKEN")
    );
    r.unknown_keys(t, crate::keys::NTFY, Some(&advice));
    if let Some(server) = r.string(t, "server", values::http_url) {
        out.server = server.trim_end_matches('/').to_owned();
    }
    out.topic = r.string(t, "topic", ntfy_topic);
    let topic_var = r.string(t, "topic_env", values::env_var_name);
    if let Some(var) = &topic_var
        && let Some(topic) = non_empty_key(env, var)
    {
        // Never said back: the topic is as good as a key.
        if ntfy_topic(&topic).is_ok() {
            out.topic = Some(topic);
            out.topic_from_env = true;
        } else if let Some((_, v)) = entry(t, "topic_env") {
            r.report(
                Some(v.span()),
                "ntfy.topic_env",
                format!("{var} must hold an ntfy topic: 1 to 64 letters, digits, _ or -"),
            );
        }
    }
    out.topic_env = topic_var;
    out.reply_topic = r.string(t, "reply_topic", ntfy_topic);
    if let (Some(topic), Some(reply)) = (&out.topic, &out.reply_topic)
        && topic == reply
        && let Some((_, v)) = entry(t, "reply_topic")
    {
        r.report(
            Some(v.span()),
            "ntfy.reply_topic",
            "must differ from `ntfy.topic`: answers are read from it",
        );
        out.reply_topic = None;
    }
    if let Some(p) = r.int(t, "priority", 1, 5) {
        out.priority = p;
    }
    out.token = secret_from(env, var.as_ref());
    out.token_env = var;
    let reply_var = r.string(t, "reply_token_env", values::env_var_name);
    out.reply_token = secret_from(env, reply_var.as_ref());
    out.reply_token_env = reply_var;
    out.notify = read_channel_notify(r, t);
}

/// Reads `[webhook]` (if present).
pub(crate) fn read_webhook(
    r: &mut Reader,
    t: Option<&Table>,
    env: &dyn Env,
    out: &mut WebhookConfig,
) {
    let Some(t) = t else { return };
    let var = r.string(t, "url_env", values::env_var_name);
    r.unknown_keys(t, crate::keys::WEBHOOK, None);
    if let Some(url) = r.string(t, "url", values::http_url) {
        out.url = Some(Secret::new(url));
    }
    if let Some(format) = r.choice(t, "format", &WebhookFormat::CHOICES) {
        out.format = format;
    }
    if let Some(secret) = secret_from(env, var.as_ref()) {
        out.url = Some(secret);
    }
    out.url_env = var;
    out.notify = read_channel_notify(r, t);
}

/// Reads `[email]` (if present).
pub(crate) fn read_email(r: &mut Reader, t: Option<&Table>, env: &dyn Env, out: &mut EmailConfig) {
    let Some(t) = t else { return };
    let username_env = r.string(t, "username_env", values::env_var_name);
    let password_env = r.string(t, "password_env", values::env_var_name);
    let advice = format!(
        "set the environment variable {} instead and name it with `email.password_env`",
        password_env.as_deref().unwrap_or("SMTP_PASSWORD")
    );
    r.unknown_keys(t, crate::keys::EMAIL, Some(&advice));
    out.smtp_host = r.string(t, "smtp_host", host);
    if let Some(port) = r.int(t, "smtp_port", 1, 65_535) {
        out.smtp_port = port;
    }
    out.from = r.string(t, "from", values::email);
    if let Some(to) = r.string_list(t, "to", values::email) {
        out.to = to;
    }
    if let Some(tls) = r.choice(t, "tls", &EmailTls::CHOICES) {
        out.tls = tls;
    }
    out.username = secret_from(env, username_env.as_ref());
    out.password = secret_from(env, password_env.as_ref());
    out.username_env = username_env;
    out.password_env = password_env;
    out.notify = read_channel_notify(r, t);
}

/// Reads `[notify_command]` (if present).
pub(crate) fn read_notify_command(
    r: &mut Reader,
    t: Option<&Table>,
    out: &mut NotifyCommandConfig,
) {
    let Some(t) = t else { return };
    r.unknown_keys(t, crate::keys::NOTIFY_COMMAND, None);
    out.program = r.string(t, "program", values::non_empty);
    if let Some(args) = r.string_list(t, "args", |_| Ok(())) {
        out.args = args;
    }
    if let Some(secs) = r.int(t, "timeout_secs", 1, 3600) {
        out.timeout_secs = secs;
    }
    out.notify = read_channel_notify(r, t);
}

/// A duration setting of `[human]` (`"30m"`, `"2h"`, spelled as `max_duration`), in seconds.
fn duration(r: &mut Reader, t: &Table, key: &str) -> Option<u64> {
    let (_, v) = entry(t, key)?;
    let path = path_of(t.path, key);
    let parsed = match v.get_ref().as_str() {
        Some(s) => tether_budget::parse_duration(s)
            .map_err(|e| e.to_string())
            .and_then(|secs| {
                if secs == 0 {
                    Err("must be longer than 0s".to_owned())
                } else {
                    Ok(secs)
                }
            }),
        None => Err("must be a duration string such as \"30m\" or \"2h\"".to_owned()),
    };
    match parsed {
        Ok(secs) => Some(secs),
        Err(message) => {
            r.report(Some(v.span()), path, message);
            None
        }
    }
}

/// `remind_after`, `escalate_after` and `escalate_to` of `[human]`, into `out`.
pub(crate) fn read_escalation(r: &mut Reader, t: &Table, out: &mut crate::HumanConfig) {
    out.remind_after_secs = duration(r, t, "remind_after");
    out.escalate_after_secs = duration(r, t, "escalate_after");
    if let Some(list) = r.string_list(t, "escalate_to", |v| EscalationTarget::parse(v).map(|_| ()))
    {
        out.escalate_to = list
            .iter()
            .filter_map(|v| EscalationTarget::parse(v).ok())
            .collect();
    }
    let after = entry(t, "escalate_after");
    let to = entry(t, "escalate_to");
    match (after, to) {
        (Some((_, v)), None) => r.report(
            Some(v.span()),
            "human.escalate_after",
            "has no effect without `human.escalate_to` (the sinks to offer the question on then)",
        ),
        (None, Some((_, v))) => r.report(
            Some(v.span()),
            "human.escalate_to",
            "has no effect without `human.escalate_after` (how long a question waits first)",
        ),
        _ => {}
    }
}
