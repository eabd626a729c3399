//! Who may use the dashboard, and what a page may do in a browser.
//!
//! A local web server is reachable by every page the user opens: a hostile site can make the
//! browser send requests to `127.0.0.1` (cross-site requests) or point its own host name at it
//! (DNS rebinding). And browsers do not keep cookies apart by port: a cookie set by this server
//! is sent to every other server on `127.0.0.1` the user opens — an agent's dev server among
//! them. So no secret travels in a cookie, and every request passes [`guard`]:
//!
//! 1. the `Host` header must name this server: on a loopback bind `127.0.0.1`, `localhost` or
//!    `[::1]` with its port; on a remote bind any IP address with its port (a rebinding attack
//!    needs a host name). Anything else is refused before anything is read;
//! 2. the token printed at start is needed for everything but the two static assets: it comes
//!    as `Authorization: Bearer <token>`, compared in constant time. The page's script takes it
//!    from the URL tether printed (`?token=`), keeps it in `sessionStorage` — which only this
//!    origin, port included, can read — takes it out of the address bar, and sends it as that
//!    header on every request it makes. A page opened without the header (any navigation) gets
//!    only the [`crate::views::shell`], which holds nothing but the script that fetches the page
//!    with the header; a wrong `?token=` is refused there already;
//! 3. a request that changes state (anything but GET and HEAD) must not carry an `Origin` other
//!    than the server's own, nor a `Sec-Fetch-Site` other than `same-origin` or `none`;
//! 4. every response carries a strict Content-Security-Policy (scripts and styles only from
//!    the server's own files, no inline script, no framing), `nosniff`, a same-origin referrer
//!    policy (the URL with the token is never sent elsewhere) and `no-store`.

use std::io::Read as _;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{Html, IntoResponse, Response};

use crate::app::App;
use crate::error::WebError;
use crate::views;

/// The Content-Security-Policy of every response.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; \
                       connect-src 'self'; form-action 'self'; base-uri 'none'; \
                       frame-ancestors 'none'";

/// What the guard checks requests against.
#[derive(Debug, Clone)]
pub struct Guard {
    token: String,
    port: u16,
    remote: bool,
}

impl Guard {
    /// A guard for a server bound at `addr` with `token`; `remote` when a non-loopback bind was
    /// asked for.
    pub fn new(token: String, addr: SocketAddr, remote: bool) -> Self {
        Guard {
            token,
            port: addr.port(),
            remote,
        }
    }

    /// The token.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// Whether a `Host` header names this server.
    pub fn host_allowed(&self, host: &str) -> bool {
        let Some((name, port)) = host.rsplit_once(':') else {
            return false;
        };
        if port.parse::<u16>().ok() != Some(self.port) {
            return false;
        }
        let loopback = matches!(name, "localhost" | "[::1]")
            || name
                .parse::<std::net::Ipv4Addr>()
                .is_ok_and(|ip| ip.is_loopback());
        if loopback {
            return true;
        }
        self.remote
            && (name.parse::<std::net::Ipv4Addr>().is_ok()
                || name
                    .strip_prefix('[')
                    .and_then(|n| n.strip_suffix(']'))
                    .is_some_and(|n| n.parse::<std::net::Ipv6Addr>().is_ok()))
    }

    fn matches(&self, given: &str) -> bool {
        constant_time_eq(given.as_bytes(), self.token.as_bytes())
    }
}

/// 32 bytes from the system's randomness, as hex.
pub fn new_token() -> Result<String, WebError> {
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(|cause| WebError::Io {
            what: "reading /dev/urandom for the dashboard's token",
            cause,
        })?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Compares without stopping at the first difference.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The middleware: Host, token, Origin, then the security headers on whatever is answered.
pub(crate) async fn guard(State(app): State<Arc<App>>, req: Request, next: Next) -> Response {
    let mut response = match check(&app.guard, &req) {
        Ok(Pass::Through) => next.run(req).await,
        Ok(Pass::Shell) => Html(views::shell().into_string()).into_response(),
        Err((status, why)) => refusal(status, why),
    };
    harden(response.headers_mut());
    response
}

type Refused = (StatusCode, &'static str);

/// What a request that passed the guard gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pass {
    /// What it asked for.
    Through,
    /// A page asked for without the token: the shell, whose script asks again with it.
    Shell,
}

fn check(guard: &Guard, req: &Request) -> Result<Pass, Refused> {
    let headers = req.headers();
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or_default();
    if !guard.host_allowed(host) {
        return Err((
            StatusCode::MISDIRECTED_REQUEST,
            "this server answers only to its own address (open the URL tether printed)",
        ));
    }
    let reading = matches!(*req.method(), Method::GET | Method::HEAD);
    let path = req.uri().path();
    if reading && is_asset(path) {
        return Ok(Pass::Through);
    }
    if !authenticated(guard, headers) {
        let given = query_token(req.uri().query());
        return match given {
            Some(t) if !guard.matches(t) => Err((StatusCode::UNAUTHORIZED, "wrong token")),
            _ if reading && is_page(path) => Ok(Pass::Shell),
            _ => Err((
                StatusCode::UNAUTHORIZED,
                "send the token printed at start as `Authorization: Bearer <token>` \
                 (in a browser, open the URL tether printed)",
            )),
        };
    }
    if !reading {
        check_origin(headers, host)?;
    }
    Ok(Pass::Through)
}

/// The stylesheet and the script: the same for everyone, and needed by the shell.
fn is_asset(path: &str) -> bool {
    matches!(path, "/assets/app.css" | "/assets/app.js")
}

/// A page a person opens (what gets the shell without the token): `/`, `/history`,
/// `/runs/<id>`.
fn is_page(path: &str) -> bool {
    path == "/"
        || path == "/history"
        || path
            .strip_prefix("/runs/")
            .is_some_and(|id| !id.is_empty() && !id.contains('/'))
}

fn authenticated(guard: &Guard, headers: &HeaderMap) -> bool {
    headers
        .get_all(header::AUTHORIZATION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .filter_map(|v| v.strip_prefix("Bearer "))
        .any(|token| guard.matches(token.trim()))
}

fn check_origin(headers: &HeaderMap, host: &str) -> Result<(), Refused> {
    let site = headers.get("sec-fetch-site").and_then(|v| v.to_str().ok());
    if site.is_some_and(|s| s != "same-origin" && s != "none") {
        return Err((StatusCode::FORBIDDEN, "cross-site request refused"));
    }
    match headers.get(header::ORIGIN).and_then(|v| v.to_str().ok()) {
        Some(origin) if origin != format!("http://{host}") => {
            Err((StatusCode::FORBIDDEN, "request from another origin refused"))
        }
        _ => Ok(()),
    }
}

fn query_token(query: Option<&str>) -> Option<&str> {
    query?
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .find(|(k, _)| *k == "token")
        .map(|(_, v)| v)
}

fn refusal(status: StatusCode, why: &'static str) -> Response {
    let mut response = (status, Body::from(format!("{why}\n"))).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

/// The headers every response carries.
fn harden(headers: &mut HeaderMap) {
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers
        .entry(header::CACHE_CONTROL)
        .or_insert(HeaderValue::from_static("no-store"));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guard(remote: bool) -> Guard {
        Guard::new("t0k".into(), "127.0.0.1:8080".parse().unwrap(), remote)
    }

    #[test]
    fn hosts() {
        let g = guard(false);
        for ok in [
            "127.0.0.1:8080",
            "localhost:8080",
            "[::1]:8080",
            "127.0.0.2:8080",
        ] {
            assert!(g.host_allowed(ok), "{ok}");
        }
        for bad in [
            "evil.example:8080",
            "127.0.0.1:8081",
            "127.0.0.1",
            "",
            "192.168.1.4:8080",
            "localhost.evil.example:8080",
        ] {
            assert!(!g.host_allowed(bad), "{bad}");
        }
        let r = guard(true);
        assert!(r.host_allowed("192.168.1.4:8080"));
        assert!(r.host_allowed("[fe80::1]:8080"));
        assert!(!r.host_allowed("evil.example:8080"));
    }

    #[test]
    fn pages_and_assets() {
        for page in ["/", "/history", "/runs/r-abc"] {
            assert!(is_page(page), "{page}");
        }
        for other in [
            "/api/runs",
            "/live",
            "/runs/",
            "/runs/a/b",
            "/assets/app.js",
            "/x",
        ] {
            assert!(!is_page(other), "{other}");
        }
        assert!(is_asset("/assets/app.js") && is_asset("/assets/app.css"));
        assert!(!is_asset("/assets/other"));
    }

    #[test]
    fn tokens_compare_whole() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"ab"));
        let t = new_token().unwrap();
        assert_eq!(t.len(), 64);
        assert_ne!(t, new_token().unwrap());
    }
}
