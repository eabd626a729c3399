use super::{email, env_var_name, http_url, non_empty};

#[test]
fn accepts_http_and_https_urls() {
    for ok in [
        "http://127.0.0.1:8080/v1",
        "https://api.anthropic.com",
        "HTTPS://Example.COM/",
        "http://localhost",
        "http://[::1]:11434/v1",
        "https://my_host.internal/path?x=1",
    ] {
        assert_eq!(http_url(ok), Ok(()), "{ok}");
    }
}

#[test]
fn rejects_bad_urls_with_a_reason() {
    let cases = [
        ("ftp://example.com", "scheme \"ftp\""),
        ("example.com", "got \"example.com\""),
        ("https://", "host is missing"),
        ("https:///v1", "host is missing"),
        ("http://:8080", "host is missing"),
        ("http://exa mple.com", "whitespace"),
        ("http://host:99999", "port \"99999\""),
        ("http://host:0", "port \"0\""),
        ("http://host:", "port \"\""),
        ("https://user:pw@host", "credentials"),
        ("http://[::1", "not a valid host"),
        ("http://ho$t", "not a valid host"),
    ];
    for (bad, reason) in cases {
        let err = http_url(bad).expect_err(bad);
        assert!(err.contains(reason), "{bad}: {err}");
    }
}

#[test]
fn credentials_are_not_echoed() {
    let err = http_url("https://user:hunter2@host").unwrap_err();
    assert!(!err.contains("hunter2"), "{err}");
}

#[test]
fn checks_email_addresses() {
    assert_eq!(email("bot@chat.example.com"), Ok(()));
    for bad in [
        "bot",
        "@x.com",
        "bot@",
        "bot@localhost",
        "a@b@c.com",
        "b ot@x.com",
        "b@.x",
    ] {
        assert!(email(bad).is_err(), "{bad}");
    }
}

#[test]
fn checks_variable_names() {
    for ok in ["OPENAI_API_KEY", "_X", "a1"] {
        assert_eq!(env_var_name(ok), Ok(()), "{ok}");
    }
    assert!(env_var_name("").is_err());
    for bad in ["1ABC", "MY-KEY", "sk-live-abc123", "A B", "$HOME"] {
        let err = env_var_name(bad).expect_err(bad);
        assert!(!err.contains(bad), "the value is echoed: {err}");
    }
}

#[test]
fn rejects_blank_text() {
    assert!(non_empty("  ").is_err());
    assert!(non_empty("").is_err());
    assert_eq!(non_empty("x"), Ok(()));
}
