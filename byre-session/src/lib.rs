//! The session layer of byre: what users program against.
//!
//! Start a session with [`Claude::start`] and [`Options`], send prompts, read each turn's
//! events and its typed outcome, and answer the CLI's requests with handlers: hooks
//! ([`Options::hook`]), permission prompts ([`Options::can_use_tool`]) and in-process MCP
//! tools ([`Tool`], [`Options::serve_mcp`]). Errors say whose fault they are ([`Error`],
//! [`TurnError`]).
//!
//! Where to go from here:
//!
//! - the guide by task, in the repository's [`docs/`][guide]: [driving a session][driving],
//!   [hooks], [permissions], [MCP tools][mcp-tools], [sessions and stores][sessions],
//!   [running many agents][many-agents], [errors];
//! - byre-testkit, to test a program offline against the real CLI and a fake model
//!   ([testing your agent offline][testing]);
//! - the examples in `byre-session/examples/`: `review_bot` (a CI review bot with a tool, a
//!   hook, a permission handler and a structured verdict), `hooks`, `permissions`,
//!   `interrupt`, `fork`, `pool`, `mcp_tools`, `wrapper`; `cargo run -p byre-session --example
//!   review_bot` runs offline.
//!
//! Every type is at the crate's root, one path each; the wire model is [`proto`]
//! (byre-proto) and the transport [`transport`] (byre-transport, with the session stores in
//! `transport::store`).
//!
//! The core, all sans-IO (no tokio, no clock: time is passed in as `Instant`s):
//!
//! - [`Session`], the state machine: the handshake (`initialize` first, the CLI's own requests
//!   served while it waits), host requests with deadlines and typed failures, CLI requests
//!   routed to the host's handlers with exactly one answer each (unknown subtypes, callbacks
//!   and servers answered automatically), and every message passed on as an [`Event`] with
//!   turn, task and assembly events;
//! - [`RequestTable`]: the IO-free table that matches control requests with their answers in
//!   both directions, with deadlines;
//! - [`TurnTracker`]: turn tracking (a user message starts a turn, its `result` ends it; queued
//!   messages merge; turns the CLI starts by itself; the end of a run; the session id);
//! - [`Assembler`]: `stream_event` deltas assembled into text, thinking and tool-input blocks;
//! - [`TaskTree`]: the live tree of tasks (Bash, subagents) from `task_*` and
//!   `background_tasks_changed` lines.
//!
//! On top, with the default `driver` feature, the tokio driver and the public API: a cloneable
//! [`Claude`] handle with `&self` methods (typed requests for every request byre-proto models,
//! `interrupt`, `set_model`, raw lines, transcript notes, `end_input` and `wait` to let the CLI
//! finish by itself, `close` to stop it), an [`Events`] stream with backpressure and no loss
//! that ends when the CLI exits, handlers for hooks, permissions and in-process MCP servers
//! that run concurrently and always answer (also when they panic), transcripts, the one-shot
//! [`query`], and a [`Pool`] of sessions started ahead of need; [`Events::turn`] gives one
//! turn's events and its typed outcome. Without the feature the crate depends on byre-proto,
//! serde_json and thiserror only (no tokio).
//!
//! With the default `mcp` feature, in-process MCP servers ([`McpServer`]) served over the
//! control channel — any rmcp server handler, or tools written with the light [`Tool`] API —
//! registered with [`Options::serve_mcp`], or added to a live session with
//! [`Claude::add_mcp_server`].
//!
//! ```no_run
//! use byre_session::{Claude, Options};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let (claude, mut events) = Claude::start(Options::new().max_turns(3)).await?;
//! claude.send("Say hello")?;
//! // The answer's text as it streams; the outcome is a typed output or error.
//! let answer = events.turn().on_text(|text| print!("{text}")).await?;
//! println!("\n${:.4}", answer.cost_usd().unwrap_or(0.0));
//! claude.close().await?;
//! # Ok(())
//! # }
//! ```
//!
//! The driver reports through `tracing`: a `byre_session` span per session (the CLI's `pid`,
//! and its `session_id` once known), a `turn` span per turn, and a `control_request` span per
//! request in either direction (`from = "host"` or `"cli"`, its `id` and `subtype`; a request
//! sent or handled during a turn is a child of the turn's span), each telling its answer and
//! how long it took; protocol problems are warnings.
//!
//! byre's end-to-end scenarios (the `byre-e2e` crate) drive the real CLI through this driver.
//! The driver's benchmarks are in `benches/` and their numbers in the repository's
//! BENCHMARKS.md.
//!
//! [guide]: https://github.com/byre-rs/byre/blob/main/docs/README.md
//! [driving]: https://github.com/byre-rs/byre/blob/main/docs/driving.md
//! [hooks]: https://github.com/byre-rs/byre/blob/main/docs/hooks.md
//! [permissions]: https://github.com/byre-rs/byre/blob/main/docs/permissions.md
//! [mcp-tools]: https://github.com/byre-rs/byre/blob/main/docs/mcp-tools.md
//! [sessions]: https://github.com/byre-rs/byre/blob/main/docs/sessions.md
//! [many-agents]: https://github.com/byre-rs/byre/blob/main/docs/many-agents.md
//! [errors]: https://github.com/byre-rs/byre/blob/main/docs/errors.md
//! [testing]: https://github.com/byre-rs/byre/blob/main/docs/testing.md

// One path per type. byre-session's own types sit at the root, whichever module defines them
// (the modules are private); the wire model is under `proto` (byre-proto), the transport under
// `transport` (byre-transport, with its session stores at `transport::store`); nothing is
// re-exported from them item by item, so each type has one name here.
pub use crate::assembly::*;
pub use crate::correlation::*;
#[cfg(feature = "driver")]
pub use crate::driver::*;
#[cfg(feature = "mcp")]
pub use crate::mcp::*;
pub use crate::session::*;
pub use crate::tasks::*;
pub use crate::turns::*;
/// The wire types (byre-proto): every message, request, hook and content block.
pub use byre_proto as proto;
/// The transport (byre-transport): the launcher, the process, transcripts, session history,
/// custom spawning, and the session stores (`transport::store`).
#[cfg(feature = "driver")]
pub use byre_transport as transport;
/// `events.next().await` on [`Events`], with no dependency of the program's own.
#[cfg(feature = "driver")]
pub use futures::StreamExt;
/// rmcp, for a full MCP server handler ([`McpServer::rmcp`]).
#[cfg(feature = "mcp")]
pub use rmcp;
/// schemars, for `#[derive(JsonSchema)]` on a tool's input or a structured output
/// (`use byre_session::schemars::{self, JsonSchema};`).
#[cfg(feature = "driver")]
pub use schemars;

mod assembly;
mod correlation;
#[cfg(feature = "driver")]
mod driver;
#[cfg(feature = "mcp")]
mod mcp;
mod session;
mod tasks;
mod turns;

/// The README's examples, compiled as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;

/// The examples of the guide in `docs/`, compiled as doctests: one item per page.
#[cfg(doctest)]
pub mod guide_doctests {
    #[doc = include_str!("../../docs/hooks.md")]
    pub struct Hooks;
    #[doc = include_str!("../../docs/permissions.md")]
    pub struct Permissions;
    #[doc = include_str!("../../docs/mcp-tools.md")]
    pub struct McpTools;
    #[doc = include_str!("../../docs/sessions.md")]
    pub struct Sessions;
    #[doc = include_str!("../../docs/spawn.md")]
    pub struct Spawn;
    #[doc = include_str!("../../docs/testing.md")]
    pub struct Testing;
    #[doc = include_str!("../../docs/protocol.md")]
    pub struct Protocol;
    #[doc = include_str!("../../docs/many-agents.md")]
    pub struct ManyAgents;
}
