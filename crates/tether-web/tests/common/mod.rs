//! A dashboard served from a temporary workspace, and a small HTTP/1.1 client that lets a test
//! set every header (Host, Origin, Cookie) and read server-sent events as they come.

use std::io::{Read as _, Write as _};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tether_config::Workspace;
use tether_store::{Connector, Store};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

mod seed;
mod team;
pub use seed::{goal_run, place, question, usage};
pub use team::TeamLike;

/// How a test's dashboard is started.
#[derive(Default)]
pub struct Options {
    /// The store to show (the workspace's own file when `None`).
    pub store: Option<Arc<dyn Connector>>,
    /// An outside wake-up handed to the server.
    pub wake: Option<Arc<Notify>>,
    /// The journal's re-read without wake-ups (the server's default when `None`).
    pub recheck: Option<Duration>,
    /// What starts and resumes runs (none: the dashboard starts none).
    pub launcher: Option<Arc<dyn tether_web::Launcher>>,
    /// What answers side questions (none: the dashboard answers none).
    pub side: Option<Arc<dyn tether_web::SideAsker>>,
}

/// A running dashboard over a fresh workspace.
pub struct Web {
    _dir: tempfile::TempDir,
    pub ws: Workspace,
    connector: Arc<dyn Connector>,
    pub addr: SocketAddr,
    pub token: String,
    stop: CancellationToken,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Web {
    pub fn start() -> Web {
        Web::start_with(Options::default())
    }

    pub fn start_with(options: Options) -> Web {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::at(dir.path());
        std::fs::create_dir_all(ws.state_dir()).unwrap();
        let connector = options.store.unwrap_or_else(|| tether_web::embedded(&ws));
        connector.connect().unwrap();
        let mut bound = tether_web::bind_to(
            Arc::clone(&connector),
            &ws,
            &tether_web::Settings::default(),
        )
        .unwrap();
        if let Some(wake) = options.wake {
            bound = bound.wake_on(wake);
        }
        if let Some(every) = options.recheck {
            bound = bound.recheck_every(every);
        }
        if let Some(launcher) = options.launcher {
            bound = bound.launch_with(launcher);
        }
        if let Some(side) = options.side {
            bound = bound.side_with(side);
        }
        let addr = bound.addr();
        let token = bound.token().to_owned();
        let stop = CancellationToken::new();
        let s = stop.clone();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(bound.serve(s)).unwrap();
        });
        Web {
            _dir: dir,
            ws,
            connector,
            addr,
            token,
            stop,
            thread: Some(thread),
        }
    }

    /// A store of what the dashboard shows.
    pub fn store(&self) -> Store {
        self.connector.connect().unwrap()
    }

    pub fn host(&self) -> String {
        format!("127.0.0.1:{}", self.addr.port())
    }

    pub fn origin(&self) -> String {
        format!("http://{}", self.host())
    }

    pub fn bearer(&self) -> String {
        format!("Bearer {}", self.token)
    }

    /// A request with exactly these headers (Host added unless given).
    pub fn request(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<(&str, &str)>,
    ) -> Resp {
        let mut req = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
        if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
            req.push_str(&format!("Host: {}\r\n", self.host()));
        }
        for (k, v) in headers {
            req.push_str(&format!("{k}: {v}\r\n"));
        }
        if let Some((kind, b)) = body {
            req.push_str(&format!(
                "Content-Type: {kind}\r\nContent-Length: {}\r\n",
                b.len()
            ));
        }
        req.push_str("\r\n");
        if let Some((_, b)) = body {
            req.push_str(b);
        }
        let mut s = TcpStream::connect(self.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        s.write_all(req.as_bytes()).unwrap();
        let mut raw = Vec::new();
        s.read_to_end(&mut raw).unwrap();
        Resp::parse(&raw)
    }

    /// GET with the bearer token.
    pub fn get(&self, path: &str) -> Resp {
        self.request("GET", path, &[("Authorization", &self.bearer())], None)
    }

    /// POST JSON with the bearer token.
    pub fn post_json(&self, path: &str, json: &serde_json::Value) -> Resp {
        self.request(
            "POST",
            path,
            &[("Authorization", &self.bearer())],
            Some(("application/json", &json.to_string())),
        )
    }

    /// Opens a server-sent event stream with the bearer token and `extra` headers.
    pub fn sse(&self, path: &str, extra: &[(&str, &str)]) -> Sse {
        let mut req = format!(
            "GET {path} HTTP/1.1\r\nHost: {}\r\nAuthorization: {}\r\nAccept: text/event-stream\r\n",
            self.host(),
            self.bearer()
        );
        for (k, v) in extra {
            req.push_str(&format!("{k}: {v}\r\n"));
        }
        req.push_str("\r\n");
        let mut s = TcpStream::connect(self.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
        s.write_all(req.as_bytes()).unwrap();
        let mut sse = Sse {
            stream: s,
            raw: Vec::new(),
            body: String::new(),
            headers_done: false,
            status: 0,
        };
        sse.read_headers();
        sse
    }
}

impl Drop for Web {
    fn drop(&mut self) {
        self.stop.cancel();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A whole response.
#[derive(Debug)]
pub struct Resp {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Resp {
    fn parse(raw: &[u8]) -> Resp {
        let text = String::from_utf8_lossy(raw).into_owned();
        let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
        let mut lines = head.lines();
        let status = lines
            .next()
            .unwrap_or_default()
            .split(' ')
            .nth(1)
            .unwrap_or("0");
        let headers: Vec<(String, String)> = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
            .collect();
        let chunked = headers
            .iter()
            .any(|(k, v)| k == "transfer-encoding" && v.contains("chunked"));
        let body = if chunked {
            dechunk(body)
        } else {
            body.to_owned()
        };
        Resp {
            status: status.parse().unwrap_or(0),
            headers,
            body,
        }
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
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

/// One server-sent event.
#[derive(Debug, Clone, Default)]
pub struct Msg {
    pub id: Option<String>,
    pub event: Option<String>,
    pub data: String,
}

/// An open event stream.
pub struct Sse {
    stream: TcpStream,
    raw: Vec<u8>,
    body: String,
    headers_done: bool,
    pub status: u16,
}

impl Sse {
    fn fill(&mut self) {
        let mut buf = [0u8; 65536];
        match self.stream.read(&mut buf) {
            Ok(0) => {}
            Ok(n) => self.raw.extend_from_slice(&buf[..n]),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(e) => panic!("{e}"),
        }
        if self.headers_done {
            self.decode();
        }
    }

    fn read_headers(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            self.fill();
            if let Some(i) = self.raw.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&self.raw[..i]).into_owned();
                self.status = head.split(' ').nth(1).unwrap_or("0").parse().unwrap_or(0);
                self.raw.drain(..i + 4);
                self.headers_done = true;
                self.decode();
                return;
            }
        }
        panic!("no response headers");
    }

    /// Moves complete chunks from `raw` to `body`.
    fn decode(&mut self) {
        loop {
            let Some(eol) = self.raw.windows(2).position(|w| w == b"\r\n") else {
                return;
            };
            let size = String::from_utf8_lossy(&self.raw[..eol]).into_owned();
            let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
            if self.raw.len() < eol + 2 + n + 2 {
                return;
            }
            let chunk = self.raw[eol + 2..eol + 2 + n].to_vec();
            self.raw.drain(..eol + 2 + n + 2);
            self.body.push_str(&String::from_utf8_lossy(&chunk));
        }
    }

    /// The next event (comments skipped), or `None` when `within` passes first.
    pub fn next(&mut self, within: Duration) -> Option<Msg> {
        let deadline = Instant::now() + within;
        loop {
            while let Some(i) = self.body.find("\n\n") {
                let block: String = self.body.drain(..i + 2).collect();
                let mut msg = Msg::default();
                let mut any = false;
                for line in block.lines() {
                    if let Some(v) = line.strip_prefix("id:") {
                        msg.id = Some(v.trim().to_owned());
                        any = true;
                    } else if let Some(v) = line.strip_prefix("event:") {
                        msg.event = Some(v.trim().to_owned());
                    } else if let Some(v) = line.strip_prefix("data:") {
                        if any && !msg.data.is_empty() || !msg.data.is_empty() {
                            msg.data.push('\n');
                        }
                        msg.data.push_str(v.strip_prefix(' ').unwrap_or(v));
                        any = true;
                    }
                }
                if any {
                    return Some(msg);
                }
            }
            if Instant::now() >= deadline {
                return None;
            }
            self.fill();
        }
    }

    /// The next `n` events, each within `within`.
    pub fn take(&mut self, n: usize, within: Duration) -> Vec<Msg> {
        (0..n)
            .map(|i| {
                self.next(within)
                    .unwrap_or_else(|| panic!("event {} of {n} did not come", i + 1))
            })
            .collect()
    }
}
