//! The reading half of the driver: tasks that read the CLI's stdout, split it into lines,
//! decode them, and hand them to the driver in batches, in order.
//!
//! Decoding is most of the work per line, so it runs beside the session core, and on two
//! tasks at once: the reading task frames the stream with byre-transport's [`NdjsonCodec`]
//! (cheap: a search for newlines) into batches of lines and deals them out in turn to
//! [`DECODERS`] decoding tasks, which decode each line from its bytes ([`decode_bytes`]); the
//! driver takes the decoded batches back in the same turn, so the order is kept. On a runtime
//! with several worker threads the decoders run in parallel with each other and with the
//! driver. A small batch (a slow stream's line, or a few) is decoded by the reading task
//! itself when the decoder whose turn it is holds nothing: one task fewer between the CLI's
//! write and the consumer, where latency is what counts.
//!
//! Memory stays bounded, in lines and in bytes: every channel holds at most [`BATCHES`]
//! batches of at most [`BATCH_LINES`] lines and about [`BATCH_BYTES`] bytes, and the reading
//! task reads no further while the lines read and not yet handed to the consumer (their events
//! still in these channels, the core or the event queue) pass
//! [`PIPELINE_BYTES`](super::queue::PIPELINE_BYTES) (a line longer than that is alone past the
//! mark). When the consumer is slow, the reading task stops reading, and the CLI's writes
//! block.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use byre_transport::CliOutput;

use super::queue::Budget;
use byre_transport::{decode_bytes, Frame, LineFrame, NdjsonCodec};
use bytes::Bytes;
use futures::{FutureExt, StreamExt};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::codec::FramedRead;

/// After the CLI has exited, how long its stdout may stay quiet before byre stops reading it:
/// what the CLI wrote is in the pipe already, and a process it started (in a session of its
/// own, out of the group's reach) may hold the pipe open for ever.
pub(super) const DRAIN_QUIET: Duration = Duration::from_millis(500);

/// After the CLI has exited, the longest byre reads what is left of its stdout.
pub(super) const DRAIN_MAX: Duration = Duration::from_secs(2);

/// The read buffer for the CLI's stdout: a pipe holds 64 KiB by default.
const READ_BUFFER: usize = 64 * 1024;

/// The most lines in one batch.
const BATCH_LINES: usize = 64;

/// The most batches waiting in each channel.
const BATCHES: usize = 2;

/// The decoding tasks.
const DECODERS: usize = 2;

/// A batch takes no more lines once it holds this many bytes.
const BATCH_BYTES: usize = 1 << 20;

/// One line read from the CLI.
pub(super) struct Line {
    /// What it decoded to.
    pub(super) frame: Frame,
    /// Its bytes, when asked for (for a transcript).
    pub(super) bytes: Option<Bytes>,
    /// Its length in bytes, as taken from the [`Budget`].
    pub(super) len: usize,
}

/// The driver's end: batches of lines, in order; `None` once stdout has ended (or failed).
pub(super) struct Reader {
    decoded: Vec<mpsc::Receiver<Vec<Line>>>,
    /// The decoder whose batch comes next.
    turn: usize,
    tasks: Vec<JoinHandle<()>>,
    /// Whether stdout has ended (or reading was stopped): [`Reader::next`] gave `None`.
    done: bool,
}

impl Reader {
    /// Starts reading `stdout`, with lines of at most `max_line` bytes; `keep_lines` keeps each
    /// line's bytes beside its message. Every line read is taken from `budget`; whoever ends
    /// up holding it gives it back.
    pub(super) fn spawn(
        stdout: CliOutput,
        max_line: usize,
        keep_lines: bool,
        budget: Arc<Budget>,
    ) -> Reader {
        let frames =
            FramedRead::with_capacity(stdout, NdjsonCodec::with_max_line(max_line), READ_BUFFER);
        let mut decoders = Vec::with_capacity(DECODERS);
        let mut decoded = Vec::with_capacity(DECODERS);
        let mut tasks = Vec::with_capacity(DECODERS + 1);
        for _ in 0..DECODERS {
            let (framed_tx, framed_rx) = mpsc::channel(BATCHES);
            let (decoded_tx, decoded_rx) = mpsc::channel(BATCHES);
            let in_flight = Arc::new(AtomicUsize::new(0));
            tasks.push(tokio::spawn(decode(
                framed_rx,
                decoded_tx.clone(),
                in_flight.clone(),
                keep_lines,
                budget.clone(),
            )));
            decoders.push(Decoder {
                framed: framed_tx,
                decoded: decoded_tx,
                in_flight,
            });
            decoded.push(decoded_rx);
        }
        tasks.push(tokio::spawn(read(frames, decoders, keep_lines, budget)));
        Reader {
            decoded,
            turn: 0,
            tasks,
            done: false,
        }
    }

    /// The next batch. Cancel-safe (a batch not taken stays in its channel), so it may be
    /// raced in `select!`.
    pub(super) async fn next(&mut self) -> Option<Vec<Line>> {
        let batch = match self.decoded.get_mut(self.turn) {
            Some(decoded) => decoded.recv().await,
            None => None,
        };
        let Some(batch) = batch else {
            self.done = true;
            return None;
        };
        self.turn = (self.turn + 1) % self.decoded.len();
        Some(batch)
    }

    /// Whether stdout has ended, or reading was stopped.
    pub(super) fn is_done(&self) -> bool {
        self.done
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
        self.done = true;
    }
}

impl Drop for Reader {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

/// The reading task's end of one decoding task.
struct Decoder {
    /// Framed batches to decode.
    framed: mpsc::Sender<Vec<LineFrame>>,
    /// Where the decoder sends them decoded, for a small batch the reading task decodes itself.
    decoded: mpsc::Sender<Vec<Line>>,
    /// Batches sent to the decoder and not yet passed on by it.
    in_flight: Arc<AtomicUsize>,
}

/// A batch of at most this many lines, of at most [`INLINE_BYTES`] bytes, is decoded by the
/// reading task itself when the decoder whose turn it is has nothing in hand: a slow stream's
/// lines reach the driver one task sooner, and none overtakes another (the driver takes each
/// decoder's batches in the order they were dealt).
const INLINE_LINES: usize = 4;

/// See [`INLINE_LINES`].
const INLINE_BYTES: usize = 64 * 1024;

/// Reads until stdout ends or fails, or the driver goes, dealing out batches of framed lines
/// to the decoders in turn. A batch takes the lines already in the read buffer after its
/// first, so a fast stream moves in batches and a slow one line by line, without waiting.
async fn read(
    mut frames: FramedRead<CliOutput, NdjsonCodec>,
    decoders: Vec<Decoder>,
    keep_lines: bool,
    budget: Arc<Budget>,
) {
    let size = |frame: &LineFrame| match frame {
        LineFrame::Line(bytes) => bytes.len(),
        LineFrame::BadLine(_) => 0,
    };
    for turn in (0..decoders.len()).cycle() {
        budget.room().await;
        let Some(Ok(first)) = frames.next().await else {
            return;
        };
        let mut bytes = size(&first);
        let mut batch = Vec::with_capacity(BATCH_LINES);
        batch.push(first);
        let mut ended = false;
        while batch.len() < BATCH_LINES && bytes < BATCH_BYTES {
            match frames.next().now_or_never() {
                Some(Some(Ok(frame))) => {
                    bytes += size(&frame);
                    batch.push(frame)
                }
                Some(Some(Err(_)) | None) => {
                    ended = true;
                    break;
                }
                None => break,
            }
        }
        budget.take(bytes);
        let decoder = &decoders[turn];
        let inline = batch.len() <= INLINE_LINES
            && bytes <= INLINE_BYTES
            && decoder.in_flight.load(Ordering::Acquire) == 0;
        let sent = if inline {
            let lines = decode_batch(batch, keep_lines);
            match decoder.decoded.send(lines).await {
                Ok(()) => true,
                Err(unsent) => {
                    budget.give_back(unsent.0.iter().map(|line| line.len).sum());
                    false
                }
            }
        } else {
            decoder.in_flight.fetch_add(1, Ordering::AcqRel);
            decoder.framed.send(batch).await.is_ok()
        };
        if !sent || ended {
            return;
        }
    }
}

/// Decodes batches until the reading task or the driver goes.
async fn decode(
    mut framed: mpsc::Receiver<Vec<LineFrame>>,
    decoded: mpsc::Sender<Vec<Line>>,
    in_flight: Arc<AtomicUsize>,
    keep_lines: bool,
    budget: Arc<Budget>,
) {
    while let Some(batch) = framed.recv().await {
        let lines = decode_batch(batch, keep_lines);
        let sent = decoded.send(lines).await;
        // Passed on (or dropped): the reading task may send this decoder's turn itself.
        in_flight.fetch_sub(1, Ordering::AcqRel);
        if let Err(unsent) = sent {
            budget.give_back(unsent.0.iter().map(|line| line.len).sum());
            return;
        }
    }
}

/// Decodes each line of `batch`, keeping its bytes when `keep_lines`.
fn decode_batch(batch: Vec<LineFrame>, keep_lines: bool) -> Vec<Line> {
    batch
        .into_iter()
        .map(|frame| match frame {
            LineFrame::Line(bytes) => Line {
                frame: decode_bytes(&bytes),
                len: bytes.len(),
                bytes: keep_lines.then_some(bytes),
            },
            LineFrame::BadLine(bad) => Line {
                frame: Frame::BadLine(bad),
                bytes: None,
                len: 0,
            },
        })
        .collect()
}
