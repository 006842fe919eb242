//! The IO layer of byre: an NDJSON codec over tokio-util framing with a bounded line length
//! that recovers from over-long and malformed lines, and the launcher that finds `claude` and
//! builds its argv and environment.
//!
//! Still to come in this crate (see the README's "Not done yet"): spawning with a bounded
//! stderr buffer, shutdown that leaves no orphan processes, and the transcript writer.

mod codec;
mod launch;

pub use crate::codec::{
    encode_line, BadLine, BadLineReason, Frame, Line, NdjsonCodec, DEFAULT_MAX_LINE,
};
pub use crate::launch::{
    cli_version, find_claude, search_locations, CliVersion, GitIdentity, Launch, LaunchError,
    SdkServer, CLAUDE_BIN_VAR, ENTRYPOINT,
};
