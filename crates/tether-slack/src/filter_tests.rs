use super::{ReplyBody, ReplyFilter};
use crate::wire::{BotIdentity, ButtonPress, Incoming, Message, Ts};

fn filter() -> ReplyFilter {
    ReplyFilter {
        channel: "C1".into(),
        thread: Ts::parse("100.000100").unwrap(),
        question: Ts::parse("100.000500").unwrap(),
        options: 2,
        bot: BotIdentity {
            user_id: "UBOT".into(),
            bot_id: Some("B1".into()),
            team_id: None,
        },
    }
}

fn message(user: &str, ts: &str, thread: &str, text: &str) -> Message {
    Message {
        subtype: None,
        user: Some(user.into()),
        bot_id: None,
        text: text.into(),
        ts: ts.into(),
        thread_ts: Some(thread.into()),
        channel: Some("C1".into()),
        metadata: None,
    }
}

#[test]
fn only_a_human_reply_in_the_thread_after_the_question_answers() {
    let f = filter();
    let ok = message("U2", "100.000600", "100.000100", "a &lt;b&gt; &amp; c");
    let reply = f.accept(&Incoming::Message(ok)).unwrap();
    assert_eq!(reply.body, ReplyBody::Text("a <b> & c".into()));
    let older = message("U2", "100.000400", "100.000100", "before the follow-up");
    let own = message("UBOT", "100.000700", "100.000100", "bot");
    let mut bot = message("U9", "100.000700", "100.000100", "integration");
    bot.bot_id = Some("B2".into());
    let other_thread = message("U2", "100.000700", "100.000200", "elsewhere");
    let mut edited = message("U2", "100.000800", "100.000100", "edit");
    edited.subtype = Some("message_changed".into());
    let mut other_channel = message("U2", "100.000900", "100.000100", "x");
    other_channel.channel = Some("C2".into());
    let blank = message("U2", "100.000900", "100.000100", "  ");
    for m in [older, own, bot, other_thread, edited, other_channel, blank] {
        assert!(f.accept(&Incoming::Message(m.clone())).is_none(), "{m:?}");
    }
}

#[test]
fn the_oldest_reply_wins_whatever_the_order() {
    let f = filter();
    let late = message("U3", "101.000000", "100.000100", "late");
    let early = message("U2", "100.900000", "100.000100", "early");
    let first = f.first_reply(&[late, early.clone(), early]).unwrap();
    assert_eq!(first.body, ReplyBody::Text("early".into()));
}

#[test]
fn only_this_questions_buttons_answer_it() {
    let f = filter();
    let press = |ts: &str, action: &str| {
        Incoming::Button(ButtonPress {
            channel: "C1".into(),
            message_ts: Ts::parse(ts).unwrap(),
            thread_ts: Ts::parse("100.000100").unwrap(),
            user: "U2".into(),
            user_name: Some("ada".into()),
            action_id: action.into(),
        })
    };
    let reply = f.accept(&press("100.000500", "tether_option_1")).unwrap();
    assert_eq!(
        (&reply.body, reply.responder()),
        (&ReplyBody::Choice(1), "ada")
    );
    assert!(
        f.accept(&press("100.000100", "tether_option_1")).is_none(),
        "an older question's"
    );
    assert!(
        f.accept(&press("100.000500", "tether_option_2")).is_none(),
        "no such option"
    );
    assert!(f.accept(&press("100.000500", "other")).is_none());
}
