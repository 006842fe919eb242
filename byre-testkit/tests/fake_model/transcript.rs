//! Reading transcripts back: every recorded line parses and is written again byte for byte;
//! lines that are not transcript lines are refused with the reason.

use std::path::Path;

use byre_testkit::{
    read_transcript, TranscriptDir, TranscriptError, TranscriptKind, TranscriptLine,
};

fn corpus() -> Vec<std::path::PathBuf> {
    let dir = byre_testkit::corpus::transcripts_dir()
        .unwrap()
        .join("cli-2.1.328");
    let files = byre_testkit::corpus::transcript_files(&dir).unwrap();
    assert!(files.len() >= 20, "{files:?}");
    files
}

/// Whether `file` was written by the scenario recorder (`cargo xtask record`); the others, named
/// `sNN_...`, came from an earlier recorder that spaced its JSON.
fn from_the_recorder(file: &Path) -> bool {
    let name = file.file_name().unwrap().to_string_lossy();
    !(name.starts_with('s') && name[1..].starts_with(|c: char| c.is_ascii_digit()))
}

#[test]
fn recorded_transcripts_read_back_byte_for_byte() {
    let (mut exact, mut lines) = (0, 0);
    for file in corpus() {
        let text = std::fs::read_to_string(&file).unwrap();
        let parsed = read_transcript(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let original: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        assert_eq!(parsed.len(), original.len(), "{}", file.display());
        for (n, (line, original)) in parsed.iter().zip(&original).enumerate() {
            let at = format!("{}:{}", file.display(), n + 1);
            let mut value: serde_json::Value = serde_json::from_str(original).unwrap();
            // A line recorded without `t` reads as `t == 0.0`.
            value
                .as_object_mut()
                .unwrap()
                .entry("t")
                .or_insert(serde_json::json!(0.0));
            assert_eq!(line.to_value(), value, "{at}");
            if from_the_recorder(&file) {
                assert_eq!(line.to_json(), *original, "{at}");
                exact += 1;
            }
        }
        lines += parsed.len();
    }
    assert!(exact > 500 && lines > exact, "{exact} of {lines} lines");
}

#[test]
fn each_kind_of_line_parses() {
    let msg =
        TranscriptLine::parse(r#"{"dir":"recv","t":1.5,"msg":{"z":1,"type":"result"}}"#).unwrap();
    assert_eq!(
        (msg.dir, msg.t, msg.kind, msg.raw.as_str()),
        (
            TranscriptDir::Recv,
            1.5,
            TranscriptKind::Msg,
            r#"{"z":1,"type":"result"}"#
        )
    );
    assert!(msg.is_recv());
    let raw = TranscriptLine::parse(r#"{"dir":"send","t":0.25,"raw":"{oops"}"#).unwrap();
    assert_eq!((raw.kind, raw.raw.as_str()), (TranscriptKind::Raw, "{oops"));
    assert!(raw.msg().is_none());
    let note = TranscriptLine::parse(r#"{"dir":"note","note":"stdin closed"}"#).unwrap();
    assert_eq!(note.note(), Some("stdin closed"));
    assert_eq!(note.t, 0.0, "no t reads as 0");
}

#[test]
fn other_lines_are_refused_with_the_reason() {
    for (line, why) in [
        ("not json", "not a transcript line"),
        (r#"{"t":1,"msg":{}}"#, "not a transcript line"),
        (r#"{"dir":"sideways","msg":{}}"#, "unknown dir"),
        (r#"{"dir":"send"}"#, "exactly one of"),
        (r#"{"dir":"send","msg":{},"raw":"x"}"#, "exactly one of"),
        (r#"{"dir":"note","msg":{}}"#, "a note line cannot hold msg"),
        (
            r#"{"dir":"recv","note":"x"}"#,
            "a recv line cannot hold note",
        ),
        (
            r#"{"dir":"send","t":"soon","msg":{}}"#,
            "not a transcript line",
        ),
    ] {
        match TranscriptLine::parse(line) {
            Err(TranscriptError::BadLine { line: 0, reason }) => {
                assert!(reason.contains(why), "{line}: {reason}")
            }
            other => panic!("{line}: {other:?}"),
        }
    }
}

#[test]
fn a_bad_line_in_a_file_is_named_by_its_number() {
    let path =
        std::env::temp_dir().join(format!("byre-read-transcript-{}.jsonl", std::process::id()));
    std::fs::write(
        &path,
        "{\"dir\":\"note\",\"t\":0.0,\"note\":\"a\"}\n\n{\"dir\":\"send\"}\n",
    )
    .unwrap();
    let error = read_transcript(&path).unwrap_err();
    std::fs::remove_file(&path).unwrap();
    assert!(
        matches!(&error, TranscriptError::BadLine { line: 3, .. }),
        "{error}"
    );
    let missing = read_transcript(path.with_extension("missing")).unwrap_err();
    assert!(matches!(missing, TranscriptError::Io { .. }), "{missing}");
}
