//! MCP envelopes: the JSON-RPC messages that ride inside `mcp_message` control requests.

use serde_json::Value;

use crate::wire::wire_struct;

wire_struct! {
    /// A JSON-RPC 2.0 message (request, notification or response), as carried by
    /// `mcp_message`. Which one it is follows from the keys present; see the methods.
    #[derive(Default)]
    pub struct JsonRpcMessage {
        /// Always `"2.0"`.
        "jsonrpc" jsonrpc: opt String,
        /// The id of a request or response (a number or a string); absent on notifications.
        "id" id: any Value,
        /// The method of a request or notification.
        "method" method: opt String,
        /// The parameters of a request or notification.
        "params" params: any Value,
        /// A response's result.
        "result" result: any Value,
        /// A response's error.
        "error" error: opt JsonRpcError,
    }
}

wire_struct! {
    /// A JSON-RPC error object.
    pub struct JsonRpcError {
        /// The code (`-32601` method not found, `-32603` internal error, ...).
        "code" code: req i64,
        /// The message.
        "message" message: req String,
        /// Extra data.
        "data" data: any Value,
    }
}

impl JsonRpcMessage {
    /// JSON-RPC's "method not found" code.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// JSON-RPC's "internal error" code.
    pub const INTERNAL_ERROR: i64 = -32603;

    /// Whether this is a request (a method and an id).
    pub fn is_request(&self) -> bool {
        self.method.is_some() && self.id.is_some()
    }

    /// Whether this is a notification (a method, no id).
    pub fn is_notification(&self) -> bool {
        self.method.is_some() && self.id.is_none()
    }

    /// Whether this is a response (a result or an error).
    pub fn is_response(&self) -> bool {
        self.method.is_none() && (self.result.is_some() || self.error.is_some())
    }

    /// A success response to `id`.
    pub fn result(id: Option<Value>, result: Value) -> Self {
        JsonRpcMessage {
            jsonrpc: Some("2.0".into()),
            id,
            result: Some(result),
            ..Default::default()
        }
    }

    /// An error response to `id`.
    pub fn error(id: Option<Value>, code: i64, message: impl Into<String>) -> Self {
        JsonRpcMessage {
            jsonrpc: Some("2.0".into()),
            id,
            error: Some(JsonRpcError {
                code,
                message: message.into(),
                data: None,
                extra: Default::default(),
            }),
            ..Default::default()
        }
    }

    /// The acknowledgement the CLI expects for a notification: `{"jsonrpc":"2.0","result":{}}`.
    pub fn notification_ack() -> Self {
        Self::result(None, Value::Object(Default::default()))
    }
}
