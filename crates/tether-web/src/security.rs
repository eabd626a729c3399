//! Who may use the dashboard, and what a page may do in a browser.
//!
//! A local web server is reachable by every page the user opens: a hostile site can make the
//! browser send requests to `127.0.0.1` (cross-site requests) or point its own host name at it
//! (DNS rebinding). So every request passes [`guard`]:
//!
//! 1. the `Host` header must name this server: on a loopback bind `127.0.0.1`, `localhost` or
//!    `[::1]` with its port; on a remote bind any IP address with its port (a rebinding attack
//!    needs a host name). Anything else is refused before anything is read;
//! 2. the token printed at start is needed for everything: given once as `?token=` it is
//!    exchanged for an `HttpOnly`, `SameSite=Strict` cookie (and the URL loses it); API clients
//!    may send `Authorization: Bearer <token>` instead. Compared in constant time;
//! 3. a request that changes state (anything but GET and HEAD) must carry an `Origin` equal to
//!    the server's own, or — for non-browser clients, which send none — the bearer header; a
//!    `Sec-Fetch-Site` other than `same-origin` or `none` is refused too;
//! 4. every response carries a strict Content-Security-Policy (scripts and styles only from
//!    the server's own files, no inline script, no framing), `nosniff`, a same-origin referrer policy (with `no-referrer` a browser sends `Origin: null`
//!    on form posts) and
//!    `no-store`.

use std::io::Read as _;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::app::App;
use crate::error::WebError;

/// The Content-Security-Policy of every response.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; \
                       connect-src 'self'; form-action 'self'; base-uri 'none'; \
                       frame-ancestors 'none'";

/// What the guard checks requests against.
#[derive(Debug, Clone)]
pub struct Guard {
    token: String,
    cookie: String,
    port: u16,
    remote: bool,
}

impl Guard {
    /// A guard for a server bound at `addr` with `token`; `remote` when a non-loopback bind was
    /// asked for.
    pub fn new(token: String, addr: SocketAddr, remote: bool) -> Self {
        Guard {
            token,
            // Cookies are not kept apart by port: two servers on one host need two names.
            cookie: format!("tether_{}", addr.port()),
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

    /// The token from the cookie, if the request has this server's cookie.
    fn cookie_token<'a>(&self, headers: &'a HeaderMap) -> Option<&'a str> {
        headers
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .filter_map(|pair| pair.trim().split_once('='))
            .find(|(name, _)| *name == self.cookie)
            .map(|(_, value)| value)
    }

    /// The `Set-Cookie` value that carries the token from now on.
    fn set_cookie(&self) -> String {
        format!(
            "{}={}; HttpOnly; SameSite=Strict; Path=/",
            self.cookie, self.token
        )
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

/// How a request authenticated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Auth {
    Cookie,
    Bearer,
}

/// The middleware: Host, token, Origin, then the security headers on whatever is answered.
pub(crate) async fn guard(State(app): State<Arc<App>>, req: Request, next: Next) -> Response {
    let mut response = match check(&app.guard, &req) {
        Ok(Some(early)) => early,
        Ok(None) => next.run(req).await,
        Err((status, why)) => refusal(status, why),
    };
    harden(response.headers_mut());
    response
}

type Refused = (StatusCode, &'static str);

/// `Ok(Some(_))` answers at once (the token exchange), `Ok(None)` lets the request through.
fn check(guard: &Guard, req: &Request) -> Result<Option<Response>, Refused> {
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
    if let Some(given) = query_token(req.uri().query()) {
        if req.method() != Method::GET || !guard.matches(given) {
            return Err((StatusCode::UNAUTHORIZED, "wrong token"));
        }
        return Ok(Some(exchange(guard, req.uri().path())));
    }
    let auth = authenticate(guard, headers).ok_or((
        StatusCode::UNAUTHORIZED,
        "open the dashboard with the URL tether printed (it carries the token)",
    ))?;
    if !matches!(*req.method(), Method::GET | Method::HEAD) {
        check_origin(headers, host, auth)?;
    }
    Ok(None)
}

fn authenticate(guard: &Guard, headers: &HeaderMap) -> Option<Auth> {
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    if let Some(token) = bearer {
        return guard.matches(token.trim()).then_some(Auth::Bearer);
    }
    guard
        .cookie_token(headers)
        .filter(|t| guard.matches(t))
        .map(|_| Auth::Cookie)
}

fn check_origin(headers: &HeaderMap, host: &str, auth: Auth) -> Result<(), Refused> {
    let site = headers.get("sec-fetch-site").and_then(|v| v.to_str().ok());
    if site.is_some_and(|s| s != "same-origin" && s != "none") {
        return Err((StatusCode::FORBIDDEN, "cross-site request refused"));
    }
    match headers.get(header::ORIGIN).and_then(|v| v.to_str().ok()) {
        Some(origin) if origin == format!("http://{host}") => Ok(()),
        Some(_) => Err((StatusCode::FORBIDDEN, "request from another origin refused")),
        None if auth == Auth::Bearer => Ok(()),
        None => Err((
            StatusCode::FORBIDDEN,
            "a change needs the page's Origin header, or the token as a bearer header",
        )),
    }
}

fn query_token(query: Option<&str>) -> Option<&str> {
    query?
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .find(|(k, _)| *k == "token")
        .map(|(_, v)| v)
}

/// Sets the cookie and sends the browser to the same page without the token in its URL.
fn exchange(guard: &Guard, path: &str) -> Response {
    let location = if path.starts_with('/') && !path.starts_with("//") {
        path
    } else {
        "/"
    };
    let mut response = StatusCode::SEE_OTHER.into_response();
    let headers = response.headers_mut();
    if let (Ok(loc), Ok(cookie)) = (
        HeaderValue::from_str(location),
        HeaderValue::from_str(&guard.set_cookie()),
    ) {
        headers.insert(header::LOCATION, loc);
        headers.insert(header::SET_COOKIE, cookie);
    }
    response
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
    fn tokens_compare_whole() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"ab"));
        let t = new_token().unwrap();
        assert_eq!(t.len(), 64);
        assert_ne!(t, new_token().unwrap());
    }
}
