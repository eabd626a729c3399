//! Follow-ups in the same topic (`thread_id` = the topic): each question only accepts replies
//! newer than its own post.

use tether_testkit::zulip_server::{Endpoint, Moment};
use tether_zulip::{MessageId, QuestionMessage};
use tokio_util::sync::CancellationToken;

use super::common::{TOPIC, client, server, within};

#[tokio::test]
async fn a_follow_up_only_accepts_replies_newer_than_itself() {
    let server = server(30).await;
    let client = client(&server);
    let cancel = CancellationToken::new();
    server.on(
        Endpoint::GetEvents,
        1,
        Moment::OnArrival,
        server.human_reply(TOPIC, "A"),
    );
    let first = within(client.ask(TOPIC, "first?", &cancel)).await.unwrap();
    assert_eq!(first.text, "A");

    // A late reply to the first question lands after the follow-up's queue exists but before
    // the follow-up is posted, so the queue delivers it…
    server.on(
        Endpoint::Register,
        1,
        Moment::AfterHandling,
        server.human_reply(TOPIC, "B, still about the first question"),
    );
    let follow_up = QuestionMessage {
        question: "Does this clarify?",
        context: "",
        confidence: 50,
        options: &[],
    }
    .render_follow_up();
    let pending = within(client.post_question(TOPIC, &follow_up, &cancel))
        .await
        .unwrap();
    assert!(pending.question_id() > first.message_id);
    // …and only the reply after the follow-up answers it.
    let polls = server.count(Endpoint::GetEvents);
    server.on(
        Endpoint::GetEvents,
        polls + 1,
        Moment::OnArrival,
        server.human_reply(TOPIC, "C"),
    );
    let second = within(pending.wait(&cancel)).await.unwrap();
    assert_eq!(second.text, "C");
    assert_eq!(second.question_id, MessageId(server.bot_messages()[1].id));
    let topic_messages: Vec<_> = server
        .messages_in(TOPIC)
        .into_iter()
        .map(|m| m.content)
        .collect();
    assert_eq!(topic_messages.len(), 5);
}
