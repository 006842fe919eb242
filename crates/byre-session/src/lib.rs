//! The session layer of byre: what users program against.
//!
//! Built so far, all sans-IO (no tokio, no clock: time is passed in as `Instant`s):
//!
//! - [`correlation`]: the IO-free table that matches control requests with their answers in
//!   both directions, with deadlines;
//! - [`turns`]: turn tracking (a user message starts a turn, its `result` ends it; queued
//!   messages merge; turns the CLI starts by itself; the end of a run; the session id);
//! - [`assembly`]: `stream_event` deltas assembled into text, thinking and tool-input blocks;
//! - [`tasks`]: the live tree of tasks (Bash, subagents) from `task_*` and
//!   `background_tasks_changed` lines.
//!
//! Not built yet: the `Session` state machine that composes them (handshake, control channel,
//! handlers), and the tokio driver with the cloneable session handle and event stream.

pub mod assembly;
pub mod correlation;
pub mod tasks;
pub mod turns;
