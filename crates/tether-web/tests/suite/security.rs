//! The guard: Host, the token (a bearer header only: never a cookie), the shell a page gets
//! without it, Origin on changes, the headers on every response, and loopback unless asked.

use crate::common::Web;

#[test]
fn without_the_token_nothing_is_served_but_the_shell_and_the_assets() {
    let web = Web::start();
    let store = web.store();
    crate::common::question(&store, None, "The secret plan?");
    for path in [
        "/api/runs",
        "/api/questions",
        "/api/events",
        "/live?page=runs",
    ] {
        let r = web.request("GET", path, &[], None);
        assert_eq!(r.status, 401, "{path}");
    }
    // A page opened in a browser gets the shell: the assets and nothing of the store.
    for path in ["/", "/history", "/runs/r-nothere", "/?notice=answered"] {
        let r = web.request("GET", path, &[], None);
        assert_eq!(r.status, 200, "{path}");
        assert!(
            r.body.contains(r#"data-shell="true""#),
            "{path}: {}",
            r.body
        );
        assert!(!r.body.contains("secret plan"), "{path}: {}", r.body);
    }
    for path in ["/assets/app.js", "/assets/app.css"] {
        assert_eq!(web.request("GET", path, &[], None).status, 200, "{path}");
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
    // The token in the URL opens nothing by itself: only the page's script reads it.
    let by_url = web.request("GET", &format!("/api/runs?token={}", web.token), &[], None);
    assert_eq!(by_url.status, 401);
}

#[test]
fn the_token_in_the_url_gets_the_shell_and_never_a_cookie() {
    let web = Web::start();
    let r = web.request("GET", &format!("/history?token={}", web.token), &[], None);
    assert_eq!(r.status, 200);
    assert!(r.body.contains(r#"data-shell="true""#), "{}", r.body);
    assert_eq!(r.header("set-cookie"), None);
    assert!(
        !r.body.contains(&web.token),
        "the shell does not repeat the token"
    );
    let page = web.get("/history");
    assert_eq!(page.status, 200);
    assert_eq!(page.header("set-cookie"), None);
    assert!(page.body.contains("Q&amp;A history"));
}

#[test]
fn a_cookie_carrying_the_token_opens_nothing() {
    let web = Web::start();
    let store = web.store();
    let q = crate::common::question(&store, None, "Which way?");
    // What the dashboard used to set, and what any other server on 127.0.0.1 received.
    let cookie = format!("tether_{}={}", web.addr.port(), web.token);
    let r = web.request("GET", "/api/questions", &[("Cookie", &cookie)], None);
    assert_eq!(r.status, 401);
    let page = web.request("GET", "/", &[("Cookie", &cookie)], None);
    assert!(!page.body.contains("Which way?"), "{}", page.body);
    let r = web.request(
        "POST",
        &format!("/questions/{}/answer", q.id),
        &[
            ("Cookie", &cookie),
            ("Origin", &web.origin()),
            ("Sec-Fetch-Site", "same-origin"),
        ],
        Some(("application/x-www-form-urlencoded", "text=left")),
    );
    assert_eq!(r.status, 401);
    assert_eq!(store.question(&q.id).unwrap().answer, None);
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
fn changes_need_the_token_and_no_other_origin() {
    let web = Web::start();
    let store = web.store();
    let q = crate::common::question(&store, None, "Which way?");
    let bearer = web.bearer();
    let path = format!("/questions/{}/answer", q.id);
    let form = Some((
        "application/x-www-form-urlencoded",
        "text=left&responder=ana",
    ));
    // The page's own origin without the token is not enough.
    let r = web.request(
        "POST",
        &path,
        &[("Origin", &web.origin()), ("Sec-Fetch-Site", "same-origin")],
        form,
    );
    assert_eq!(r.status, 401);
    // The token from another origin, or a cross-site request, is refused.
    let r = web.request(
        "POST",
        &path,
        &[
            ("Authorization", &bearer),
            ("Origin", "http://evil.example"),
        ],
        form,
    );
    assert_eq!(r.status, 403);
    let other_port = format!("http://127.0.0.1:{}", web.addr.port() ^ 1);
    let r = web.request(
        "POST",
        &path,
        &[("Authorization", &bearer), ("Origin", &other_port)],
        form,
    );
    assert_eq!(r.status, 403);
    let r = web.request(
        "POST",
        &path,
        &[
            ("Authorization", &bearer),
            ("Origin", &web.origin()),
            ("Sec-Fetch-Site", "cross-site"),
        ],
        form,
    );
    assert_eq!(r.status, 403);
    assert_eq!(store.question(&q.id).unwrap().answer, None);
    // The page's script: the token, its own origin.
    let r = web.request(
        "POST",
        &path,
        &[
            ("Authorization", &bearer),
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
