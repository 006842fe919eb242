//! `LineReader`: the codec's framing over a blocking reader. Line numbers (blank lines counted),
//! line ends, the byte-order mark, over-long lines reported and read past, read errors, and the
//! same frames as the codec fed the whole input, for any read sizes.

use std::io::{BufReader, Read};

use byre_proto::DecodeError;
use byre_transport::{BadLineReason, LineFrame, LineReader, NdjsonCodec};
use bytes::BytesMut;
use proptest::prelude::*;
use tokio_util::codec::Decoder;

/// Every item of a reader over `input` read `capacity` bytes at a time, with its line number;
/// a bad line as `bad:<len>:<head>`.
fn read(input: &[u8], capacity: usize, max_line: usize) -> Vec<(usize, String)> {
    let mut lines = LineReader::new(BufReader::with_capacity(capacity, input), max_line);
    let mut out = Vec::new();
    while let Some(item) = lines.next() {
        let shown = match item.expect("reading a slice does not fail") {
            LineFrame::Line(line) => String::from_utf8_lossy(&line).into_owned(),
            LineFrame::BadLine(bad) => {
                assert_eq!(bad.reason, BadLineReason::TooLong { max: max_line });
                format!("bad:{}:{}", bad.len, bad.head)
            }
        };
        out.push((lines.line_number(), shown));
    }
    out
}

fn numbered(items: &[(usize, &str)]) -> Vec<(usize, String)> {
    items.iter().map(|&(n, s)| (n, s.to_owned())).collect()
}

#[test]
fn lines_are_numbered_counting_blank_ones() {
    let input = "\u{feff}{\"a\":1}\r\n\r\n   \n{\"b\":2}\n\n\t\n{\"c\":3}";
    for capacity in [1, 2, 3, 7, 64, 4096] {
        assert_eq!(
            read(input.as_bytes(), capacity, 1024),
            numbered(&[(1, "{\"a\":1}"), (4, "{\"b\":2}"), (7, "{\"c\":3}")]),
            "reads of {capacity}"
        );
    }
    assert!(read(b"", 8, 1024).is_empty());
    assert!(read(b"\n\r\n  \n", 8, 1024).is_empty());
}

#[test]
fn an_over_long_line_is_reported_and_the_next_line_read() {
    let long = format!("{{\"pad\":\"{}\"}}", "x".repeat(300));
    let input = format!("{{\"a\":1}}\n{long}\r\n{{\"b\":2}}\n\n{long}");
    let bad = format!("bad:{}:{}", long.len(), &long[..80]);
    for capacity in [1, 5, 64, 100_000] {
        assert_eq!(
            read(input.as_bytes(), capacity, 100),
            numbered(&[(1, "{\"a\":1}"), (2, &bad), (3, "{\"b\":2}"), (5, &bad)]),
            "reads of {capacity}"
        );
    }
}

#[test]
fn long_lines_in_bounded_reads() {
    // A 3 MiB line under a 4 MiB limit comes whole; a 6 MiB line over it is reported.
    let ok = format!("{{\"pad\":\"{}\"}}", "o".repeat(3 << 20));
    let over = "v".repeat(6 << 20);
    let input = format!("{ok}\n{over}\n{{\"end\":1}}\n");
    let items = read(input.as_bytes(), 64 * 1024, 4 << 20);
    assert_eq!(
        items.len(),
        3,
        "{:?}",
        items.iter().map(|i| i.0).collect::<Vec<_>>()
    );
    assert_eq!(items[0], (1, ok));
    assert_eq!(items[1], (2, format!("bad:{}:{}", over.len(), &over[..80])));
    assert_eq!(items[2], (3, "{\"end\":1}".to_owned()));
}

/// Gives `good` bytes, then fails.
struct Failing {
    good: &'static [u8],
}

impl Read for Failing {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.good.is_empty() {
            return Err(std::io::Error::other("the disk is gone"));
        }
        let n = buf.len().min(self.good.len());
        buf[..n].copy_from_slice(&self.good[..n]);
        self.good = &self.good[n..];
        Ok(n)
    }
}

#[test]
fn a_read_error_is_an_item_and_then_the_end() {
    let input = Failing {
        good: b"{\"a\":1}\n{\"b\"",
    };
    let mut lines = LineReader::new(BufReader::with_capacity(4, input), 1024);
    let first = lines.next().unwrap().unwrap();
    assert_eq!(first, LineFrame::Line("{\"a\":1}".into()));
    let error = lines.next().unwrap().unwrap_err();
    assert_eq!(error.to_string(), "the disk is gone");
    assert!(lines.next().is_none());
}

/// What the codec gives for the whole input at once.
fn codec_frames(input: &[u8], max_line: usize) -> Vec<LineFrame> {
    let mut codec = NdjsonCodec::with_max_line(max_line);
    let mut buf = BytesMut::from(input);
    let mut frames = Vec::new();
    while let Some(frame) = codec.decode(&mut buf).unwrap() {
        frames.push(frame);
    }
    while let Some(frame) = codec.decode_eof(&mut buf).unwrap() {
        frames.push(frame);
    }
    frames
}

proptest! {
    #[test]
    fn the_same_frames_as_the_codec_with_each_line_s_number(
        parts in prop::collection::vec(
            prop_oneof![
                Just("\n".to_owned()),
                Just("\r\n".to_owned()),
                Just("  ".to_owned()),
                Just("\u{feff}".to_owned()),
                "[a-z{}\":]{0,40}",
            ],
            0..40,
        ),
        capacity in 1usize..50,
        max_line in prop_oneof![1usize..30, 80usize..200],
    ) {
        let input = parts.concat();
        let mut lines = LineReader::new(
            BufReader::with_capacity(capacity, input.as_bytes()),
            max_line,
        );
        let mut frames = Vec::new();
        while let Some(frame) = lines.next() {
            let frame = frame.unwrap();
            // The line the frame came from, by counting newlines: its text is on that line.
            let number = lines.line_number();
            let physical = input.split('\n').nth(number - 1).unwrap_or_default();
            match &frame {
                LineFrame::Line(line) => {
                    let text = String::from_utf8_lossy(line);
                    prop_assert!(physical.contains(&*text), "{number}: {text:?} {input:?}");
                }
                LineFrame::BadLine(bad) => {
                    prop_assert!(physical.len() >= bad.len, "{number}: {bad:?} {input:?}");
                    let whole_head = max_line >= DecodeError::HEAD_LEN;
                    // The head is cut at a byte count: a character cut there reads as U+FFFD.
                    let head = bad.head.strip_suffix('\u{fffd}').unwrap_or(&bad.head);
                    prop_assert!(
                        !whole_head || physical.contains(head),
                        "{number}: {bad:?} {input:?}"
                    );
                }
            }
            frames.push(frame);
        }
        let mut expected = codec_frames(input.as_bytes(), max_line);
        if max_line < DecodeError::HEAD_LEN {
            // Under a limit shorter than a head, the head is what the codec had seen when the
            // line passed the limit (perhaps past its end): it depends on how the input came.
            for frame in frames.iter_mut().chain(&mut expected) {
                if let LineFrame::BadLine(bad) = frame {
                    bad.head.clear();
                }
            }
        }
        prop_assert_eq!(frames, expected);
    }
}
