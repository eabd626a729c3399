//! Headless Chromium over WebDriver, with nothing but the standard library and JSON: starts
//! `chromedriver` on a free loopback port, opens one session with a fresh profile, and speaks
//! the W3C WebDriver protocol over plain HTTP/1.1.
//!
//! The browser is Debian's `chromium` with `chromium-driver` (`./test.sh` installs them);
//! `TETHER_TEST_CHROMIUM` and `TETHER_TEST_CHROMEDRIVER` name other binaries. A missing
//! browser is an error naming what to install — the tests that need it fail, never skip.

use std::io::{Read as _, Write as _};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// The W3C key of an element reference in WebDriver responses.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// The browser could not be started or did not do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum WebDriverError {
    /// Chromium or chromedriver is not installed.
    #[error("{0} not found: install Debian's chromium and chromium-driver (./test.sh does)")]
    Missing(String),
    /// Starting or talking to chromedriver failed.
    #[error("webdriver: {0}")]
    Io(#[from] std::io::Error),
    /// chromedriver answered with an error.
    #[error("webdriver {command}: {message}")]
    Command {
        /// What was asked.
        command: String,
        /// What it said.
        message: String,
    },
}

/// A headless Chromium session; the browser and its driver are killed on drop.
pub struct Browser {
    driver: Child,
    addr: SocketAddr,
    session: String,
    _profile: tempfile_dir::Dir,
}

mod tempfile_dir {
    //! A fresh profile directory, removed on drop.
    use std::path::{Path, PathBuf};

    pub struct Dir(PathBuf);

    impl Dir {
        pub fn new() -> std::io::Result<Dir> {
            let base = std::env::temp_dir().join(format!(
                "tether-chromium-{}-{}",
                std::process::id(),
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos())
            ));
            std::fs::create_dir_all(&base)?;
            Ok(Dir(base))
        }

        pub fn path(&self) -> &Path {
            &self.0
        }
    }

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

fn binary(var: &str, default: &str) -> Result<PathBuf, WebDriverError> {
    let path = std::env::var_os(var).map_or_else(|| PathBuf::from(default), PathBuf::from);
    if path.is_file() {
        Ok(path)
    } else {
        Err(WebDriverError::Missing(path.display().to_string()))
    }
}

fn free_port() -> Result<u16, WebDriverError> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

impl Browser {
    /// Starts chromedriver and a headless Chromium with a `width`×`height` window.
    pub fn start(width: u32, height: u32) -> Result<Browser, WebDriverError> {
        let chromium = binary("TETHER_TEST_CHROMIUM", "/usr/bin/chromium")?;
        let chromedriver = binary("TETHER_TEST_CHROMEDRIVER", "/usr/bin/chromedriver")?;
        let port = free_port()?;
        let driver = Command::new(chromedriver)
            .arg(format!("--port={port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()?;
        let profile = tempfile_dir::Dir::new()?;
        let mut browser = Browser {
            driver,
            addr: SocketAddr::from(([127, 0, 0, 1], port)),
            session: String::new(),
            _profile: profile,
        };
        browser.wait_ready()?;
        let args = [
            "--headless".to_owned(),
            "--no-sandbox".to_owned(),
            "--disable-gpu".to_owned(),
            "--disable-dev-shm-usage".to_owned(),
            "--disable-background-networking".to_owned(),
            "--disable-component-update".to_owned(),
            "--disable-sync".to_owned(),
            "--no-first-run".to_owned(),
            format!("--user-data-dir={}", browser._profile.path().display()),
            format!("--window-size={width},{height}"),
        ];
        let caps = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": chromium, "args": args},
        }}});
        let created = browser.call("POST", "/session", Some(&caps))?;
        browser.session = created["sessionId"]
            .as_str()
            .ok_or_else(|| WebDriverError::Command {
                command: "new session".into(),
                message: created.to_string(),
            })?
            .to_owned();
        Ok(browser)
    }

    fn wait_ready(&self) -> Result<(), WebDriverError> {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Ok(status) = self.call("GET", "/status", None)
                && status["ready"] == true
            {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(WebDriverError::Command {
                    command: "status".into(),
                    message: "chromedriver did not become ready in 20 s".into(),
                });
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// One WebDriver command; returns its `value`.
    fn call(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
    ) -> Result<Value, WebDriverError> {
        let body = body.map(Value::to_string).unwrap_or_default();
        let mut s = TcpStream::connect(self.addr)?;
        s.set_read_timeout(Some(Duration::from_secs(60)))?;
        write!(
            s,
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nContent-Type: \
             application/json\r\nContent-Length: {}\r\n\r\n{body}",
            self.addr,
            body.len()
        )?;
        let (head, payload) = read_response(&mut s)?;
        let payload = if head.contains("transfer-encoding: chunked") {
            dechunk(&payload)
        } else {
            payload
        };
        let v: Value = serde_json::from_str(&payload).map_err(|e| WebDriverError::Command {
            command: format!("{method} {path}"),
            message: format!("{e}: {payload}"),
        })?;
        let value = v.get("value").cloned().unwrap_or(Value::Null);
        if let Some(err) = value.get("error").and_then(Value::as_str) {
            return Err(WebDriverError::Command {
                command: format!("{method} {path}"),
                message: format!("{err}: {}", value["message"]),
            });
        }
        Ok(value)
    }

    fn session_call(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
    ) -> Result<Value, WebDriverError> {
        self.call(method, &format!("/session/{}{path}", self.session), body)
    }

    /// Opens `url` and waits for it to load.
    pub fn goto(&self, url: &str) -> Result<(), WebDriverError> {
        self.session_call("POST", "/url", Some(&json!({ "url": url })))
            .map(drop)
    }

    /// Runs `script` (a function body; `arguments` are `args`) and returns what it returns.
    pub fn execute(&self, script: &str, args: &[Value]) -> Result<Value, WebDriverError> {
        self.session_call(
            "POST",
            "/execute/sync",
            Some(&json!({ "script": script, "args": args })),
        )
    }

    /// The first element matching the CSS `selector`.
    pub fn find(&self, selector: &str) -> Result<String, WebDriverError> {
        let found = self.session_call(
            "POST",
            "/element",
            Some(&json!({ "using": "css selector", "value": selector })),
        )?;
        found[ELEMENT]
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| WebDriverError::Command {
                command: format!("find {selector}"),
                message: found.to_string(),
            })
    }

    /// Types `text` into the element matching `selector`.
    pub fn type_into(&self, selector: &str, text: &str) -> Result<(), WebDriverError> {
        let id = self.find(selector)?;
        self.session_call(
            "POST",
            &format!("/element/{id}/value"),
            Some(&json!({ "text": text })),
        )
        .map(drop)
    }

    /// Clicks the element matching `selector`.
    pub fn click(&self, selector: &str) -> Result<(), WebDriverError> {
        let id = self.find(selector)?;
        self.session_call("POST", &format!("/element/{id}/click"), Some(&json!({})))
            .map(drop)
    }

    /// The visible text of the element matching `selector`.
    pub fn text(&self, selector: &str) -> Result<String, WebDriverError> {
        let id = self.find(selector)?;
        let v = self.session_call("GET", &format!("/element/{id}/text"), None)?;
        Ok(v.as_str().unwrap_or_default().to_owned())
    }

    /// Saves a PNG of the viewport at `path`.
    pub fn screenshot(&self, path: &Path) -> Result<(), WebDriverError> {
        let v = self.session_call("GET", "/screenshot", None)?;
        let png = decode_base64(v.as_str().unwrap_or_default());
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(path, png)?;
        Ok(())
    }

    /// Resizes the window.
    pub fn resize(&self, width: u32, height: u32) -> Result<(), WebDriverError> {
        self.session_call(
            "POST",
            "/window/rect",
            Some(&json!({ "width": width, "height": height })),
        )
        .map(drop)
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if !self.session.is_empty() {
            let _ = self.call("DELETE", &format!("/session/{}", self.session), None);
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

/// Reads one response: the head (lower-cased) and the body, by its `Content-Length` when it
/// has one (chromedriver keeps the connection open), else to the end.
fn read_response(s: &mut TcpStream) -> Result<(String, String), WebDriverError> {
    let mut raw = Vec::new();
    let mut buf = [0u8; 65536];
    loop {
        if let Some(end) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&raw[..end]).to_ascii_lowercase();
            let length = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse::<usize>().ok());
            let mut body = raw[end + 4..].to_vec();
            match length {
                Some(n) => {
                    while body.len() < n {
                        let got = s.read(&mut buf)?;
                        if got == 0 {
                            break;
                        }
                        body.extend_from_slice(&buf[..got]);
                    }
                    body.truncate(n);
                }
                None => {
                    s.read_to_end(&mut body)?;
                }
            }
            return Ok((head, String::from_utf8_lossy(&body).into_owned()));
        }
        let got = s.read(&mut buf)?;
        if got == 0 {
            return Ok((
                String::from_utf8_lossy(&raw).to_ascii_lowercase(),
                String::new(),
            ));
        }
        raw.extend_from_slice(&buf[..got]);
    }
}

fn dechunk(mut s: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = s.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 || rest.len() < n {
            break;
        }
        out.push_str(&rest[..n]);
        s = rest[n..].strip_prefix("\r\n").unwrap_or(&rest[n..]);
    }
    out
}

fn decode_base64(s: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    };
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for v in s.bytes().filter_map(value) {
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push(u8::try_from((acc >> bits) & 0xff).unwrap_or(0));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn base64() {
        assert_eq!(super::decode_base64("aGVsbG8="), b"hello");
        assert_eq!(super::decode_base64("aGk="), b"hi");
    }
}
