//! How a session starts and how long it waits: the `initialize` request, the requests the
//! host answers, the timeouts, the oldest CLI, the store mirror and the stall watch.

use std::collections::BTreeSet;
use std::time::Duration;

use byre_proto::InitializeRequest;

use super::{MirrorConfig, StallPolicy, OLDEST_SUPPORTED_CLI};

/// How a session starts and how long it waits.
#[derive(Debug, Clone)]
pub struct SessionConfig {
    /// The `initialize` request: hook registrations, in-process MCP servers, agents, ...
    pub initialize: InitializeRequest,
    /// Names of in-process MCP servers the host serves (declared in `--mcp-config` or in
    /// `initialize.sdkMcpServers`); `mcp_message` requests for any other server are answered
    /// with JSON-RPC `-32601` without asking the host.
    pub mcp_servers: BTreeSet<String>,
    /// The CLI request subtypes the host answers (`can_use_tool`, `elicitation`,
    /// `request_user_dialog`, ...), besides `hook_callback` and `mcp_message`, which it answers
    /// for the callbacks and servers it registered. Any other request gets its answer from the
    /// core at once: an elicitation is declined, anything else refused with an error.
    pub answers: BTreeSet<String>,
    /// How long `initialize` may take.
    pub initialize_timeout: Duration,
    /// How long other host requests may take, unless given per request.
    pub request_timeout: Duration,
    /// The oldest CLI version the session starts with ([`OLDEST_SUPPORTED_CLI`] by
    /// default); an older one fails the start with
    /// [`StartFailure::UnsupportedCli`](super::StartFailure::UnsupportedCli). `None`
    /// lets any version through.
    pub oldest_cli: Option<byre_proto::CliVersionNumber>,
    /// Mirrors the session to a store (the CLI runs with `--session-mirror`): its
    /// `transcript_mirror` lines become [`Action::Mirror`](super::Action::Mirror) batches
    /// instead of events.
    pub mirror: Option<MirrorConfig>,
    /// Reports a turn that hears nothing from the CLI for a while
    /// ([`Event::Stalled`](super::Event::Stalled)), and interrupts it when the policy says
    /// so. Off by default.
    pub stall: Option<StallPolicy>,
}

impl SessionConfig {
    /// A configuration with this `initialize` request and the default timeouts (60 s for
    /// initialize and for requests).
    pub fn new(initialize: InitializeRequest) -> Self {
        let mut mcp_servers = BTreeSet::new();
        mcp_servers.extend(initialize.sdk_mcp_servers.iter().flatten().cloned());
        SessionConfig {
            initialize,
            mcp_servers,
            answers: BTreeSet::new(),
            initialize_timeout: Duration::from_secs(60),
            request_timeout: Duration::from_secs(60),
            oldest_cli: Some(OLDEST_SUPPORTED_CLI),
            mirror: None,
            stall: None,
        }
    }

    /// Declares that the host answers requests of `subtype`.
    pub fn answer(mut self, subtype: impl Into<String>) -> Self {
        self.answers.insert(subtype.into());
        self
    }

    /// The hook callback ids registered in `initialize`.
    pub(super) fn callback_ids(&self) -> BTreeSet<String> {
        self.initialize
            .hooks
            .iter()
            .flat_map(|hooks| hooks.values())
            .flatten()
            .flat_map(|m| m.hook_callback_ids.iter().cloned())
            .collect()
    }
}
