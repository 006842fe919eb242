//! The transcript writer: each line in both directions as one entry, secrets redacted, the
//! file flushed at each turn's end, and the first failed write stopping it cleanly.

use std::borrow::Cow;
use std::fmt;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use byre_proto::{CliMessage, ControlResponseBody};
use serde_json::Value;

use super::{trim, write_entry, TranscriptDir, TranscriptKind};

/// Writes a transcript. The first failed write stops it (see the module documentation):
/// [`TranscriptWriter::failure`] says why, [`TranscriptWriter::lines_lost`] how many lines
/// are not in the file.
pub struct TranscriptWriter {
    /// The output, until a write to it fails.
    out: Option<BufWriter<Counted>>,
    /// The file created by [`TranscriptWriter::create`], to cut back to its last whole line
    /// when a write fails.
    file: Option<File>,
    /// The exclusive lock on the file created by [`TranscriptWriter::create`], held while the
    /// writer lives, so that a second session given the same path fails instead of writing
    /// over this one.
    #[cfg(unix)]
    _lock: Option<nix::fcntl::Flock<File>>,
    /// Lines handed to the writer to be written (stream events left out are not lines).
    lines: u64,
    /// The first write error, and how many lines are not in the file since.
    failure: Option<Arc<io::Error>>,
    lost: u64,
    /// Whether the account email is known (then it is one of the secrets).
    email: bool,
    /// The secrets: the email, the values the host sent (MCP servers' `env` and `headers`, the
    /// settings' `env`) and those it named.
    secrets: crate::redact::Redactor,
    /// When the writer was created: `t` counts from here.
    start: Instant,
    /// Whether `stream_event` lines are kept.
    stream_events: bool,
}

/// The writer's output, counting what reached it: bytes, and whole lines (their newline
/// written).
struct Counted {
    inner: Box<dyn Write + Send>,
    /// Bytes written up to the end of the last whole line.
    whole: u64,
    /// Bytes written.
    written: u64,
    /// Whole lines written.
    lines: u64,
}

impl Write for Counted {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        let done = &buf[..n];
        if let Some(last) = memchr::memrchr(b'\n', done) {
            self.whole = self.written + last as u64 + 1;
            self.lines += memchr::memchr_iter(b'\n', done).count() as u64;
        }
        self.written += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

impl fmt::Debug for TranscriptWriter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TranscriptWriter")
            .field("redacting", &!self.secrets.is_empty())
            .field("stream_events", &self.stream_events)
            .field("failure", &self.failure)
            .field("lines_lost", &self.lost)
            .finish_non_exhaustive()
    }
}

/// An exclusive lock on `file` (on a handle of its own), or [`io::ErrorKind::ResourceBusy`]
/// when another writer holds one.
#[cfg(unix)]
fn lock(file: &File) -> io::Result<nix::fcntl::Flock<File>> {
    use nix::fcntl::{Flock, FlockArg};
    match Flock::lock(file.try_clone()?, FlockArg::LockExclusiveNonblock) {
        Ok(lock) => Ok(lock),
        Err((_, nix::errno::Errno::EWOULDBLOCK)) => Err(io::Error::new(
            io::ErrorKind::ResourceBusy,
            "another session is writing a transcript to this file: give each session a path \
             of its own (Options::transcripts_in numbers them)",
        )),
        Err((_, errno)) => Err(io::Error::from(errno)),
    }
}

impl TranscriptWriter {
    /// Creates (or truncates) the file at `path`, readable and writable by its owner only
    /// (0600 on Unix; a regular file that exists gets that mode too). On Unix the writer holds
    /// an exclusive lock on a regular file while it lives: a file another writer holds (a
    /// second session given the same path, in this process or another) is refused with
    /// [`io::ErrorKind::ResourceBusy`] and left as it is.
    pub fn create(path: impl AsRef<Path>) -> io::Result<Self> {
        let mut open = std::fs::OpenOptions::new();
        open.write(true).create(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut open, 0o600);
        let file = open.open(path)?;
        #[cfg(unix)]
        let lock = if file.metadata()?.is_file() {
            use std::os::unix::fs::PermissionsExt;
            let lock = lock(&file)?;
            file.set_len(0)?;
            file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
            Some(lock)
        } else {
            None
        };
        // A handle of its own, to cut the file back after a failed write (none for a file
        // that cannot be cloned: the failure is reported all the same).
        let cut = file.try_clone().ok();
        let mut writer = Self::new(file);
        writer.file = cut;
        #[cfg(unix)]
        {
            writer._lock = lock;
        }
        Ok(writer)
    }

    /// Writes to any writer.
    pub fn new(out: impl Write + Send + 'static) -> Self {
        let counted = Counted {
            inner: Box::new(out),
            whole: 0,
            written: 0,
            lines: 0,
        };
        TranscriptWriter {
            out: Some(BufWriter::new(counted)),
            file: None,
            #[cfg(unix)]
            _lock: None,
            lines: 0,
            failure: None,
            lost: 0,
            email: false,
            secrets: crate::redact::Redactor::default(),
            start: Instant::now(),
            stream_events: false,
        }
    }

    /// The write error that stopped the writer, if one did.
    pub fn failure(&self) -> Option<&Arc<io::Error>> {
        self.failure.as_ref()
    }

    /// How many lines are not in the output because a write failed: those the failed write
    /// and the ones before it in the buffer did not get out, and every line recorded since.
    pub fn lines_lost(&self) -> u64 {
        self.lost
    }

    /// Keeps `stream_event` lines (left out by default: they are most of a transcript's size).
    pub fn keep_stream_events(mut self, keep: bool) -> Self {
        self.stream_events = keep;
        self
    }

    /// Redacts `secret` (an API key, a password, a token the host knows of) in every line and
    /// note written from now on, however JSON escapes it. A value of fewer than four
    /// characters is ignored.
    pub fn secret(&mut self, secret: &str) {
        self.secrets.add(secret, false);
    }

    /// Records a line the host wrote (without its newline).
    pub fn record_send(&mut self, line: &[u8]) -> io::Result<()> {
        self.learn_secrets(line);
        self.write_line(TranscriptDir::Send, line, false)
    }

    /// Records a message line the host encoded itself (without its newline): known to be JSON,
    /// so it is not checked again.
    pub fn record_send_message(&mut self, line: &[u8]) -> io::Result<()> {
        self.learn_secrets(line);
        self.write_line(TranscriptDir::Send, line, true)
    }

    /// Records bytes the host wrote as they are, for instance deliberately invalid input: kept
    /// as a `raw` string (lossily as UTF-8) even when they are JSON, so a replay never takes
    /// them for a message.
    pub fn record_raw(&mut self, line: &[u8]) -> io::Result<()> {
        let line = self.redact(trim(line));
        self.write(TranscriptDir::Send, TranscriptKind::Raw, &line)
    }

    /// Records a line read from the CLI (without its newline), decoded as `message`.
    /// `stream_event` lines are left out unless kept; a `result` flushes the file.
    pub fn record_recv(&mut self, line: &[u8], message: &CliMessage) -> io::Result<()> {
        match message {
            CliMessage::StreamEvent(_) if !self.stream_events => return Ok(()),
            CliMessage::ControlResponse(response) if !self.email => {
                if let ControlResponseBody::Success(success) = &response.response {
                    let payload = success
                        .response
                        .as_ref()
                        .filter(|p| p.get().contains("\"email\""));
                    let payload = payload.and_then(|p| p.to_value().ok());
                    let email = payload
                        .as_ref()
                        .and_then(|p| p.get("account"))
                        .and_then(|a| a.get("email"))
                        .and_then(Value::as_str)
                        .filter(|e| !e.is_empty());
                    if let Some(email) = email {
                        self.email = self.secrets.add(email, true);
                    }
                }
            }
            _ => {}
        }
        // The line decoded to `message`, so it is JSON: no need to check it again.
        self.write_line(TranscriptDir::Recv, line, true)?;
        if matches!(message, CliMessage::Result(_)) {
            self.flush()?;
        }
        Ok(())
    }

    /// Records a remark: a line read from the CLI that is not a message (not JSON, too long,
    /// ...), what happened to the process, or anything the host wants to note. Flushes the
    /// file.
    pub fn record_note(&mut self, note: &str) -> io::Result<()> {
        let note = self.redact(note.as_bytes());
        self.write(TranscriptDir::Note, TranscriptKind::Note, &note)?;
        self.flush()
    }

    /// Writes everything buffered to the file.
    pub fn flush(&mut self) -> io::Result<()> {
        let Some(out) = &mut self.out else {
            return Err(self.stopped());
        };
        match out.flush() {
            Ok(()) => Ok(()),
            Err(error) => Err(self.fail(error)),
        }
    }

    /// Flushes and closes.
    pub fn close(mut self) -> io::Result<()> {
        self.flush()
    }

    /// Writes one line that went over the pipe; `known_json` skips checking that it is one
    /// JSON value (a line that is not, a bad line, is kept as a `raw` string).
    fn write_line(&mut self, dir: TranscriptDir, line: &[u8], known_json: bool) -> io::Result<()> {
        let line = self.redact(trim(line));
        let kind = if known_json || serde_json::from_slice::<serde::de::IgnoredAny>(&line).is_ok() {
            TranscriptKind::Msg
        } else {
            TranscriptKind::Raw
        };
        self.write(dir, kind, &line)
    }

    /// Writes one entry, timed now, and its newline; after a failure, counts it as lost.
    fn write(&mut self, dir: TranscriptDir, kind: TranscriptKind, text: &[u8]) -> io::Result<()> {
        self.lines += 1;
        let Some(out) = &mut self.out else {
            self.lost += 1;
            return Err(self.stopped());
        };
        // Seconds since the start, to the millisecond.
        let t = (self.start.elapsed().as_secs_f64() * 1000.0).round() / 1000.0;
        match write_entry(out, dir, t, kind, text).and_then(|()| out.write_all(b"\n")) {
            Ok(()) => Ok(()),
            Err(error) => Err(self.fail(error)),
        }
    }

    /// A write failed: the writer stops. What is buffered is dropped, a file it created is
    /// cut back to its last whole line, and the lines that did not get out are counted.
    /// Returns the error, for the caller.
    fn fail(&mut self, error: io::Error) -> io::Error {
        let mut error = error;
        if let Some(out) = self.out.take() {
            // Without a flush: the buffer holds what did not get out.
            let (counted, _unwritten) = out.into_parts();
            self.lost = self.lines.saturating_sub(counted.lines);
            if let Some(file) = self.file.take() {
                if counted.whole < counted.written {
                    if let Err(cut) = file.set_len(counted.whole) {
                        error = io::Error::new(
                            error.kind(),
                            format!("{error}; its torn last line could not be cut off: {cut}"),
                        );
                    }
                }
            }
        }
        let error = Arc::new(error);
        self.failure = Some(error.clone());
        io::Error::new(error.kind(), SharedError(error))
    }

    /// The error for a write after the writer stopped.
    fn stopped(&self) -> io::Error {
        match &self.failure {
            Some(error) => io::Error::new(error.kind(), SharedError(error.clone())),
            None => io::Error::other("the transcript writer has stopped"),
        }
    }

    /// Remembers the secret values of a control request the host sends: the `env` and
    /// `headers` of each MCP server (`initialize`'s `mcpServers`, `mcp_set_servers`'s
    /// `servers`) and the `env` of the settings. They are redacted in this line and after.
    fn learn_secrets(&mut self, line: &[u8]) {
        let mentions = |key: &[u8]| memchr::memmem::find(line, key).is_some();
        if !(mentions(b"\"env\"") || mentions(b"\"headers\"")) {
            return;
        }
        let Ok(message) = serde_json::from_slice::<Value>(line) else {
            return;
        };
        let request = &message["request"];
        let mut found = Vec::new();
        for servers in [&request["mcpServers"], &request["servers"]] {
            for config in servers.as_object().into_iter().flat_map(|s| s.values()) {
                found.extend(string_values(&config["env"]));
                found.extend(string_values(&config["headers"]));
            }
        }
        found.extend(string_values(&request["settings"]["env"]));
        for value in found {
            self.secrets.add(value, false);
        }
    }

    fn redact<'a>(&self, line: &'a [u8]) -> Cow<'a, [u8]> {
        self.secrets.redact(line)
    }
}

impl Drop for TranscriptWriter {
    fn drop(&mut self) {
        // The last chance to write what is buffered. A failure is counted in `lines_lost`,
        // but nobody is left to read it: a caller that wants to know calls `close` first.
        if self.out.is_some() && self.flush().is_err() {
            debug_assert!(self.failure.is_some());
        }
    }
}

/// A write error shared between the writer (which keeps the first) and its callers.
#[derive(Debug)]
struct SharedError(Arc<io::Error>);

impl fmt::Display for SharedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl std::error::Error for SharedError {}

/// The string values of a JSON object (none for anything else).
fn string_values(value: &Value) -> impl Iterator<Item = &str> {
    value
        .as_object()
        .into_iter()
        .flat_map(|o| o.values())
        .filter_map(Value::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file with `room` bytes left, as a full disk has.
    struct FullFile {
        file: File,
        room: usize,
    }

    impl Write for FullFile {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.room == 0 {
                return Err(io::ErrorKind::StorageFull.into());
            }
            let n = self.file.write(&buf[..buf.len().min(self.room)])?;
            self.room -= n;
            Ok(n)
        }
        fn flush(&mut self) -> io::Result<()> {
            self.file.flush()
        }
    }

    #[test]
    fn a_failed_write_leaves_no_torn_line_in_the_file() {
        let path = std::env::temp_dir().join(format!("byre-torn-{}.jsonl", std::process::id()));
        let file = File::create(&path).unwrap();
        let mut writer = TranscriptWriter::new(FullFile {
            file: file.try_clone().unwrap(),
            room: 120,
        });
        writer.file = Some(file);
        writer.record_note("one whole line").unwrap();
        writer
            .record_note(&"a line cut by the full disk ".repeat(10))
            .unwrap_err();
        assert_eq!(writer.lines_lost(), 1);
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert!(text.ends_with('\n'), "{text:?}");
        let lines: Vec<_> = text.lines().collect();
        assert_eq!(lines.len(), 1, "{text:?}");
        assert_eq!(
            super::super::TranscriptLine::parse(lines[0])
                .unwrap()
                .note(),
            Some("one whole line")
        );
    }
}
