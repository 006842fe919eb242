//! The reading half of the driver: tasks that read the CLI's stdout, split it into lines,
//! decode them, and hand them to the driver in batches, in order.
//!
//! Decoding is most of the work per line, so it runs beside the session core, and on two
//! tasks at once: the reading task frames the stream with byre-transport's [`NdjsonCodec`]
//! (cheap: a search for newlines) into batches of lines and deals them out in turn to
//! [`DECODERS`] decoding tasks, which decode each line from its bytes ([`decode_line`]); the
//! driver takes the decoded batches back in the same turn, so the order is kept. On a runtime
//! with several worker threads the decoders run in parallel with each other and with the
//! driver.
//!
//! Memory stays bounded: every channel holds at most [`BATCHES`] batches of at most
//! [`BATCH_LINES`] lines. When the driver stops taking batches (its consumer is slow), the
//! decoders stop, then the reading task stops reading, and the CLI's writes block.

use byre_transport::CliOutput;
use byre_transport::{decode_line, Frame, LineFrame, NdjsonCodec};
use bytes::Bytes;
use futures::{FutureExt, StreamExt};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::codec::FramedRead;

/// The read buffer for the CLI's stdout: a pipe holds 64 KiB by default.
const READ_BUFFER: usize = 64 * 1024;

/// The most lines in one batch.
const BATCH_LINES: usize = 64;

/// The most batches waiting in each channel.
const BATCHES: usize = 2;

/// The decoding tasks.
const DECODERS: usize = 2;

/// One line read from the CLI.
pub(super) struct Line {
    /// What it decoded to.
    pub(super) frame: Frame,
    /// Its bytes, when asked for (for a transcript).
    pub(super) bytes: Option<Bytes>,
}

/// The driver's end: batches of lines, in order; `None` once stdout has ended (or failed).
pub(super) struct Reader {
    decoded: Vec<mpsc::Receiver<Vec<Line>>>,
    /// The decoder whose batch comes next.
    turn: usize,
    tasks: Vec<JoinHandle<()>>,
}

impl Reader {
    /// Starts reading `stdout`, with lines of at most `max_line` bytes; `keep_lines` keeps each
    /// line's bytes beside its message.
    pub(super) fn spawn(stdout: CliOutput, max_line: usize, keep_lines: bool) -> Reader {
        let frames =
            FramedRead::with_capacity(stdout, NdjsonCodec::with_max_line(max_line), READ_BUFFER);
        let mut framed_senders = Vec::with_capacity(DECODERS);
        let mut decoded = Vec::with_capacity(DECODERS);
        let mut tasks = Vec::with_capacity(DECODERS + 1);
        for _ in 0..DECODERS {
            let (framed_tx, framed_rx) = mpsc::channel(BATCHES);
            let (decoded_tx, decoded_rx) = mpsc::channel(BATCHES);
            tasks.push(tokio::spawn(decode(framed_rx, decoded_tx, keep_lines)));
            framed_senders.push(framed_tx);
            decoded.push(decoded_rx);
        }
        tasks.push(tokio::spawn(read(frames, framed_senders)));
        Reader {
            decoded,
            turn: 0,
            tasks,
        }
    }

    /// The next batch. Cancel-safe (a batch not taken stays in its channel), so it may be
    /// raced in `select!`.
    pub(super) async fn next(&mut self) -> Option<Vec<Line>> {
        let batch = self.decoded.get_mut(self.turn)?.recv().await?;
        self.turn = (self.turn + 1) % self.decoded.len();
        Some(batch)
    }
}

impl Reader {
    /// Stops reading: the tasks end and [`Reader::next`] gives `None` from now on.
    pub(super) fn stop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
        self.decoded.clear();
        self.turn = 0;
    }
}

impl Drop for Reader {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

/// Reads until stdout ends or fails, or the driver goes, dealing out batches of framed lines
/// to the decoders in turn. A batch takes the lines already in the read buffer after its
/// first, so a fast stream moves in batches and a slow one line by line, without waiting.
async fn read(
    mut frames: FramedRead<CliOutput, NdjsonCodec>,
    decoders: Vec<mpsc::Sender<Vec<LineFrame>>>,
) {
    for turn in (0..decoders.len()).cycle() {
        let Some(Ok(first)) = frames.next().await else {
            return;
        };
        let mut batch = Vec::with_capacity(BATCH_LINES);
        batch.push(first);
        let mut ended = false;
        while batch.len() < BATCH_LINES {
            match frames.next().now_or_never() {
                Some(Some(Ok(frame))) => batch.push(frame),
                Some(Some(Err(_)) | None) => {
                    ended = true;
                    break;
                }
                None => break,
            }
        }
        if decoders[turn].send(batch).await.is_err() || ended {
            return;
        }
    }
}

/// Decodes batches until the reading task or the driver goes.
async fn decode(
    mut framed: mpsc::Receiver<Vec<LineFrame>>,
    decoded: mpsc::Sender<Vec<Line>>,
    keep_lines: bool,
) {
    while let Some(batch) = framed.recv().await {
        let lines = batch
            .into_iter()
            .map(|frame| match frame {
                LineFrame::Line(bytes) => Line {
                    frame: decode_line(&bytes),
                    bytes: keep_lines.then_some(bytes),
                },
                LineFrame::BadLine(bad) => Line {
                    frame: Frame::BadLine(bad),
                    bytes: None,
                },
            })
            .collect();
        if decoded.send(lines).await.is_err() {
            return;
        }
    }
}
