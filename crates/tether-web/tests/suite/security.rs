//! The guard: Host, token (query → cookie, bearer), Origin on changes, the headers on every
//! response, and loopback unless asked.

use crate::common::Web;

#[test]
fn without_the_token_nothing_is_served() {
    let web = Web::start();
    for path in [
        "/",
        "/api/runs",
        "/assets/app.js",
        "/history",
        "/api/events",
    ] {
        let r = web.request("GET", path, &[], None);
        assert_eq!(r.status, 401, "{path}");
    }
    let wrong = web.request("GET", "/?token=0000", &[], None);
    assert_eq!(wrong.status, 401);
    let wrong = web.request(
        "GET",
        "/api/runs",
        &[("Authorization", "Bearer nope")],
        None,
    );
    assert_eq!(wrong.status, 401);
}

#[test]
fn the_token_in_the_url_becomes_a_strict_http_only_cookie() {
    let web = Web::start();
    let r = web.request("GET", &format!("/history?token={}", web.token), &[], None);
    assert_eq!(r.status, 303);
    assert_eq!(r.header("location"), Some("/history"));
    let cookie = r.header("set-cookie").unwrap();
    assert!(cookie.contains("HttpOnly"), "{cookie}");
    assert!(cookie.contains("SameSite=Strict"), "{cookie}");
    let pair = cookie.split(';').next().unwrap();
    assert_eq!(pair, format!("tether_{}={}", web.addr.port(), web.token));
    let page = web.request("GET", "/history", &[("Cookie", pair)], None);
    assert_eq!(page.status, 200);
    assert!(page.body.contains("Q&amp;A history"));
    // Another server's cookie (another port) does not open this one.
    let other = format!("tether_1={}", web.token);
    assert_eq!(
        web.request("GET", "/", &[("Cookie", &other)], None).status,
        401
    );
}

#[test]
fn a_foreign_host_is_refused_even_with_the_token() {
    let web = Web::start();
    let auth = web.bearer();
    for host in [
        "evil.example".to_owned(),
        format!("evil.example:{}", web.addr.port()),
        format!("127.0.0.1:{}", web.addr.port() ^ 1),
        format!("192.168.1.10:{}", web.addr.port()),
    ] {
        let r = web.request(
            "GET",
            "/api/runs",
            &[("Host", &host), ("Authorization", &auth)],
            None,
        );
        assert_eq!(r.status, 421, "{host}");
    }
    let local = format!("localhost:{}", web.addr.port());
    let r = web.request(
        "GET",
        "/api/runs",
        &[("Host", &local), ("Authorization", &auth)],
        None,
    );
    assert_eq!(r.status, 200);
}

#[test]
fn changes_need_the_pages_own_origin_or_the_bearer_token() {
    let web = Web::start();
    let store = web.store();
    let q = crate::common::question(&store, None, "Which way?");
    let cookie = format!("tether_{}={}", web.addr.port(), web.token);
    let path = format!("/questions/{}/answer", q.id);
    let form = Some((
        "application/x-www-form-urlencoded",
        "text=left&responder=ana",
    ));
    // A cookie alone (a cross-site form post from an old browser) is not enough.
    let r = web.request("POST", &path, &[("Cookie", &cookie)], form);
    assert_eq!(r.status, 403);
    let r = web.request(
        "POST",
        &path,
        &[("Cookie", &cookie), ("Origin", "http://evil.example")],
        form,
    );
    assert_eq!(r.status, 403);
    let r = web.request(
        "POST",
        &path,
        &[
            ("Cookie", &cookie),
            ("Origin", &web.origin()),
            ("Sec-Fetch-Site", "cross-site"),
        ],
        form,
    );
    assert_eq!(r.status, 403);
    assert_eq!(store.question(&q.id).unwrap().answer, None);
    let r = web.request(
        "POST",
        &path,
        &[
            ("Cookie", &cookie),
            ("Origin", &web.origin()),
            ("Sec-Fetch-Site", "same-origin"),
        ],
        form,
    );
    assert_eq!(r.status, 303, "{}", r.body);
    assert_eq!(r.header("location"), Some("/?notice=answered"));
    let q = store.question(&q.id).unwrap();
    assert_eq!(q.answer.as_deref(), Some("left"));
    assert_eq!(q.channel.as_deref(), Some("web"));
    assert_eq!(q.responder.as_deref(), Some("ana"));
}

#[test]
fn every_response_carries_the_strict_policy() {
    let web = Web::start();
    for r in [
        web.request("GET", "/", &[], None),
        web.get("/"),
        web.get("/api/runs"),
        web.get("/assets/app.js"),
        web.get("/runs/r-nothere"),
    ] {
        let csp = r.header("content-security-policy").unwrap();
        assert!(csp.contains("default-src 'none'"), "{csp}");
        assert!(csp.contains("script-src 'self'"), "{csp}");
        assert!(!csp.contains("unsafe-inline"), "{csp}");
        assert!(csp.contains("frame-ancestors 'none'"), "{csp}");
        assert_eq!(r.header("x-content-type-options"), Some("nosniff"));
    }
    let page = web.get("/");
    assert!(!page.body.contains("<script>"), "no inline script");
    assert!(page.body.contains(r#"<script src="/assets/app.js" defer>"#));
}

#[test]
fn a_remote_address_needs_the_explicit_flag() {
    let dir = tempfile::tempdir().unwrap();
    let ws = tether_config::Workspace::at(dir.path());
    let settings = tether_web::Settings {
        listen: "0.0.0.0:0".parse().unwrap(),
        allow_remote: false,
    };
    let err = tether_web::bind(&ws, &settings).err().unwrap();
    assert!(err.to_string().contains("--allow-remote"), "{err}");
    let allowed = tether_web::Settings {
        allow_remote: true,
        ..settings
    };
    let bound = tether_web::bind(&ws, &allowed).unwrap();
    assert!(bound.is_remote());
    assert!(bound.url().starts_with("http://127.0.0.1:"));
}
