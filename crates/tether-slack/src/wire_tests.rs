use serde_json::json;

use super::{Frame, Incoming, Ts};

#[test]
fn timestamps_compare_as_two_integers_not_as_text() {
    let a = Ts::parse("1700000000.000200").unwrap();
    let b = Ts::parse("1700000000.000201").unwrap();
    let c = Ts::parse("999999999.999999").unwrap();
    assert!(
        a < b,
        "one microsecond apart (a float would make them equal)"
    );
    assert!(c < a, "fewer integer digits is older");
    assert_eq!(Ts::parse("5.5").unwrap(), Ts::parse("5.500000").unwrap());
    assert!(Ts::parse("abc").is_none() && Ts::parse("1.").is_none());
}

#[test]
fn a_timestamp_is_stored_as_slack_wrote_it_and_read_back_only_in_that_shape() {
    let ts = Ts::parse("1700000000.000200").unwrap();
    assert_eq!(
        serde_json::to_value(&ts).unwrap(),
        json!("1700000000.000200")
    );
    let back: Ts = serde_json::from_value(json!("1700000000.000200")).unwrap();
    assert_eq!(back.as_str(), "1700000000.000200");
    assert_eq!(back, ts);
    assert!(serde_json::from_value::<Ts>(json!("abc")).is_err());
    assert!(serde_json::from_value::<Ts>(json!(17)).is_err());
}

#[test]
fn frames_of_every_kind_are_told_apart() {
    assert_eq!(
        Frame::parse(r#"{"type":"hello","num_connections":1}"#),
        Frame::Hello
    );
    assert_eq!(
        Frame::parse(r#"{"type":"disconnect","reason":"refresh_requested"}"#),
        Frame::Disconnect {
            reason: "refresh_requested".into()
        }
    );
    let event = json!({"envelope_id":"e1","type":"events_api","payload":{"event":{
        "type":"message","channel":"C1","user":"U2","text":"yes",
        "ts":"1700000100.000200","thread_ts":"1700000000.000100"}}});
    let Frame::Envelope {
        envelope_id,
        incoming: Some(incoming),
    } = Frame::parse(&event.to_string())
    else {
        panic!("not an envelope");
    };
    let Incoming::Message(m) = *incoming else {
        panic!("not a message envelope");
    };
    assert_eq!((envelope_id.as_str(), m.text.as_str()), ("e1", "yes"));
    let click = json!({"envelope_id":"e2","type":"interactive","payload":{
        "type":"block_actions","user":{"id":"U2","name":"ada"},
        "container":{"type":"message","message_ts":"1700000000.000100","channel_id":"C1"},
        "actions":[{"type":"button","action_id":"tether_option_1","value":"1"}]}});
    let Frame::Envelope {
        incoming: Some(incoming),
        ..
    } = Frame::parse(&click.to_string())
    else {
        panic!("not an envelope");
    };
    let Incoming::Button(b) = *incoming else {
        panic!("not a click");
    };
    assert_eq!(b.thread_ts, b.message_ts);
    assert_eq!(
        (b.user_name.as_deref(), b.action_id.as_str()),
        (Some("ada"), "tether_option_1")
    );
    let other = json!({"envelope_id":"e3","type":"slash_commands","payload":{}});
    assert!(matches!(
        Frame::parse(&other.to_string()),
        Frame::Envelope { incoming: None, .. }
    ));
    assert_eq!(Frame::parse("not json"), Frame::Other);
}
