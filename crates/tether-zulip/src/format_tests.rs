use super::{QuestionMessage, answered_elsewhere_note};

fn sample() -> QuestionMessage<'static> {
    QuestionMessage {
        question: "The test `test_payment_processing` expects a `DecimalError`\nbut the code raises `ValueError`. Should I change the test or the code?",
        context: "- File: `payments/processor.py:142`\n- Error: `AssertionError: Expected DecimalError, got ValueError`\n- Attempted 2 fixes already\n",
        confidence: 25,
        options: &[],
    }
}

#[test]
fn question_card() {
    insta::assert_snapshot!(sample().render());
}

#[test]
fn choice_card() {
    let options = ["Change the test".to_owned(), "Change the code".to_owned()];
    let message = QuestionMessage {
        question: "Should I change the test or the code? I suggest the code (2).",
        context: "- File: `payments/processor.py:142`",
        confidence: 25,
        options: &options,
    };
    insta::assert_snapshot!(message.render());
}

#[test]
fn follow_up_card() {
    let message = QuestionMessage {
        question: "Here's the code at line 142:\n\n```python\nraise ValueError(\"Invalid decimal format\")\n```\n\nShould I wrap this in a `DecimalError` or update the test expectation?",
        context: "",
        confidence: 40,
        options: &[],
    };
    insta::assert_snapshot!(message.render_follow_up());
}

#[test]
fn without_context_the_context_section_is_left_out_and_confidence_is_capped() {
    let message = QuestionMessage {
        question: "Ship it?",
        context: " \n",
        confidence: 250,
        options: &[],
    };
    insta::assert_snapshot!(message.render());
}

#[test]
fn an_overlong_context_is_truncated_so_the_footer_survives() {
    let context = "log line\n".repeat(3000);
    let message = QuestionMessage {
        question: "Why?",
        context: &context,
        confidence: 10,
        options: &[],
    };
    let text = message.render();
    assert!(text.chars().count() <= 10_000, "{}", text.chars().count());
    assert!(text.contains("[… context truncated]"));
    assert!(text.ends_with("_Reply in this topic. The agent is waiting for your response._"));
}

#[test]
fn nul_bytes_are_removed() {
    let message = QuestionMessage {
        question: "a\0b",
        context: "c\0d",
        confidence: 1,
        options: &[],
    };
    assert!(!message.render().contains('\0'));
}

#[test]
fn the_answered_elsewhere_note() {
    assert_eq!(
        answered_elsewhere_note("web", "Alice"),
        "✅ Answered on web by Alice. The agent has moved on."
    );
}

#[test]
fn the_agents_text_mentions_nobody_and_hides_no_link() {
    let options = [
        "@**all** now".to_owned(),
        "[safe](https://evil.example)".to_owned(),
    ];
    let message = QuestionMessage {
        question: "Ping @**all** and @*admins*, or @_**Ana**? See [the docs](https://evil.example/x).",
        context: "```\nlet x = a[0](1);\n```\n![img](https://evil.example/p.png) https://example.com/plain",
        confidence: 10,
        options: &options,
    };
    let shown = message.render();
    for live in ["@**", "@*a", "@_**", "](", "![img]("] {
        assert!(!shown.contains(live), "{live:?} survives in {shown}");
    }
    assert!(shown.contains("https://example.com/plain"), "{shown}");
    assert_eq!(
        super::defuse("mail ana@example.com, use a_b and x[1] (ok)"),
        "mail ana@example.com, use a_b and x[1] (ok)",
        "honest text is unchanged"
    );
    insta::assert_snapshot!(shown.replace('\u{200b}', "⁀"));
}
