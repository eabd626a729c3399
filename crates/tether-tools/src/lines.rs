//! Reading a file line by line within fixed bounds, whatever the file holds.
//!
//! A file the agent controls may be one line of several GiB (a sparse file costs no disk), so
//! reading "a line" must not mean holding it: [`BoundedLines`] keeps at most a fixed number of
//! bytes of each line and only counts the rest, and the caller bounds how much of the file is
//! read at all (a [`std::io::Take`] under the reader).

use std::io::{self, BufRead};

/// A line as [`BoundedLines`] read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Line {
    /// Its length in bytes, without the line break; more than was kept when it was cut.
    pub(crate) len: u64,
    /// Whether it ended with a line break (`\n`); the last line of a file, or one the reader's
    /// bound cut, may not.
    pub(crate) ended: bool,
}

/// Lines of `reader`, each kept to at most `keep` bytes.
pub(crate) struct BoundedLines<R> {
    reader: R,
    keep: usize,
    read: u64,
}

impl<R: BufRead> BoundedLines<R> {
    /// Reads `reader` keeping at most `keep` bytes of each line.
    pub(crate) fn new(reader: R, keep: usize) -> Self {
        BoundedLines {
            reader,
            keep,
            read: 0,
        }
    }

    /// How many bytes were read so far.
    pub(crate) fn read(&self) -> u64 {
        self.read
    }

    /// Reads the next line into `kept` (emptied first: its first bytes, at most `keep`, without
    /// the line break); `None` at the end of the input.
    pub(crate) fn next_into(&mut self, kept: &mut Vec<u8>) -> io::Result<Option<Line>> {
        kept.clear();
        let mut len = 0u64;
        let mut any = false;
        loop {
            let buf = match self.reader.fill_buf() {
                Ok(buf) => buf,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(err) => return Err(err),
            };
            if buf.is_empty() {
                return Ok(any.then_some(Line { len, ended: false }));
            }
            any = true;
            let (part, used, ended) = match buf.iter().position(|b| *b == b'\n') {
                Some(at) => (&buf[..at], at + 1, true),
                None => (buf, buf.len(), false),
            };
            let room = self.keep.saturating_sub(kept.len());
            kept.extend_from_slice(&part[..part.len().min(room)]);
            len += part.len() as u64;
            self.reader.consume(used);
            self.read += used as u64;
            if ended {
                return Ok(Some(Line { len, ended: true }));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::io::{BufReader, Read as _};

    use super::*;

    fn all(input: &[u8], keep: usize, buffer: usize) -> Vec<(Vec<u8>, Line)> {
        let mut lines = BoundedLines::new(BufReader::with_capacity(buffer, input), keep);
        let mut out = Vec::new();
        let mut kept = Vec::new();
        while let Some(line) = lines.next_into(&mut kept).unwrap() {
            out.push((kept.clone(), line));
        }
        assert_eq!(lines.read(), input.len() as u64);
        out
    }

    #[test]
    fn lines_are_kept_to_the_bound_and_counted_whole() {
        let got = all(b"short\nmuch longer line\n\nlast", 4, 3);
        let want: Vec<(Vec<u8>, Line)> = vec![
            (
                b"shor".to_vec(),
                Line {
                    len: 5,
                    ended: true,
                },
            ),
            (
                b"much".to_vec(),
                Line {
                    len: 16,
                    ended: true,
                },
            ),
            (
                Vec::new(),
                Line {
                    len: 0,
                    ended: true,
                },
            ),
            (
                b"last".to_vec(),
                Line {
                    len: 4,
                    ended: false,
                },
            ),
        ];
        assert_eq!(got, want);
        assert!(all(b"", 4, 3).is_empty());
    }

    #[test]
    fn a_bound_under_the_reader_ends_a_line_there() {
        let input = [b'x'; 100];
        let mut lines = BoundedLines::new(BufReader::new(input.as_slice().take(10)), 4);
        let mut kept = Vec::new();
        let line = lines.next_into(&mut kept).unwrap().unwrap();
        assert_eq!(
            (kept.len(), line),
            (
                4,
                Line {
                    len: 10,
                    ended: false
                }
            )
        );
        assert_eq!(lines.next_into(&mut kept).unwrap(), None);
        assert_eq!(lines.read(), 10);
    }

    proptest::proptest! {
        #[test]
        fn any_input_splits_like_split_on_newlines(
            input in proptest::collection::vec(proptest::prop_oneof![
                proptest::strategy::Just(b'\n'),
                proptest::num::u8::ANY,
            ], 0..200),
            keep in 0usize..20,
            buffer in 1usize..16,
        ) {
            let got = all(&input, keep, buffer);
            let mut want: Vec<&[u8]> = input.split(|b| *b == b'\n').collect();
            if input.last().is_none_or(|b| *b == b'\n') {
                want.pop();
            }
            proptest::prop_assert_eq!(got.len(), want.len());
            for (i, ((kept, line), whole)) in got.iter().zip(&want).enumerate() {
                proptest::prop_assert_eq!(line.len, whole.len() as u64);
                proptest::prop_assert_eq!(&kept[..], &whole[..whole.len().min(keep)]);
                proptest::prop_assert_eq!(line.ended, i + 1 < want.len() || input.last() == Some(&b'\n'));
            }
        }
    }
}
