//! Run the real Claude Code CLI offline in tests.
//!
//! byre-testkit gives tests (byre's and its users') three things:
//!
//! - [`FakeModel`]: a fake Anthropic Messages API on a loopback port, answering the CLI's
//!   streaming (SSE) and non-streaming requests from a [`Script`] of ordered rules, with a
//!   request log to assert on;
//! - CLI provisioning and an offline environment ([`ClaudeEnv`]): the pinned CLI binary, a
//!   scratch `HOME` and working directory, and the variables that keep the CLI off the network;
//! - [`ClaudeEnv::options`]: byre-session `Options` that run that CLI in that environment.
//!
//! The guide's [testing your agent offline][testing] walks through it, and byre-session's examples
//! `review_bot`, `mcp_tools` and `wrapper` run against the fake model (`cargo run -p byre-session
//! --example review_bot`).
//!
//! Benchmarks also find here the [`corpus`] stream: the recorded CLI lines repeated to a size.
//!
//! A test of your own against the real CLI, with no account and no network, driving it with
//! byre-session's [`Claude`](byre_session::Claude) as a program would:
//!
//! ```no_run
//! use byre_testkit::{ClaudeEnv, FakeModel, Match, Reply, Rule, Script};
//!
//! # async fn example() -> Result<(), Box<dyn std::error::Error>> {
//! // The model's side of the conversation.
//! let script = Script::new()
//!     .rule(Rule::when(Match::user_text_contains("list files")).reply(Reply::tool_use(
//!         "Bash",
//!         serde_json::json!({"command": "ls"}),
//!     )))
//!     .rule(Rule::when(Match::has_tool_result(true)).reply(Reply::text("Here they are.")));
//! let model = FakeModel::start(script).await?;
//!
//! // The pinned CLI (installed on first use), offline, in a scratch HOME and directory.
//! let env = ClaudeEnv::new(&model.base_url())?;
//! let (claude, mut events) = byre_session::Claude::start(env.options()?).await?;
//! claude.send("list files")?;
//! assert_eq!(events.turn().finish().await?.text, "Here they are.");
//!
//! // What the CLI sent to the model.
//! let requests = model.message_requests();
//! assert!(requests[1].has_tool_result());
//! claude.close().await?;
//! # Ok(())
//! # }
//! ```
//!
//! [testing]: https://github.com/byre-rs/byre/blob/main/docs/testing.md

mod cli;
pub mod corpus;
mod env;
mod mcp_stdio;
mod npm;
mod otlp;
mod procs;
mod s3;
mod script;
mod server;
pub mod sse;
mod store_conformance;
mod strict;
mod transcript;

pub use cli::{
    claude_bin, claude_bin_version, cli_version, install_dir, project_root, ProvisionError,
    MATRIX_CLI_VERSIONS, PINNED_CLI_VERSION,
};
pub use env::{running_as_root, ClaudeEnv, LINES_VAR, OFFLINE_API_KEY};
pub use mcp_stdio::{hostile_bin, mcp_stdio_bin, workspace_bin, HOSTILE_BIN, MCP_STDIO_BIN};
pub use npm::{
    installed_bin, latest_cli_version, platform_package, source_of, CliSource, CLI_PACKAGE,
    SDK_PACKAGE,
};
pub use otlp::{OtlpReceiver, OtlpSpan};
pub use procs::{
    descendants, environment_var, process_alive, process_gone, processes_with, session_id,
};
pub use s3::{moto_server, S3Server, MOTO_SERVER_VAR, MOTO_VERSION};
pub use script::{
    Block, ErrorReply, Match, MessageReply, PendingRule, Predicate, Reply, RequestView, Rule,
    Script, ScriptError, Usage, DEFAULT_CHUNK_SIZE, UNMATCHED_TEXT,
};
pub use server::{serve_forever, FakeModel, FakeModelError, LoggedRequest};
pub use store_conformance::{store_conformance, STORE_CHECKS};
pub use strict::{check_modelled, cli_under_test, strictness, Strictness};
pub use transcript::*;
