//! The tokio driver: runs a [`Session`](crate::session::Session) against a real CLI process
//! and offers the public API — a cloneable [`Claude`] handle with `&self` methods and an
//! [`Events`] stream.
//!
//! One task owns the process and the session core. Reading tasks split the CLI's stdout into
//! lines and decode them, on two tasks at once, handing them over in batches and in order
//! (`reader`); the driver task takes a batch only when every event so far is in the event
//! queue, which hands events to the [`Events`] stream in batches too (`queue`). So a slow
//! consumer pauses reading: nothing is dropped and nothing grows without bound. The driver task
//! writes what the core transmits, runs the host's handlers concurrently (each CLI request gets
//! exactly one answer, also when a handler fails or panics), and fails every pending request at
//! once when the CLI exits. CLI requests still appear in the event stream
//! ([`Event::Request`](crate::session::Event::Request)) for information: the driver answers
//! them through the registered handlers, or with an error when there is none.
//!
//! A session ends in one of two ways. [`Claude::close`] stops the CLI: it closes stdin, waits
//! a grace period, then sends SIGTERM and SIGKILL. [`Claude::end_input`] only closes stdin:
//! the CLI finishes what it was given (the running turn, queued prompts, a turn started by a
//! background task) and exits by itself; [`Claude::wait`] returns how it ended. Either way the
//! [`Events`] stream ends once every event before the exit has been delivered. A
//! [`Claude::terminate`] (a host stopped by SIGTERM) sends SIGTERM at once, also to a CLI
//! whose close is waiting out its grace. A CLI that closes its stdin while it runs is seen at
//! the next write, which fails: the session ends with [`Error::InputClosed`] (from `close`,
//! `wait`, `send`, and as [`TurnError::Session`] from a turn) and the CLI is stopped at once.
//!
//! With [`Options::transcript`], every line in both directions is written to a file in the
//! format of [`TranscriptWriter`](byre_transport::TranscriptWriter)
//! (`{"dir":"send"|"recv","t":..,"msg":..}`), with notes of what happened to the process
//! (`stdin closed`, `stdout closed`, `exited: exit status: 0`) and of the host's own
//! ([`Claude::note`]). A line is recorded as sent when it is handed to the writing task; a
//! write that fails adds a note naming each line it did not write (`not delivered (...)`).
//!
//! With [`Options::session_store`], the CLI mirrors its session files on stdout; the core
//! gathers those lines into batches and a task of the driver appends them to the store,
//! retried, off the driver's own loop (a slow store never slows the stream).

mod applied;
mod claude;
mod commands;
mod costs;
mod dispatch;
mod ending;
mod error;
mod governor;
mod handlers;
mod limits;
mod live;
mod options;
mod opts_mcp;
mod opts_model;
mod opts_process;
mod opts_session;
mod opts_tools;
mod phase;
mod pool;
mod query;
mod queue;
mod reader;
mod run;
mod settings;
mod settings_requests;
mod spans;
mod store;
#[cfg(feature = "otel")]
mod trace;
mod turn;
mod unwritten;
mod writer;

#[cfg(feature = "mcp")]
pub(crate) use claude::McpChange;
pub use claude::{Claude, Events};
#[cfg(feature = "mcp")]
pub(crate) use commands::{McpHandlerFactory, Outbox};
pub use costs::{SubagentCost, Tokens};
pub use error::{Error, Fault, HandlerError, UsageError};
pub use error::{NotWritten, TranscriptLoss};
pub use handlers::{HookHandler, RequestHandler};
pub use limits::Limits;
pub use options::{new_session_id, Hook, Options};
pub use pool::Pool;
pub use query::{query, Query};
pub use settings::{Sandbox, SandboxNetwork, Skills};
pub use turn::{Turn, TurnError, TurnOutput};
pub use unwritten::StoreBacklog;
