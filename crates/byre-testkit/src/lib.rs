//! Run the real Claude Code CLI offline in tests.
//!
//! byre-testkit gives tests (byre's and its users') three things:
//!
//! - [`FakeModel`]: a fake Anthropic Messages API on a loopback port, answering the CLI's
//!   streaming (SSE) and non-streaming requests from a [`Script`] of ordered rules, with a
//!   request log to assert on;
//! - CLI provisioning and an offline environment ([`ClaudeEnv`]): the pinned CLI binary, a
//!   scratch `HOME` and working directory, and the variables that keep the CLI off the network;
//! - a scenario host that drives the CLI over stdin/stdout, answers its control requests as a
//!   scenario says, and records a transcript.

mod cli;
mod env;
mod host;
mod script;
mod server;
pub mod sse;

pub use cli::{
    claude_bin, cli_version, install_dir, project_root, ProvisionError, CLI_PACKAGE,
    PINNED_CLI_VERSION,
};
pub use env::{running_as_root, ClaudeEnv, OFFLINE_API_KEY};
pub use host::{
    base_args, simple_mcp_server, HookFn, Host, HostError, HostExit, HostOptions, McpServerFn,
    McpTool, PermissionFn, Responder,
};
pub use script::{
    Block, ErrorReply, Match, MessageReply, PendingRule, Reply, RequestView, Rule, Script,
    ScriptError, Usage, DEFAULT_CHUNK_SIZE, UNMATCHED_TEXT,
};
pub use server::{serve_forever, FakeModel, FakeModelError, LoggedRequest};
