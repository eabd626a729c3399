//! The email sink against a real SMTP server: Python's aiosmtpd (installed by `test.sh` into the
//! test environment named by `PYTHON`), requiring STARTTLS with a certificate made for the test
//! by a throwaway CA (openssl), and a login. It is never skipped.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;
use tether_config::{NoticeKind, Secret};
use tether_human::email::Email;
use tether_human::sink_body::SinkBody;
use tether_human::sinks::OneWay;
use tether_human::tables::email::{EmailConfig, EmailTls};
use tether_human::{Channel, Notice};
use tether_store::RunId;
use tokio::io::{AsyncBufReadExt as _, BufReader};

const LIMIT: Duration = Duration::from_secs(30);

const SERVER: &str = r#"
import json, ssl, sys
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

cert, key, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
logins = []

class Handler:
    async def handle_DATA(self, server, session, envelope):
        print(json.dumps({"from": envelope.mail_from, "to": envelope.rcpt_tos,
                          "data": envelope.content.decode("utf-8", "replace"),
                          "tls": session.ssl is not None, "logins": logins}), flush=True)
        return "250 OK"

def authenticate(server, session, envelope, mechanism, auth_data):
    ok = isinstance(auth_data, LoginPassword) and auth_data.password == b"pw-123"
    if ok:
        logins.append(auth_data.login.decode())
    return AuthResult(success=ok)

context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
context.load_cert_chain(cert, key)
controller = Controller(Handler(), hostname="127.0.0.1", port=port, tls_context=context,
                        require_starttls=True, authenticator=authenticate, auth_required=True,
                        auth_require_tls=True)
controller.start()
print("ready", flush=True)
sys.stdin.read()
controller.stop()
"#;

fn openssl(dir: &Path, args: &[&str]) {
    let status = std::process::Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap_or_else(|e| panic!("openssl is needed for this test: {e}"));
    assert!(status.success(), "openssl {args:?} failed");
}

/// A CA and a server certificate for 127.0.0.1 signed by it, in `dir`.
fn certificates(dir: &Path) {
    openssl(
        dir,
        &[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "ca.key",
            "-out",
            "ca.pem",
            "-days",
            "1",
            "-subj",
            "/CN=tether test CA",
            "-addext",
            "basicConstraints=critical,CA:TRUE",
            "-addext",
            "keyUsage=critical,keyCertSign",
        ],
    );
    openssl(
        dir,
        &[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
            "-subj",
            "/CN=127.0.0.1",
        ],
    );
    std::fs::write(
        dir.join("ext"),
        "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n",
    )
    .unwrap();
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "server.pem",
            "-days",
            "1",
            "-extfile",
            "ext",
        ],
    );
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[tokio::test]
async fn a_notice_is_mailed_over_starttls_with_a_login() {
    let dir = tempfile::tempdir().unwrap();
    certificates(dir.path());
    std::fs::write(dir.path().join("server.py"), SERVER).unwrap();
    let port = free_port();
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_owned());
    let mut server = tokio::process::Command::new(&python)
        .arg("server.py")
        .args(["server.pem", "server.key", &port.to_string()])
        .current_dir(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|e| panic!("{python} is needed for this test (run ./test.sh): {e}"));
    let mut lines = BufReader::new(server.stdout.take().unwrap()).lines();
    let ready = tokio::time::timeout(LIMIT, lines.next_line())
        .await
        .expect("aiosmtpd started in time")
        .unwrap();
    assert_eq!(
        ready.as_deref(),
        Some("ready"),
        "aiosmtpd did not start (is it installed in {python}? run ./test.sh)"
    );

    let config = EmailConfig {
        smtp_host: Some("127.0.0.1".into()),
        smtp_port: port,
        from: Some("tether@example.com".into()),
        to: vec!["me@example.com".into(), "lead@example.com".into()],
        username_env: Some("SMTP_USERNAME".into()),
        password_env: Some("SMTP_PASSWORD".into()),
        username: Some(Secret::new("tether-bot")),
        password: Some(Secret::new("pw-123")),
        tls: EmailTls::StartTls,
        notify: None,
    };
    let ca = std::fs::read(dir.path().join("ca.pem")).unwrap();
    let email = Email::from_config(&config, None, Some(&ca)).unwrap();
    let notice = Notice {
        kind: NoticeKind::Failed,
        run_id: Some("r-7k2m9x".parse::<RunId>().unwrap()),
        text: "Run r-7k2m9x failed: the build broke.".into(),
        resume: None,
    };
    email.send(&SinkBody::notice(&notice)).await.unwrap();
    let got = tokio::time::timeout(LIMIT, lines.next_line())
        .await
        .expect("the mail arrived in time")
        .unwrap()
        .unwrap();
    let got: Value = serde_json::from_str(&got).unwrap();
    assert_eq!(got["tls"], true, "sent after STARTTLS");
    assert_eq!(got["logins"], serde_json::json!(["tether-bot"]));
    assert_eq!(got["from"], "tether@example.com");
    assert_eq!(
        got["to"],
        serde_json::json!(["me@example.com", "lead@example.com"])
    );
    let data = got["data"].as_str().unwrap();
    assert!(data.contains("From: tether@example.com"), "{data}");
    assert!(
        data.contains("To: me@example.com, lead@example.com"),
        "{data}"
    );
    assert!(
        data.contains("Subject: tether: run failed (r-7k2m9x)"),
        "{data}"
    );
    assert!(
        data.contains("Run r-7k2m9x failed: the build broke."),
        "{data}"
    );

    // An escalation's recipient replaces the configured ones.
    let lead =
        OneWay::new(Email::from_config(&config, Some("oncall@example.com"), Some(&ca)).unwrap());
    lead.notice(&notice).await;
    let got = tokio::time::timeout(LIMIT, lines.next_line())
        .await
        .expect("the second mail arrived in time")
        .unwrap()
        .unwrap();
    let got: Value = serde_json::from_str(&got).unwrap();
    assert_eq!(got["to"], serde_json::json!(["oncall@example.com"]));
    drop(server.stdin.take());
    let _ = tokio::time::timeout(LIMIT, server.wait()).await;
}

#[tokio::test]
async fn plain_text_is_allowed_to_loopback_and_a_failed_send_says_why() {
    let config = EmailConfig {
        smtp_host: Some("127.0.0.1".into()),
        smtp_port: free_port(),
        from: Some("tether@example.com".into()),
        to: vec!["me@example.com".into()],
        tls: EmailTls::None,
        ..EmailConfig::default()
    };
    // Plain text is only for loopback: allowed here, and nothing listens, so sending fails
    // with a reason and no credentials.
    let email = Email::from_config(&config, None, None).unwrap();
    let notice = Notice {
        kind: NoticeKind::Done,
        run_id: Some("r-7k2m9x".parse::<RunId>().unwrap()),
        text: "done".into(),
        resume: None,
    };
    let err = email.send(&SinkBody::notice(&notice)).await.unwrap_err();
    assert!(err.starts_with("cannot send the mail"), "{err}");
}
