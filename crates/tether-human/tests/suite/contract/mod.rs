//! The contract every chat channel keeps, run for each against its fake server: a reply
//! answers the question (posted once, where the store says); an answer given elsewhere is said
//! under the post; a follow-up goes to its conversation; a question waited for again after a
//! restart is not posted twice and gets the reply given while nobody waited.
//!
//! A service joins by implementing [`Fake`] for its fake server and one `contract!` line.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use tether_config::Workspace;
use tether_human::broker::answer;
use tether_human::{Broker, DynChannel};
use tether_store::{Journal, NewQuestion, Store};
use tokio_util::sync::CancellationToken;

mod slack;
mod telegram;
mod zulip;

/// How long anything may take.
pub(super) const LIMIT: Duration = Duration::from_secs(10);

/// A chat service played by its fake server: what the contract needs to see and do there.
pub(super) trait Fake: Sized {
    /// The channel's name.
    const NAME: &'static str;
    /// A question's post, as the fake tells them apart.
    type Post: Clone + PartialEq + std::fmt::Debug;

    /// The fake, started.
    async fn start() -> Self;
    /// A channel on the fake for the workspace `ws` recording in `journal`, with a client of
    /// its own (as a new process has); waits are listed under `shared`.
    fn channel(&self, ws: &Workspace, journal: &Journal, shared: &Path) -> Arc<dyn DynChannel>;
    /// The `n`th question the bot posted, once it is.
    async fn question(&self, n: usize) -> Self::Post;
    /// Waits until a reply to a question just posted reaches the channel.
    async fn listening(&self);
    /// A person replies `text` to `post`.
    fn reply(&self, post: &Self::Post, text: &str);
    /// How many questions the bot posted.
    fn questions(&self) -> usize;
    /// The notes the bot posted under `post`.
    fn notes(&self, post: &Self::Post) -> Vec<String>;
    /// Whether `later` is in the conversation of `first`.
    fn same_conversation(&self, first: &Self::Post, later: &Self::Post) -> bool;
}

/// A workspace (kept while the test runs), its journal and a broker whose one channel is `F`'s.
struct Side {
    ws: Workspace,
    journal: Journal,
    broker: Broker,
}

fn side<F: Fake>(fake: &F, root: &Path, shared: &Path) -> Side {
    let ws = Workspace::at(root);
    std::fs::create_dir_all(ws.state_dir()).unwrap();
    let journal = Journal::new(Store::open(ws.db_path()).unwrap(), Vec::new()).unwrap();
    let channel = fake.channel(&ws, &journal, shared);
    let broker = Broker::new(journal.clone(), ws.state_dir(), vec![channel]);
    Side {
        ws,
        journal,
        broker,
    }
}

fn question(text: &str) -> NewQuestion {
    NewQuestion {
        question: text.into(),
        context: "all tests pass".into(),
        confidence: Some(20),
        ..NewQuestion::default()
    }
}

async fn within<T>(future: impl Future<Output = T>) -> T {
    tokio::time::timeout(LIMIT, future)
        .await
        .expect("timed out")
}

pub(super) async fn a_reply_answers_the_question_posted_once<F: Fake>() {
    let fake = F::start().await;
    let (dir, shared) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let s = side(&fake, dir.path(), shared.path());
    let b = s.broker.clone();
    let waiting =
        tokio::spawn(async move { b.ask(question("Merge it?"), CancellationToken::new()).await });
    let post = fake.question(1).await;
    fake.listening().await;
    fake.reply(&post, "Yes, merge it.");
    let got = within(waiting).await.unwrap().unwrap();
    assert_eq!(
        (got.text.as_str(), got.channel.as_str()),
        ("Yes, merge it.", F::NAME)
    );
    let posts = s.journal.store().posts(&got.question_id).unwrap();
    assert_eq!(
        posts.iter().map(|p| p.channel.as_str()).collect::<Vec<_>>(),
        [F::NAME],
        "where it was posted is recorded"
    );
    assert_eq!(fake.questions(), 1, "posted once");
}

pub(super) async fn an_answer_given_elsewhere_is_said_under_the_post<F: Fake>() {
    let fake = F::start().await;
    let (dir, shared) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let s = side(&fake, dir.path(), shared.path());
    let b = s.broker.clone();
    let waiting =
        tokio::spawn(async move { b.ask(question("Merge it?"), CancellationToken::new()).await });
    let post = fake.question(1).await;
    let store = Store::open(s.ws.db_path()).unwrap();
    let id = tether_testkit::wait_until_async("the post recorded", LIMIT, || {
        let q = store.pending_questions().ok()?.into_iter().next()?;
        (!store.posts(&q.id).ok()?.is_empty()).then_some(q.id)
    })
    .await
    .unwrap();
    answer(&store, &s.ws.state_dir(), &id, "Not yet.", "cli", "carol").unwrap();
    let got = within(waiting).await.unwrap().unwrap();
    assert_eq!(
        (got.text.as_str(), got.channel.as_str()),
        ("Not yet.", "cli")
    );
    let notes = tether_testkit::wait_until_async("the note under the post", LIMIT, || {
        let notes = fake.notes(&post);
        (!notes.is_empty()).then_some(notes)
    })
    .await
    .unwrap();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].contains("cli") && notes[0].contains("carol"),
        "{}",
        notes[0]
    );
    assert_eq!(fake.questions(), 1);
}

pub(super) async fn a_follow_up_goes_to_its_conversation<F: Fake>() {
    let fake = F::start().await;
    let (dir, shared) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let s = side(&fake, dir.path(), shared.path());
    let b = s.broker.clone();
    let first =
        tokio::spawn(async move { b.ask(question("First?"), CancellationToken::new()).await });
    let post = fake.question(1).await;
    fake.listening().await;
    fake.reply(&post, "one");
    let got = within(first).await.unwrap().unwrap();
    let follow_up = NewQuestion {
        thread_id: Some(got.thread_id.clone()),
        ..question("Second?")
    };
    let b = s.broker.clone();
    let second = tokio::spawn(async move { b.ask(follow_up, CancellationToken::new()).await });
    let later = fake.question(2).await;
    assert_ne!(later, post);
    assert!(
        fake.same_conversation(&post, &later),
        "{post:?} then {later:?}"
    );
    fake.listening().await;
    fake.reply(&later, "two");
    let again = within(second).await.unwrap().unwrap();
    assert_eq!(
        (again.text.as_str(), again.thread_id.as_str()),
        ("two", got.thread_id.as_str())
    );
}

pub(super) async fn a_resumed_wait_posts_nothing_and_gets_the_reply_given_meanwhile<F: Fake>() {
    let fake = F::start().await;
    let (dir, shared) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let first = side(&fake, dir.path(), shared.path());
    let stop = CancellationToken::new();
    let b = first.broker.clone();
    let asking = {
        let stop = stop.clone();
        tokio::spawn(async move { b.ask(question("Survive a restart?"), stop).await })
    };
    let post = fake.question(1).await;
    let store = first.journal.clone();
    let id = tether_testkit::wait_until_async("the post recorded", LIMIT, || {
        let store = store.store();
        let q = store.pending_questions().ok()?.into_iter().next()?;
        (!store.posts(&q.id).ok()?.is_empty()).then_some(q.id)
    })
    .await
    .unwrap();
    stop.cancel();
    assert!(within(asking).await.unwrap().is_err(), "left pending");
    drop(first);
    fake.reply(&post, "given while nobody waited");
    // The same workspace as a new process sees it: a new store connection, a new client.
    let second = side(&fake, dir.path(), shared.path());
    let got = within(second.broker.wait(&id, CancellationToken::new()))
        .await
        .unwrap();
    assert_eq!(
        (got.text.as_str(), got.channel.as_str()),
        ("given while nobody waited", F::NAME)
    );
    assert_eq!(fake.questions(), 1, "never posted twice");
}

/// The contract's tests for the fake `$fake`, in a module `$name`.
macro_rules! contract {
    ($name:ident, $fake:ty) => {
        mod $name {
            use super::*;

            #[tokio::test]
            async fn a_reply_answers_the_question_posted_once() {
                super::a_reply_answers_the_question_posted_once::<$fake>().await;
            }

            #[tokio::test]
            async fn an_answer_given_elsewhere_is_said_under_the_post() {
                super::an_answer_given_elsewhere_is_said_under_the_post::<$fake>().await;
            }

            #[tokio::test]
            async fn a_follow_up_goes_to_its_conversation() {
                super::a_follow_up_goes_to_its_conversation::<$fake>().await;
            }

            #[tokio::test]
            async fn a_resumed_wait_posts_nothing_and_gets_the_reply_given_meanwhile() {
                super::a_resumed_wait_posts_nothing_and_gets_the_reply_given_meanwhile::<$fake>()
                    .await;
            }
        }
    };
}

contract!(on_zulip, zulip::Zulip);
contract!(on_slack, slack::Slack);
contract!(on_telegram, telegram::Telegram);
