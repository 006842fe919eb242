//! What a session could not write for the user, and what still waits: the transcript the
//! driver keeps (stopped at its first failed write, the loss reported to the core once; what
//! was lost is [`TranscriptLoss`](super::error::TranscriptLoss) in the close's
//! [`NotWritten`](super::error::NotWritten)), and the store's backlog while it drains
//! ([`StoreBacklog`]).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use byre_proto::CliMessage;
use byre_transport::TranscriptWriter;

use super::error::TranscriptLoss;

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
