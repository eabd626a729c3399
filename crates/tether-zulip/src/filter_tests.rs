use serde_json::json;

use super::ReplyFilter;
use crate::wire::{Message, MessageId};

const TOPIC: &str = "Agent Q #1 — x";

fn message(id: u64, sender_id: u64, topic: &str) -> Message {
    Message {
        id: MessageId(id),
        sender_id,
        sender_email: format!("user{sender_id}@example.com"),
        sender_full_name: format!("User {sender_id}"),
        content: format!("reply {id}"),
        subject: topic.to_owned(),
        kind: "stream".to_owned(),
        display_recipient: json!("tether"),
    }
}

fn filter() -> ReplyFilter {
    ReplyFilter::new("tether", TOPIC, 10, "bot@example.com", MessageId(100))
}

#[test]
fn the_earliest_human_reply_in_the_exact_topic_wins() {
    let batch = [
        message(104, 11, TOPIC),
        message(103, 12, TOPIC),
        message(102, 10, TOPIC),
    ];
    assert_eq!(filter().first_reply(&batch).unwrap().id, MessageId(103));
}

#[test]
fn the_bot_older_messages_and_other_topics_are_rejected() {
    let mut by_email = message(105, 99, TOPIC);
    by_email.sender_email = "BOT@example.com".into();
    let mut other_stream = message(106, 11, TOPIC);
    other_stream.display_recipient = json!("elsewhere");
    let mut direct = message(107, 11, TOPIC);
    direct.kind = "private".into();
    direct.display_recipient = json!([{"id": 11}]);
    let batch = [
        message(101, 10, TOPIC),
        message(100, 11, TOPIC),
        message(99, 11, TOPIC),
        message(102, 11, "Agent Q #10 — x"),
        message(103, 11, "x"),
        message(104, 11, "Agent Q #1 — x and more"),
        by_email,
        other_stream,
        direct,
    ];
    assert_eq!(filter().first_reply(&batch), None);
}

#[test]
fn topics_compare_case_insensitively_as_zulip_does() {
    let batch = [message(101, 11, "agent q #1 — X")];
    assert_eq!(filter().first_reply(&batch).unwrap().id, MessageId(101));
}

#[test]
fn a_message_is_considered_once() {
    let mut filter = filter();
    let batch = [message(101, 11, TOPIC), message(101, 11, TOPIC)];
    assert!(filter.first_reply(&batch).is_some());
    assert_eq!(filter.first_reply(&batch), None);
}
