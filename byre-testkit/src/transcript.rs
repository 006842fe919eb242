//! Transcripts: byre-transport's transcript module, for tests. One JSON object per line, in
//! the order things happened (`t` being seconds since the transcript began):
//!
//! ```text
//! {"dir":"note","t":0.0,"note":"argv: [...]"}
//! {"dir":"send","t":0.001,"msg":{...}}
//! {"dir":"recv","t":0.43,"msg":{...}}
//! {"dir":"send","t":0.5,"raw":"{not json"}
//! ```
//!
//! byre-session's driver (with a transcript file) writes this format with [`TranscriptWriter`];
//! [`read_transcript`], [`TranscriptReader`] and [`TranscriptLine::parse`] read it back. Each
//! [`TranscriptLine`] keeps a message's exact text, decoded from there
//! ([`TranscriptLine::decode`], [`TranscriptLine::decode_recv`]) or parsed when a test wants a
//! [`serde_json::Value`] ([`TranscriptLine::msg`]).

pub use byre_transport::{
    read_transcript, transcript_cli_version, TranscriptDir, TranscriptError, TranscriptKind,
    TranscriptLine, TranscriptReader, TranscriptWriter, REDACTED,
};
