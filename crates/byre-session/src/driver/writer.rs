//! The writing half of the driver: a task that writes the lines for the CLI's stdin in order,
//! so that a write the CLI does not take (it is itself blocked writing a full stdout) never
//! stalls the driver, which goes on reading, answering and keeping time.
//!
//! What waits to be written is what the host sent (its prompts and answers): it is held until
//! the CLI reads it, or until the CLI is gone.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use byre_transport::CliStdin;
use tokio::io::AsyncWriteExt;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// The driver's end: queue bytes; dropping it closes stdin once everything queued is written.
#[derive(Debug)]
pub(super) struct Writer {
    lines: mpsc::UnboundedSender<Vec<u8>>,
    /// Set once a write failed (the CLI closed its stdin or exited).
    failed: Arc<AtomicBool>,
}

/// The writing task, aborted when dropped (with the driver): a write still blocked then (a
/// stray process holding the CLI's stdin open) must not keep it alive.
#[derive(Debug)]
pub(super) struct WriterTask(JoinHandle<()>);

impl Drop for WriterTask {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl Writer {
    /// Starts writing to `stdin`.
    pub(super) fn spawn(stdin: CliStdin) -> (Writer, WriterTask) {
        let (lines, queued) = mpsc::unbounded_channel();
        let failed = Arc::new(AtomicBool::new(false));
        let task = tokio::spawn(write(stdin, queued, failed.clone()));
        (Writer { lines, failed }, WriterTask(task))
    }

    /// Queues whole lines (each with its newline); `false` when the CLI's stdin is known to be
    /// gone (nothing is queued then).
    pub(super) fn send(&self, bytes: Vec<u8>) -> bool {
        !self.failed.load(Ordering::Relaxed) && self.lines.send(bytes).is_ok()
    }
}

async fn write(
    mut stdin: CliStdin,
    mut queued: mpsc::UnboundedReceiver<Vec<u8>>,
    failed: Arc<AtomicBool>,
) {
    while let Some(mut bytes) = queued.recv().await {
        // What else is queued goes out in the same write.
        while let Ok(more) = queued.try_recv() {
            bytes.extend_from_slice(&more);
        }
        if stdin.write_all(&bytes).await.is_err() || stdin.flush().await.is_err() {
            failed.store(true, Ordering::Relaxed);
            return;
        }
    }
    let _ = stdin.shutdown().await;
}
