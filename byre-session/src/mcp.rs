//! In-process MCP servers: any [`rmcp`] server handler, or tools written with the light
//! [`Tool`] API, served to the CLI over the control channel.

mod bridge;
mod tool;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

pub use self::tool::{Tool, ToolOutput, ToolServer};

use self::bridge::{Bridge, ControlTransport};
use crate::driver::{Claude, McpChange, McpHandlerFactory, Options, Outbox};

/// Why an MCP server or tool cannot be registered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum McpError {
    /// A server or tool name is empty or has characters other than ASCII letters, digits, `_`
    /// and `-` (the model sees tools as `mcp__<server>__<tool>`).
    #[error("bad {what} name {name:?}: use 1 to 64 ASCII letters, digits, '_' or '-'")]
    BadName {
        /// `"server"` or `"tool"`.
        what: &'static str,
        /// The name.
        name: String,
    },
    /// Two tools of one server share a name.
    #[error("two tools are named {0:?}")]
    DuplicateTool(String),
    /// A tool's input schema is not a JSON object schema (`"type": "object"`), as MCP requires.
    #[error("the input schema of tool {tool:?}: {message}")]
    InputSchema {
        /// The tool.
        tool: String,
        /// What is wrong.
        message: String,
    },
}

/// Starts one server's rmcp service on a transport; the future runs until the service stops.
pub(crate) type Start =
    Arc<dyn Fn(ControlTransport) -> Pin<Box<dyn Future<Output = ()> + Send>> + Send + Sync>;

/// An in-process MCP server to register with [`Options::serve_mcp`]: its name, whether its
/// tools are always loaded, and how to start its rmcp service for a session.
///
/// The CLI is the MCP client. It reaches an in-process ("sdk") server through `mcp_message`
/// control requests, each carrying one JSON-RPC message, and the server's own messages (a
/// `notifications/tools/list_changed`, a request to the client) go back as host → CLI
/// `mcp_message` requests. Each registered server runs as an rmcp service over a transport made
/// of those two directions, started afresh for every session:
///
/// - a CLI request is handed to the server and its JSON-RPC response, with the same id, answers
///   the control request as `{"mcp_response": ...}`;
/// - a CLI notification (or response) is handed to the server and acknowledged at once with
///   `{"jsonrpc":"2.0","result":{}}`;
/// - when the CLI abandons a call (an interrupt during a tool), it sends the MCP
///   `notifications/cancelled` itself: the server gets it, and the call's control request is
///   answered with JSON-RPC error `-32800`, so that it still gets exactly one answer;
/// - when the CLI withdraws a request (`control_cancel_request`), the server gets an MCP
///   `notifications/cancelled` for it, and no answer is sent;
/// - an `mcp_message` for a server nobody registered is answered by the session core with
///   JSON-RPC `-32601`, inside a success envelope;
/// - a message of the server's own is sent as a host request; its answer shows in the event
///   stream as an [`Event::Response`](crate::session::Event::Response) with subtype
///   `mcp_message`.
///
/// A cancelled call of a [`Tool`] drops the handler's future; an rmcp handler sees the
/// cancellation token of its request context fire.
///
/// Failures are answers. A handler that panics answers its request with JSON-RPC error
/// `-32603` (rmcp alone would leave it unanswered, and the CLI waiting), and the server goes
/// on. A service that stops (its task ended) answers the requests in flight with `-32603`, and
/// the next request starts it again, at most three times a session: the new service first gets
/// the CLI's own `initialize` and `notifications/initialized` again, so the CLI, which knows
/// nothing of it, goes on as before.
///
/// `sdkMcpServerManifests` (the handshake's results sent ahead in `initialize`) are not sent:
/// the CLI (2.1.328) parks them (its answer says `parked`) but still runs the whole handshake
/// over `mcp_message` for a server declared in `--mcp-config`, which `alwaysLoad` needs. For a
/// server declared in `initialize` alone it does skip the handshake.
///
/// The CLI (2.1.328) asks for protocol `2025-11-25`, and it starts its MCP handshake before it
/// answers `initialize`; the driver serves control requests while it waits, so nothing blocks.
///
/// Each server is declared in `--mcp-config` as `{"type":"sdk","name":...}`, with `alwaysLoad`
/// (on by default) so that the model sees its tools from the first turn instead of finding them
/// through the CLI's ToolSearch tool, and in `initialize` (`sdkMcpServers`); the CLI connects
/// once. Tools appear to the model as `mcp__<server>__<tool>`.
///
/// ```no_run
/// use byre_session::{Claude, McpServer, Options, Tool, ToolOutput};
/// use byre_session::schemars::{self, JsonSchema};
/// use serde::Deserialize;
///
/// #[derive(Deserialize, JsonSchema)]
/// struct Add {
///     /// The first number.
///     a: i64,
///     /// The second number.
///     b: i64,
/// }
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let add = Tool::new("add", "Add two numbers.", |args: Add| async move {
///     match args.a.checked_add(args.b) {
///         Some(sum) => Ok(ToolOutput::text(sum.to_string())),
///         None => Err("the sum overflows".into()), // an isError result the model reads
///     }
/// })?;
/// let options = Options::new().serve_mcp(McpServer::tools("calc", [add])?);
/// let (claude, events) = Claude::start(options).await?;
/// # drop((claude, events));
/// # Ok(())
/// # }
/// ```
///
/// Servers can also be added to a live session ([`Claude::add_mcp_server`]) and removed
/// ([`Claude::remove_mcp_server`]), with `mcp_set_servers`.
///
/// Not done: the CLI's handshake shortcut (`sdkMcpServerManifests`). A server whose rmcp
/// service stopped is started again at its next request, at most three times a session; the
/// CLI (2.1.328) refuses `mcp_reconnect` for in-process servers.
#[derive(Clone)]
pub struct McpServer {
    name: String,
    always_load: bool,
    start: Start,
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer")
            .field("name", &self.name)
            .field("always_load", &self.always_load)
            .finish_non_exhaustive()
    }
}

impl McpServer {
    /// A server made of [`Tool`]s (the light API), named `name`.
    pub fn tools(name: &str, tools: impl IntoIterator<Item = Tool>) -> Result<Self, McpError> {
        let server = ToolServer::new(name, tools)?;
        Self::rmcp(name, server)
    }

    /// Any rmcp server handler (for example one written with rmcp's `#[tool_router]` and
    /// `#[tool_handler]` macros), named `name`. Each session serves a clone of `service`.
    pub fn rmcp<S>(name: &str, service: S) -> Result<Self, McpError>
    where
        S: rmcp::ServerHandler + Clone,
    {
        Self::rmcp_with(name, move || service.clone())
    }

    /// Any rmcp server handler, named `name`, made by `factory` for each session, and again
    /// when a session starts the server's stopped service again (see the module
    /// documentation).
    pub fn rmcp_with<S, F>(name: &str, factory: F) -> Result<Self, McpError>
    where
        S: rmcp::ServerHandler,
        F: Fn() -> S + Send + Sync + 'static,
    {
        check_name("server", name)?;
        let start: Start = Arc::new(move |transport| {
            let service = CatchPanics(factory());
            Box::pin(async move {
                // A handshake that fails was already answered with a JSON-RPC error; the
                // transport is dropped then, and later requests learn that the server stopped.
                if let Ok(running) = rmcp::serve_server(service, transport).await {
                    let _ = running.waiting().await;
                }
            })
        });
        Ok(McpServer {
            name: name.to_owned(),
            always_load: true,
            start,
        })
    }

    /// Whether the model sees this server's tools from the first turn (`true`, the default),
    /// or finds them through the CLI's ToolSearch tool when it needs them (`false`: fewer
    /// tokens in every request when a server has many tools).
    pub fn always_load(mut self, always_load: bool) -> Self {
        self.always_load = always_load;
        self
    }

    /// The server's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The handler factory for the driver: each session gets a fresh bridge and service.
    fn factory(&self) -> McpHandlerFactory {
        let name = self.name.clone();
        let start = self.start.clone();
        Arc::new(move |outbox: Outbox| Bridge::start(&name, outbox, start.clone()).handler())
    }
}

/// A service whose handler's panics become answers: a request whose handler panicked is
/// answered with an internal error (rmcp would leave it unanswered, and the CLI would wait for
/// it), and a notification whose handler panicked is dropped.
struct CatchPanics<S>(S);

impl<S: rmcp::Service<rmcp::RoleServer>> rmcp::Service<rmcp::RoleServer> for CatchPanics<S> {
    async fn handle_request(
        &self,
        request: rmcp::model::ClientRequest,
        context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::ServerResult, rmcp::ErrorData> {
        use futures::FutureExt;
        std::panic::AssertUnwindSafe(self.0.handle_request(request, context))
            .catch_unwind()
            .await
            .unwrap_or_else(|_| {
                Err(rmcp::ErrorData::internal_error(
                    "the MCP server's handler panicked",
                    None,
                ))
            })
    }

    async fn handle_notification(
        &self,
        notification: rmcp::model::ClientNotification,
        context: rmcp::service::NotificationContext<rmcp::RoleServer>,
    ) -> Result<(), rmcp::ErrorData> {
        use futures::FutureExt;
        std::panic::AssertUnwindSafe(self.0.handle_notification(notification, context))
            .catch_unwind()
            .await
            .unwrap_or(Ok(()))
    }

    fn get_info(&self) -> <rmcp::RoleServer as rmcp::service::ServiceRole>::Info {
        self.0.get_info()
    }

    fn supported_protocol_versions(
        &self,
    ) -> std::borrow::Cow<'static, [rmcp::model::ProtocolVersion]> {
        self.0.supported_protocol_versions()
    }
}

impl Options {
    /// Serves the in-process MCP server `server` in every session started with these options:
    /// it is declared in `--mcp-config` (with `alwaysLoad` unless turned off) and in the
    /// `initialize` request's `sdkMcpServers`, and the CLI's `mcp_message` requests for it are
    /// routed to it. Its tools run without asking (`mcp__<name>` is added to the allowed tools)
    /// unless a [`can_use_tool`](Options::can_use_tool) handler is registered, which is then
    /// asked about them too. See [`McpServer`].
    pub fn serve_mcp(mut self, server: McpServer) -> Self {
        // The CLI connects once to a server declared in both places; only `--mcp-config`
        // carries `alwaysLoad`.
        let declared = self.initialize.sdk_mcp_servers.get_or_insert_with(Vec::new);
        if !declared.contains(&server.name) {
            declared.push(server.name.clone());
        }
        let factory = server.factory();
        self.mcp_server_per_session(&server.name, server.always_load, factory)
    }
}

impl Claude {
    /// Adds the in-process MCP server `server` to the live session: the CLI connects to it at
    /// once (its handshake comes as `mcp_message` requests, served like those of a server
    /// given to [`Options::serve_mcp`]), and from the next request to the model its tools are
    /// there, deferred, and announced to the model as available (the CLI does not honour
    /// `alwaysLoad` for a server added live). Its tools follow the permission mode: allow them
    /// at start (`Options::allowed_tools(["mcp__<name>"])`) or answer with a `can_use_tool`
    /// handler, as the allowed tools cannot change in a live session. See
    /// [`Claude::add_mcp_config`] for how the session's set of servers changes;
    /// [`Claude::remove_mcp_server`] removes it again.
    pub async fn add_mcp_server(
        &self,
        server: McpServer,
    ) -> Result<byre_proto::McpSetServersResponse, crate::driver::Error> {
        let config = byre_transport::SdkServer {
            name: server.name.clone(),
            always_load: server.always_load,
        }
        .config();
        self.change_mcp(McpChange::Add {
            factory: Some(server.factory()),
            name: server.name,
            config,
        })
        .await
    }
}

/// Checks a server or tool name: 1 to 64 ASCII letters, digits, `_` or `-`.
fn check_name(what: &'static str, name: &str) -> Result<(), McpError> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(McpError::BadName {
            what,
            name: name.to_owned(),
        })
    }
}

#[cfg(test)]
mod tests;
