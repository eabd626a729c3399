//! A webhook for the tests: an HTTP server on 127.0.0.1 keeping the JSON body of every POST in
//! the order they arrived, answering `200` at once — or only once the test releases it
//! ([`Webhook::held`]), so a test can keep a message in flight while the process under test
//! ends, or never (a webhook that hangs).

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpListener;
use std::sync::{Arc, Condvar, Mutex};

use serde_json::Value;

/// A running webhook.
pub struct Webhook {
    /// Where to POST.
    pub url: String,
    bodies: Arc<Mutex<Vec<Value>>>,
    /// Whether responses are held back (until [`Webhook::release`]).
    held: Arc<(Mutex<bool>, Condvar)>,
}

impl Webhook {
    /// A webhook answering every POST at once.
    pub fn start() -> Webhook {
        Webhook::serve(false)
    }

    /// A webhook that keeps each POST's body as it arrives but answers none until
    /// [`Webhook::release`] (never, if the test does not).
    pub fn held() -> Webhook {
        Webhook::serve(true)
    }

    fn serve(held: bool) -> Webhook {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        let bodies = Arc::new(Mutex::new(Vec::new()));
        let held = Arc::new((Mutex::new(held), Condvar::new()));
        let (b, h) = (bodies.clone(), held.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (bodies, held) = (b.clone(), h.clone());
                std::thread::spawn(move || serve_connection(stream, &bodies, &held));
            }
        });
        Webhook { url, bodies, held }
    }

    /// Answers every POST from now on, those waiting included.
    pub fn release(&self) {
        let (held, changed) = &*self.held;
        *held.lock().unwrap() = false;
        changed.notify_all();
    }

    /// The bodies received so far, oldest first.
    pub fn bodies(&self) -> Vec<Value> {
        self.bodies.lock().unwrap().clone()
    }

    /// The `kind` of each body received so far.
    pub fn kinds(&self) -> Vec<String> {
        self.bodies()
            .iter()
            .map(|b| b["kind"].as_str().unwrap_or("?").to_owned())
            .collect()
    }

    /// `[webhook]` and `[human] channels` of a `tether.toml` sending to this webhook.
    pub fn toml(&self) -> String {
        format!(
            "[human]\nchannels = [\"cli\", \"webhook\"]\n[webhook]\nurl = {:?}\n",
            self.url
        )
    }
}

/// Reads the POSTs of one connection, keeping their bodies, answering each when not held.
fn serve_connection(
    stream: std::net::TcpStream,
    bodies: &Mutex<Vec<Value>>,
    held: &(Mutex<bool>, Condvar),
) {
    let Ok(mut writer) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(stream);
    loop {
        let mut length = 0;
        let mut line = String::new();
        loop {
            line.clear();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            if line == "\r\n" {
                break;
            }
            if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = v.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        bodies
            .lock()
            .unwrap()
            .push(serde_json::from_slice(&body).unwrap_or(Value::Null));
        let (lock, changed) = held;
        let mut waiting = lock.lock().unwrap();
        while *waiting {
            waiting = changed.wait(waiting).unwrap();
        }
        drop(waiting);
        if writer
            .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n")
            .is_err()
        {
            return;
        }
    }
}
