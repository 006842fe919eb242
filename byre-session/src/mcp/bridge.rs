//! The bridge between the control channel and one rmcp service: it routes the CLI's
//! `mcp_message` requests into the service and its answers back, by JSON-RPC id, and sends the
//! service's own messages to the CLI.
//!
//! [`Bridge::handle`] runs its first part at once, when the driver dispatches the request, so
//! the service gets the CLI's messages in the order the CLI wrote them; what it returns waits
//! for the answer. When the service has stopped, the next request of the CLI starts it again
//! (at most [`MAX_RESTARTS`] times a session): the new service first gets the CLI's own
//! `initialize` request again and `notifications/initialized`, so that it is ready for the
//! request, and the CLI, which knows nothing of the restart, goes on as before.
//! [`ControlTransport`] is the rmcp transport on the other side: `receive` reads the CLI's
//! messages, `send` either answers a request in flight or sends a message of the server's own
//! to the CLI.

use std::collections::HashMap;
use std::future::{ready, Future};
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};

use byre_proto::{
    CliRequest, HostMcpMessageRequest, HostRequest, JsonRpcMessage, McpMessageResponse,
};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::service::RoleServer;
use serde_json::{json, Value};
use tokio::sync::{mpsc, oneshot};

use super::Start;
use crate::driver::{Outbox, RequestHandler};

/// What a request handler returns: the `mcp_message` success payload, or an error message.
type Answer = Pin<Box<dyn Future<Output = Result<Value, String>> + Send>>;

/// Sends one message of the server's own to the CLI; resolves when the CLI has taken it.
pub(crate) type Outgoing = Arc<
    dyn Fn(JsonRpcMessage) -> Pin<Box<dyn Future<Output = Result<(), String>> + Send>>
        + Send
        + Sync,
>;

/// JSON-RPC's "invalid request" code.
pub(crate) const INVALID_REQUEST: i64 = -32600;
/// The code of a request the client cancelled with `notifications/cancelled` (as LSP uses it).
pub(crate) const REQUEST_CANCELLED: i64 = -32800;

/// How many times a session starts a server's stopped service again.
pub(crate) const MAX_RESTARTS: usize = 3;

/// One server's side of the control channel in one session.
pub(crate) struct Bridge {
    name: String,
    /// Where the server's own messages go.
    outgoing: Outgoing,
    /// How to start the service again when it stops (`None`: it is not started again).
    start: Option<Start>,
    link: Mutex<Link>,
}

/// The service running now (its inbound channel and the CLI's requests in flight there), and
/// what starting it again needs: the CLI's handshake, and how often it was started again.
struct Link {
    inbound: mpsc::UnboundedSender<ClientJsonRpcMessage>,
    pending: Arc<Mutex<Pending>>,
    /// The CLI's `initialize` request, for a service started again.
    initialize: Option<JsonRpcMessage>,
    /// How many times the service was started again.
    restarts: usize,
}

/// The CLI's requests in flight, by JSON-RPC id (its JSON text), and whether the service runs.
#[derive(Default)]
struct Pending {
    waiting: HashMap<String, oneshot::Sender<JsonRpcMessage>>,
    stopped: bool,
}

impl Bridge {
    /// A bridge for server `name` whose service `start` runs (started now, and again when it
    /// stops); the server's own messages go to the CLI through `outbox`.
    pub(crate) fn start(name: &str, outbox: Outbox, start: Start) -> Bridge {
        let server = name.to_owned();
        let outgoing: Outgoing = Arc::new(move |message| {
            let request = HostRequest::McpMessage(HostMcpMessageRequest {
                server_name: server.clone(),
                message,
                extra: Default::default(),
            });
            match outbox.request(request) {
                None => Box::pin(ready(Err("the session has ended".to_owned()))),
                Some(answer) => Box::pin(async move {
                    match answer.await {
                        Ok(Ok(_)) => Ok(()),
                        Ok(Err(e)) => Err(e.to_string()),
                        Err(_) => Err("the session has ended".to_owned()),
                    }
                }),
            }
        });
        Self::serve(name, outgoing, start)
    }

    /// A bridge whose service `start` runs (started now, and again when it stops), and whose
    /// server's own messages go to `outgoing`.
    pub(crate) fn serve(name: &str, outgoing: Outgoing, start: Start) -> Bridge {
        let (mut bridge, transport) = Self::with_outgoing(name, outgoing);
        tokio::spawn(start(transport));
        bridge.start = Some(start);
        bridge
    }

    /// A bridge whose server's own messages go to `outgoing`, and the transport its service
    /// is to run on; a service that stops is not started again.
    pub(crate) fn with_outgoing(name: &str, outgoing: Outgoing) -> (Bridge, ControlTransport) {
        let (link, transport) = Link::new(outgoing.clone());
        let bridge = Bridge {
            name: name.to_owned(),
            outgoing,
            start: None,
            link: Mutex::new(link),
        };
        (bridge, transport)
    }

    /// The driver's `mcp_message` handler for this server.
    pub(crate) fn handler(self) -> RequestHandler {
        let bridge = Arc::new(self);
        Arc::new(move |request| match request {
            CliRequest::McpMessage(m) => bridge.handle(m.message),
            _ => Box::pin(ready(Err("not an mcp_message request".to_owned()))),
        })
    }

    /// Takes one JSON-RPC message from the CLI. The message reaches the service before this
    /// returns; the future gives the `mcp_message` answer. Dropping the future before it is
    /// done (the CLI withdrew the request) cancels the request in the service.
    pub(crate) fn handle(self: &Arc<Self>, message: JsonRpcMessage) -> Answer {
        if message.is_request() {
            self.request(message)
        } else if message.is_notification() || message.is_response() {
            self.forward(message);
            Box::pin(ready(reply(JsonRpcMessage::notification_ack())))
        } else {
            Box::pin(ready(reply(JsonRpcMessage::error(
                message.id.clone(),
                INVALID_REQUEST,
                "not a JSON-RPC request, notification or response",
            ))))
        }
    }

    fn request(self: &Arc<Self>, message: JsonRpcMessage) -> Answer {
        let id = message.id.clone().unwrap_or(Value::Null);
        let parsed = match to_rmcp(&message) {
            Ok(parsed) => parsed,
            Err(e) => {
                return Box::pin(ready(reply(JsonRpcMessage::error(
                    Some(id),
                    INVALID_REQUEST,
                    e,
                ))))
            }
        };
        let key = id.to_string();
        let initialize = message.method.as_deref() == Some("initialize");
        let (inbound, pending, answer) = {
            let mut link = lock(&self.link);
            if lock(&link.pending).stopped && !self.restart(&mut link, initialize) {
                return Box::pin(ready(self.stopped(id)));
            }
            let answer = {
                let mut pending = lock(&link.pending);
                // The service may have stopped since the check above; its table is cleared
                // then, and a request put in it now would never be answered.
                if pending.stopped {
                    return Box::pin(ready(self.stopped(id)));
                }
                if pending.waiting.contains_key(&key) {
                    return Box::pin(ready(reply(JsonRpcMessage::error(
                        Some(id),
                        INVALID_REQUEST,
                        format!("request id {key} is already in flight"),
                    ))));
                }
                let (tx, rx) = oneshot::channel();
                pending.waiting.insert(key.clone(), tx);
                rx
            };
            if initialize {
                link.initialize = Some(message);
            }
            if link.inbound.send(parsed).is_err() {
                lock(&link.pending).waiting.remove(&key);
                return Box::pin(ready(self.stopped(id)));
            }
            (link.inbound.clone(), link.pending.clone(), answer)
        };
        let mut withdraw = Withdraw {
            inbound,
            pending,
            key,
            id: id.clone(),
            armed: true,
        };
        let bridge = self.clone();
        Box::pin(async move {
            let answer = answer.await;
            withdraw.disarm();
            match answer {
                Ok(response) => reply(response),
                Err(_) => bridge.stopped(id),
            }
        })
    }

    /// Starts the stopped service again, for a request of the CLI's: an `initialize` (the CLI
    /// begins anew) or any other once the CLI has initialized the server, which the new service
    /// then gets first. False when it may not be started again.
    fn restart(&self, link: &mut Link, initialize: bool) -> bool {
        let Some(start) = &self.start else {
            return false;
        };
        if link.restarts >= MAX_RESTARTS || !(initialize || link.initialize.is_some()) {
            return false;
        }
        let (fresh, transport) = Link::new(self.outgoing.clone());
        if let (false, Some(first)) = (initialize, &link.initialize) {
            // The handshake again, under an id of its own: its answer matches no request in
            // flight and goes nowhere.
            let mut again = first.clone();
            again.id = Some(json!(format!("byre-restart-{}", link.restarts + 1)));
            let initialized = JsonRpcMessage {
                jsonrpc: Some("2.0".to_owned()),
                method: Some("notifications/initialized".to_owned()),
                ..Default::default()
            };
            for message in [again, initialized] {
                if let Ok(parsed) = to_rmcp(&message) {
                    let _ = fresh.inbound.send(parsed);
                }
            }
        }
        // Starting calls the server's factory: a panic there leaves the server stopped.
        let Ok(service) =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| start(transport)))
        else {
            tracing::warn!(server = %self.name, "the MCP server could not be started again");
            return false;
        };
        tokio::spawn(service);
        link.restarts += 1;
        link.inbound = fresh.inbound;
        link.pending = fresh.pending;
        tracing::warn!(
            server = %self.name,
            restarts = link.restarts,
            "the MCP server's service had stopped; started again"
        );
        true
    }

    /// Hands a notification or response to the service. A `notifications/cancelled` for a
    /// request in flight also answers that request, so that it still gets exactly one answer.
    fn forward(&self, message: JsonRpcMessage) {
        let link = lock(&self.link);
        if message.method.as_deref() == Some("notifications/cancelled") {
            let cancelled = message.params.as_ref().and_then(|p| p.get("requestId"));
            if let Some(id) = cancelled {
                if let Some(tx) = lock(&link.pending).waiting.remove(&id.to_string()) {
                    let _ = tx.send(JsonRpcMessage::error(
                        Some(id.clone()),
                        REQUEST_CANCELLED,
                        "cancelled by the client",
                    ));
                }
            }
        }
        // A message the service cannot read is dropped: a notification needs no answer.
        if let Ok(parsed) = to_rmcp(&message) {
            let _ = link.inbound.send(parsed);
        }
    }

    /// Closes the service's inbound side, as when the CLI goes: the service ends.
    #[cfg(test)]
    pub(crate) fn close_service(&self) {
        let (closed, _) = mpsc::unbounded_channel();
        lock(&self.link).inbound = closed;
    }

    /// Whether the service running now has stopped.
    #[cfg(test)]
    pub(crate) fn has_stopped(&self) -> bool {
        lock(&lock(&self.link).pending).stopped
    }

    fn stopped(&self, id: Value) -> Result<Value, String> {
        reply(JsonRpcMessage::error(
            Some(id),
            JsonRpcMessage::INTERNAL_ERROR,
            format!("the MCP server {:?} has stopped", self.name),
        ))
    }
}

/// Cancels a request in the service when its answer is no longer wanted.
struct Withdraw {
    inbound: mpsc::UnboundedSender<ClientJsonRpcMessage>,
    pending: Arc<Mutex<Pending>>,
    key: String,
    id: Value,
    armed: bool,
}

impl Withdraw {
    /// The answer came: nothing to cancel.
    fn disarm(&mut self) {
        self.armed = false;
    }
}

impl Drop for Withdraw {
    fn drop(&mut self) {
        if !self.armed || lock(&self.pending).waiting.remove(&self.key).is_none() {
            return;
        }
        let cancel = json!({
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": self.id, "reason": "the CLI withdrew the request"},
        });
        if let Ok(cancel) = serde_json::from_value(cancel) {
            let _ = self.inbound.send(cancel);
        }
    }
}

impl Link {
    /// A link to a service not started yet, and the transport it is to run on.
    fn new(outgoing: Outgoing) -> (Link, ControlTransport) {
        let (inbound, receiver) = mpsc::unbounded_channel();
        let pending = Arc::new(Mutex::new(Pending::default()));
        let link = Link {
            inbound,
            pending: pending.clone(),
            initialize: None,
            restarts: 0,
        };
        let transport = ControlTransport {
            inbound: receiver,
            pending,
            outgoing,
        };
        (link, transport)
    }
}

/// The rmcp transport of one server in one session (see the module documentation).
pub(crate) struct ControlTransport {
    inbound: mpsc::UnboundedReceiver<ClientJsonRpcMessage>,
    pending: Arc<Mutex<Pending>>,
    outgoing: Outgoing,
}

/// A message the transport could not send.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct TransportError(String);

impl rmcp::transport::Transport<RoleServer> for ControlTransport {
    type Error = TransportError;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), TransportError>> + Send + 'static {
        let result: Pin<Box<dyn Future<Output = Result<(), TransportError>> + Send>> =
            match from_rmcp(&item) {
                Err(e) => Box::pin(ready(Err(TransportError(e)))),
                Ok(message) => {
                    let answered = match &item {
                        ServerJsonRpcMessage::Response(r) => Some(Some(&r.id)),
                        ServerJsonRpcMessage::Error(e) => Some(e.id.as_ref()),
                        _ => None,
                    };
                    match answered {
                        // An answer to a request the CLI withdrew, or to no request, goes
                        // nowhere.
                        Some(id) => {
                            let key = id.and_then(|id| serde_json::to_value(id).ok());
                            let waiting = key.and_then(|key| {
                                lock(&self.pending).waiting.remove(&key.to_string())
                            });
                            if let Some(tx) = waiting {
                                let _ = tx.send(message);
                            }
                            Box::pin(ready(Ok(())))
                        }
                        None => {
                            let sent = (self.outgoing)(message);
                            Box::pin(async move { sent.await.map_err(TransportError) })
                        }
                    }
                }
            };
        result
    }

    fn receive(&mut self) -> impl Future<Output = Option<ClientJsonRpcMessage>> + Send {
        self.inbound.recv()
    }

    async fn close(&mut self) -> Result<(), TransportError> {
        // The service is done: what comes now is not read, and the next request starts it
        // again.
        self.inbound.close();
        let mut pending = lock(&self.pending);
        pending.stopped = true;
        pending.waiting.clear();
        Ok(())
    }
}

impl Drop for ControlTransport {
    /// The service has stopped: requests in flight are answered with an error, later ones at
    /// once.
    fn drop(&mut self) {
        self.inbound.close();
        let mut pending = lock(&self.pending);
        pending.stopped = true;
        pending.waiting.clear();
    }
}

/// The `mcp_message` success payload for a JSON-RPC response.
fn reply(response: JsonRpcMessage) -> Result<Value, String> {
    serde_json::to_value(McpMessageResponse::new(response)).map_err(|e| e.to_string())
}

/// A CLI message as rmcp reads it.
fn to_rmcp(message: &JsonRpcMessage) -> Result<ClientJsonRpcMessage, String> {
    let value = serde_json::to_value(message).map_err(|e| e.to_string())?;
    serde_json::from_value(value).map_err(|e| format!("not an MCP message the server reads: {e}"))
}

/// A server message as the wire carries it.
fn from_rmcp(message: &ServerJsonRpcMessage) -> Result<JsonRpcMessage, String> {
    let value = serde_json::to_value(message).map_err(|e| e.to_string())?;
    serde_json::from_value(value).map_err(|e| e.to_string())
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // What it guards stays consistent when a holder panics: every change is one operation.
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}
