//! One seeded chaos run: a question (plain or with choices) posted while the fake Bot API
//! injects faults on every method, noise in the chat, a human answering (a reply or a button)
//! before anyone polls or part-way into a long-poll, sometimes a second answer, a store that
//! fails for a while, and sometimes a second waiter taking over the poll mid-wait. A third of
//! the runs ask in a chat with forum topics (a topic per question; a plain message in it, a
//! reply or a button answers; messages in other topics are noise).
//!
//! The test runs a few seeds; the soak bench runs 1,000. A run is lost when no answer is
//! recorded, duplicated when the question is posted more than once or an answer other than the
//! human's first is recorded.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use tether_telegram::callback_data;
use tether_testkit::telegram_server::{FakeTelegramServer, Method, TelegramFault};

use super::common::{Recorder, ask, ask_in_topic, client_in, serve};

const GROUP: i64 = FakeTelegramServer::GROUP;
const FORUM: i64 = FakeTelegramServer::FORUM;
const LONGPOLL: Duration = Duration::from_millis(10);
const LIMIT: Duration = Duration::from_secs(10);

/// What one run did (every field is shown when a run fails).
#[derive(Debug)]
#[allow(dead_code)]
pub struct Report {
    pub seed: u64,
    pub posted: usize,
    pub expected: String,
    pub got: Option<String>,
    pub handover: bool,
    pub forum: bool,
    pub requests: usize,
}

impl Report {
    pub fn lost(&self) -> bool {
        self.got.is_none()
    }

    pub fn duplicated(&self) -> bool {
        self.posted != 1 || self.got.as_ref().is_some_and(|g| *g != self.expected)
    }
}

fn fault(rng: &mut fastrand::Rng, method: Method) -> TelegramFault {
    let poll = method == Method::GetUpdates;
    match rng.usize(0..if poll { 5 } else { 3 }) {
        0 => TelegramFault::RateLimited { retry_after: 0 },
        1 => TelegramFault::ServerError([500, 502, 503][rng.usize(0..3)]),
        2 => TelegramFault::ConnectionReset,
        3 => TelegramFault::Conflict,
        _ => TelegramFault::DuplicateDelivery,
    }
}

fn noise(server: &FakeTelegramServer, rng: &mut fastrand::Rng, chat: i64, question: i64) {
    let alice = server.alice();
    match rng.usize(0..4) {
        0 => {
            server.post_as_bot(chat, Some(question), "echo");
        }
        1 => {
            server.post(&alice, FakeTelegramServer::OTHER, None, "elsewhere");
        }
        2 => {
            // Chatter in the chat's general part (not in the question's topic).
            server.post(&alice, chat, None, "chatter");
        }
        _ => {
            let other = server.post(&alice, chat, None, "a thought");
            server.reply(&server.bob(), chat, other, "a reply to it");
        }
    }
}

/// Runs the scenario of `seed`.
pub async fn run(seed: u64) -> Report {
    let mut rng = fastrand::Rng::with_seed(seed);
    let server = FakeTelegramServer::builder()
        .longpoll_timeout(LONGPOLL)
        .start()
        .await
        .unwrap();
    for _ in 0..rng.usize(0..6) {
        let method = [
            Method::GetUpdates,
            Method::GetUpdates,
            Method::SendMessage,
            Method::AnswerCallbackQuery,
            Method::EditMessageReplyMarkup,
        ][rng.usize(0..5)];
        let f = fault(&mut rng, method);
        server.fault_at(method, rng.usize(0..4), f);
    }
    let dir = tempfile::tempdir().unwrap();
    let forum = rng.usize(0..3) == 0;
    let chat = if forum { FORUM } else { GROUP };
    let first = client_in(&server, chat, dir.path(), LONGPOLL);
    let options: Vec<String> = if rng.bool() {
        (0..rng.usize(2..5))
            .map(|i| format!("option {i}"))
            .collect()
    } else {
        Vec::new()
    };
    let question = format!("q-{seed}");
    let post = if forum {
        ask_in_topic(&first, &question, "/ws", "Chaos?", &options).await
    } else {
        ask(&first, &question, "/ws", "Chaos?", &options).await
    };
    let recorder = Recorder::new();
    recorder.fail.store(rng.u32(0..3), Ordering::SeqCst);
    for _ in 0..rng.usize(0..4) {
        noise(&server, &mut rng, chat, post.message_id);
    }
    let early = rng.bool();
    let answer = |server: &FakeTelegramServer, rng: &mut fastrand::Rng, who| -> String {
        if !options.is_empty() && rng.bool() {
            let i = rng.usize(0..options.len());
            server.press(&who, chat, post.message_id, &callback_data(i, &question));
            options[i].clone()
        } else {
            let text = format!("answer {}", rng.u32(..));
            if forum && rng.bool() {
                server.post(&who, chat, post.thread_id, &text);
            } else {
                server.reply(&who, chat, post.message_id, &text);
            }
            text
        }
    };
    let mut expected = None;
    if early {
        expected = Some(answer(&server, &mut rng, server.alice()));
    }
    let (stop, task) = serve(&first, &recorder);
    let handover = rng.usize(0..4) == 0;
    let second = handover.then(|| {
        let c = client_in(&server, chat, dir.path(), LONGPOLL);
        serve(&c, &recorder)
    });
    if handover {
        tokio::time::sleep(Duration::from_millis(rng.u64(0..20))).await;
        stop.cancel();
    }
    if expected.is_none() {
        tokio::time::sleep(Duration::from_millis(rng.u64(0..30))).await;
        expected = Some(answer(&server, &mut rng, server.alice()));
    }
    if rng.bool() {
        answer(&server, &mut rng, server.bob());
    }
    noise(&server, &mut rng, chat, post.message_id);
    let got = wait(&recorder, &question).await;
    stop.cancel();
    let _ = task.await;
    if let Some((stop, task)) = second {
        stop.cancel();
        let _ = task.await;
    }
    Report {
        seed,
        posted: server
            .bot_messages(chat)
            .iter()
            .filter(|m| m.text.contains("Chaos?"))
            .count(),
        expected: expected.unwrap_or_default(),
        got,
        handover,
        forum,
        requests: server.total_requests(),
    }
}

async fn wait(recorder: &Arc<Recorder>, question: &str) -> Option<String> {
    let started = Instant::now();
    while started.elapsed() < LIMIT {
        if let Some(reply) = recorder.answer(question) {
            return Some(reply.text);
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    None
}
