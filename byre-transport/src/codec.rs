//! The NDJSON codec: a framer that splits a stream into lines, decoding a line into a message
//! as a step of its own, and the encoding of one message as one line.
//!
//! [`NdjsonCodec`] is a [`Decoder`] in the shape of tokio-util's `LinesCodec`: for every line
//! it yields a [`LineFrame`], the line's bytes ([`LineFrame::Line`], a [`Bytes`] that shares
//! the read buffer: no copy) or a [`BadLine`] for a line it does not pass on (longer than its
//! limit). It never returns an error for bad input, so a
//! [`FramedRead`](tokio_util::codec::FramedRead) over the CLI's stdout never ends on one (after
//! a decoder error, a `FramedRead` ends). An over-long line is discarded as it arrives and
//! reported with its length and first bytes; framing resumes at the next line.
//!
//! [`decode_frame`] (or [`decode_line`] for a line's bytes) turns a line into a [`Frame`]: a
//! message, or a [`BadLine`] holding byre-proto's [`DecodeError`]. The two steps being apart, a
//! reader may frame on one task and decode on others, and keep a line's bytes beside its
//! message (for a transcript) without asking the codec for them.
//!
//! [`encode_line`] goes the other way: one message, one line.

use std::io;

use byre_proto::{CliMessage, DecodeError, Decoded};
use bytes::{Buf, Bytes, BytesMut};
use serde::Serialize;
use tokio_util::codec::Decoder;

/// The default longest line: 64 MiB. The CLI writes single lines of several megabytes (a long
/// answer, a big tool result), and `system/init` passes 256 KB with many MCP tools.
pub const DEFAULT_MAX_LINE: usize = 64 * 1024 * 1024;

/// What the codec yields for one line of input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineFrame {
    /// A line's bytes: without its line end (`\n` or `\r\n`), and without the byte-order mark
    /// that may precede the first line. Never blank: blank lines are skipped.
    Line(Bytes),
    /// A line the codec does not pass on (see [`BadLineReason`] for which).
    BadLine(BadLine),
}

/// One line, decoded: what [`decode_frame`] and [`decode_line`] give.
#[derive(Debug, Clone, PartialEq)]
pub enum Frame {
    /// A message (typed, or `Unknown` for a type byre does not know).
    Message {
        /// The message, of the type its `type` names.
        message: CliMessage,
        /// The parts of it that did not fit the model, kept as text where they sit: each a
        /// JSON path and a reason (see [`CliMessage::decode`]). Almost always empty.
        misfits: Vec<String>,
    },
    /// A line that is not a message.
    BadLine(BadLine),
}

/// A line that is not a protocol message: one the codec did not pass on, or one that does not
/// decode.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad line ({len} bytes): {reason}")]
pub struct BadLine {
    /// Why.
    pub reason: BadLineReason,
    /// The line's length in bytes, without its line end.
    pub len: usize,
    /// Its first bytes (at most [`DecodeError::HEAD_LEN`]), lossily as UTF-8.
    pub head: String,
}

/// Why a line is not a message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BadLineReason {
    /// The line does not decode (not JSON, not an object, no string `type`): the error of
    /// [`CliMessage::from_slice`], as it is. Shown as its [kind](DecodeError::kind), the
    /// length and head being the [`BadLine`]'s.
    #[error("{}", .0.kind)]
    Decode(#[source] DecodeError),
    /// Longer than the codec's limit: discarded as it arrived, without being kept.
    #[error("longer than the {max}-byte limit")]
    TooLong {
        /// The limit.
        max: usize,
    },
}

impl From<DecodeError> for BadLine {
    fn from(error: DecodeError) -> Self {
        BadLine {
            len: error.len,
            head: error.head.clone(),
            reason: BadLineReason::Decode(error),
        }
    }
}

/// Decodes one line (without its line end) into a frame.
pub fn decode_line(line: &[u8]) -> Frame {
    match CliMessage::decode(line) {
        Ok(Decoded { message, misfits }) => Frame::Message { message, misfits },
        Err(error) => Frame::BadLine(error.into()),
    }
}

/// Decodes one line (without its line end) held in a [`Bytes`] into a frame: as
/// [`decode_line`], and a long text that is most of a long line shares the line's memory
/// instead of being copied ([`CliMessage::decode_bytes`]).
pub fn decode_bytes(line: &Bytes) -> Frame {
    match CliMessage::decode_bytes(line) {
        Ok(Decoded { message, misfits }) => Frame::Message { message, misfits },
        Err(error) => Frame::BadLine(error.into()),
    }
}

/// Decodes what the codec framed: a line into a message or a bad line; a bad line stays one.
pub fn decode_frame(frame: LineFrame) -> Frame {
    match frame {
        LineFrame::Line(line) => decode_bytes(&line),
        LineFrame::BadLine(bad) => Frame::BadLine(bad),
    }
}

/// Encodes a message as one line: compact JSON (newlines inside strings are escaped, so the
/// line cannot break) followed by `\n`.
pub fn encode_line<M: Serialize>(message: &M) -> io::Result<Vec<u8>> {
    let mut line = serde_json::to_vec(message).map_err(io::Error::other)?;
    line.push(b'\n');
    Ok(line)
}

/// A read buffer above this size is given back once the line that needed it is framed (or
/// while an over-long line is discarded), so that a big line costs its memory only while it
/// lives.
const LARGE_BUFFER: usize = 4 * 1024 * 1024;

/// The capacity of the read buffer that replaces a large one.
const SMALL_BUFFER: usize = 64 * 1024;

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// A line that reaches this size without its newline is moved out of the read buffer into a
/// [`LongLine`], and the buffer is read into afresh: it does not double again and again with
/// the line (a doubling copies, and holds the old and the new allocation at once).
const PIECE: usize = 1024 * 1024;

/// The start of a line longer than a [`PIECE`], gathered where it will stay: in a mapping of
/// anonymous memory as large as the longest line allowed, of which only the pages written
/// are memory. Its bytes are copied once, and given back to the system the moment the line
/// is dropped, however the allocator keeps what it frees. Where no such mapping can be made
/// (a limit larger than the address space allows), on the heap.
#[derive(Debug)]
enum LongLine {
    /// In a mapping; `len` bytes written.
    Mapped { map: memmap2::MmapMut, len: usize },
    /// On the heap.
    Heap(Vec<u8>),
}

impl LongLine {
    /// Room for `capacity` bytes.
    fn new(capacity: usize) -> Self {
        match memmap2::MmapOptions::new().len(capacity).map_anon() {
            Ok(map) => LongLine::Mapped { map, len: 0 },
            Err(_) => LongLine::Heap(Vec::new()),
        }
    }

    fn len(&self) -> usize {
        match self {
            LongLine::Mapped { len, .. } => *len,
            LongLine::Heap(bytes) => bytes.len(),
        }
    }

    /// Its first bytes.
    fn bytes(&self) -> &[u8] {
        match self {
            LongLine::Mapped { map, len } => &map[..*len],
            LongLine::Heap(bytes) => bytes,
        }
    }

    /// Appends `more`, which the caller keeps within the capacity.
    fn extend(&mut self, more: &[u8]) {
        match self {
            LongLine::Mapped { map, len } => {
                map[*len..*len + more.len()].copy_from_slice(more);
                *len += more.len();
            }
            LongLine::Heap(bytes) => bytes.extend_from_slice(more),
        }
    }

    fn into_bytes(self) -> Bytes {
        match self {
            LongLine::Mapped { map, len } => Bytes::from_owner(map).slice(..len),
            LongLine::Heap(bytes) => Bytes::from(bytes),
        }
    }
}

/// The NDJSON framer: splits a stream into lines of at most a limit, and reports the longer
/// ones.
///
/// It handles `\n` and `\r\n` line ends, a UTF-8 byte-order mark before the first line, blank
/// lines (skipped), and a last line without a newline at end of input (framed as a line, as
/// `LinesCodec` does). Each byte is searched for a newline once, however many reads a line
/// arrives in, and never further than the limit: a line that passes the limit is discarded
/// as more of it arrives, so the buffer does not grow with it. A line shorter than a piece
/// (1 MiB) is the read buffer's own bytes, not a copy; a longer one is copied once, as it
/// arrives, into anonymous memory mapped for it (only the pages written count), so it costs
/// about its own size and the read buffer while it is framed, and gives its memory back to
/// the system when dropped; a line skipped costs at most the limit and the read buffer. All
/// state lives in the codec, so reading through a `FramedRead` is cancel-safe.
#[derive(Debug)]
pub struct NdjsonCodec {
    max_line: usize,
    /// Where to resume looking for a newline in the buffer.
    scanned: usize,
    /// The over-long line being discarded, if any.
    discarding: Option<Discarding>,
    /// Whether the next line is the first of the stream (a BOM may precede it).
    first: bool,
    /// The start of a line longer than a piece, moved out of the read buffer.
    long: Option<LongLine>,
}

/// An over-long line being discarded up to its newline.
#[derive(Debug)]
struct Discarding {
    /// Its bytes dropped from the buffer so far.
    dropped: usize,
    /// Its first bytes, for the report.
    head: String,
    /// Whether the last byte dropped was a `\r` (perhaps the line's end).
    ends_cr: bool,
}

impl NdjsonCodec {
    /// A codec with the default 64 MiB line limit.
    pub fn new() -> Self {
        Self::with_max_line(DEFAULT_MAX_LINE)
    }

    /// A codec whose lines may be at most `max_line` bytes (without their line end).
    pub fn with_max_line(max_line: usize) -> Self {
        NdjsonCodec {
            max_line,
            scanned: 0,
            discarding: None,
            first: true,
            long: None,
        }
    }

    /// The line limit.
    pub fn max_line(&self) -> usize {
        self.max_line
    }

    fn too_long(&self, len: usize, head: String) -> LineFrame {
        LineFrame::BadLine(BadLine {
            reason: BadLineReason::TooLong { max: self.max_line },
            len,
            head,
        })
    }

    /// The bytes of the line moved out of the read buffer so far.
    fn long_len(&self) -> usize {
        self.long.as_ref().map_or(0, LongLine::len)
    }

    /// The whole line whose last bytes are the first `end` of `buf`, taken off the buffer
    /// (with the newline after them when `newline`).
    fn take_line(&mut self, buf: &mut BytesMut, end: usize, newline: bool) -> Bytes {
        let taken = end + usize::from(newline);
        match self.long.take() {
            None => {
                let mut line = buf.split_to(taken).freeze();
                line.truncate(end);
                line
            }
            Some(mut long) => {
                long.extend(&buf[..end]);
                buf.advance(taken);
                long.into_bytes()
            }
        }
    }

    /// Turns one complete line (without its `\n`) into a frame; `None` for a blank line.
    fn frame(&mut self, mut line: Bytes) -> Option<LineFrame> {
        if std::mem::take(&mut self.first) && line.starts_with(BOM) {
            line.advance(BOM.len());
        }
        if line.last() == Some(&b'\r') {
            line.truncate(line.len() - 1);
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            return None;
        }
        if line.len() > self.max_line {
            return Some(self.too_long(line.len(), head(&line)));
        }
        Some(LineFrame::Line(line))
    }
}

impl Default for NdjsonCodec {
    fn default() -> Self {
        Self::new()
    }
}

/// The first bytes of a line, for a report.
fn head(line: &[u8]) -> String {
    String::from_utf8_lossy(&line[..line.len().min(DecodeError::HEAD_LEN)]).into_owned()
}

/// Gives back a large read buffer for a small one holding the same bytes (when they are few).
/// `used` is what was just split off the buffer's allocation (a line): the allocation is that
/// and the buffer's capacity. The line keeps the old allocation alive only as long as it lives.
fn release_large(buf: &mut BytesMut, used: usize) {
    if used + buf.capacity() > LARGE_BUFFER && buf.len() <= SMALL_BUFFER {
        let mut small = BytesMut::with_capacity(SMALL_BUFFER);
        small.extend_from_slice(buf);
        *buf = small;
    }
}

impl Decoder for NdjsonCodec {
    type Item = LineFrame;
    type Error = io::Error;

    fn decode(&mut self, buf: &mut BytesMut) -> io::Result<Option<LineFrame>> {
        loop {
            if let Some(discarding) = &mut self.discarding {
                let newline = memchr::memchr(b'\n', &buf[self.scanned..]).map(|i| self.scanned + i);
                self.scanned = 0;
                let Some(at) = newline else {
                    discarding.dropped += buf.len();
                    if let Some(&last) = buf.last() {
                        discarding.ends_cr = last == b'\r';
                    }
                    buf.clear();
                    release_large(buf, 0);
                    return Ok(None);
                };
                let cr = match at {
                    0 => discarding.ends_cr,
                    _ => buf[at - 1] == b'\r',
                };
                let len = discarding.dropped + at - usize::from(cr);
                let head = std::mem::take(&mut discarding.head);
                self.discarding = None;
                buf.advance(at + 1);
                release_large(buf, 0);
                return Ok(Some(self.too_long(len, head)));
            }
            // A line's newline comes at most this far in: the limit, a `\r`, and a BOM before
            // the first line (a long line has had its own taken off).
            let bom = if self.first && self.long.is_none() && buf.starts_with(BOM) {
                BOM.len()
            } else {
                0
            };
            let limit = self.max_line.saturating_add(1 + bom);
            let room = limit - self.long_len();
            let search_to = buf.len().min(room.saturating_add(1));
            let newline =
                memchr::memchr(b'\n', &buf[self.scanned..search_to]).map(|i| self.scanned + i);
            match newline {
                Some(at) => {
                    self.scanned = 0;
                    // After a long line, the piece-sized buffer goes too.
                    let used = if self.long.is_none() {
                        at + 1
                    } else {
                        LARGE_BUFFER
                    };
                    let line = self.take_line(buf, at, true);
                    release_large(buf, used);
                    if let Some(frame) = self.frame(line) {
                        return Ok(Some(frame));
                    }
                }
                None if buf.len() > room => {
                    // No newline within the limit: the line is too long. Keep its head and
                    // discard it from here to its newline.
                    self.first = false;
                    let long = self.long.take();
                    let head = match &long {
                        Some(long) => head(long.bytes()),
                        None => head(&buf[bom..]),
                    };
                    buf.advance(bom);
                    self.scanned = search_to - bom;
                    self.discarding = Some(Discarding {
                        dropped: long.as_ref().map_or(0, LongLine::len),
                        head,
                        ends_cr: false,
                    });
                }
                None if buf.len() >= PIECE => {
                    // A long line: what the buffer holds of it moves to where the line is
                    // gathered, and reading goes on into the emptied buffer.
                    if bom > 0 {
                        buf.advance(bom);
                        self.first = false;
                    }
                    self.long
                        .get_or_insert_with(|| LongLine::new(limit))
                        .extend(buf);
                    buf.clear();
                    self.scanned = 0;
                    return Ok(None);
                }
                None => {
                    self.scanned = search_to;
                    return Ok(None);
                }
            }
        }
    }

    fn decode_eof(&mut self, buf: &mut BytesMut) -> io::Result<Option<LineFrame>> {
        if let Some(frame) = self.decode(buf)? {
            return Ok(Some(frame));
        }
        self.scanned = 0;
        if let Some(discarding) = self.discarding.take() {
            let cr = match buf.last() {
                Some(&last) => last == b'\r',
                None => discarding.ends_cr,
            };
            let len = discarding.dropped + buf.len() - usize::from(cr);
            buf.clear();
            return Ok(Some(self.too_long(len, discarding.head)));
        }
        if buf.is_empty() && self.long.is_none() {
            return Ok(None);
        }
        let line = self.take_line(buf, buf.len(), false);
        Ok(self.frame(line))
    }
}
