//! What passes between a [`Claude`](super::Claude) handle and its driver: the commands the
//! handle sends, the state both read ([`Shared`], [`Ready`]), and the [`Outbox`] through which
//! the session's own handlers send requests.

use std::sync::Arc;
use std::time::Duration;

use byre_proto::{HostRequest, InitializeResponse, RawJson, UserMessage};
use byre_transport::ExitInfo;
use tokio::sync::{mpsc, oneshot};

use super::error::Error;
use super::handlers::RequestHandler;

/// What a handle asks of the driver.
pub(super) enum Command {
    Send(UserMessage),
    Request(
        HostRequest,
        Option<Duration>,
        oneshot::Sender<Result<Option<RawJson>, Error>>,
    ),
    /// Send the session's `initialize` request again.
    Reinitialize(
        Option<Duration>,
        oneshot::Sender<Result<Option<RawJson>, Error>>,
    ),
    /// Shut the CLI down: `true` at once (SIGTERM without the exit grace).
    Close(oneshot::Sender<Result<ExitInfo, Error>>, bool),
    Direct(Direct),
}

/// Commands the driver carries out itself, without the session core.
pub(super) enum Direct {
    /// Write these bytes and a newline as they are.
    SendRaw(Vec<u8>),
    /// Add a note to the transcript.
    Note(String),
    /// Close stdin once everything sent so far is written.
    EndInput,
    /// Answer when the CLI has exited.
    Wait(oneshot::Sender<Result<ExitInfo, Error>>),
    /// Serve the in-process MCP server of this name with a handler the factory builds.
    ServeMcp(String, McpHandlerFactory),
    /// Stop serving the in-process MCP server of this name.
    ForgetMcp(String),
}

/// The answer to a request sent through an [`Outbox`].
pub(super) type Answer = oneshot::Receiver<Result<Option<RawJson>, Error>>;

/// Whether `initialize` was answered: `None` while waiting.
pub(super) type Ready = Option<Result<(), Error>>;

#[derive(Debug, Default)]
pub(super) struct Shared {
    pub(super) session_id: Option<String>,
    pub(super) initialized: Option<Arc<InitializeResponse>>,
    pub(super) ended: Option<String>,
    /// The error that ended the session, when one did ([`Error::InputClosed`]).
    pub(super) failure: Option<Error>,
    /// Set by [`Claude::end_input`]: nothing more may be sent.
    pub(super) input_ended: bool,
}

/// Builds the `mcp_message` handler of one in-process MCP server for a new session.
#[cfg_attr(not(feature = "mcp"), allow(dead_code))]
pub(crate) type McpHandlerFactory = Arc<dyn Fn(Outbox) -> RequestHandler + Send + Sync>;

/// Sends host requests from the session's own handlers (an in-process MCP server's own
/// messages). It does not keep the session alive: once every [`Claude`] handle is gone and the
/// driver has stopped, sending fails.
#[derive(Clone, Debug)]
pub(crate) struct Outbox {
    pub(super) commands: mpsc::WeakUnboundedSender<Command>,
}

impl Outbox {
    /// Sends `request`; the receiver gets its answer. `None` when the session has ended.
    pub(crate) fn request(&self, request: HostRequest) -> Option<Answer> {
        let commands = self.commands.upgrade()?;
        let (tx, rx) = oneshot::channel();
        commands.send(Command::Request(request, None, tx)).ok()?;
        Some(rx)
    }
}
