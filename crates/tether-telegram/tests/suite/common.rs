//! Fixtures: a client on the fake server with short timeouts and a private registry directory,
//! and a [`Recorder`] standing in for the store (first answer wins, like the store).

#![allow(dead_code)]

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tether_config::Secret;
use tether_telegram::{
    ApiOptions, ClientOptions, Deliver, Delivered, QuestionMessage, Reply, RetryPolicy,
    TelegramClient, TelegramSettings, WaitingPost,
};
use tether_testkit::telegram_server::FakeTelegramServer;
use tokio_util::sync::CancellationToken;

/// Short timeouts for loopback.
pub fn options(registry: &Path, longpoll: Duration) -> ClientOptions {
    ClientOptions {
        api: ApiOptions {
            connect_timeout: Duration::from_secs(2),
            request_timeout: Duration::from_secs(5),
            poll_timeout: longpoll.max(Duration::from_secs(1)),
        },
        retry: RetryPolicy {
            initial: Duration::from_millis(2),
            max: Duration::from_millis(40),
            request_retries: 6,
        },
        registry_base: Some(registry.to_path_buf()),
        lock_retry: Duration::from_millis(20),
        unknown_recheck: Duration::from_millis(20),
    }
}

/// A fake server whose long-poll lasts `longpoll`.
pub async fn server(longpoll: Duration) -> FakeTelegramServer {
    FakeTelegramServer::builder()
        .longpoll_timeout(longpoll)
        .start()
        .await
        .unwrap()
}

/// A client of `server` asking in its group.
pub fn client(server: &FakeTelegramServer, registry: &Path, longpoll: Duration) -> TelegramClient {
    client_in(server, FakeTelegramServer::GROUP, registry, longpoll)
}

/// A client of `server` asking in `chat`.
pub fn client_in(
    server: &FakeTelegramServer,
    chat: i64,
    registry: &Path,
    longpoll: Duration,
) -> TelegramClient {
    let settings = TelegramSettings::new(
        &server.api_url(),
        Secret::new(server.token()),
        &chat.to_string(),
    )
    .unwrap();
    TelegramClient::new(&settings, options(registry, longpoll)).unwrap()
}

/// Opens a forum topic in the client's chat and posts a question there, as the channel does in
/// a chat with topics, and registers it as waiting.
pub async fn ask_in_topic(
    client: &TelegramClient,
    question_id: &str,
    workspace: &str,
    question: &str,
    options: &[String],
) -> WaitingPost {
    let cancel = CancellationToken::new();
    assert!(
        client.is_forum(&cancel).await.unwrap(),
        "a chat with topics"
    );
    let topic = client.create_topic(question, &cancel).await.unwrap();
    let message = QuestionMessage {
        question,
        context: "",
        confidence: 30,
        options,
        follow_up: false,
    };
    let sent = client
        .send_in(
            &message.render(),
            None,
            Some(topic),
            &message.buttons(question_id),
            &cancel,
        )
        .await
        .unwrap();
    let post = WaitingPost {
        chat_id: sent.chat.id,
        message_id: sent.message_id,
        state_dir: workspace_dir(client, workspace),
        question_id: question_id.to_owned(),
        options: options.to_vec(),
        thread_id: Some(topic),
        text: Some(message.render()),
        posted_at: Some(sent.date),
    };
    client.registry().add(&post).unwrap();
    post
}

/// Posts a question as the channel does and registers it as waiting.
pub async fn ask(
    client: &TelegramClient,
    question_id: &str,
    workspace: &str,
    question: &str,
    options: &[String],
) -> WaitingPost {
    let message = QuestionMessage {
        question,
        context: "",
        confidence: 30,
        options,
        follow_up: false,
    };
    let sent = client
        .send(
            &message.render(),
            None,
            &message.buttons(question_id),
            &CancellationToken::new(),
        )
        .await
        .unwrap();
    let post = WaitingPost {
        chat_id: sent.chat.id,
        message_id: sent.message_id,
        state_dir: workspace_dir(client, workspace),
        question_id: question_id.to_owned(),
        options: options.to_vec(),
        thread_id: None,
        text: Some(message.render()),
        posted_at: Some(sent.date),
    };
    client.registry().add(&post).unwrap();
    post
}

/// A workspace state dir named `name` (with a `tether.db`, as a real one has, so the poller
/// does not prune its posts).
pub fn workspace_dir(client: &TelegramClient, name: &str) -> std::path::PathBuf {
    let dir = client
        .registry()
        .dir()
        .join("workspaces")
        .join(name.trim_start_matches('/'));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("tether.db"), b"").unwrap();
    dir
}

/// Stands in for the stores of every workspace: the first answer to a question wins.
#[derive(Default)]
pub struct Recorder {
    answers: Mutex<HashMap<String, (Reply, Instant)>>,
    deliveries: Mutex<Vec<(String, Reply)>>,
    /// Fail this many deliveries first (a locked store).
    pub fail: AtomicU32,
}

impl Recorder {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// The answer recorded for `question`.
    pub fn answer(&self, question: &str) -> Option<Reply> {
        self.answers
            .lock()
            .unwrap()
            .get(question)
            .map(|a| a.0.clone())
    }

    /// When it was recorded.
    pub fn answered_at(&self, question: &str) -> Option<Instant> {
        self.answers.lock().unwrap().get(question).map(|a| a.1)
    }

    /// Every delivery, duplicates included.
    pub fn deliveries(&self) -> Vec<(String, Reply)> {
        self.deliveries.lock().unwrap().clone()
    }

    /// Waits for the answer to `question`.
    pub async fn wait(&self, question: &str, limit: Duration) -> Reply {
        tether_testkit::wait_until_async(&format!("an answer to {question}"), limit, || {
            self.answer(question)
        })
        .await
        .unwrap()
    }
}

impl Deliver for Recorder {
    fn deliver(&self, post: &WaitingPost, reply: &Reply) -> Result<Delivered, String> {
        if self
            .fail
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok()
        {
            return Err("database is locked".into());
        }
        self.deliveries
            .lock()
            .unwrap()
            .push((post.question_id.clone(), reply.clone()));
        let mut answers = self.answers.lock().unwrap();
        if answers.contains_key(&post.question_id) {
            return Ok(Delivered::Settled);
        }
        answers.insert(post.question_id.clone(), (reply.clone(), Instant::now()));
        Ok(Delivered::Recorded)
    }
}

/// Serves in the background until the returned token is cancelled.
pub fn serve(
    client: &TelegramClient,
    recorder: &Arc<Recorder>,
) -> (
    CancellationToken,
    tokio::task::JoinHandle<Result<(), tether_telegram::TelegramError>>,
) {
    let stop = CancellationToken::new();
    let (client, recorder, token) = (client.clone(), Arc::clone(recorder), stop.clone());
    let task = tokio::spawn(async move { client.serve(recorder.as_ref(), &token).await });
    (stop, task)
}

pub const LONGPOLL: Duration = Duration::from_millis(100);
pub const LIMIT: Duration = Duration::from_secs(10);
