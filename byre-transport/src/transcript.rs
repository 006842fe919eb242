//! Transcripts: every line in both directions, one JSON object per line, in the order things
//! happened. The entry type ([`TranscriptLine`]), the reader ([`TranscriptReader`],
//! [`read_transcript`]) and the writer ([`TranscriptWriter`]) of the one format:
//!
//! ```text
//! {"dir":"note","t":0.0,"note":"argv: [...]"}
//! {"dir":"send","t":0.001,"msg":{...}}
//! {"dir":"recv","t":0.43,"msg":{...}}
//! {"dir":"send","t":0.5,"raw":"{not json"}
//! ```
//!
//! `t` is seconds since the writer was created, to the millisecond. Each `msg` is the line
//! exactly as it was written or read, byte for byte (the CLI's own key order: `type` is about
//! the 19th key of a `result`); `raw` holds a line written as it is (see
//! [`TranscriptWriter::record_raw`]) or one that is not JSON, as a string; `note` holds a
//! remark. This is the format of byre's recorded transcripts (`testdata/transcripts`).
//!
//! Reading keeps each message as its exact JSON text ([`TranscriptLine::raw`]), so it is decoded
//! once, from those bytes ([`TranscriptLine::decode`], [`TranscriptLine::decode_recv`]), or
//! parsed into a [`Value`] when a test wants one ([`TranscriptLine::msg`]).
//!
//! The reader streams: a file of any size is read a line at a time, framed by the NDJSON codec
//! ([`LineReader`]), in memory bounded by the line limit ([`TRANSCRIPT_MAX_LINE`] by default); a
//! longer line is reported with its length and first bytes ([`TranscriptError::TooLong`]) and
//! reading goes on at the next. [`read_transcript`] collects a whole file, for tests.
//!
//! The writer leaves `stream_event` lines out unless [`TranscriptWriter::keep_stream_events`]
//! says otherwise. The account email from the `initialize` answer is replaced by `[redacted]` in
//! that answer and everywhere it appears afterwards, in any case; so are the values of the MCP
//! servers' `env` and `headers` and of the settings' `env` that the host sends (in `initialize`
//! or `mcp_set_servers`), from the line that carries them on, and every secret the host names
//! with [`TranscriptWriter::secret`] (an API key, a store's credentials), from then on. A secret
//! is found as it is, inside strings, and through up to three levels of JSON escaping with any
//! of its characters escaped (`\u0040`, `\"`; a JSON document in a string, as a `--mcp-config`
//! value in the launch note is); a value of fewer than four characters is not redacted. The
//! file is flushed at
//! every turn end (`result`), at every note, and when the writer is closed or dropped, so a
//! CLI that crashes loses nothing already read. A file the writer creates is readable by its
//! owner only (mode 0600): a transcript holds the whole conversation and the files it read.
//!
//! The first write that fails (a full disk, a file system gone read-only) stops the writer: a
//! file it created is cut back to its last whole line, so no torn line sits in it, and every
//! line after is counted as not written instead of being tried ([`TranscriptWriter::failure`],
//! [`TranscriptWriter::lines_lost`]). Writing on after a failure would leave a file with gaps
//! that reads as whole; a prefix of the session that ends where the failure came is what a
//! reader can trust.

use std::borrow::Cow;
use std::fmt;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use byre_proto::{AnyMessage, CliMessage, DecodeError, Direction, HostMessage};
use bytes::Bytes;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};

use crate::codec::{BadLine, LineFrame, DEFAULT_MAX_LINE};
use crate::lines::LineReader;

mod writer;
pub use writer::TranscriptWriter;

/// What replaces the account email and every other secret.
pub const REDACTED: &str = "[redacted]";

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
    /// Bytes written as they are ([`TranscriptWriter::record_raw`]) or a line that is not
    /// JSON (`"raw"` in the file; lossy UTF-8).
    Raw,
    /// A remark (`"note"` in the file).
    Note,
}

impl TranscriptKind {
    /// The key in transcript files: `msg`, `raw` or `note`.
    pub fn as_str(self) -> &'static str {
        match self {
            TranscriptKind::Msg => "msg",
            TranscriptKind::Raw => "raw",
            TranscriptKind::Note => "note",
        }
    }
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
    /// Seconds since the transcript began, to the millisecond.
    pub t: f64,
    /// What the line holds.
    pub kind: TranscriptKind,
    /// The text: a message's exact JSON (without its newline), the bytes of a raw line, or
    /// the note.
    pub raw: String,
}

impl TranscriptLine {
    /// The message's exact JSON text; `None` for notes and raw lines.
    pub fn msg_json(&self) -> Option<&str> {
        (self.kind == TranscriptKind::Msg).then_some(self.raw.as_str())
    }

    /// The message, parsed (object keys come out sorted); `None` for notes and raw lines.
    pub fn msg(&self) -> Option<Value> {
        serde_json::from_str(self.msg_json()?).ok()
    }

    /// The message's direction on the wire: `None` for notes and raw lines.
    pub fn direction(&self) -> Option<Direction> {
        match (self.dir, self.kind) {
            (TranscriptDir::Send, TranscriptKind::Msg) => Some(Direction::Send),
            (TranscriptDir::Recv, TranscriptKind::Msg) => Some(Direction::Recv),
            _ => None,
        }
    }

    /// The message decoded from its bytes, as its direction says (a [`HostMessage`] sent, a
    /// [`CliMessage`] received); `None` for notes and raw lines.
    ///
    /// [`HostMessage`]: byre_proto::HostMessage
    pub fn decode(&self) -> Option<Result<AnyMessage, DecodeError>> {
        let direction = self.direction()?;
        Some(AnyMessage::from_slice(direction, self.raw.as_bytes()))
    }

    /// The message the CLI wrote, decoded from its bytes; `None` for every other line.
    pub fn decode_recv(&self) -> Option<Result<CliMessage, DecodeError>> {
        self.is_recv()
            .then(|| CliMessage::from_slice(self.raw.as_bytes()))
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
        let mut out = Vec::with_capacity(self.raw.len() + 40);
        write_entry(&mut out, self.dir, self.t, self.kind, self.raw.as_bytes())
            .expect("writing to a Vec does not fail");
        String::from_utf8(out).expect("an entry of UTF-8 text is UTF-8")
    }

    /// The file line parsed as a [`Value`] (`dir`, `t`, and `msg`, `raw` or `note`), for
    /// tests that index into it; object keys come out sorted.
    pub fn to_value(&self) -> Value {
        let mut value = json!({ "dir": self.dir.as_str(), "t": self.t });
        value[self.kind.as_str()] = match self.kind {
            TranscriptKind::Msg => self.msg().unwrap_or(Value::Null),
            TranscriptKind::Raw | TranscriptKind::Note => Value::from(self.raw.as_str()),
        };
        value
    }

    /// Reads one line of a transcript file (without its newline): the inverse of
    /// [`TranscriptLine::to_json`]. A `msg` keeps its exact text. A line without `t` (an
    /// older transcript) gets `t == 0.0`; other keys are ignored.
    pub fn parse(line: &str) -> Result<TranscriptLine, TranscriptError> {
        Self::from_slice(line.as_bytes())
    }

    /// [`TranscriptLine::parse`] for a line's bytes.
    pub fn from_slice(line: &[u8]) -> Result<TranscriptLine, TranscriptError> {
        let (dir, t, held) = read_entry(line)?;
        let (kind, raw) = match held {
            Held::Msg(msg) => (TranscriptKind::Msg, msg.get().to_owned()),
            Held::Raw(raw) => (TranscriptKind::Raw, raw),
            Held::Note(note) => (TranscriptKind::Note, note),
        };
        Ok(TranscriptLine { dir, t, kind, raw })
    }

    /// Reads one transcript line, as [`TranscriptLine::from_slice`] does, and decodes its
    /// message straight from the line's bytes, as [`TranscriptLine::decode`] does, without
    /// copying it first: in a message of 1 MiB or more, a text that is most of it shares the
    /// line's memory (see [`CliMessage::from_bytes`]). `None` for notes and raw lines.
    // `decode`'s answer with the message's direction, inside the line's own result.
    #[allow(clippy::type_complexity)]
    pub fn decode_bytes(
        line: &Bytes,
    ) -> Result<Option<(Direction, Result<AnyMessage, DecodeError>)>, TranscriptError> {
        let (dir, _, held) = read_entry(line)?;
        let Held::Msg(msg) = held else {
            return Ok(None);
        };
        let text = line.slice_ref(msg.get().as_bytes());
        Ok(Some(match dir {
            TranscriptDir::Send => (
                Direction::Send,
                HostMessage::from_bytes(&text).map(AnyMessage::Send),
            ),
            _ => (
                Direction::Recv,
                CliMessage::from_bytes(&text).map(AnyMessage::Recv),
            ),
        }))
    }
}

impl fmt::Display for TranscriptLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_json())
    }
}

/// One line of a transcript file, as its keys say. The message is borrowed as its exact text.
#[derive(Deserialize)]
struct Entry<'a> {
    #[serde(borrow)]
    dir: Cow<'a, str>,
    #[serde(default)]
    t: Option<f64>,
    #[serde(borrow, default)]
    msg: Option<&'a RawValue>,
    #[serde(default)]
    raw: Option<String>,
    #[serde(default)]
    note: Option<String>,
}

/// What a transcript line holds, the message borrowed as its exact text.
enum Held<'a> {
    Msg(&'a RawValue),
    Raw(String),
    Note(String),
}

/// Reads one transcript line: its direction, its time (0 when it has none) and what it holds.
fn read_entry(line: &[u8]) -> Result<(TranscriptDir, f64, Held<'_>), TranscriptError> {
    let bad = |reason: String| TranscriptError::BadLine { line: 0, reason };
    let entry: Entry<'_> =
        serde_json::from_slice(line).map_err(|e| bad(format!("not a transcript line: {e}")))?;
    let dir = match &*entry.dir {
        "send" => TranscriptDir::Send,
        "recv" => TranscriptDir::Recv,
        "note" => TranscriptDir::Note,
        other => return Err(bad(format!("unknown dir {other:?}"))),
    };
    let held = match (entry.msg, entry.raw, entry.note) {
        (Some(msg), None, None) => Held::Msg(msg),
        (None, Some(raw), None) => Held::Raw(raw),
        (None, None, Some(note)) => Held::Note(note),
        _ => {
            return Err(bad(
                "a transcript line holds exactly one of msg, raw and note".into(),
            ))
        }
    };
    let kind = match held {
        Held::Msg(_) => TranscriptKind::Msg,
        Held::Raw(_) => TranscriptKind::Raw,
        Held::Note(_) => TranscriptKind::Note,
    };
    if (dir == TranscriptDir::Note) != (kind == TranscriptKind::Note) {
        return Err(bad(format!(
            "a {} line cannot hold {}",
            dir.as_str(),
            kind.as_str()
        )));
    }
    Ok((dir, entry.t.unwrap_or(0.0), held))
}

/// Why a transcript could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TranscriptError {
    /// The file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file (empty for a reader that is not a file).
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
    /// A line is longer than the reader's limit: discarded as it was read, without being kept.
    #[error("line {line}: {bad}; it starts {:?}", bad.head)]
    TooLong {
        /// Its number, from 1.
        line: usize,
        /// Its length and first bytes, and the limit.
        bad: BadLine,
    },
}

/// The longest transcript line a [`TranscriptReader`] reads by default: a message as long as
/// the codec's default limit ([`DEFAULT_MAX_LINE`]) lets through, with room for the `dir`, `t`
/// and key around it.
pub const TRANSCRIPT_MAX_LINE: usize = DEFAULT_MAX_LINE + 64 * 1024;

/// Reads a transcript line by line, in bounded memory: every non-blank line, parsed with
/// [`TranscriptLine::from_slice`], an error naming its line number. Lines are framed by
/// [`LineReader`] (the NDJSON codec's rules); a line longer than the limit
/// ([`TRANSCRIPT_MAX_LINE`] unless [`TranscriptReader::max_line`] says otherwise) is a
/// [`TranscriptError::TooLong`] with its length and first bytes, discarded as it is read. After
/// a bad line reading goes on; after a read error it ends.
#[derive(Debug)]
pub struct TranscriptReader<R> {
    lines: LineReader<R>,
    path: PathBuf,
}

impl TranscriptReader<BufReader<File>> {
    /// Opens the transcript at `path`.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, TranscriptError> {
        let path = path.as_ref();
        let file = File::open(path).map_err(|source| TranscriptError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let mut reader = TranscriptReader::new(BufReader::with_capacity(READ_BUFFER, file));
        reader.path = path.to_path_buf();
        Ok(reader)
    }
}

impl<R: BufRead> TranscriptReader<R> {
    /// Reads a transcript from `input`.
    pub fn new(input: R) -> Self {
        TranscriptReader {
            lines: LineReader::new(input, TRANSCRIPT_MAX_LINE),
            path: PathBuf::new(),
        }
    }

    /// Reads lines of at most `max_line` bytes (without their line end) instead. Set it before
    /// reading: it starts the framing afresh.
    pub fn max_line(mut self, max_line: usize) -> Self {
        debug_assert_eq!(
            self.lines.line_number(),
            0,
            "the limit is set before reading"
        );
        self.lines = LineReader::new(self.lines.into_input(), max_line);
        self
    }

    /// The number (from 1) of the line the last item came from; 0 before the first.
    pub fn line_number(&self) -> usize {
        self.lines.line_number()
    }
}

impl<R: BufRead> Iterator for TranscriptReader<R> {
    type Item = Result<TranscriptLine, TranscriptError>;

    fn next(&mut self) -> Option<Self::Item> {
        let frame = self.lines.next()?;
        let line = self.lines.line_number();
        let item = match frame {
            Ok(LineFrame::Line(bytes)) => TranscriptLine::from_slice(&bytes).map_err(|e| match e {
                TranscriptError::BadLine { reason, .. } => {
                    TranscriptError::BadLine { line, reason }
                }
                other => other,
            }),
            Ok(LineFrame::BadLine(bad)) => Err(TranscriptError::TooLong { line, bad }),
            Err(source) => Err(TranscriptError::Io {
                path: self.path.clone(),
                source,
            }),
        };
        Some(item)
    }
}

/// Reads a transcript file: every non-blank line, parsed with [`TranscriptLine::parse`].
pub fn read_transcript(path: impl AsRef<Path>) -> Result<Vec<TranscriptLine>, TranscriptError> {
    TranscriptReader::open(path)?.collect()
}

/// The CLI version a transcript was recorded with: `claude_code_version` of its first
/// `system/init`.
pub fn transcript_cli_version(path: impl AsRef<Path>) -> io::Result<Option<String>> {
    #[derive(Deserialize)]
    struct Init<'a> {
        #[serde(rename = "type", borrow)]
        kind: Cow<'a, str>,
        #[serde(borrow, default)]
        subtype: Option<Cow<'a, str>>,
        #[serde(default)]
        claude_code_version: Option<String>,
    }
    let input = BufReader::with_capacity(READ_BUFFER, File::open(path)?);
    // Over-long lines are skipped: an init is far shorter than the limit.
    for frame in LineReader::new(input, TRANSCRIPT_MAX_LINE) {
        let LineFrame::Line(line) = frame? else {
            continue;
        };
        // A quick look first: most lines are not an init.
        if memchr::memmem::find(&line, b"\"init\"").is_some() {
            let message = TranscriptLine::from_slice(&line)
                .ok()
                .filter(|l| l.is_recv());
            let init = message.as_ref().and_then(|m| {
                serde_json::from_str::<Init<'_>>(&m.raw)
                    .ok()
                    .filter(|i| i.kind == "system" && i.subtype.as_deref() == Some("init"))
            });
            if let Some(init) = init {
                return Ok(init.claude_code_version);
            }
        }
    }
    Ok(None)
}

/// Writes `{"dir":<dir>,"t":<t>,<kind>:<text>}` (no newline): a message's text as it is, a raw
/// line's or a note's as a JSON string (lossily as UTF-8).
fn write_entry(
    out: &mut impl Write,
    dir: TranscriptDir,
    t: f64,
    kind: TranscriptKind,
    text: &[u8],
) -> io::Result<()> {
    out.write_all(b"{\"dir\":\"")?;
    out.write_all(dir.as_str().as_bytes())?;
    out.write_all(b"\",\"t\":")?;
    serde_json::to_writer(&mut *out, &t).map_err(io::Error::other)?;
    out.write_all(b",\"")?;
    out.write_all(kind.as_str().as_bytes())?;
    out.write_all(b"\":")?;
    match kind {
        TranscriptKind::Msg => out.write_all(text)?,
        TranscriptKind::Raw | TranscriptKind::Note => {
            serde_json::to_writer(&mut *out, &String::from_utf8_lossy(text))
                .map_err(io::Error::other)?;
        }
    }
    out.write_all(b"}")
}

/// The capacity of a file's read buffer.
const READ_BUFFER: usize = 64 * 1024;

fn trim(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}
