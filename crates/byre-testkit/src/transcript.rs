//! Transcripts: one JSON object per line, in the order things happened, `t` being seconds
//! since the process started:
//!
//! ```text
//! {"dir":"note","t":0.0,"note":"argv: [...]"}
//! {"dir":"send","t":0.001,"msg":{...}}
//! {"dir":"recv","t":0.43,"msg":{...}}
//! {"dir":"send","t":0.5,"raw":"{not json"}
//! ```
//!
//! The `msg` of a `recv` line is the line the CLI wrote, byte for byte (its own key order:
//! `type` is about the 19th key of a `result`), and the `msg` of a `send` line is exactly what
//! the host wrote. Each [`TranscriptLine`] keeps that text; [`TranscriptLine::msg`] parses it
//! when a test wants a [`serde_json::Value`]. byre-session's driver (with a transcript file)
//! writes this format; [`TranscriptLine::parse`] and [`read_transcript`] read it back.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};

/// Which way a transcript line went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TranscriptDir {
    /// Written on the CLI's stdin.
    Send,
    /// Read from the CLI's stdout.
    Recv,
    /// A remark of the host.
    Note,
}

impl TranscriptDir {
    /// The name in transcript files: `send`, `recv` or `note`.
    pub fn as_str(self) -> &'static str {
        match self {
            TranscriptDir::Send => "send",
            TranscriptDir::Recv => "recv",
            TranscriptDir::Note => "note",
        }
    }
}

impl fmt::Display for TranscriptDir {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a transcript line holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TranscriptKind {
    /// A message: `raw` is its exact JSON text (`"msg"` in the file).
    Msg,
    /// Bytes written as they are by [`Claude::send_raw`](byre_session::Claude::send_raw)
    /// (`"raw"` in the file; lossy UTF-8).
    Raw,
    /// A remark (`"note"` in the file).
    Note,
}

/// One line of a transcript.
///
/// A message keeps the exact text that went over the pipe, so the file shows the CLI's own
/// key order. In the file it is written as `{"dir":..,"t":..,"msg":<the exact text>}` (see
/// [`TranscriptLine::to_json`]).
#[derive(Debug, Clone, PartialEq)]
pub struct TranscriptLine {
    /// Which way it went.
    pub dir: TranscriptDir,
    /// Seconds since the host started the process, to the millisecond.
    pub t: f64,
    /// What the line holds.
    pub kind: TranscriptKind,
    /// The text: a message's exact JSON line (without its newline), the bytes of a raw
    /// line, or the note.
    pub raw: String,
}

impl TranscriptLine {
    /// The message, parsed (object keys come out sorted); `None` for notes and raw lines.
    pub fn msg(&self) -> Option<Value> {
        match self.kind {
            TranscriptKind::Msg => serde_json::from_str(&self.raw).ok(),
            TranscriptKind::Raw | TranscriptKind::Note => None,
        }
    }

    /// The note's text, for notes.
    pub fn note(&self) -> Option<&str> {
        (self.kind == TranscriptKind::Note).then_some(self.raw.as_str())
    }

    /// Whether this is a message read from the CLI.
    pub fn is_recv(&self) -> bool {
        self.dir == TranscriptDir::Recv && self.kind == TranscriptKind::Msg
    }

    /// Whether this is a message written to the CLI.
    pub fn is_send(&self) -> bool {
        self.dir == TranscriptDir::Send && self.kind == TranscriptKind::Msg
    }

    /// The line as it is written to a transcript file (no newline): `dir`, `t`, then `msg`
    /// holding the exact message text, or `raw`/`note` as a JSON string.
    pub fn to_json(&self) -> String {
        let t = serde_json::to_string(&self.t).unwrap_or_else(|_| "0.0".to_owned());
        let mut out = String::with_capacity(self.raw.len() + 40);
        out.push_str("{\"dir\":\"");
        out.push_str(self.dir.as_str());
        out.push_str("\",\"t\":");
        out.push_str(&t);
        match self.kind {
            TranscriptKind::Msg => {
                out.push_str(",\"msg\":");
                out.push_str(&self.raw);
            }
            TranscriptKind::Raw => {
                out.push_str(",\"raw\":");
                out.push_str(&Value::from(self.raw.as_str()).to_string());
            }
            TranscriptKind::Note => {
                out.push_str(",\"note\":");
                out.push_str(&Value::from(self.raw.as_str()).to_string());
            }
        }
        out.push('}');
        out
    }

    /// The file line parsed as a [`Value`] (`dir`, `t`, and `msg`, `raw` or `note`), for
    /// tests that index into it; object keys come out sorted.
    pub fn to_value(&self) -> Value {
        let mut value = json!({ "dir": self.dir.as_str(), "t": self.t });
        match self.kind {
            TranscriptKind::Msg => value["msg"] = self.msg().unwrap_or(Value::Null),
            TranscriptKind::Raw => value["raw"] = Value::from(self.raw.as_str()),
            TranscriptKind::Note => value["note"] = Value::from(self.raw.as_str()),
        }
        value
    }
}

impl fmt::Display for TranscriptLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_json())
    }
}

/// Why a transcript could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TranscriptError {
    /// The file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
    /// A line is not a transcript line.
    #[error("line {line}: {reason}")]
    BadLine {
        /// Its number, from 1 (0 for a line parsed on its own).
        line: usize,
        /// What is wrong with it.
        reason: String,
    },
}

/// One line of a transcript file, as its keys say.
#[derive(Deserialize)]
struct Entry<'a> {
    dir: String,
    #[serde(default)]
    t: Option<f64>,
    #[serde(borrow, default)]
    msg: Option<&'a RawValue>,
    #[serde(default)]
    raw: Option<String>,
    #[serde(default)]
    note: Option<String>,
}

impl TranscriptLine {
    /// Reads one line of a transcript file (without its newline): the inverse of
    /// [`TranscriptLine::to_json`]. A `msg` keeps its exact text. A line without `t` (an
    /// older transcript) gets `t == 0.0`; other keys are ignored.
    pub fn parse(line: &str) -> Result<TranscriptLine, TranscriptError> {
        let bad = |reason: String| TranscriptError::BadLine { line: 0, reason };
        let entry: Entry<'_> =
            serde_json::from_str(line).map_err(|e| bad(format!("not a transcript line: {e}")))?;
        let dir = match entry.dir.as_str() {
            "send" => TranscriptDir::Send,
            "recv" => TranscriptDir::Recv,
            "note" => TranscriptDir::Note,
            other => return Err(bad(format!("unknown dir {other:?}"))),
        };
        let (kind, raw) = match (entry.msg, entry.raw, entry.note) {
            (Some(msg), None, None) => (TranscriptKind::Msg, msg.get().to_owned()),
            (None, Some(raw), None) => (TranscriptKind::Raw, raw),
            (None, None, Some(note)) => (TranscriptKind::Note, note),
            _ => {
                return Err(bad(
                    "a transcript line holds exactly one of msg, raw and note".into(),
                ))
            }
        };
        if (dir == TranscriptDir::Note) != (kind == TranscriptKind::Note) {
            return Err(bad(format!(
                "a {} line cannot hold {}",
                dir.as_str(),
                match kind {
                    TranscriptKind::Msg => "msg",
                    TranscriptKind::Raw => "raw",
                    TranscriptKind::Note => "note",
                }
            )));
        }
        Ok(TranscriptLine {
            dir,
            t: entry.t.unwrap_or(0.0),
            kind,
            raw,
        })
    }
}

/// Reads a transcript file: every non-blank line, parsed with [`TranscriptLine::parse`].
pub fn read_transcript(path: impl AsRef<Path>) -> Result<Vec<TranscriptLine>, TranscriptError> {
    let path = path.as_ref();
    let text = std::fs::read_to_string(path).map_err(|source| TranscriptError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(n, l)| {
            TranscriptLine::parse(l).map_err(|e| match e {
                TranscriptError::BadLine { reason, .. } => TranscriptError::BadLine {
                    line: n + 1,
                    reason,
                },
                other => other,
            })
        })
        .collect()
}
