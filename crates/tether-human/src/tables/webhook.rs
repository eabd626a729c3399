//! `[webhook]`: the webhook sink's table, read into [`WebhookConfig`].

use std::sync::Arc;

use tether_config::{Config, KeyDecl, NoticeKind, Role, Secret, TableDecl, TableReader, values};

/// The body a webhook receives (`webhook.format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WebhookFormat {
    /// tether's own JSON body (documented in the book).
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

impl WebhookConfig {
    /// The `[webhook]` table of `config` (its defaults when `config` was read without it).
    pub fn of(config: &Config) -> std::borrow::Cow<'_, WebhookConfig> {
        config.integration::<WebhookConfig>()
    }

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

/// `[webhook]`.
pub const TABLE: TableDecl = TableDecl {
    name: "webhook",
    intro: "The webhook sink (list \"webhook\"): a POST per notice and question, retried in the \
            background.",
    role: Role::Sink { arg: None },
    keys: &[
        KeyDecl::new(
            "url_env",
            "The NAME of the environment variable holding the URL (a webhook URL is a credential).",
            "\"TETHER_WEBHOOK_URL\"",
            "\"HOOK_URL\"",
        )
        .secret_var(None),
        KeyDecl::new(
            "url",
            "Or the URL itself, when it is no secret (url_env wins when its variable is set).",
            "\"http://127.0.0.1:9000/tether\"",
            "\"http://127.0.0.1:2/hook\"",
        )
        .credential(),
        KeyDecl::new(
            "format",
            "The body: \"json\" (tether's own) | \"slack\" ({\"text\"}) | \"discord\" \
             ({\"content\"}).",
            "\"json\"",
            "\"slack\"",
        ),
        super::notify(
            "The notices posted, when not [notify] on.",
            "[\"done\", \"paused\"]",
        ),
    ],
    advice: None,
    read: |t| Arc::new(read(t)),
    default: || Arc::new(WebhookConfig::default()),
};

/// Reads `[webhook]` (if present); names what a listed sink lacks.
fn read(t: &mut TableReader<'_, '_>) -> WebhookConfig {
    let mut out = WebhookConfig::default();
    if t.present() {
        if let Some(url) = t.string("url", values::http_url) {
            out.url = Some(Secret::new(url));
        }
        if let Some(format) = t.choice("format", &WebhookFormat::CHOICES) {
            out.format = format;
        }
        if let Some(secret) = t.secret("url_env") {
            out.url = Some(secret);
        }
        out.url_env = t.secret_var("url_env");
        out.notify = t.notices("notify");
    }
    for missing in out.missing() {
        t.lacks(missing);
    }
    out
}
