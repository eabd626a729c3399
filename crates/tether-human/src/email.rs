//! The email sink: notices and questions mailed over SMTP, with STARTTLS.
//!
//! For the people who live in their inbox, and for escalation (`email:lead@example.com`): a
//! question nobody answered in two hours reaches someone who was not following the run. Mail
//! carries no answer back; the message says how to answer (`tether answer …`, the dashboard,
//! the chat channels). The SMTP user name and password come from the variables
//! `[email] username_env` and `password_env` name, and are never logged; `tls = "none"` is
//! refused for anything but a server on this machine.

use std::time::Duration;

use lettre::message::Mailbox;
use lettre::message::header::ContentType;
use lettre::transport::smtp::authentication::Credentials;
use lettre::transport::smtp::client::{Certificate, Tls, TlsParameters};
use lettre::{AsyncSmtpTransport, AsyncTransport as _, Message, Tokio1Executor};

use crate::channels::BoxFuture;
use crate::sink_body::SinkBody;
use crate::sinks::{Deliver, SinkError};
use crate::tables::email::{EmailConfig, EmailTls};

/// The name this sink's deliveries are logged under.
const NAME: &str = "email";

/// How long one SMTP conversation may take.
const SMTP_TIMEOUT: Duration = Duration::from_secs(30);

/// Mails notices and questions.
pub struct Email {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
    to: Vec<Mailbox>,
}

/// Whether `host` is this machine.
fn is_loopback(host: &str) -> bool {
    host == "localhost"
        || host
            .trim_matches(['[', ']'])
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

impl Email {
    /// The sink `config` describes, mailing `to` instead of `config.to` when given (an
    /// escalation's recipient). `extra_root` is a PEM certificate trusted besides the
    /// platform's (a test server's own).
    pub fn from_config(
        config: &EmailConfig,
        to: Option<&str>,
        extra_root: Option<&[u8]>,
    ) -> Result<Self, SinkError> {
        let mut missing = config.missing();
        if to.is_some() {
            missing.retain(|m| m != "`[email] to`");
        }
        if !missing.is_empty() {
            return Err(SinkError::Missing {
                sink: NAME,
                missing,
            });
        }
        let (Some(host), Some(from)) = (&config.smtp_host, &config.from) else {
            return Err(SinkError::Missing {
                sink: NAME,
                missing: vec!["`[email] smtp_host`".to_owned()],
            });
        };
        let invalid =
            |setting: &'static str, problem: String| SinkError::Invalid { setting, problem };
        let from: Mailbox = from
            .parse()
            .map_err(|e| invalid("[email] from", format!("not an address: {e}")))?;
        let recipients: Vec<&str> = match to {
            Some(to) => vec![to],
            None => config.to.iter().map(String::as_str).collect(),
        };
        let to = recipients
            .iter()
            .map(|r| r.parse::<Mailbox>())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| invalid("[email] to", format!("not an address: {e}")))?;
        let tls = match config.tls {
            EmailTls::StartTls => {
                let mut params = TlsParameters::builder(host.clone());
                if let Some(pem) = extra_root {
                    let cert = Certificate::from_pem(pem)
                        .map_err(|e| invalid("[email] tls", format!("bad certificate: {e}")))?;
                    params = params.add_root_certificate(cert);
                }
                let params = params
                    .build_rustls()
                    .map_err(|e| invalid("[email] tls", format!("cannot set up TLS: {e}")))?;
                Tls::Required(params)
            }
            EmailTls::None if is_loopback(host) => Tls::None,
            EmailTls::None => {
                return Err(invalid(
                    "[email] tls",
                    format!(
                        "\"none\" sends the password in the clear; it is allowed only for a server \
                         on this machine, and {host:?} is not"
                    ),
                ));
            }
        };
        let mut builder = AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(host.clone())
            .port(config.smtp_port)
            .tls(tls)
            .timeout(Some(SMTP_TIMEOUT));
        if let Some(password) = &config.password {
            let user = config
                .username
                .as_ref()
                .map_or_else(|| from.email.to_string(), |u| u.expose().to_owned());
            builder = builder.credentials(Credentials::new(user, password.expose().to_owned()));
        }
        Ok(Email {
            transport: builder.build(),
            from,
            to,
        })
    }

    /// Mails `body`; an error says why without credentials.
    pub async fn send(&self, body: &SinkBody) -> Result<(), String> {
        let mut message = Message::builder()
            .from(self.from.clone())
            .subject(body.title());
        for to in &self.to {
            message = message.to(to.clone());
        }
        let message = message
            .header(ContentType::TEXT_PLAIN)
            .body(body.plain())
            .map_err(|e| format!("cannot build the mail: {e}"))?;
        self.transport
            .send(message)
            .await
            .map(|_| ())
            .map_err(|e| format!("cannot send the mail: {e}"))
    }

    async fn send_logged(&self, body: &SinkBody) {
        if let Err(why) = self.send(body).await {
            tracing::warn!(sink = NAME, %why, "an email was not sent");
        }
    }
}

impl Deliver for Email {
    fn name(&self) -> &'static str {
        NAME
    }

    fn deliver(&self, body: SinkBody) -> BoxFuture<'_, ()> {
        Box::pin(async move { self.send_logged(&body).await })
    }
}

/// The email sink in the registry ([`crate::registry`]), its table `[email]`
/// ([`crate::tables::email`]): `human.channels`' `"email"` mails the `[email]` recipients; an
/// escalation's `"email:<address>"` that address.
pub const DEF: crate::registry::ChannelDef = crate::registry::ChannelDef {
    settings: &crate::tables::email::TABLE,
    build: |setup, role| {
        let (to, key) = match other_recipient(role) {
            Some(to) => (Some(to), format!("email:{to}")),
            None => (None, role.sent_key("email")),
        };
        let email = Email::from_config(&EmailConfig::of(setup.config), to, None)
            .map_err(|e| e.to_string())?;
        setup.one_way(email, key)
    },
    check: |config, role| {
        Email::from_config(&EmailConfig::of(config), other_recipient(role), None)
            .map(|_| ())
            .map_err(|e| e.to_string())
    },
    probe: None,
    notices: |config| EmailConfig::of(config).notify.clone(),
    reply: |_, _, _| crate::registry::ReplyPath::None,
};

/// The other recipient an escalation names (`email:<address>`), if it names one.
fn other_recipient<'a>(role: crate::registry::Role<'a>) -> Option<&'a str> {
    match role {
        crate::registry::Role::Escalation(target) => target.arg.as_deref(),
        crate::registry::Role::Listed => None,
    }
}
