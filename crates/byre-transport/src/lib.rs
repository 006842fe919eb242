//! The IO layer of byre: an NDJSON codec over tokio-util framing with a bounded line length
//! that recovers from over-long and malformed lines.
//!
//! Still to come in this crate (see the README's "Not done yet"): the launcher that builds the
//! `claude` argv and environment, a bounded stderr buffer, shutdown that leaves no orphan
//! processes, and the transcript writer.

mod codec;

pub use crate::codec::{
    encode_line, BadLine, BadLineReason, Frame, Line, NdjsonCodec, DEFAULT_MAX_LINE,
};
