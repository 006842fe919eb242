//! The transcript module: the writer (exact lines with their time, stream events left out or
//! kept, raw lines and notes, email redaction, flushing) and the reader (exact message text,
//! decoded once from it; line numbers in errors; over-long lines reported and read past).

use std::io::Write;
use std::sync::{Arc, Mutex};

use byre_proto::CliMessage;
use byre_proto::{AnyMessage, HostMessage};
use byre_transport::{
    read_transcript, transcript_cli_version, TranscriptDir, TranscriptError, TranscriptKind,
    TranscriptLine, TranscriptReader, TranscriptWriter,
};

/// A writer whose bytes the test can read while the transcript writer still holds it.
#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Shared {
    fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
    }
}

/// A transcript line without its `"t":<seconds>` (checked to be a number of seconds).
fn untimed(line: &str) -> String {
    let at = line
        .find(",\"t\":")
        .unwrap_or_else(|| panic!("no t: {line}"));
    let value_at = at + ",\"t\":".len();
    let end = value_at
        + line[value_at..]
            .find(',')
            .unwrap_or_else(|| panic!("nothing after t: {line}"));
    let t: f64 = line[value_at..end]
        .parse()
        .unwrap_or_else(|e| panic!("t is not a number ({e}): {line}"));
    assert!((0.0..60.0).contains(&t), "{line}");
    format!("{}{}", &line[..at], &line[end..])
}

fn recv(writer: &mut TranscriptWriter, line: &str) {
    let message = CliMessage::from_slice(line.as_bytes()).unwrap();
    writer.record_recv(line.as_bytes(), &message).unwrap();
}

const INIT_ANSWER: &str = r#"{"type":"control_response","response":{"subtype":"success","request_id":"req_1","response":{"account":{"email":"dev@example.com","tokenSource":"none"},"pid":1}}}"#;

#[test]
fn lines_are_kept_exactly_without_stream_events() {
    let out = Shared::default();
    let mut writer = TranscriptWriter::new(out.clone());
    let send = r#"{"type":"user","message":{"role":"user","content":"hi"},"parent_tool_use_id":null,"session_id":""}"#;
    writer.record_send(format!("{send}\n").as_bytes()).unwrap();
    recv(
        &mut writer,
        r#"{"type":"stream_event","event":{"type":"message_stop"},"session_id":"s"}"#,
    );
    let result = r#"{"subtype":"success","is_error":false,"type":"result","session_id":"s"}"#;
    recv(&mut writer, result);
    // Flushed at the result, without closing.
    let text = out.text();
    let lines: Vec<String> = text.lines().map(untimed).collect();
    assert_eq!(
        lines,
        [
            format!(r#"{{"dir":"send","msg":{send}}}"#),
            format!(r#"{{"dir":"recv","msg":{result}}}"#),
        ]
    );
    drop(writer);
}

#[test]
fn stream_events_are_kept_when_asked() {
    let out = Shared::default();
    let mut writer = TranscriptWriter::new(out.clone()).keep_stream_events(true);
    let event = r#"{"type":"stream_event","event":{"type":"message_stop"},"session_id":"s"}"#;
    recv(&mut writer, event);
    writer.close().unwrap();
    assert_eq!(
        untimed(out.text().trim_end()),
        format!(r#"{{"dir":"recv","msg":{event}}}"#)
    );
}

#[test]
fn raw_lines_and_notes_are_strings_after_the_time() {
    let out = Shared::default();
    let mut writer = TranscriptWriter::new(out.clone());
    // JSON written as it is stays a raw string: a replay must not take it for a message.
    writer
        .record_raw(br#"{"type":"control_request","request_id":"x"}"#)
        .unwrap();
    writer.record_raw(b"{not json\n").unwrap();
    // A note is flushed at once.
    writer.record_note("stdin closed").unwrap();
    let text = out.text();
    let lines: Vec<String> = text.lines().map(untimed).collect();
    assert_eq!(
        lines,
        [
            r#"{"dir":"send","raw":"{\"type\":\"control_request\",\"request_id\":\"x\"}"}"#,
            r#"{"dir":"send","raw":"{not json"}"#,
            r#"{"dir":"note","note":"stdin closed"}"#,
        ]
    );
    drop(writer);
}

#[test]
fn t_counts_seconds_since_the_writer_was_created() {
    let out = Shared::default();
    let mut writer = TranscriptWriter::new(out.clone());
    writer.record_note("first").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(30));
    writer.record_note("second").unwrap();
    let times: Vec<f64> = out
        .text()
        .lines()
        .map(|l| {
            let entry: serde_json::Value = serde_json::from_str(l).unwrap();
            entry["t"].as_f64().expect("a number t")
        })
        .collect();
    assert!(times[0] >= 0.0, "{times:?}");
    // The thread slept at least 30 ms between them (rounding may take off one).
    assert!(times[1] - times[0] >= 0.029, "{times:?}");
    // To the millisecond.
    for t in &times {
        assert_eq!((t * 1000.0).round() / 1000.0, *t);
    }
}

#[test]
fn the_account_email_is_redacted_everywhere_after_initialize() {
    let out = Shared::default();
    let mut writer = TranscriptWriter::new(out.clone());
    recv(&mut writer, INIT_ANSWER);
    writer
        .record_send(br#"{"type":"user","message":{"role":"user","content":"mail dev@example.com please"},"session_id":""}"#)
        .unwrap();
    recv(
        &mut writer,
        r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"sent to dev@example.com"}]},"session_id":"s"}"#,
    );
    writer
        .record_note("stderr mentions dev@example.com")
        .unwrap();
    writer.close().unwrap();
    let text = out.text();
    assert!(!text.contains("dev@example.com"), "{text}");
    assert_eq!(text.matches("[redacted]").count(), 4, "{text}");
    for line in text.lines() {
        serde_json::from_str::<serde_json::Value>(line).expect("every transcript line is JSON");
    }
}

#[test]
fn the_email_in_any_case_or_escape_and_secrets_however_escaped_are_redacted() {
    let out = Shared::default();
    let mut writer = TranscriptWriter::new(out.clone());
    writer.secret(r#"sk-"key\1"#);
    // The settings' `env` holds a value with a quote and a backslash.
    writer
        .record_send(
            concat!(
                r#"{"type":"control_request","request_id":"r","request":{"subtype":"initialize","#,
                r#""settings":{"env":{"TOKEN":"to\"k\\en"}}}}"#
            )
            .as_bytes(),
        )
        .unwrap();
    recv(&mut writer, INIT_ANSWER);
    // The email in capitals, with `@` escaped, and all of it escaped; the token inside a JSON
    // document in a string (escaped twice); the named secret escaped once.
    recv(
        &mut writer,
        concat!(
            r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","#,
            r#""tool_use_id":"t","content":"DEV@EXAMPLE.COM dev\u0040example.com "#,
            r#"\u0064\u0065\u0076\u0040\u0065\u0078\u0061\u006d\u0070\u006c\u0065\u002e"#,
            r#"\u0063\u006f\u006d {\"env\":\"to\\\"k\\\\en\"} sk-\"key\\1"}]},"#,
            r#""session_id":"s"}"#
        ),
    );
    writer
        .record_note(r#"argv: ["--settings","{\"env\":{\"TOKEN\":\"to\\\"k\\\\en\"}}"]"#)
        .unwrap();
    writer.close().unwrap();
    let text = out.text();
    for leaked in ["DEV@", "dev\\u0040", "\\u0064\\u0065", "k\\\\", "sk-"] {
        assert!(!text.contains(leaked), "{leaked} in {text}");
    }
    // The settings line (1), the answer (1), the tool result (3 emails, the token, the key),
    // the note (1).
    assert_eq!(text.matches("[redacted]").count(), 8, "{text}");
    for line in text.lines() {
        serde_json::from_str::<serde_json::Value>(line).expect("every transcript line is JSON");
    }
}

#[test]
fn a_bad_line_is_kept_as_raw_text() {
    let out = Shared::default();
    let mut writer = TranscriptWriter::new(out.clone());
    writer.record_send(b"this is not json").unwrap();
    writer.close().unwrap();
    assert_eq!(
        untimed(&out.text()),
        "{\"dir\":\"send\",\"raw\":\"this is not json\"}\n"
    );
}

#[test]
fn the_cli_version_is_read_from_system_init() {
    let path = std::env::temp_dir().join(format!("byre-transcript-{}.jsonl", std::process::id()));
    let mut writer = TranscriptWriter::create(&path).unwrap();
    recv(&mut writer, INIT_ANSWER);
    recv(
        &mut writer,
        r#"{"type":"system","subtype":"init","session_id":"s","claude_code_version":"2.1.328"}"#,
    );
    writer.close().unwrap();
    assert_eq!(
        transcript_cli_version(&path).unwrap().as_deref(),
        Some("2.1.328")
    );
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn written_transcripts_replay_as_the_recorded_ones() {
    // The writer's output is the seed's format: every line of a recorded transcript, fed
    // through it, comes out with the same message (stream events left out).
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/transcripts/cli-2.1.328/text_two_turns.jsonl");
    let out = Shared::default();
    let mut writer = TranscriptWriter::new(out.clone());
    let mut expected = Vec::new();
    for line in read_transcript(path).unwrap() {
        match line.decode() {
            Some(Ok(AnyMessage::Send(_))) => writer.record_send(line.raw.as_bytes()).unwrap(),
            Some(Ok(AnyMessage::Recv(message))) => {
                writer.record_recv(line.raw.as_bytes(), &message).unwrap();
                if matches!(message, CliMessage::StreamEvent(_)) {
                    continue;
                }
            }
            Some(Err(e)) => panic!("{e}"),
            None => continue,
        }
        expected.push((line.dir, line.raw));
    }
    writer.close().unwrap();
    let written: Vec<_> = out
        .text()
        .lines()
        .map(|l| {
            let line = TranscriptLine::parse(l).unwrap();
            (line.dir, line.raw)
        })
        .collect();
    assert_eq!(written, expected);
}

#[test]
fn written_lines_read_back_as_the_recorders_lines() {
    // With stream events kept, the writer's file is the recorder's format: each line reads
    // back (byre-testkit's reader) with the same direction, kind and exact text.
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/transcripts/cli-2.1.328/bash_tool.jsonl");
    let recorded = read_transcript(&path).unwrap();
    let out = Shared::default();
    let mut writer = TranscriptWriter::new(out.clone()).keep_stream_events(true);
    for line in &recorded {
        match (line.dir, line.kind) {
            (TranscriptDir::Send, TranscriptKind::Msg) => {
                writer.record_send(line.raw.as_bytes()).unwrap()
            }
            (TranscriptDir::Send, _) => writer.record_raw(line.raw.as_bytes()).unwrap(),
            (TranscriptDir::Recv, _) => recv(&mut writer, &line.raw),
            (TranscriptDir::Note, _) => writer.record_note(&line.raw).unwrap(),
        }
    }
    writer.close().unwrap();
    let written: Vec<TranscriptLine> = out
        .text()
        .lines()
        .map(|l| TranscriptLine::parse(l).unwrap())
        .collect();
    assert_eq!(written.len(), recorded.len());
    assert!(recorded.iter().any(|l| l.raw.contains("\"stream_event\"")));
    for (written, recorded) in written.iter().zip(&recorded) {
        assert_eq!(
            (written.dir, written.kind, &written.raw),
            (recorded.dir, recorded.kind, &recorded.raw)
        );
        assert_eq!(
            written
                .to_json()
                .replacen(&format!("\"t\":{}", serde_json::json!(written.t)), "", 1),
            recorded
                .to_json()
                .replacen(&format!("\"t\":{}", serde_json::json!(recorded.t)), "", 1)
        );
    }
}

#[test]
fn the_reader_keeps_each_message_as_its_text_and_decodes_it_from_there() {
    let send = r#"{"type":"user","message":{"role":"user","content":"hi"},"session_id":""}"#;
    let recv = r#"{"subtype":"success","is_error":false,"type":"result","session_id":"s"}"#;
    let text = format!(
        "{{\"dir\":\"note\",\"t\":0.0,\"note\":\"argv: x\"}}\r\n\n\
         {{\"dir\":\"send\",\"t\":0.001,\"msg\":{send}}}\n\
         {{\"dir\":\"recv\",\"t\":0.5,\"msg\":{recv}}}\n\
         {{\"dir\":\"send\",\"t\":0.6,\"raw\":\"{{oops\"}}\n"
    );
    let lines: Vec<TranscriptLine> = TranscriptReader::new(text.as_bytes())
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[0].note(), Some("argv: x"));
    assert_eq!(lines[1].msg_json(), Some(send));
    assert_eq!(
        lines[2].msg_json(),
        Some(recv),
        "the CLI's key order is kept"
    );
    assert!(matches!(
        lines[1].decode(),
        Some(Ok(AnyMessage::Send(HostMessage::User(_))))
    ));
    assert!(lines[1].decode_recv().is_none());
    assert!(matches!(
        lines[2].decode_recv(),
        Some(Ok(CliMessage::Result(_)))
    ));
    assert!(lines[3].decode().is_none() && lines[3].msg_json().is_none());
    assert_eq!(lines[3].raw, "{oops");
    // Written again as they were read.
    for (line, original) in lines.iter().zip(text.lines().filter(|l| !l.is_empty())) {
        assert_eq!(line.to_json(), original);
    }
}

#[test]
fn the_reader_names_the_line_it_cannot_read() {
    let text = "{\"dir\":\"note\",\"note\":\"a\"}\n\n{\"dir\":\"send\"}\n{\"dir\":\"note\",\"note\":\"b\"}\n";
    let read: Vec<_> = TranscriptReader::new(text.as_bytes()).collect();
    assert_eq!(read.len(), 3);
    assert!(
        matches!(&read[1], Err(TranscriptError::BadLine { line: 3, reason }) if reason.contains("exactly one of")),
        "{read:?}"
    );
    assert_eq!(
        read[2].as_ref().unwrap().note(),
        Some("b"),
        "reading goes on"
    );
    let missing = TranscriptReader::open("/nonexistent/transcript.jsonl").unwrap_err();
    assert!(
        matches!(&missing, TranscriptError::Io { path, .. } if path.ends_with("transcript.jsonl")),
        "{missing}"
    );
}

#[test]
fn an_over_long_line_is_reported_with_its_length_and_head_and_reading_goes_on() {
    let send = r#"{"type":"user","message":{"role":"user","content":"hi"},"session_id":""}"#;
    let long = format!(
        "{{\"dir\":\"recv\",\"t\":0.2,\"msg\":{{\"type\":\"assistant\",\"pad\":\"{}\"}}}}",
        "x".repeat(5000)
    );
    let text = format!(
        "{{\"dir\":\"note\",\"note\":\"a\"}}\n\n{long}\n{{\"dir\":\"send\",\"t\":0.3,\"msg\":{send}}}\n"
    );
    let mut reader = TranscriptReader::new(text.as_bytes()).max_line(1024);
    let mut read = Vec::new();
    while let Some(item) = reader.next() {
        read.push((reader.line_number(), item));
    }
    assert_eq!(read.len(), 3, "{read:?}");
    let (3, Err(TranscriptError::TooLong { line: 3, bad })) = &read[1] else {
        panic!("{read:?}")
    };
    assert_eq!(bad.len, long.len());
    assert_eq!(bad.head, long[..80]);
    assert_eq!(
        bad.reason,
        byre_transport::BadLineReason::TooLong { max: 1024 }
    );
    assert_eq!(
        read[1].1.as_ref().unwrap_err().to_string(),
        format!(
            "line 3: bad line ({} bytes): longer than the 1024-byte limit; it starts {:?}",
            long.len(),
            &long[..80]
        )
    );
    assert_eq!(read[2].0, 4);
    assert_eq!(
        read[2].1.as_ref().unwrap().msg_json(),
        Some(send),
        "reading goes on"
    );
    // The default limit takes the line.
    let lines: Vec<TranscriptLine> = TranscriptReader::new(text.as_bytes())
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(lines.len(), 3);
}

#[test]
fn a_message_decoded_straight_from_its_line_is_the_one_decode_gives() {
    let root = byre_testkit::corpus::transcripts_dir().unwrap();
    let files = byre_testkit::corpus::transcript_files(&root).unwrap();
    assert!(files.len() > 20, "{files:?}");
    let mut messages = 0;
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for raw in text.lines().filter(|l| !l.trim().is_empty()) {
            let line = TranscriptLine::parse(raw).unwrap();
            messages += usize::from(line.direction().is_some());
            let decoded = line.decode().map(|m| m.map_err(|e| e.to_string()));
            let straight = TranscriptLine::decode_bytes(&raw.to_owned().into()).unwrap();
            assert_eq!(straight.as_ref().map(|s| s.0), line.direction());
            let straight = straight.map(|(_, m)| m.map_err(|e| e.to_string()));
            assert_eq!(straight, decoded, "{}: {raw}", file.display());
        }
    }
    assert!(messages > 1000, "{messages}");
    let not_transcript = bytes::Bytes::from_static(br#"{"type":"keep_alive"}"#);
    assert!(TranscriptLine::decode_bytes(&not_transcript).is_err());
}

#[test]
fn an_answer_with_an_email_that_no_value_can_hold_is_recorded() {
    let out = Shared::default();
    let mut writer = TranscriptWriter::new(out.clone());
    let answer = r#"{"type":"control_response","response":{"subtype":"success","request_id":"r","response":{"account":{"email":"dev@example.com"},"cut":"\ud800"}}}"#;
    recv(&mut writer, answer);
    writer.flush().unwrap();
    assert!(out.text().contains(r#""cut":"\ud800""#), "{}", out.text());
}

/// A writer that takes `room` bytes, then fails as a full disk does.
struct FullAfter {
    room: usize,
    taken: Shared,
}

impl Write for FullAfter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.room == 0 {
            return Err(std::io::Error::from(std::io::ErrorKind::StorageFull));
        }
        let n = buf.len().min(self.room);
        self.room -= n;
        self.taken.write(&buf[..n])
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn the_first_failed_write_stops_the_writer_and_later_lines_are_counted() {
    let taken = Shared::default();
    let mut writer = TranscriptWriter::new(FullAfter {
        room: 100,
        taken: taken.clone(),
    });
    // Each note is flushed: the first fits, the second is cut by the full disk.
    writer.record_note("the first note, whole").unwrap();
    assert!(writer.failure().is_none());
    let long = "x".repeat(200);
    let error = writer.record_note(&long).unwrap_err();
    assert_eq!(error.kind(), std::io::ErrorKind::StorageFull);
    assert_eq!(
        writer.failure().map(|e| e.kind()),
        Some(std::io::ErrorKind::StorageFull)
    );
    assert_eq!(writer.lines_lost(), 1);
    // Nothing more is tried: each later line is counted, and fails with the first error.
    let send = r#"{"type":"user","message":{"role":"user","content":"hi"}}"#;
    let later = writer.record_send(send.as_bytes()).unwrap_err();
    assert_eq!(later.kind(), std::io::ErrorKind::StorageFull);
    writer.record_note("and another").unwrap_err();
    assert_eq!(writer.lines_lost(), 3);
    assert!(writer.flush().is_err());
    assert_eq!(taken.text().len(), 100, "nothing written after the failure");
    assert_eq!(taken.text().lines().count(), 2);
}

#[test]
fn lines_buffered_when_the_write_fails_are_counted_as_lost() {
    let taken = Shared::default();
    let mut writer = TranscriptWriter::new(FullAfter {
        room: 0,
        taken: taken.clone(),
    });
    // Sent lines wait in the buffer; the flush finds the disk full.
    for n in 0..5 {
        let line = format!(r#"{{"type":"user","n":{n}}}"#);
        writer.record_send(line.as_bytes()).unwrap();
    }
    assert!(writer.flush().is_err());
    assert_eq!(writer.lines_lost(), 5);
    assert_eq!(taken.text(), "");
}

#[cfg(target_os = "linux")]
#[test]
fn a_transcript_on_a_full_device_reports_its_lost_lines() {
    let mut writer = TranscriptWriter::create("/dev/full").unwrap();
    let error = writer.record_note("a note").unwrap_err();
    assert_eq!(error.kind(), std::io::ErrorKind::StorageFull, "{error}");
    assert_eq!(writer.failure().and_then(|e| e.raw_os_error()), Some(28));
    assert_eq!(writer.lines_lost(), 1);
    assert!(writer.close().is_err());
}

#[cfg(unix)]
#[test]
fn a_transcript_file_is_private_to_its_owner() {
    use std::os::unix::fs::PermissionsExt;
    let dir = std::env::temp_dir().join(format!("byre-transcript-mode-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("new.jsonl");
    let _ = std::fs::remove_file(&path);
    TranscriptWriter::create(&path).unwrap().close().unwrap();
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "{mode:o}");
    // A file that was there, readable by all, is made private as it is truncated.
    let old = dir.join("old.jsonl");
    std::fs::write(&old, "old\n").unwrap();
    std::fs::set_permissions(&old, std::fs::Permissions::from_mode(0o644)).unwrap();
    TranscriptWriter::create(&old).unwrap().close().unwrap();
    let mode = std::fs::metadata(&old).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "{mode:o}");
    assert_eq!(std::fs::read(&old).unwrap(), b"");
    std::fs::remove_dir_all(&dir).unwrap();
}
