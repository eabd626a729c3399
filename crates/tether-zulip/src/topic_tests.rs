use super::{MAX_TOPIC_CHARS, topic_name};

#[test]
fn short_summaries_are_kept_whole() {
    assert_eq!(topic_name(1, "x"), "Agent Q #1 — x");
    assert_eq!(
        topic_name(42, "  fix\nthe   build  "),
        "Agent Q #42 — fix the build"
    );
    assert_eq!(topic_name(5, "  \n "), "Agent Q #5");
}

#[test]
fn long_summaries_are_cut_to_sixty_characters_with_an_ellipsis() {
    let topic = topic_name(12, &"word ".repeat(40));
    assert_eq!(topic.chars().count(), MAX_TOPIC_CHARS - 1); // the trailing space was trimmed
    assert_eq!(
        topic,
        "Agent Q #12 — word word word word word word word word word…"
    );
    let exact = topic_name(12, &"a".repeat(100));
    assert_eq!(exact.chars().count(), MAX_TOPIC_CHARS);
    assert!(exact.ends_with("aa…"));
}

#[test]
fn a_summary_of_exactly_the_room_left_is_not_cut() {
    let room = MAX_TOPIC_CHARS - "Agent Q #1 — ".chars().count();
    let summary = "b".repeat(room);
    assert_eq!(topic_name(1, &summary), format!("Agent Q #1 — {summary}"));
    let one_more = "b".repeat(room + 1);
    assert!(topic_name(1, &one_more).ends_with('…'));
}

#[test]
fn non_ascii_summaries_are_cut_on_character_boundaries() {
    let summary = "日本語のテキストと絵文字🦀を含む非常に長い要約文字列です".repeat(4);
    let topic = topic_name(7, &summary);
    assert_eq!(topic.chars().count(), MAX_TOPIC_CHARS);
    assert!(topic.starts_with("Agent Q #7 — 日本語"));
    assert!(topic.ends_with('…'));
    let accents = topic_name(8, &"é".repeat(90));
    assert_eq!(accents.chars().count(), MAX_TOPIC_CHARS);
}

#[test]
fn huge_question_numbers_still_fit() {
    let topic = topic_name(u64::MAX, &"z".repeat(80));
    assert_eq!(topic.chars().count(), MAX_TOPIC_CHARS);
    assert!(topic.starts_with("Agent Q #18446744073709551615 — z"));
}
