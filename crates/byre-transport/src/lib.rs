//! The IO layer of byre: an NDJSON codec over tokio-util framing with a bounded line length
//! that recovers from over-long and malformed lines, and the launcher that finds `claude` and
//! builds its argv and environment.
//!
//! The process runs in its own process group with stderr drained into a bounded buffer, and
//! shuts down without leaving a zombie or an orphan. The transcript module reads and writes the
//! one transcript format: every line in both directions, the account email redacted.

mod codec;
mod launch;
mod process;
mod transcript;

pub use crate::codec::{
    encode_line, BadLine, BadLineReason, Frame, Line, NdjsonCodec, DEFAULT_MAX_LINE,
};
pub use crate::launch::{
    cli_version, find_claude, search_locations, CliVersion, GitIdentity, Launch, LaunchError,
    SdkServer, CLAUDE_BIN_VAR, ENTRYPOINT,
};
pub use crate::process::{
    exit_hint, CliProcess, ExitInfo, ProcessOptions, StderrCallback, StderrTail, Stopped,
};
pub use crate::transcript::{
    read_transcript, transcript_cli_version, TranscriptDir, TranscriptError, TranscriptKind,
    TranscriptLine, TranscriptReader, TranscriptWriter, REDACTED,
};
