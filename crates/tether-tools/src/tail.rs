//! Keeping the tail of a stream in bounded memory: a command's last lines say why it failed,
//! and a model's context cannot hold a megabyte of build log.

/// Collects bytes, remembering only the last `cap` of them and how many there were in all.
#[derive(Debug, Clone)]
pub(crate) struct TailBuffer {
    cap: usize,
    buf: Vec<u8>,
    total: u64,
}

/// A cut inside the kept tail moves forward to the next line start if one is this close, so the
/// output does not begin mid-line.
const LINE_ALIGN: usize = 256;

impl TailBuffer {
    pub(crate) fn new(cap: usize) -> Self {
        Self {
            cap,
            buf: Vec::new(),
            total: 0,
        }
    }

    pub(crate) fn push(&mut self, data: &[u8]) {
        self.total += data.len() as u64;
        self.buf.extend_from_slice(data);
        // Compact only once the buffer holds twice the cap, so pushes stay amortised O(n).
        if self.buf.len() > self.cap.saturating_mul(2).max(8192) {
            let excess = self.buf.len() - self.cap;
            self.buf.drain(..excess);
        }
    }

    /// All bytes pushed so far.
    pub(crate) fn total(&self) -> u64 {
        self.total
    }

    /// The kept text (invalid UTF-8 replaced), prefixed with `[… N bytes cut …]` if anything was
    /// dropped.
    pub(crate) fn finish(self) -> String {
        let start = self.buf.len().saturating_sub(self.cap);
        if start == 0 && self.total == self.buf.len() as u64 {
            return String::from_utf8_lossy(&self.buf).into_owned();
        }
        let kept = &self.buf[start..];
        // Whether the cut falls inside a line (unknown, so assumed, if the byte before is gone).
        let mid_line = start == 0 || self.buf[start - 1] != b'\n';
        let mut skip = kept
            .iter()
            .take(4)
            .take_while(|b| (**b & 0xC0) == 0x80)
            .count();
        if mid_line
            && let Some(nl) = kept[skip..]
                .iter()
                .take(LINE_ALIGN)
                .position(|b| *b == b'\n')
        {
            skip += nl + 1;
        }
        let kept = &kept[skip..];
        let cut = self.total - kept.len() as u64;
        format!("[… {cut} bytes cut …]\n{}", String::from_utf8_lossy(kept))
    }
}

#[cfg(test)]
mod tests {
    use super::TailBuffer;

    #[test]
    fn short_output_is_kept_whole() {
        let mut tail = TailBuffer::new(100);
        tail.push(b"hello\n");
        tail.push(b"world\n");
        assert_eq!(tail.total(), 12);
        assert_eq!(tail.finish(), "hello\nworld\n");
    }

    #[test]
    fn long_output_keeps_the_tail_from_a_line_start() {
        let mut tail = TailBuffer::new(20);
        for i in 0..10_000 {
            tail.push(format!("line {i}\n").as_bytes());
        }
        let text = tail.finish();
        assert!(text.starts_with("[… "), "{text}");
        assert!(text.ends_with("line 9998\nline 9999\n"), "{text}");
        let body = text.split_once("…]\n").map(|(_, b)| b).unwrap_or_default();
        assert!(body.starts_with("line 99"), "{text}");
        let cut: u64 = text
            .strip_prefix("[… ")
            .and_then(|rest| rest.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        let total: u64 = (0..10_000)
            .map(|i| format!("line {i}\n").len() as u64)
            .sum();
        assert_eq!(cut + body.len() as u64, total);
    }

    #[test]
    fn a_cut_never_splits_a_character() {
        let mut tail = TailBuffer::new(5);
        tail.push("ééééé".as_bytes());
        let text = tail.finish();
        assert!(!text.contains('\u{FFFD}'), "{text}");
        assert!(text.ends_with("éé"), "{text}");
    }
}
