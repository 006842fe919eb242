//! The session layer of byre: what users program against.
//!
//! Built so far, all sans-IO (no tokio, no clock: time is passed in as `Instant`s):
//!
//! - [`session`]: the [`Session`](session::Session) state machine: the handshake
//!   (`initialize` first, the CLI's own requests served while it waits), host requests with
//!   deadlines and typed failures, CLI requests routed to the host's handlers with exactly one
//!   answer each (unknown subtypes, callbacks and servers answered automatically), and every
//!   message passed on with turn, task and assembly events;
//! - [`correlation`]: the IO-free table that matches control requests with their answers in
//!   both directions, with deadlines;
//! - [`turns`]: turn tracking (a user message starts a turn, its `result` ends it; queued
//!   messages merge; turns the CLI starts by itself; the end of a run; the session id);
//! - [`assembly`]: `stream_event` deltas assembled into text, thinking and tool-input blocks;
//! - [`tasks`]: the live tree of tasks (Bash, subagents) from `task_*` and
//!   `background_tasks_changed` lines.
//!
//! Not built yet: the tokio driver with the cloneable session handle and the event stream,
//! typed request methods, handler registration, and the one-shot `query`.

pub mod assembly;
pub mod correlation;
pub mod session;
pub mod tasks;
pub mod turns;
