use super::{QuestionMessage, answered_note};

#[test]
fn a_choice_question_has_one_button_per_option() {
    let options = vec!["Postgres".to_owned(), "SQLite <embedded>".to_owned()];
    let message = QuestionMessage {
        question: "Which database?",
        context: "The service stores ~1k rows.",
        confidence: 40,
        options: &options,
        follow_up: false,
    };
    let (text, blocks) = message.render();
    assert_eq!(text, "Agent needs help: Which database?");
    insta::assert_json_snapshot!("choice_question", blocks);
}

#[test]
fn a_plain_follow_up_has_no_buttons_and_escapes_mentions() {
    let message = QuestionMessage {
        question: "Ping <!channel> & go?",
        context: "",
        confidence: 130,
        options: &[],
        follow_up: true,
    };
    let (text, blocks) = message.render();
    assert_eq!(text, "Follow-up: Ping &lt;!channel&gt; &amp; go?");
    insta::assert_json_snapshot!("plain_follow_up", blocks);
    let (_, answered) = message.render_answered(&answered_note("terminal", "ada"));
    insta::assert_json_snapshot!("answered", answered);
}

#[test]
fn long_text_is_shortened_to_what_slack_accepts() {
    let long = "x".repeat(5_000);
    let label = "y".repeat(100);
    let options = vec![label, "b".into()];
    let message = QuestionMessage {
        question: "q",
        context: &long,
        confidence: 0,
        options: &options,
        follow_up: false,
    };
    let (_, blocks) = message.render();
    for block in blocks.as_array().unwrap() {
        if let Some(text) = block.pointer("/text/text").and_then(|t| t.as_str()) {
            assert!(text.chars().count() <= 3_000);
        }
        for element in block
            .get("elements")
            .and_then(|e| e.as_array())
            .into_iter()
            .flatten()
        {
            if let Some(text) = element.pointer("/text/text").and_then(|t| t.as_str()) {
                assert!(text.chars().count() <= 75, "{text}");
            }
        }
    }
}
