//! One seeded chaos run, shared by the chaos test and the soak bench: a random schedule of every
//! fault the fake server has, noise in and around the topic, and human replies at random
//! moments; then `ask()` runs to completion and the outcome is checked against what the server
//! stored.

#![allow(
    dead_code,
    reason = "shared with the soak bench, which uses other parts of it"
)]

use std::time::{Duration, Instant};

use tether_config::Secret;
use tether_testkit::FakeZulipServer;
use tether_testkit::zulip_server::{Action, Endpoint, Moment, TopicMatch, ZulipFault};
use tether_zulip::{
    ApiOptions, ClientOptions, MessageId, RetryPolicy, ZulipClient, ZulipError, ZulipSettings,
    topic_name,
};
use tokio_util::sync::CancellationToken;

/// Polls whose faults and actions are drawn; the guaranteed reply comes after them.
const DRAWN_POLLS: usize = 12;

/// What one run did.
#[derive(Debug)]
pub struct ChaosReport {
    /// The seed.
    pub seed: u64,
    /// What `ask()` returned: the reply's id and text, or the error.
    pub returned: Result<(MessageId, String), ZulipError>,
    /// The first human message in the topic newer than the question, per the server.
    pub expected: Option<(MessageId, String)>,
    /// How many times the question was stored by the server.
    pub question_posts: usize,
    /// Every request the run made.
    pub requests: usize,
    /// Faults drawn, for the failure message.
    pub schedule: Vec<String>,
}

impl ChaosReport {
    /// The first reply was not returned.
    pub fn lost(&self) -> bool {
        match (&self.returned, &self.expected) {
            (Ok(got), Some(want)) => got != want,
            _ => true,
        }
    }

    /// The question was posted more than once.
    pub fn duplicated(&self) -> bool {
        self.question_posts != 1
    }
}

fn options() -> ClientOptions {
    ClientOptions {
        api: ApiOptions {
            connect_timeout: Duration::from_secs(5),
            request_timeout: Duration::from_secs(5),
            poll_timeout: Duration::from_secs(5),
        },
        retry: RetryPolicy {
            initial: Duration::from_millis(1),
            max: Duration::from_millis(20),
            request_retries: 8,
        },
        catch_up_page: 3,
    }
}

fn retryable_fault(rng: &mut fastrand::Rng) -> ZulipFault {
    match rng.usize(..4) {
        0 => ZulipFault::RateLimited {
            retry_after: rng.u64(1..=10) as f64 / 1000.0,
        },
        1 => ZulipFault::ServerError([500, 502, 503, 504][rng.usize(..4)]),
        2 => ZulipFault::ConnectionReset,
        _ => ZulipFault::ResetAfterHandling,
    }
}

fn poll_fault(rng: &mut fastrand::Rng) -> Option<ZulipFault> {
    match rng.usize(..10) {
        0..=3 => Some(retryable_fault(rng)),
        4 => Some(ZulipFault::BadEventQueue),
        5 => Some(ZulipFault::DuplicateDelivery),
        _ => None,
    }
}

/// A random moment for an action: after the post, around a re-registration, during a poll or
/// during a catch-up.
fn moment(rng: &mut fastrand::Rng) -> (Endpoint, usize, Moment) {
    let when = if rng.bool() {
        Moment::OnArrival
    } else {
        Moment::AfterHandling
    };
    match rng.usize(..6) {
        0 => (Endpoint::SendMessage, rng.usize(..3), Moment::AfterHandling),
        1 => (Endpoint::Register, rng.usize(1..3), Moment::AfterHandling),
        2 => (Endpoint::GetMessages, rng.usize(..2), when),
        _ => (Endpoint::GetEvents, rng.usize(..DRAWN_POLLS), when),
    }
}

/// Runs seed `seed` against a fresh fake server.
pub async fn run(seed: u64) -> ChaosReport {
    let mut rng = fastrand::Rng::with_seed(seed);
    let server = FakeZulipServer::builder()
        .longpoll_timeout(Duration::from_millis(rng.u64(5..=20)))
        .start()
        .await
        .expect("the fake server starts");
    let mut schedule = Vec::new();
    let topic_match = [
        TopicMatch::Exact,
        TopicMatch::WordMatch,
        TopicMatch::StreamOnly,
    ][rng.usize(..3)];
    server.set_topic_match(topic_match);
    schedule.push(format!("{topic_match:?}"));
    let n = rng.u64(1..=9);
    let topic = topic_name(n, "chaos");
    let question = format!("question of seed {seed}");
    if rng.bool() {
        server.post_as_human(&topic, "an old reply to an earlier question");
    }

    for endpoint in [
        Endpoint::UsersMe,
        Endpoint::Register,
        Endpoint::SendMessage,
        Endpoint::GetMessages,
        Endpoint::DeleteQueue,
    ] {
        for nth in 0..3 {
            if rng.f32() < 0.3 {
                let fault = retryable_fault(&mut rng);
                schedule.push(format!("{endpoint:?}#{nth}: {fault:?}"));
                server.fault_at(endpoint, nth, fault);
            }
        }
    }
    for nth in 0..DRAWN_POLLS {
        if let Some(fault) = poll_fault(&mut rng) {
            schedule.push(format!("GetEvents#{nth}: {fault:?}"));
            server.fault_at(Endpoint::GetEvents, nth, fault);
        }
    }
    for _ in 0..rng.usize(..=2) {
        let (endpoint, nth, when) = moment(&mut rng);
        schedule.push(format!("{endpoint:?}#{nth} {when:?}: expire queues"));
        server.on(endpoint, nth, when, Action::ExpireQueues);
    }
    let bob = server.bob();
    let noise = [
        Action::Post {
            sender: server.bot(),
            stream: None,
            topic: topic.clone(),
            content: "bot echo".into(),
        },
        Action::Post {
            sender: bob.clone(),
            stream: None,
            topic: topic_name(n * 10, "chaos"),
            content: "word-alike topic".into(),
        },
        Action::Post {
            sender: bob.clone(),
            stream: Some("elsewhere".into()),
            topic: topic.clone(),
            content: "other stream".into(),
        },
        Action::Post {
            sender: bob.clone(),
            stream: None,
            topic: "chaos".into(),
            content: "one word".into(),
        },
    ];
    for action in noise {
        if rng.bool() {
            let (endpoint, nth, when) = moment(&mut rng);
            server.on(endpoint, nth, when, action);
        }
    }
    for k in 0..rng.usize(1..=3) {
        let (endpoint, nth, when) = moment(&mut rng);
        let sender = if rng.bool() {
            server.alice()
        } else {
            bob.clone()
        };
        let topic = if rng.bool() {
            topic.clone()
        } else {
            topic.to_uppercase()
        };
        schedule.push(format!("{endpoint:?}#{nth} {when:?}: reply {k}"));
        server.on(
            endpoint,
            nth,
            when,
            Action::Post {
                sender,
                stream: None,
                topic,
                content: format!("reply {k} of seed {seed}"),
            },
        );
    }
    // However the drawn replies fell (some before the question was even stored), a human
    // answers eventually.
    server.on(
        Endpoint::GetEvents,
        DRAWN_POLLS + 2,
        Moment::OnArrival,
        server.human_reply(&topic, "the late reply"),
    );

    let settings = ZulipSettings::new(
        &server.server_url(),
        server.bot_email(),
        Secret::new(server.api_key()),
        server.stream(),
    )
    .expect("valid settings");
    let client = ZulipClient::with_options(&settings, options()).expect("a client");
    let asked = tokio::time::timeout(
        Duration::from_secs(60),
        client.ask(&topic, &question, &CancellationToken::new()),
    )
    .await
    .unwrap_or(Err(ZulipError::DeadlineReached));

    let posts: Vec<_> = server
        .messages_in(&topic)
        .into_iter()
        .filter(|m| m.sender.id == FakeZulipServer::BOT_ID && m.content == question)
        .collect();
    let question_id = posts.first().map_or(u64::MAX, |m| m.id);
    let expected = server
        .messages_in(&topic)
        .into_iter()
        .find(|m| m.sender.id != FakeZulipServer::BOT_ID && m.id > question_id)
        .map(|m| (MessageId(m.id), m.content));
    ChaosReport {
        seed,
        returned: asked.map(|r| (r.message_id, r.text)),
        expected,
        question_posts: posts.len(),
        requests: server.total_requests(),
        schedule,
    }
}

/// Times one clean wait: a human answers while the long-poll is blocked, after `polls` full
/// long-poll timeouts. Returns (polls while waiting, waiting time, answer→return latency).
pub async fn timed_wait(
    seed: u64,
    longpoll: Duration,
    polls: usize,
) -> (usize, Duration, Duration) {
    let mut rng = fastrand::Rng::with_seed(seed);
    let server = FakeZulipServer::builder()
        .longpoll_timeout(longpoll)
        .start()
        .await
        .expect("the fake server starts");
    let settings = ZulipSettings::new(
        &server.server_url(),
        server.bot_email(),
        Secret::new(server.api_key()),
        server.stream(),
    )
    .expect("valid settings");
    let client = ZulipClient::with_options(&settings, options()).expect("a client");
    let topic = topic_name(seed, "timing");
    let asking = tokio::spawn({
        let client = client.clone();
        let topic = topic.clone();
        async move { client.ask(&topic, "q?", &CancellationToken::new()).await }
    });
    // Poll #0 returns the question's echo; polls #1..=polls each wait a full timeout; the human
    // answers part-way into the next one.
    server
        .wait_for_count(Endpoint::GetEvents, polls + 2, Duration::from_secs(60))
        .await
        .expect("the client keeps polling");
    tokio::time::sleep(longpoll.mul_f64(0.1 + 0.5 * rng.f64())).await;
    server.post_as_human(&topic, "answer");
    let reply = asking.await.expect("no panic").expect("a reply");
    let returned = Instant::now();
    let answered = server
        .messages()
        .into_iter()
        .find(|m| MessageId(m.id) == reply.message_id)
        .expect("the reply is stored");
    let requests: Vec<_> = server
        .requests()
        .into_iter()
        .filter(|r| r.endpoint == Some(Endpoint::GetEvents))
        .collect();
    let first_wait = requests[1].at;
    let waiting = answered.posted_at - first_wait;
    let polls_while_waiting = requests
        .iter()
        .filter(|r| r.at >= first_wait && r.at <= answered.posted_at)
        .count();
    (polls_while_waiting, waiting, returned - answered.posted_at)
}
