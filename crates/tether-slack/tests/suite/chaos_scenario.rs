//! One seeded chaos run, shared by the chaos test and the soak bench: random Web API faults on
//! the post, random socket trouble while waiting (`disconnect` of any reason, dropped and
//! half-open sockets, a closed gate so replies land while no socket is open, duplicate
//! deliveries, 1-message pages, failing catch-ups), noise in and around the thread, and the
//! human's answer — typed replies or a button — at a random moment. Then the wait runs to
//! completion and its answer is checked against what the server stored.

#![allow(
    dead_code,
    reason = "shared with the soak bench, which uses other parts of it"
)]

use std::time::Duration;

use tether_slack::{ReplyBody, SlackClient, SlackError, Ts, option_action_id};
use tether_testkit::FakeSlackServer;
use tether_testkit::slack_server::{SlackFault, SlackMethod};
use tokio_util::sync::CancellationToken;

use super::common::{fast_options, labels, question, settings};

/// What one run did.
#[derive(Debug)]
pub struct ChaosReport {
    /// The seed.
    pub seed: u64,
    /// What the wait returned.
    pub returned: Result<ReplyBody, SlackError>,
    /// The answer the server's history says came first.
    pub expected: Option<ReplyBody>,
    /// How many times the question was stored.
    pub question_posts: usize,
    /// Every Web API request the run made.
    pub requests: usize,
    /// What was drawn, for the failure message.
    pub schedule: Vec<String>,
}

impl ChaosReport {
    /// The first answer was not returned.
    pub fn lost(&self) -> bool {
        match (&self.returned, &self.expected) {
            (Ok(got), Some(want)) => got != want,
            _ => true,
        }
    }

    /// The question was posted more than once (or not at all).
    pub fn duplicated(&self) -> bool {
        self.question_posts != 1
    }
}

const WAIT: Duration = Duration::from_secs(20);

fn transient(rng: &mut fastrand::Rng) -> SlackFault {
    match rng.u8(0..4) {
        0 => SlackFault::RateLimited {
            retry_after_secs: 0,
        },
        1 => SlackFault::ServerError([500, 502, 503][rng.usize(0..3)]),
        2 => SlackFault::ConnectionReset,
        _ => SlackFault::ServerError(504),
    }
}

/// Runs seed `seed` against a fresh server.
pub async fn run(seed: u64) -> ChaosReport {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut schedule = Vec::new();
    let server = FakeSlackServer::start().await.unwrap();
    let client = SlackClient::with_options(&settings(&server), fast_options()).unwrap();
    let options = if rng.bool() {
        labels(&["Yes", "No", "Later"])
    } else {
        Vec::new()
    };
    let by_button = !options.is_empty() && rng.bool();
    for _ in 0..rng.usize(0..3) {
        let fault = if rng.u8(0..3) == 0 {
            SlackFault::ResetAfterHandling
        } else {
            transient(&mut rng)
        };
        schedule.push(format!("post: {fault:?}"));
        server.fault(SlackMethod::PostMessage, 1, fault);
    }
    let (text, blocks) = question("Chaos?", &options, false);
    let posted = client
        .post_question(
            &text,
            blocks,
            options.len(),
            None,
            &CancellationToken::new(),
        )
        .await;
    let pending = match posted {
        Ok(pending) => pending,
        Err(err) => return report(seed, &server, Err(err), None, schedule),
    };
    let thread = pending.thread().ts;
    let question_ts = pending.question_ts().clone();
    let waiting = tokio::spawn(async move { pending.wait(&CancellationToken::new()).await });
    let mut replied = false;
    let steps = rng.usize(2..8);
    let answer_at = rng.usize(0..steps);
    for step in 0..steps {
        let ready = tether_testkit::wait_until_async("a socket, or the wait over", WAIT, || {
            (server.open_sockets() >= 1 || waiting.is_finished()).then_some(())
        })
        .await;
        if ready.is_err() {
            schedule.push("no socket".into());
        }
        if waiting.is_finished() {
            break;
        }
        let trouble = rng.u8(0..9);
        let gate_closed = trouble == 0;
        match trouble {
            0 => {
                schedule.push("gate closed, sockets dropped".into());
                server.close_gate();
                server.drop_sockets();
            }
            1 => {
                let reason =
                    ["refresh_requested", "warning", "too_many_websockets"][rng.usize(0..3)];
                schedule.push(format!("disconnect {reason}"));
                server.disconnect_all(reason);
            }
            2 => {
                schedule.push("drop sockets".into());
                server.drop_sockets();
            }
            3 => {
                let on = rng.bool();
                schedule.push(format!("duplicates {on}"));
                server.duplicate_deliveries(on);
            }
            4 => {
                let fault = transient(&mut rng);
                schedule.push(format!("catch-up: {fault:?}, open: 429"));
                server.fault(SlackMethod::Replies, 1, fault);
                server.fault(
                    SlackMethod::ConnectionsOpen,
                    1,
                    SlackFault::RateLimited {
                        retry_after_secs: 0,
                    },
                );
            }
            5 => {
                schedule.push("1-message pages".into());
                server.set_page_limit(Some(1));
            }
            6 => {
                schedule.push("half-open".into());
                server.freeze_sockets();
            }
            _ => schedule.push("calm".into()),
        }
        noise(&server, &mut rng, &thread);
        if step == answer_at && !by_button {
            let n = rng.usize(1..3);
            schedule.push(format!("{n} typed replies"));
            for i in 0..n {
                server.reply(
                    thread.as_str(),
                    FakeSlackServer::HUMAN,
                    &format!("answer {i}"),
                );
            }
            replied = true;
        }
        if gate_closed {
            tokio::time::sleep(Duration::from_millis(rng.u64(0..5))).await;
            server.open_gate();
        }
        tokio::time::sleep(Duration::from_millis(rng.u64(0..4))).await;
    }
    if by_button {
        // A click leaves no history and Slack does not retry it: it is pressed on an open
        // socket, after the trouble.
        server.set_page_limit(None);
        let _ = server.wait_for_sockets(1, WAIT).await;
        let index = rng.usize(0..options.len());
        schedule.push(format!("button {index}"));
        server.press_button(
            question_ts.as_str(),
            FakeSlackServer::HUMAN,
            &option_action_id(index),
        );
    } else if !replied {
        server.reply(thread.as_str(), FakeSlackServer::HUMAN, "late answer");
    }
    let returned = match tokio::time::timeout(WAIT, waiting).await {
        Ok(Ok(result)) => result.map(|r| r.body),
        Ok(Err(join)) => Err(SlackError::BadResponse {
            detail: join.to_string(),
        }),
        Err(_) => Err(SlackError::DeadlineReached),
    };
    let expected = if by_button {
        schedule
            .last()
            .and_then(|s| s.strip_prefix("button "))
            .and_then(|i| i.parse().ok())
            .map(ReplyBody::Choice)
    } else {
        first_human_reply(&server, &thread, &question_ts)
    };
    report(seed, &server, returned, expected, schedule)
}

/// Messages around the thread that must not answer it.
fn noise(server: &FakeSlackServer, rng: &mut fastrand::Rng, thread: &Ts) {
    match rng.u8(0..5) {
        0 => {
            server.post_as_bot(thread.as_str(), "the bot talking");
        }
        1 => {
            server.post_in(
                FakeSlackServer::CHANNEL,
                None,
                FakeSlackServer::HUMAN,
                "top level",
            );
        }
        2 => {
            server.post_in(
                FakeSlackServer::OTHER_CHANNEL,
                None,
                FakeSlackServer::HUMAN,
                "elsewhere",
            );
        }
        _ => {}
    }
}

fn first_human_reply(server: &FakeSlackServer, thread: &Ts, question: &Ts) -> Option<ReplyBody> {
    server
        .messages()
        .into_iter()
        .filter(|m| {
            m.channel == FakeSlackServer::CHANNEL
                && m.bot_id.is_none()
                && m.thread_ts.as_deref() == Some(thread.as_str())
                && Ts::parse(&m.ts).is_some_and(|ts| ts > *question)
        })
        .min_by_key(|m| Ts::parse(&m.ts))
        .map(|m| ReplyBody::Text(m.text))
}

fn report(
    seed: u64,
    server: &FakeSlackServer,
    returned: Result<ReplyBody, SlackError>,
    expected: Option<ReplyBody>,
    schedule: Vec<String>,
) -> ChaosReport {
    ChaosReport {
        seed,
        returned,
        expected,
        question_posts: server.questions().len(),
        requests: SlackMethod::ALL.iter().map(|m| server.requests(*m)).sum(),
        schedule,
    }
}
