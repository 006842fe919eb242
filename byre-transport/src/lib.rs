//! The IO layer of byre: an NDJSON framer over tokio-util with a bounded line length that
//! recovers from over-long lines, the decoding of a line as a step of its own, and the launcher
//! that finds `claude` and builds its argv and environment.
//!
//! A [`Spawn`]er starts the CLI: by default a local child ([`Local`]), or through another
//! command ([`Wrapper`]: `sudo`, `docker exec`, `ssh`). The local process runs in its own
//! process group with stderr drained into a bounded buffer, and shuts down without leaving a
//! zombie or an orphan: on Linux not even one that left the group, found by the tag in its
//! environment ([`PROCESS_TAG_VAR`]). The transcript module reads and writes the one
//! transcript format: every line in both directions, the account email redacted; it reads a
//! file a line at a time, with the codec's framing over a blocking reader ([`LineReader`]).
//!
//! Most programs use it through byre-session (`byre_session::transport`). The guide has what it
//! does for them: [running the CLI elsewhere][spawn], [process cleanup and many
//! agents][many-agents], [session history and stores][sessions]; its [index][guide] lists the rest.
//! byre-testkit checks a `SessionStore` of your own against the trait's contract
//! (`store_conformance`), and `byre-session/examples/wrapper.rs` runs the CLI through a wrapper.
//!
//! [spawn]: https://github.com/byre-rs/byre/blob/main/docs/spawn.md
//! [many-agents]: https://github.com/byre-rs/byre/blob/main/docs/many-agents.md
//! [sessions]: https://github.com/byre-rs/byre/blob/main/docs/sessions.md
//! [guide]: https://github.com/byre-rs/byre/blob/main/docs/README.md

mod codec;
mod descendants;
mod launch;
mod lines;
mod os;
mod private;
mod process;
mod redact;
mod sessions;
mod spawn;
pub mod store;
mod transcript;
mod worktrees;

pub use crate::codec::{
    decode_bytes, decode_frame, decode_line, encode_line, BadLine, BadLineReason, Frame, LineFrame,
    NdjsonCodec, DEFAULT_MAX_LINE,
};
pub use crate::descendants::PROCESS_TAG_VAR;
pub use crate::launch::{
    cli_version, env_allowed, find_claude, search_locations, CliVersion, Delivery, GitIdentity,
    Launch, LaunchError, SdkServer, Thinking, CLAUDE_BIN_VAR, DEFAULT_ENV_ALLOW, ENTRYPOINT,
};
pub use crate::lines::LineReader;
pub use crate::process::{
    exit_hint, CliProcess, ExitInfo, ProcessOptions, StderrCallback, StderrTail, Stopped,
    STDERR_LINE_LIMIT,
};
pub use crate::sessions::{
    config_dir, is_session_id, new_uuid, project_dir_name, session_info, SessionHistory,
    SessionInfo, SessionLog,
};
pub use crate::spawn::{
    shell_quote, BoxFuture, ChildHandle, CliOutput, CliStdin, Local, Spawn, SpawnRequest, Spawned,
    Wrapper, REMOTE_GRACE,
};
pub use crate::transcript::{
    read_transcript, transcript_cli_version, TranscriptDir, TranscriptError, TranscriptKind,
    TranscriptLine, TranscriptReader, TranscriptWriter, REDACTED, TRANSCRIPT_MAX_LINE,
};
pub use crate::worktrees::{worktrees, GIT_TIMEOUT};
