//! The recorded transcripts (`testdata/transcripts/**/*.jsonl`) for byre-proto's own tests and
//! its decode bench: the one walk of the corpus and the one reader of its line format in this
//! crate, included by the unit tests, the integration tests and the bench.
//!
//! byre-proto sits below byre-transport, whose `TranscriptReader` reads the same format for
//! every crate above it, and below byre-testkit, whose `corpus::transcript_files` walks the
//! corpus for them; this file keeps only what byre-proto's tests need: each line's direction
//! and the exact bytes of its `msg` (key order matters to the decoder).

// Each includer uses part of this file: the bench and the unit tests only `recorded_lines`.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// What one transcript line holds.
#[derive(Debug, Clone)]
pub(crate) enum Body {
    /// A message, as the bytes of its JSON text in the transcript.
    Msg(Vec<u8>),
    /// A line the host wrote verbatim (deliberately invalid input).
    Raw(String),
    /// Anything else (`note` lines).
    Other,
}

/// One transcript line.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    /// 1-based line number in the file.
    pub(crate) line_no: usize,
    /// `send`, `recv`, `note`, ...
    pub(crate) dir: String,
    /// What the line holds.
    pub(crate) body: Body,
}

/// The corpus root: `testdata/transcripts` of the workspace.
pub(crate) fn corpus_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/transcripts")
}

/// Every `*.jsonl` file under the corpus root, searched recursively, sorted by path.
pub(crate) fn corpus_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut dirs = vec![corpus_root()];
    while let Some(dir) = dirs.pop() {
        let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        for entry in entries {
            let path = entry.expect("a readable folder entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "jsonl") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// Reads one transcript: one `{"dir":..,"t":..,"msg":{..}}` (or `"raw"`, or `"note"`) per
/// line; blank lines are skipped but counted.
pub(crate) fn read_transcript(path: &Path) -> Vec<Entry> {
    #[derive(serde::Deserialize)]
    struct Line<'a> {
        #[serde(default)]
        dir: String,
        #[serde(borrow)]
        msg: Option<&'a serde_json::value::RawValue>,
        raw: Option<String>,
    }
    let text = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.split(|&b| b == b'\n')
        .enumerate()
        .filter(|(_, line)| !line.iter().all(u8::is_ascii_whitespace))
        .map(|(i, line)| {
            let line: Line<'_> = serde_json::from_slice(line).unwrap_or_else(|e| {
                panic!("{}:{}: not a transcript line: {e}", path.display(), i + 1)
            });
            let body = match (line.msg, line.raw) {
                (Some(msg), _) => Body::Msg(msg.get().as_bytes().to_vec()),
                (None, Some(raw)) => Body::Raw(raw),
                (None, None) => Body::Other,
            };
            Entry {
                line_no: i + 1,
                dir: line.dir,
                body,
            }
        })
        .collect()
}

/// Every recorded message line, as the CLI or host wrote it (its key order kept), with whether
/// the CLI wrote it (`recv`).
pub(crate) fn recorded_lines() -> Vec<(bool, String)> {
    corpus_files()
        .iter()
        .flat_map(|path| read_transcript(path))
        .filter_map(|entry| match entry.body {
            Body::Msg(bytes) => Some((
                entry.dir == "recv",
                String::from_utf8(bytes).expect("a transcript is UTF-8"),
            )),
            _ => None,
        })
        .collect()
}
