//! `[email]`: the email sink's table, read into [`EmailConfig`].

use std::sync::Arc;

use tether_config::{
    Config, EscalationArg, KeyDecl, NoticeKind, Role, Secret, TableDecl, TableReader, values,
};

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

impl EmailConfig {
    /// The `[email]` table of `config` (its defaults when `config` was read without it).
    pub fn of(config: &Config) -> std::borrow::Cow<'_, EmailConfig> {
        config.integration::<EmailConfig>()
    }

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

/// `[email]`.
pub const TABLE: TableDecl = TableDecl {
    name: "email",
    intro: "The email sink (list \"email\"): SMTP with STARTTLS.",
    role: Role::Sink {
        arg: Some(EscalationArg {
            name: "address",
            example: "lead@example.com",
            check: values::email,
        }),
    },
    keys: &[
        KeyDecl::new(
            "smtp_host",
            "The SMTP server's host name.",
            "\"smtp.example.com\"",
            "\"smtp.example\"",
        ),
        KeyDecl::new("smtp_port", "Its port: 1..65535.", "587", "25"),
        KeyDecl::new(
            "from",
            "The sender's address.",
            "\"tether@example.com\"",
            "\"a@example.com\"",
        ),
        KeyDecl::new(
            "to",
            "The recipients.",
            "[\"me@example.com\"]",
            "[\"b@example.com\"]",
        ),
        KeyDecl::new(
            "username_env",
            "The NAME of the environment variable holding the SMTP user name.",
            "\"SMTP_USERNAME\"",
            "\"E_USER\"",
        )
        .secret_var(None),
        KeyDecl::new(
            "password_env",
            "The NAME of the one holding the SMTP password.",
            "\"SMTP_PASSWORD\"",
            "\"E_PASSWORD\"",
        )
        .secret_var(None),
        KeyDecl::new(
            "tls",
            "\"starttls\" | \"none\" (plain text, only to a server on this machine).",
            "\"starttls\"",
            "\"none\"",
        ),
        super::notify("The notices mailed, when not [notify] on.", "[\"failed\"]"),
    ],
    advice: Some("password_env"),
    read: |t| Arc::new(read(t)),
    default: || Arc::new(EmailConfig::default()),
};

/// Reads `[email]` (if present); names what a listed sink lacks.
fn read(t: &mut TableReader<'_, '_>) -> EmailConfig {
    let mut out = EmailConfig::default();
    if t.present() {
        out.smtp_host = t.string("smtp_host", host);
        if let Some(port) = t.int("smtp_port", 1, 65_535) {
            out.smtp_port = port;
        }
        out.from = t.string("from", values::email);
        if let Some(to) = t.string_list("to", values::email) {
            out.to = to;
        }
        if let Some(tls) = t.choice("tls", &EmailTls::CHOICES) {
            out.tls = tls;
        }
        out.username = t.secret("username_env");
        out.password = t.secret("password_env");
        out.username_env = t.secret_var("username_env");
        out.password_env = t.secret_var("password_env");
        out.notify = t.notices("notify");
    }
    for missing in out.missing() {
        t.lacks(missing);
    }
    out
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
