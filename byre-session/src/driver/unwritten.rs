//! What a session could not write for the user, and what still waits: the transcript the
//! driver keeps (stopped at its first failed write, the loss reported to the core once), the
//! [`NotWritten`] error a close gives when transcript lines or store entries were lost, and
//! the store's backlog while it drains ([`StoreBacklog`]).

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use byre_proto::CliMessage;
use byre_transport::{ExitInfo, TranscriptWriter};

use super::error::Error;
use crate::session::StoreLoss;

/// Lines a transcript is missing: its writer stopped at a failed write (see
/// [`TranscriptWriter`]), the file holds the session up to its last whole line.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct TranscriptLoss {
    /// The transcript file.
    pub path: PathBuf,
    /// The write that failed.
    pub error: Arc<std::io::Error>,
    /// How many lines are not in the file.
    pub lines: u64,
}

/// What a session did not write for the user: transcript lines, entries for the session
/// store, or both. [`Claude::close`](crate::Claude::close) (and [`Claude::wait`]) give it as
/// [`Error::NotWritten`] even when the CLI itself ended well: its end is in `exit`.
///
/// [`Claude::wait`]: crate::Claude::wait
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct NotWritten {
    /// How the CLI ended, when it was waited for.
    pub exit: Option<ExitInfo>,
    /// The error the session ended with besides, when there was one (the CLI closed its
    /// input while it ran, ...).
    pub failure: Option<Error>,
    /// The transcript's loss, when it lost lines.
    pub transcript: Option<TranscriptLoss>,
    /// The entries that did not reach the store, per transcript (at most
    /// [`STORE_LOSS_KEYS`](crate::session::STORE_LOSS_KEYS) keys, the rest under `None`).
    pub store: Vec<StoreLoss>,
}

impl NotWritten {
    /// How many entries did not reach the store, in all.
    pub fn store_entries(&self) -> u64 {
        self.store.iter().map(|l| l.entries).sum()
    }
}

impl fmt::Display for NotWritten {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if let Some(t) = &self.transcript {
            parts.push(format!(
                "{} not written to the transcript {} ({}); it ends at its last whole line \
                 before that",
                count(t.lines, "line"),
                t.path.display(),
                t.error
            ));
        }
        if !self.store.is_empty() {
            let keys = self
                .store
                .iter()
                .map(|loss| {
                    let key = match &loss.key {
                        Some(key) => key.to_string(),
                        None => "other transcripts".to_owned(),
                    };
                    format!("{} of {key}: {}", loss.entries, one_line(&loss.error))
                })
                .collect::<Vec<_>>()
                .join("; ");
            parts.push(format!(
                "{} not stored in the session store ({keys}); the CLI's own session files \
                 have them",
                count(self.store_entries(), "session entry"),
            ));
        }
        if parts.is_empty() {
            parts.push("nothing was lost".to_owned());
        }
        f.write_str(&parts.join("; "))?;
        if let Some(failure) = &self.failure {
            write!(f, "; the session ended with an error too: {failure}")?;
        }
        Ok(())
    }
}

/// A store's error on one line, and at most [`ERROR_CHARS`] characters of it (a backend's
/// may hold a whole XML document).
fn one_line(error: &str) -> String {
    let mut line = error.split_whitespace().collect::<Vec<_>>().join(" ");
    if let Some((cut, _)) = line.char_indices().nth(ERROR_CHARS) {
        line.truncate(cut);
        line.push('…');
    }
    line
}

/// The most characters of a store's error [`NotWritten`]'s message shows.
const ERROR_CHARS: usize = 300;

/// `1 line`, `3 lines`, `1 session entry`, `2 session entries`.
fn count(n: u64, noun: &str) -> String {
    match (n, noun.strip_suffix('y')) {
        (1, _) => format!("1 {noun}"),
        (n, Some(stem)) => format!("{n} {stem}ies"),
        (n, None) => format!("{n} {noun}s"),
    }
}

/// How much waits for the session store: entries handed to it and not yet stored (or
/// failed), and their bytes. While a close waits for the store, this says how far it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct StoreBacklog {
    /// Entries waiting.
    pub entries: usize,
    /// Their size, in bytes of JSON (about).
    pub bytes: usize,
}

/// The counters behind [`StoreBacklog`], shared by the mirror task and the handle.
#[derive(Debug, Default)]
pub(super) struct Backlog {
    pub(super) entries: AtomicUsize,
    pub(super) bytes: AtomicUsize,
}

impl Backlog {
    pub(super) fn now(&self) -> StoreBacklog {
        StoreBacklog {
            entries: self.entries.load(Ordering::Relaxed),
            bytes: self.bytes.load(Ordering::Relaxed),
        }
    }
}

/// The driver's transcript: the writer, its path, and whether its failure was reported.
/// Every record goes through here; a failed write is kept for the core (see
/// [`Transcript::take_failure`]) and the writer counts what it then leaves out.
#[derive(Debug)]
pub(super) struct Transcript {
    writer: TranscriptWriter,
    path: PathBuf,
    reported: bool,
}

impl Transcript {
    pub(super) fn new(writer: TranscriptWriter, path: &Path) -> Transcript {
        Transcript {
            writer,
            path: path.to_path_buf(),
            reported: false,
        }
    }

    /// Records a line sent, a note, ... with `record`. A failure stops the writer (it
    /// counts every line after) and waits to be reported.
    fn record(&mut self, record: impl FnOnce(&mut TranscriptWriter) -> std::io::Result<()>) {
        // A failed write is kept by the writer, which counts every line it leaves out from
        // there; anything else that fails a record is no loss of the file, but is logged.
        if let Err(error) = record(&mut self.writer) {
            if self.writer.failure().is_none() {
                tracing::warn!(%error, "a transcript line could not be recorded");
            }
        }
    }

    /// A secret to redact wherever it appears from now on.
    pub(super) fn secret(&mut self, secret: &str) {
        self.writer.secret(secret);
    }

    pub(super) fn recv(&mut self, line: &[u8], message: &CliMessage) {
        self.record(|w| w.record_recv(line, message));
    }

    pub(super) fn send(&mut self, line: &[u8]) {
        self.record(|w| w.record_send_message(line));
    }

    pub(super) fn raw(&mut self, line: &[u8]) {
        self.record(|w| w.record_raw(line));
    }

    pub(super) fn note(&mut self, note: &str) {
        self.record(|w| w.record_note(note));
    }

    pub(super) fn flush(&mut self) {
        self.record(TranscriptWriter::flush);
    }

    /// The first failure, the first time it is asked for: the path and why.
    pub(super) fn take_failure(&mut self) -> Option<(PathBuf, String)> {
        if self.reported {
            return None;
        }
        let error = self.writer.failure()?.to_string();
        self.reported = true;
        Some((self.path.clone(), error))
    }

    /// What the transcript lost, if anything.
    pub(super) fn loss(&self) -> Option<TranscriptLoss> {
        let error = self.writer.failure()?.clone();
        Some(TranscriptLoss {
            path: self.path.clone(),
            error,
            lines: self.writer.lines_lost(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_store_error_is_shown_on_one_short_line() {
        assert_eq!(
            one_line("404 Not Found:\n<?xml?>\n  <Error/>"),
            "404 Not Found: <?xml?> <Error/>"
        );
        let long = one_line(&"é".repeat(1000));
        assert_eq!(long.chars().count(), ERROR_CHARS + 1);
        assert!(long.ends_with('…'));
    }

    #[test]
    fn counts_read_as_english() {
        assert_eq!(count(1, "line"), "1 line");
        assert_eq!(count(0, "line"), "0 lines");
        assert_eq!(count(2229, "line"), "2229 lines");
        assert_eq!(count(1, "session entry"), "1 session entry");
        assert_eq!(count(501, "session entry"), "501 session entries");
    }
}
