//! [`LineReader`]: the NDJSON codec's framing over a blocking reader, for reading a file line by
//! line in bounded memory, with each line's number.
//!
//! The reader hands [`NdjsonCodec`] its input one line at a time (the bytes up to and including
//! the next newline, or what has arrived of a line without one), so the codec's rules apply as
//! they do to the CLI's stdout: `\n` and `\r\n` line ends, a byte-order mark before the first
//! line, blank lines skipped, and a line longer than the limit reported as a [`BadLine`] (its
//! length and first bytes) and discarded as it is read, the next line read as usual. Feeding
//! one line at a time is what tells each frame's line number, blank lines counted.
//!
//! Its memory is the input's buffer, the codec's read buffer and the line being framed: at most
//! the limit, however long the input or its lines.
//!
//! [`BadLine`]: crate::BadLine

use std::io::{self, BufRead};

use bytes::BytesMut;
use tokio_util::codec::Decoder;

use crate::codec::{LineFrame, NdjsonCodec};

/// Reads lines from a [`BufRead`] with [`NdjsonCodec`]'s framing: each item is a line's bytes
/// or a [`BadLine`](crate::BadLine) for a line longer than the limit, after which reading goes
/// on at the next line. After a read error it ends.
#[derive(Debug)]
pub struct LineReader<R> {
    input: R,
    codec: NdjsonCodec,
    /// What the codec has been given and not yet framed: never more than one newline.
    buf: BytesMut,
    /// The number of newlines read.
    newlines: usize,
    /// The number of the line the last item came from.
    line: usize,
    done: bool,
}

impl<R: BufRead> LineReader<R> {
    /// Reads `input` with lines of at most `max_line` bytes (without their line end).
    pub fn new(input: R, max_line: usize) -> Self {
        LineReader {
            input,
            codec: NdjsonCodec::with_max_line(max_line),
            buf: BytesMut::new(),
            newlines: 0,
            line: 0,
            done: false,
        }
    }

    /// The number (from 1) of the line the last item came from; 0 before the first.
    pub fn line_number(&self) -> usize {
        self.line
    }

    /// The line limit.
    pub fn max_line(&self) -> usize {
        self.codec.max_line()
    }

    /// The input, for a reader that has not read yet.
    pub(crate) fn into_input(self) -> R {
        self.input
    }

    /// A frame the codec gave for the current line.
    fn framed(&mut self, frame: io::Result<Option<LineFrame>>) -> Option<io::Result<LineFrame>> {
        match frame {
            Ok(Some(frame)) => Some(Ok(frame)),
            Ok(None) => None,
            Err(error) => {
                self.done = true;
                Some(Err(error))
            }
        }
    }
}

impl<R: BufRead> Iterator for LineReader<R> {
    type Item = io::Result<LineFrame>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.done {
            let chunk = match self.input.fill_buf() {
                Ok(chunk) => chunk,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
                Err(error) => {
                    self.done = true;
                    return Some(Err(error));
                }
            };
            if chunk.is_empty() {
                // The end: a last line without a newline, or the end of an over-long one.
                self.done = true;
                self.line = self.newlines + 1;
                let frame = self.codec.decode_eof(&mut self.buf);
                return self.framed(frame);
            }
            let (take, newline) = match memchr::memchr(b'\n', chunk) {
                Some(at) => (at + 1, true),
                None => (chunk.len(), false),
            };
            self.buf.extend_from_slice(&chunk[..take]);
            self.input.consume(take);
            self.newlines += usize::from(newline);
            // The buffer holds at most this one newline, so a frame is this line.
            let frame = self.codec.decode(&mut self.buf);
            if let Some(item) = self.framed(frame) {
                self.line = self.newlines;
                return Some(item);
            }
        }
        None
    }
}
