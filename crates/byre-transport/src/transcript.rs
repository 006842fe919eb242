//! The transcript writer: every line in both directions, one JSON object per line, in the
//! order things happened:
//!
//! ```text
//! {"dir":"note","t":0.0,"note":"argv: [...]"}
//! {"dir":"send","t":0.001,"msg":{...}}
//! {"dir":"recv","t":0.43,"msg":{...}}
//! {"dir":"send","t":0.5,"raw":"{not json"}
//! ```
//!
//! `t` is seconds since the writer was created, to the millisecond. Each `msg` is the line
//! exactly as it was written or read (key order kept); `raw` holds a line written as it is
//! (see [`TranscriptWriter::record_raw`]) or one that is not JSON, as a string; `note` holds a
//! remark. This is the format of byre's recorded transcripts (`testdata/transcripts`).
//!
//! `stream_event` lines are left out unless [`TranscriptWriter::keep_stream_events`] says
//! otherwise. The account email from the `initialize` answer is replaced by `[redacted]` in
//! that answer and everywhere it appears afterwards, inside strings too. The file is flushed at
//! every turn end (`result`), at every note, and when the writer is closed or dropped, so a
//! CLI that crashes loses nothing already read.

use std::fs::File;
use std::io::{self, BufRead, BufWriter, Write};
use std::path::Path;
use std::time::Instant;

use byre_proto::{CliMessage, ControlResponseBody};
use serde_json::Value;

/// What replaces the account email.
pub const REDACTED: &str = "[redacted]";

/// Writes a transcript.
pub struct TranscriptWriter {
    out: BufWriter<Box<dyn Write + Send>>,
    /// The email as it appears inside JSON text (escaped), once known.
    email: Option<String>,
    /// When the writer was created: `t` counts from here.
    start: Instant,
    /// Whether `stream_event` lines are kept.
    stream_events: bool,
}

impl std::fmt::Debug for TranscriptWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TranscriptWriter")
            .field("redacting", &self.email.is_some())
            .field("stream_events", &self.stream_events)
            .finish_non_exhaustive()
    }
}

impl TranscriptWriter {
    /// Creates (or truncates) the file at `path`.
    pub fn create(path: impl AsRef<Path>) -> io::Result<Self> {
        Ok(Self::new(File::create(path)?))
    }

    /// Writes to any writer.
    pub fn new(out: impl Write + Send + 'static) -> Self {
        TranscriptWriter {
            out: BufWriter::new(Box::new(out)),
            email: None,
            start: Instant::now(),
            stream_events: false,
        }
    }

    /// Keeps `stream_event` lines (left out by default: they are most of a transcript's size).
    pub fn keep_stream_events(mut self, keep: bool) -> Self {
        self.stream_events = keep;
        self
    }

    /// Records a line the host wrote (without its newline).
    pub fn record_send(&mut self, line: &[u8]) -> io::Result<()> {
        self.write_entry("send", line, false)
    }

    /// Records a message line the host encoded itself (without its newline): known to be JSON,
    /// so it is not checked again.
    pub fn record_send_message(&mut self, line: &[u8]) -> io::Result<()> {
        self.write_entry("send", line, true)
    }

    /// Records bytes the host wrote as they are, for instance deliberately invalid input: kept
    /// as a `raw` string (lossily as UTF-8) even when they are JSON, so a replay never takes
    /// them for a message.
    pub fn record_raw(&mut self, line: &[u8]) -> io::Result<()> {
        let line = self.redact(trim(line));
        let raw = String::from_utf8_lossy(&line);
        self.write_text("send", "raw", &raw)
    }

    /// Records a line read from the CLI (without its newline), decoded as `message`.
    /// `stream_event` lines are left out unless kept; a `result` flushes the file.
    pub fn record_recv(&mut self, line: &[u8], message: &CliMessage) -> io::Result<()> {
        match message {
            CliMessage::StreamEvent(_) if !self.stream_events => return Ok(()),
            CliMessage::ControlResponse(response) if self.email.is_none() => {
                if let ControlResponseBody::Success(success) = &response.response {
                    let payload = success
                        .response
                        .as_ref()
                        .filter(|p| p.get().contains("\"email\""));
                    let payload = payload.map(|p| p.to_value());
                    let email = payload
                        .as_ref()
                        .and_then(|p| p.get("account"))
                        .and_then(|a| a.get("email"))
                        .and_then(Value::as_str)
                        .filter(|e| !e.is_empty());
                    if let Some(email) = email {
                        let quoted = serde_json::to_string(email).map_err(io::Error::other)?;
                        self.email = Some(quoted[1..quoted.len() - 1].to_owned());
                    }
                }
            }
            _ => {}
        }
        // The line decoded to `message`, so it is JSON: no need to check it again.
        self.write_entry("recv", line, true)?;
        if matches!(message, CliMessage::Result(_)) {
            self.out.flush()?;
        }
        Ok(())
    }

    /// Records a remark: a line read from the CLI that is not a message (not JSON, too long,
    /// ...), what happened to the process, or anything the host wants to note. Flushes the
    /// file.
    pub fn record_note(&mut self, note: &str) -> io::Result<()> {
        let note = self.redact(note.as_bytes());
        let note = String::from_utf8_lossy(&note);
        self.write_text("note", "note", &note)?;
        self.out.flush()
    }

    /// Writes everything buffered to the file.
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    /// Flushes and closes.
    pub fn close(mut self) -> io::Result<()> {
        self.out.flush()
    }

    /// Writes one entry; `known_json` skips checking that the line is one JSON value (a line
    /// that is not, a bad line, is kept as a string).
    fn write_entry(&mut self, dir: &str, line: &[u8], known_json: bool) -> io::Result<()> {
        let line = trim(line);
        let line = self.redact(line);
        if known_json || serde_json::from_slice::<serde::de::IgnoredAny>(&line).is_ok() {
            self.write_start(dir)?;
            self.out.write_all(b",\"msg\":")?;
            self.out.write_all(&line)?;
            self.out.write_all(b"}\n")
        } else {
            let raw = String::from_utf8_lossy(&line);
            self.write_text(dir, "raw", &raw)
        }
    }

    /// Writes `{"dir":<dir>,"t":<t>,<key>:<text as a JSON string>}`.
    fn write_text(&mut self, dir: &str, key: &str, text: &str) -> io::Result<()> {
        self.write_start(dir)?;
        write!(self.out, ",\"{key}\":")?;
        serde_json::to_writer(&mut self.out, text).map_err(io::Error::other)?;
        self.out.write_all(b"}\n")
    }

    /// Writes `{"dir":<dir>,"t":<seconds since the start>` (to the millisecond).
    fn write_start(&mut self, dir: &str) -> io::Result<()> {
        let t = (self.start.elapsed().as_secs_f64() * 1000.0).round() / 1000.0;
        write!(self.out, "{{\"dir\":\"{dir}\",\"t\":")?;
        serde_json::to_writer(&mut self.out, &t).map_err(io::Error::other)
    }

    fn redact<'a>(&self, line: &'a [u8]) -> std::borrow::Cow<'a, [u8]> {
        let Some(email) = &self.email else {
            return line.into();
        };
        let needle = email.as_bytes();
        if memchr::memmem::find(line, needle).is_none() {
            return line.into();
        }
        let mut out = Vec::with_capacity(line.len());
        let mut rest = line;
        while let Some(at) = memchr::memmem::find(rest, needle) {
            out.extend_from_slice(&rest[..at]);
            out.extend_from_slice(REDACTED.as_bytes());
            rest = &rest[at + needle.len()..];
        }
        out.extend_from_slice(rest);
        out.into()
    }
}

impl Drop for TranscriptWriter {
    fn drop(&mut self) {
        let _ = self.out.flush();
    }
}

fn trim(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// The CLI version a transcript was recorded with: `claude_code_version` of its first
/// `system/init`.
pub fn transcript_cli_version(path: impl AsRef<Path>) -> io::Result<Option<String>> {
    let file = io::BufReader::new(File::open(path)?);
    for line in file.lines() {
        let line = line?;
        if !line.contains("\"init\"") {
            continue;
        }
        let Ok(entry) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let msg = &entry["msg"];
        if msg["type"] == "system" && msg["subtype"] == "init" {
            return Ok(msg["claude_code_version"].as_str().map(str::to_owned));
        }
    }
    Ok(None)
}
