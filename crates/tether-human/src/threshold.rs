//! The interaction threshold (0–5): how readily the agent may ask, and the confidence cutoff
//! tether enforces by answering over-confident questions itself.

/// The confidence at or above which tether answers a question itself, for each threshold;
/// `None` means never (threshold 5) — and threshold 0 does not offer the tool at all.
pub fn cutoff(threshold: u8) -> Option<u8> {
    match threshold {
        0 => Some(0),
        1 => Some(20),
        2 => Some(40),
        3 => Some(60),
        4 => Some(80),
        _ => None,
    }
}

/// tether's own answer when `confidence` is at or above the threshold's cutoff.
pub fn auto_answer(threshold: u8, confidence: Option<u8>) -> Option<String> {
    let confidence = confidence?;
    let cut = cutoff(threshold)?;
    (confidence >= cut).then(|| crate::prompts::proceed_without_asking(confidence, threshold))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cutoffs_per_level() {
        assert_eq!(auto_answer(2, Some(39)), None);
        assert!(auto_answer(2, Some(40)).is_some());
        assert!(auto_answer(4, Some(80)).is_some());
        assert_eq!(auto_answer(4, Some(79)), None);
        assert_eq!(auto_answer(5, Some(100)), None);
        assert_eq!(auto_answer(3, None), None);
    }
}
