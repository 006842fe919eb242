//! The NDJSON codec: one protocol message per line, in both directions.
//!
//! The decoder yields an item for every line: a decoded message, or a [`BadLine`] saying why the
//! line is not one (not JSON, not an object, no `type`, too long). It never returns an error for
//! bad input, so a [`FramedRead`](tokio_util::codec::FramedRead) over the CLI's stdout never ends
//! on one. An over-long line is skipped in bounded memory and reported with its length;
//! decoding resumes at the next line.

use std::io;
use std::marker::PhantomData;

use byre_proto::{CliMessage, DecodeError, DecodeErrorKind, HostMessage};
use bytes::{Buf, BufMut, Bytes, BytesMut};
use serde::Serialize;
use tokio_util::codec::{Decoder, Encoder};

/// The default longest line: 64 MiB. The CLI writes single lines of several megabytes (a long
/// answer, a big tool result), and `system/init` passes 256 KB with many MCP tools.
pub const DEFAULT_MAX_LINE: usize = 64 * 1024 * 1024;

/// One decoded line.
#[derive(Debug, Clone, PartialEq)]
pub enum Frame<T> {
    /// A message (typed, or `Unknown` for a type byre does not know).
    Message(T),
    /// A line that is not a message.
    BadLine(BadLine),
}

/// A line that is not a protocol message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad line ({len} bytes): {reason}")]
pub struct BadLine {
    /// Why.
    pub reason: BadLineReason,
    /// The line's length in bytes, without its newline.
    pub len: usize,
    /// Its first bytes, lossily as UTF-8 (empty for an over-long line).
    pub head: String,
}

/// Why a line is not a message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BadLineReason {
    /// Not valid JSON.
    #[error("not JSON: {0}")]
    NotJson(String),
    /// JSON, but not an object.
    #[error("not a JSON object")]
    NotObject,
    /// An object without a string `type`.
    #[error("no string \"type\" key")]
    NoType,
    /// Longer than the codec's limit; skipped without being kept.
    #[error("longer than the {max}-byte limit")]
    TooLong {
        /// The limit.
        max: usize,
    },
}

impl From<DecodeError> for BadLine {
    fn from(e: DecodeError) -> Self {
        let reason = match e.kind {
            DecodeErrorKind::NotJson(why) => BadLineReason::NotJson(why),
            DecodeErrorKind::NotObject => BadLineReason::NotObject,
            _ => BadLineReason::NoType,
        };
        BadLine {
            reason,
            len: e.len,
            head: e.head,
        }
    }
}

/// A message type one line decodes to.
pub trait Line: Sized {
    /// Decodes one line, without its newline.
    fn from_line(line: &[u8]) -> Result<Self, DecodeError>;
}

impl Line for CliMessage {
    fn from_line(line: &[u8]) -> Result<Self, DecodeError> {
        CliMessage::from_slice(line)
    }
}

impl Line for HostMessage {
    fn from_line(line: &[u8]) -> Result<Self, DecodeError> {
        HostMessage::from_slice(line)
    }
}

/// The NDJSON codec. `T` is what lines decode to: [`CliMessage`] for the CLI's stdout (the
/// default), [`HostMessage`] for a stand-in CLI reading a host's lines.
///
/// Decoding handles `\n` and `\r\n` line ends, a UTF-8 byte-order mark before the first line,
/// blank lines (skipped), and a last line without a newline at end of input. Scanning resumes
/// where the previous call stopped, so a line that arrives in many pieces is scanned once, and
/// each line is parsed once. All state lives in the codec, so reading through a `FramedRead` is
/// cancel-safe.
#[derive(Debug)]
pub struct NdjsonCodec<T = CliMessage> {
    max_line: usize,
    /// Where to resume looking for a newline in the buffer.
    scanned: usize,
    /// The bytes of an over-long line dropped so far, while skipping to its end.
    skipping: Option<usize>,
    /// Whether the next line is the first of the stream (a BOM may precede it).
    first: bool,
    /// Whether to keep the bytes of the last line decoded.
    keep_lines: bool,
    /// The last line decoded (without its line end), when kept.
    last_line: Option<Bytes>,
    _message: PhantomData<fn() -> T>,
}

impl<T> NdjsonCodec<T> {
    /// A codec with the default 64 MiB line limit.
    pub fn new() -> Self {
        Self::with_max_line(DEFAULT_MAX_LINE)
    }

    /// A codec whose lines may be at most `max_line` bytes (without the newline).
    pub fn with_max_line(max_line: usize) -> Self {
        NdjsonCodec {
            max_line,
            scanned: 0,
            skipping: None,
            first: true,
            keep_lines: false,
            last_line: None,
            _message: PhantomData,
        }
    }

    /// Keeps the bytes of each decoded line, for [`NdjsonCodec::last_line`] (a transcript
    /// writer records them as they were, without encoding the message again). Costs no copy.
    #[must_use]
    pub fn keep_lines(mut self, keep: bool) -> Self {
        self.keep_lines = keep;
        self
    }

    /// The bytes of the line behind the last frame (without its line end), when
    /// [`NdjsonCodec::keep_lines`] is on.
    pub fn last_line(&self) -> Option<&Bytes> {
        self.last_line.as_ref()
    }

    /// The line limit.
    pub fn max_line(&self) -> usize {
        self.max_line
    }

    fn too_long(&self, len: usize) -> BadLine {
        BadLine {
            reason: BadLineReason::TooLong { max: self.max_line },
            len,
            head: String::new(),
        }
    }
}

impl<T> Default for NdjsonCodec<T> {
    fn default() -> Self {
        Self::new()
    }
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

impl<T: Line> NdjsonCodec<T> {
    /// Turns one complete line (without `\n`) into a frame; `None` for a blank line.
    fn frame(&mut self, whole: Bytes) -> Option<Frame<T>> {
        let mut start = 0;
        let mut end = whole.len();
        if std::mem::take(&mut self.first) && whole.starts_with(BOM) {
            start = BOM.len();
        }
        if end > start && whole[end - 1] == b'\r' {
            end -= 1;
        }
        let line = &whole[start..end];
        if line.iter().all(|b| b.is_ascii_whitespace()) {
            return None;
        }
        if self.keep_lines {
            self.last_line = Some(whole.slice(start..end));
        }
        if line.len() > self.max_line {
            return Some(Frame::BadLine(self.too_long(line.len())));
        }
        Some(match T::from_line(line) {
            Ok(message) => Frame::Message(message),
            Err(e) => Frame::BadLine(e.into()),
        })
    }
}

impl<T: Line> Decoder for NdjsonCodec<T> {
    type Item = Frame<T>;
    type Error = io::Error;

    fn decode(&mut self, buf: &mut BytesMut) -> io::Result<Option<Frame<T>>> {
        loop {
            let newline = memchr::memchr(b'\n', &buf[self.scanned..]).map(|i| self.scanned + i);
            if let Some(dropped) = self.skipping {
                match newline {
                    Some(at) => {
                        buf.advance(at + 1);
                        self.scanned = 0;
                        self.skipping = None;
                        self.first = false;
                        return Ok(Some(Frame::BadLine(self.too_long(dropped + at))));
                    }
                    None => {
                        self.skipping = Some(dropped + buf.len());
                        buf.clear();
                        self.scanned = 0;
                        return Ok(None);
                    }
                }
            }
            match newline {
                Some(at) => {
                    let line = buf.split_to(at + 1).freeze().slice(..at);
                    self.scanned = 0;
                    match self.frame(line) {
                        Some(frame) => return Ok(Some(frame)),
                        None => continue,
                    }
                }
                None if buf.len() > self.max_line => {
                    // Keep at most one trailing `\r` candidate's worth of state: drop it all.
                    self.skipping = Some(buf.len());
                    buf.clear();
                    self.scanned = 0;
                    return Ok(None);
                }
                None => {
                    self.scanned = buf.len();
                    return Ok(None);
                }
            }
        }
    }

    fn decode_eof(&mut self, buf: &mut BytesMut) -> io::Result<Option<Frame<T>>> {
        if let Some(frame) = self.decode(buf)? {
            return Ok(Some(frame));
        }
        if let Some(dropped) = self.skipping.take() {
            let len = dropped + buf.len();
            buf.clear();
            self.scanned = 0;
            return Ok(Some(Frame::BadLine(self.too_long(len))));
        }
        if buf.is_empty() {
            return Ok(None);
        }
        let line = buf.split().freeze();
        self.scanned = 0;
        Ok(self.frame(line))
    }
}

/// Writes one message as one line: compact JSON (newlines inside strings are escaped, so the
/// line cannot break) followed by `\n`.
///
/// The codec decodes one type and encodes any other: a host decodes [`CliMessage`] and
/// encodes [`HostMessage`] (or a reference to one).
impl<T, M: Serialize> Encoder<M> for NdjsonCodec<T> {
    type Error = io::Error;

    fn encode(&mut self, message: M, buf: &mut BytesMut) -> io::Result<()> {
        let mut writer = buf.writer();
        serde_json::to_writer(&mut writer, &message).map_err(io::Error::other)?;
        writer.into_inner().put_u8(b'\n');
        Ok(())
    }
}

/// Encodes any serializable message as one line, for writers that do not use the codec.
pub fn encode_line<M: Serialize>(message: &M) -> io::Result<Vec<u8>> {
    let mut line = serde_json::to_vec(message).map_err(io::Error::other)?;
    line.push(b'\n');
    Ok(line)
}
