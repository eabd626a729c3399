use super::{SseDecoder, SseFrame};
use proptest::prelude::*;

fn frame(event: Option<&str>, data: &str) -> SseFrame {
    SseFrame {
        event: event.map(str::to_owned),
        data: data.to_owned(),
    }
}

fn decode_chunks(chunks: &[&[u8]]) -> Vec<SseFrame> {
    let mut decoder = SseDecoder::new();
    let mut out = Vec::new();
    for chunk in chunks {
        decoder.push(chunk, &mut out);
    }
    decoder.finish(&mut out);
    out
}

/// Every feature at once: BOM, comments, event names, multi-line data, all three line endings,
/// a field without a colon, a value without the optional space, ids and retries, a data-less
/// frame, and non-ASCII text.
const STREAM: &[u8] = b"\xEF\xBB\xBF: hello comment\r\n\
event: message_start\r\n\
data: {\"a\":1}\r\n\
\r\n\
data: line one\n\
data:line two\n\
id: 7\n\
retry: 100\n\
\n\
event: lonely\n\
\n\
event: ping\r\
data\r\
\r\
data: caf\xC3\xA9 \xE2\x9C\x93\r\n\
\r\n\
data: [DONE]\n\n";

fn expected() -> Vec<SseFrame> {
    vec![
        frame(Some("message_start"), "{\"a\":1}"),
        frame(None, "line one\nline two"),
        frame(Some("ping"), ""),
        frame(None, "café ✓"),
        frame(None, "[DONE]"),
    ]
}

#[test]
fn decodes_the_whole_stream_in_one_chunk() {
    assert_eq!(decode_chunks(&[STREAM]), expected());
}

#[test]
fn every_split_point_gives_the_same_frames() {
    for cut in 0..=STREAM.len() {
        let (a, b) = STREAM.split_at(cut);
        assert_eq!(decode_chunks(&[a, b]), expected(), "split at byte {cut}");
    }
}

#[test]
fn every_pair_of_split_points_gives_the_same_frames() {
    for first in 0..=STREAM.len() {
        for second in first..=STREAM.len() {
            let (a, rest) = STREAM.split_at(first);
            let (b, c) = rest.split_at(second - first);
            assert_eq!(
                decode_chunks(&[a, b, c]),
                expected(),
                "split at bytes {first} and {second}"
            );
        }
    }
}

#[test]
fn one_byte_at_a_time_gives_the_same_frames() {
    let chunks: Vec<&[u8]> = STREAM.chunks(1).collect();
    assert_eq!(decode_chunks(&chunks), expected());
}

#[test]
fn frames_are_dispatched_as_soon_as_their_blank_line_arrives() {
    let mut decoder = SseDecoder::new();
    let mut out = Vec::new();
    decoder.push(b"event: a\ndata: 1\n", &mut out);
    assert!(out.is_empty());
    assert!(decoder.has_partial_frame());
    decoder.push(b"\n", &mut out);
    assert_eq!(out, vec![frame(Some("a"), "1")]);
    assert!(!decoder.has_partial_frame());
}

#[test]
fn a_frame_cut_before_its_blank_line_is_dispatched_at_the_end() {
    assert_eq!(
        decode_chunks(&[b"data: [DONE]\n"]),
        vec![frame(None, "[DONE]")]
    );
}

#[test]
fn an_unterminated_last_line_is_dropped() {
    assert_eq!(
        decode_chunks(&[b"data: one\n\ndata: {\"trunc"]),
        vec![frame(None, "one")]
    );
}

#[test]
fn a_cr_at_a_chunk_end_is_not_doubled_by_the_following_lf() {
    // "data: a\r" + "\n" + "\r\n": one line ending, then a blank line, so exactly one frame.
    assert_eq!(
        decode_chunks(&[b"data: a\r", b"\n", b"\r\n"]),
        vec![frame(None, "a")]
    );
    // A lone CR followed by another CR is two line endings: blank line dispatches.
    assert_eq!(
        decode_chunks(&[b"data: a\r", b"\r"]),
        vec![frame(None, "a")]
    );
}

#[test]
fn only_one_leading_space_is_removed() {
    assert_eq!(
        decode_chunks(&[b"data:   indented\n\n"]),
        vec![frame(None, "  indented")]
    );
}

#[test]
fn a_bom_is_only_stripped_at_the_start() {
    assert_eq!(
        decode_chunks(&[b"data: x\n\n\xEF\xBB\xBFdata: y\n\n"]),
        vec![frame(None, "x")],
        "a BOM later in the stream is part of a field name, so that line is ignored"
    );
}

proptest! {
    #[test]
    fn arbitrary_chunking_never_changes_the_frames(cuts in proptest::collection::vec(0..STREAM.len(), 0..12)) {
        let mut cuts = cuts;
        cuts.sort_unstable();
        let mut chunks = Vec::new();
        let mut start = 0;
        for cut in cuts {
            chunks.push(&STREAM[start..cut]);
            start = cut;
        }
        chunks.push(&STREAM[start..]);
        prop_assert_eq!(decode_chunks(&chunks), expected());
    }
}
