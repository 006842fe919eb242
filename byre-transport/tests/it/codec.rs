//! The codec's edge cases, in the manner of tokio-util's codec tests, and chunking properties
//! over the recorded corpus.

use byre_proto::{CliMessage, DecodeErrorKind, HostMessage, UserMessage};
use byre_transport::{decode_frame, encode_line, BadLineReason, Frame, LineFrame, NdjsonCodec};
use bytes::BytesMut;
use proptest::prelude::*;
use tokio_util::codec::Decoder;

/// Feeds `input` in the given chunk sizes (cycled), then ends the input; returns every frame
/// the codec gives, as it gives them.
fn frame_chunked(codec: &mut NdjsonCodec, input: &[u8], chunks: &[usize]) -> Vec<LineFrame> {
    let mut buf = BytesMut::new();
    let mut frames = Vec::new();
    let mut at = 0;
    let mut sizes = chunks.iter().copied().cycle();
    while at < input.len() {
        let n = sizes
            .next()
            .unwrap_or(input.len())
            .max(1)
            .min(input.len() - at);
        buf.extend_from_slice(&input[at..at + n]);
        at += n;
        while let Some(frame) = codec.decode(&mut buf).expect("decode never errs") {
            frames.push(frame);
        }
    }
    while let Some(frame) = codec.decode_eof(&mut buf).expect("decode_eof never errs") {
        frames.push(frame);
    }
    frames
}

/// [`frame_chunked`], each frame then decoded.
fn decode_chunked(codec: &mut NdjsonCodec, input: &[u8], chunks: &[usize]) -> Vec<Frame> {
    frame_chunked(codec, input, chunks)
        .into_iter()
        .map(decode_frame)
        .collect()
}

fn decode_all(input: &[u8]) -> Vec<Frame> {
    decode_chunked(&mut NdjsonCodec::new(), input, &[input.len().max(1)])
}

fn kinds(frames: &[Frame]) -> Vec<String> {
    frames
        .iter()
        .map(|f| match f {
            Frame::Message { message, .. } => message.kind().to_owned(),
            Frame::BadLine(b) => format!("bad:{}:{}", b.len, short(&b.reason)),
        })
        .collect()
}

fn short(reason: &BadLineReason) -> &'static str {
    match reason {
        BadLineReason::Decode(e) => match e.kind {
            DecodeErrorKind::NotJson(_) => "json",
            DecodeErrorKind::NotObject => "object",
            DecodeErrorKind::NoType => "type",
            _ => "decode",
        },
        BadLineReason::TooLong { .. } => "long",
        _ => "other",
    }
}

const KEEP: &str = r#"{"type":"keep_alive"}"#;
const STATUS: &str =
    r#"{"type":"system","subtype":"status","status":"requesting","session_id":"s","uuid":"u"}"#;

#[test]
fn one_line_per_frame() {
    let input = format!("{KEEP}\n{STATUS}\n");
    assert_eq!(
        kinds(&decode_all(input.as_bytes())),
        ["keep_alive", "system"]
    );
}

#[test]
fn byte_by_byte() {
    let input = format!("{KEEP}\n{STATUS}\n{KEEP}");
    let frames = decode_chunked(&mut NdjsonCodec::new(), input.as_bytes(), &[1]);
    assert_eq!(kinds(&frames), ["keep_alive", "system", "keep_alive"]);
}

#[test]
fn split_inside_a_utf8_character() {
    let line = r#"{"type":"system","subtype":"notification","text":"caf\u00e9 · ☃ 😀"}"#;
    let raw = "{\"type\":\"system\",\"subtype\":\"notification\",\"text\":\"café · ☃ 😀\"}\n";
    for split in 1..raw.len() {
        let frames = decode_chunked(&mut NdjsonCodec::new(), raw.as_bytes(), &[split]);
        assert_eq!(kinds(&frames), ["system"], "split every {split} bytes");
        let Frame::Message { message: m, .. } = &frames[0] else {
            unreachable!()
        };
        assert_eq!(
            m.to_value().expect("a value"),
            serde_json::from_str::<serde_json::Value>(raw).unwrap()
        );
    }
    assert_eq!(kinds(&decode_all(line.as_bytes())), ["system"]);
}

#[test]
fn crlf_bom_and_blank_lines() {
    let input = format!("\u{feff}{KEEP}\r\n\r\n   \n\n{STATUS}\r\n\t\n");
    assert_eq!(
        kinds(&decode_all(input.as_bytes())),
        ["keep_alive", "system"]
    );
}

#[test]
fn a_bom_is_only_skipped_before_the_first_line() {
    let input = format!("{KEEP}\n\u{feff}{KEEP}\n");
    let frames = decode_all(input.as_bytes());
    assert_eq!(kinds(&frames), ["keep_alive", "bad:24:json"]);
}

#[test]
fn final_line_without_newline() {
    let frames = decode_all(KEEP.as_bytes());
    assert_eq!(kinds(&frames), ["keep_alive"]);
}

#[test]
fn eof_in_the_middle_of_a_line_reports_it() {
    let input = format!("{KEEP}\n{{\"type\":\"assis");
    let frames = decode_all(input.as_bytes());
    assert_eq!(kinds(&frames), ["keep_alive", "bad:14:json"]);
}

#[test]
fn bad_lines_are_items_not_errors() {
    let input = format!("not json\n[1,2,3]\n{{}}\n{{\"type\":5}}\n{KEEP}\n");
    let frames = decode_all(input.as_bytes());
    assert_eq!(
        kinds(&frames),
        [
            "bad:8:json",
            "bad:7:object",
            "bad:2:type",
            "bad:10:type",
            "keep_alive"
        ]
    );
    let Frame::BadLine(first) = &frames[0] else {
        unreachable!()
    };
    assert_eq!(first.head, "not json");
    // The decode error itself, as byre-proto gives it; shown as its kind.
    let BadLineReason::Decode(error) = &first.reason else {
        panic!("{first:?}")
    };
    assert_eq!((error.len, error.head.as_str()), (8, "not json"));
    assert_eq!(
        first.reason.to_string(),
        error.kind.to_string(),
        "the reason is the kind: the length and head are the bad line's"
    );
    assert_eq!(
        std::error::Error::source(&first.reason).map(|s| s.to_string()),
        Some(error.to_string())
    );
}

#[test]
fn unknown_types_are_messages() {
    let frames = decode_all(b"{\"type\":\"from_the_future\",\"x\":1}\n");
    let [Frame::Message {
        message: CliMessage::Unknown(u),
        ..
    }] = frames.as_slice()
    else {
        panic!("{frames:?}")
    };
    assert_eq!(u.get_str("type"), Some("from_the_future"));
}

#[test]
fn a_line_over_the_limit_is_skipped_and_decoding_resumes() {
    let long = format!(
        "{{\"type\":\"assistant\",\"pad\":\"{}\"}}",
        "x".repeat(5000)
    );
    let input = format!("{KEEP}\n{long}\n{STATUS}\n{KEEP}\n");
    for chunk in [1, 7, 64, 1000, 100_000] {
        let mut codec = NdjsonCodec::with_max_line(1024);
        let frames = decode_chunked(&mut codec, input.as_bytes(), &[chunk]);
        assert_eq!(
            kinds(&frames),
            [
                "keep_alive",
                &format!("bad:{}:long", long.len()),
                "system",
                "keep_alive"
            ],
            "chunks of {chunk}"
        );
        let LineFrame::BadLine(bad) = &frame_chunked(
            &mut NdjsonCodec::with_max_line(1024),
            input.as_bytes(),
            &[chunk],
        )[1] else {
            panic!("chunks of {chunk}")
        };
        assert_eq!(bad.head, long[..80], "chunks of {chunk}");
    }
}

#[test]
fn an_over_long_line_is_measured_without_its_line_end_and_bom() {
    let long = format!("{{\"type\":\"x\",\"pad\":\"{}\"}}", "x".repeat(300));
    for chunk in [1, 5, 64, 100_000] {
        let input = format!("\u{feff}{long}\r\n{long}\r\n{KEEP}\r\n{long}\r");
        let frames = decode_chunked(
            &mut NdjsonCodec::with_max_line(100),
            input.as_bytes(),
            &[chunk],
        );
        let long_bad = format!("bad:{}:long", long.len());
        assert_eq!(
            kinds(&frames),
            [&long_bad, &long_bad, "keep_alive", &long_bad],
            "chunks of {chunk}"
        );
        for frame in [&frames[0], &frames[3]] {
            let Frame::BadLine(bad) = frame else {
                unreachable!()
            };
            assert_eq!(bad.head, long[..80], "chunks of {chunk}");
        }
    }
}

#[test]
fn an_over_long_last_line_at_eof_is_reported() {
    let long = "y".repeat(3000);
    let mut codec = NdjsonCodec::with_max_line(100);
    let frames = decode_chunked(&mut codec, long.as_bytes(), &[256]);
    assert_eq!(kinds(&frames), ["bad:3000:long"]);
}

#[test]
fn skipping_keeps_memory_bounded() {
    // Feed 20 MB of one line in 64 KiB chunks: the buffer never holds more than the limit plus
    // one chunk.
    let mut codec = NdjsonCodec::with_max_line(1 << 20);
    let mut buf = BytesMut::new();
    let chunk = vec![b'z'; 64 * 1024];
    let mut peak = 0;
    for _ in 0..320 {
        buf.extend_from_slice(&chunk);
        assert!(codec.decode(&mut buf).unwrap().is_none());
        peak = peak.max(buf.len());
    }
    buf.extend_from_slice(b"\n");
    let frame = codec.decode(&mut buf).unwrap();
    assert!(peak <= (1 << 20) + chunk.len(), "peak {peak}");
    let Some(LineFrame::BadLine(bad)) = frame else {
        panic!("{frame:?}")
    };
    assert_eq!(bad.len, 320 * 64 * 1024);
    assert_eq!(bad.head, "z".repeat(80));
}

#[test]
fn a_large_buffer_is_given_back_after_its_line() {
    // A 10 MB line arrives in pieces; once it is framed, the buffer is small again.
    let mut codec = NdjsonCodec::new();
    let mut buf = BytesMut::new();
    let line = format!("{{\"type\":\"x\",\"pad\":\"{}\"}}", "p".repeat(10 << 20));
    for piece in line.as_bytes().chunks(64 * 1024) {
        buf.extend_from_slice(piece);
        assert!(codec.decode(&mut buf).unwrap().is_none());
    }
    buf.extend_from_slice(format!("\n{KEEP}\n{{\"type\"").as_bytes());
    let Some(LineFrame::Line(framed)) = codec.decode(&mut buf).unwrap() else {
        panic!()
    };
    assert_eq!(framed, line.as_bytes());
    assert!(buf.capacity() <= 64 * 1024, "{}", buf.capacity());
    assert_eq!(
        codec.decode(&mut buf).unwrap(),
        Some(LineFrame::Line(KEEP.into()))
    );
    assert_eq!(&buf[..], b"{\"type\"", "the rest is kept");
}

/// Feeds `input` to `codec` as a `FramedRead` would (reads of at most `read` bytes into the
/// buffer's free room, `reserve(1)` first), and gives the frames and the largest capacity the
/// buffer reached.
fn decode_as_framed_read(
    codec: &mut NdjsonCodec,
    input: &[u8],
    read: usize,
) -> (Vec<LineFrame>, usize) {
    let mut buf = BytesMut::with_capacity(64 * 1024);
    let (mut frames, mut largest, mut at) = (Vec::new(), 0, 0);
    while at < input.len() {
        buf.reserve(1);
        let n = read.min(buf.capacity() - buf.len()).min(input.len() - at);
        buf.extend_from_slice(&input[at..at + n]);
        at += n;
        largest = largest.max(buf.capacity());
        while let Some(frame) = codec.decode(&mut buf).unwrap() {
            frames.push(frame);
        }
    }
    while let Some(frame) = codec.decode_eof(&mut buf).unwrap() {
        frames.push(frame);
    }
    (frames, largest)
}

#[test]
fn a_long_line_is_framed_whole_without_the_buffer_growing_with_it() {
    let long = format!(r#"{{"type":"x","pad":"{}"}}"#, "p".repeat(5 << 20));
    for (ending, last) in [("\n", "\n"), ("\r\n", ""), ("\n", "")] {
        for read in [4096, 64 * 1024, 3 << 20] {
            let input = format!("\u{feff}{long}{ending}{KEEP}\n{long}{last}");
            let mut codec = NdjsonCodec::new();
            let (frames, largest) = decode_as_framed_read(&mut codec, input.as_bytes(), read);
            assert_eq!(
                frames,
                [
                    LineFrame::Line(long.clone().into()),
                    LineFrame::Line(KEEP.into()),
                    LineFrame::Line(long.clone().into()),
                ],
                "read {read}, ending {ending:?}"
            );
            assert!(largest <= 4 << 20, "the buffer reached {largest} bytes");
        }
    }
}

#[test]
fn skipping_a_line_costs_the_limit_not_more() {
    // 20 MB under a 4 MiB limit: the buffer and the pieces stay within the limit and a piece.
    let limit = 4 << 20;
    let input = format!("{}\n{KEEP}\n", "x".repeat(20 << 20));
    let mut codec = NdjsonCodec::with_max_line(limit);
    let (frames, largest) = decode_as_framed_read(&mut codec, input.as_bytes(), 64 * 1024);
    let frames: Vec<Frame> = frames
        .into_iter()
        .map(byre_transport::decode_frame)
        .collect();
    assert_eq!(
        kinds(&frames),
        [format!("bad:{}:long", 20 << 20), "keep_alive".into()]
    );
    assert!(largest <= 2 << 20, "the buffer reached {largest} bytes");
}

#[test]
fn many_tiny_lines() {
    let input = format!("{KEEP}\n").repeat(10_000);
    let frames = decode_chunked(&mut NdjsonCodec::new(), input.as_bytes(), &[4096]);
    assert_eq!(frames.len(), 10_000);
}

#[test]
fn a_line_exactly_at_the_limit_is_kept() {
    let mut codec = NdjsonCodec::with_max_line(KEEP.len());
    let frames = decode_chunked(&mut codec, format!("{KEEP}\n{KEEP}x\n").as_bytes(), &[3]);
    assert_eq!(
        kinds(&frames),
        ["keep_alive", &format!("bad:{}:long", KEEP.len() + 1)]
    );
}

#[test]
fn encoding_writes_exactly_one_line() {
    let prompt = HostMessage::User(Box::new(UserMessage::prompt(
        "two\nlines and a \u{2028} separator",
    )));
    let line = encode_line(&prompt).unwrap();
    assert_eq!(line.iter().filter(|&&b| b == b'\n').count(), 1);
    assert_eq!(line.last(), Some(&b'\n'));
    let mut buf = BytesMut::from(&line[..]);
    let Some(LineFrame::Line(framed)) = NdjsonCodec::new().decode(&mut buf).unwrap() else {
        panic!()
    };
    assert_eq!(framed, line[..line.len() - 1]);
    assert_eq!(HostMessage::from_slice(&framed).unwrap(), prompt);
}

/// Every `recv` message of the corpus as one line, as the CLI wrote it.
fn corpus() -> Vec<u8> {
    let root = byre_testkit::corpus::transcripts_dir().unwrap();
    let files = byre_testkit::corpus::transcript_files(&root).unwrap();
    let mut out = Vec::new();
    for file in files {
        for line in byre_transport::read_transcript(file).unwrap() {
            if line.is_recv() {
                out.extend_from_slice(line.raw.as_bytes());
                out.push(b'\n');
            }
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn any_chunking_of_the_corpus_gives_the_same_frames(
        chunks in proptest::collection::vec(1usize..5000, 1..20)
    ) {
        let input = corpus();
        let whole = decode_all(&input);
        let pieces = decode_chunked(&mut NdjsonCodec::new(), &input, &chunks);
        prop_assert_eq!(whole.len(), input.iter().filter(|&&b| b == b'\n').count());
        let all = whole.iter().all(|f| matches!(f, Frame::Message { .. }));
        prop_assert!(all);
        prop_assert_eq!(pieces, whole);
    }
}

#[test]
fn lines_are_the_exact_bytes_without_line_ends() {
    let mut codec = NdjsonCodec::new();
    let mut buf = BytesMut::from(format!("\u{feff}{KEEP}\r\n\n{STATUS}\nnot json").as_bytes());
    let lines: Vec<LineFrame> =
        std::iter::from_fn(|| codec.decode_eof(&mut buf).unwrap()).collect();
    assert_eq!(
        lines,
        [
            LineFrame::Line(KEEP.into()),
            LineFrame::Line(STATUS.into()),
            LineFrame::Line("not json".into()),
        ]
    );
}
