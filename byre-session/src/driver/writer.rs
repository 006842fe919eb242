//! The writing half of the driver: a task that writes the lines for the CLI's stdin in order,
//! so that a write the CLI does not take (it is itself blocked writing a full stdout) never
//! stalls the driver, which goes on reading, answering and keeping time.
//!
//! What waits to be written is what the host sent (its prompts and answers): it is held until
//! the CLI reads it, or until the CLI is gone. A write that fails (the CLI closed its stdin, or
//! exited) ends the task, which hands the driver the lines it could not write.

use byre_transport::CliStdin;
use tokio::io::AsyncWriteExt;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

/// The driver's end: queue bytes; dropping it closes stdin once everything queued is written.
#[derive(Debug)]
pub(super) struct Writer {
    lines: mpsc::UnboundedSender<Vec<u8>>,
}

/// The writing task, aborted when dropped (with the driver): a write still blocked then (a
/// stray process holding the CLI's stdin open) must not keep it alive. It says when a write
/// failed.
#[derive(Debug)]
pub(super) struct WriterTask {
    task: JoinHandle<()>,
    /// The failure, until it has been taken.
    failure: Option<oneshot::Receiver<Undelivered>>,
}

/// What a failed write left unwritten.
#[derive(Debug)]
pub(super) struct Undelivered {
    /// Why the write failed (`EPIPE` when the CLI closed its stdin).
    pub(super) error: std::io::Error,
    /// The lines not written, each with its newline, in order: from the first line the failed
    /// write did not finish to the last one queued. A line written whole before the failure
    /// is not among them (it went into the pipe; whether the CLI read it cannot be known).
    pub(super) lines: Vec<u8>,
}

impl Undelivered {
    /// The lines not written, without their newlines.
    pub(super) fn lines(&self) -> impl Iterator<Item = &[u8]> {
        self.lines
            .strip_suffix(b"\n")
            .unwrap_or(&self.lines)
            .split(|&b| b == b'\n')
            .filter(|_| !self.lines.is_empty())
    }
}

impl Drop for WriterTask {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl WriterTask {
    /// Waits until a write fails (never, when none does or once the failure was taken).
    /// Cancel-safe: the failure stays in the channel until it is taken.
    pub(super) async fn failed(&mut self) -> Undelivered {
        if let Some(failure) = &mut self.failure {
            let failed = failure.await;
            self.failure = None;
            if let Ok(undelivered) = failed {
                return undelivered;
            }
        }
        std::future::pending().await
    }

    /// The failure, if a write has failed already (does not wait).
    pub(super) fn try_failed(&mut self) -> Option<Undelivered> {
        match self.failure.as_mut()?.try_recv() {
            Err(oneshot::error::TryRecvError::Empty) => None,
            // Taken, or the task ended with every write done: the receiver is spent.
            done => {
                self.failure = None;
                done.ok()
            }
        }
    }
}

impl Writer {
    /// Starts writing to `stdin`.
    pub(super) fn spawn(stdin: CliStdin) -> (Writer, WriterTask) {
        let (lines, queued) = mpsc::unbounded_channel();
        let (failed, failure) = oneshot::channel();
        let task = tokio::spawn(write(stdin, queued, failed));
        let task = WriterTask {
            task,
            failure: Some(failure),
        };
        (Writer { lines }, task)
    }

    /// Queues whole lines (each with its newline); `false` when a write has failed already
    /// (nothing is queued then).
    pub(super) fn send(&self, bytes: Vec<u8>) -> bool {
        self.lines.send(bytes).is_ok()
    }
}

async fn write(
    mut stdin: CliStdin,
    mut queued: mpsc::UnboundedReceiver<Vec<u8>>,
    failed: oneshot::Sender<Undelivered>,
) {
    while let Some(mut bytes) = queued.recv().await {
        // What else is queued goes out in the same write.
        while let Ok(more) = queued.try_recv() {
            bytes.extend_from_slice(&more);
        }
        if let Err((error, written)) = write_all(&mut stdin, &bytes).await {
            // Nothing more is taken; what was queued meanwhile is not written either.
            queued.close();
            let start = bytes[..written]
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |end| end + 1);
            let mut lines = bytes.split_off(start);
            while let Ok(more) = queued.try_recv() {
                lines.extend_from_slice(&more);
            }
            // When the driver is gone, nobody is left to tell.
            let _ = failed.send(Undelivered { error, lines });
            return;
        }
    }
    // Everything was written; a pipe closes when dropped whatever this says, and a spawner's
    // own transport reports its failures through the CLI's exit.
    let _ = stdin.shutdown().await;
}

/// Writes `bytes` whole, or says why not and how many bytes went out first (none, when the
/// flush failed: nothing is known to have left).
async fn write_all(stdin: &mut CliStdin, bytes: &[u8]) -> Result<(), (std::io::Error, usize)> {
    let mut written = 0;
    while written < bytes.len() {
        match stdin.write(&bytes[written..]).await {
            Ok(0) => return Err((std::io::ErrorKind::WriteZero.into(), written)),
            Ok(n) => written += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err((e, written)),
        }
    }
    stdin.flush().await.map_err(|e| (e, 0))
}
