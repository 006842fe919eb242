//! The control channel's envelopes: requests, responses and cancellations, in both directions.
//!
//! Either side sends `{"type":"control_request","request_id":ID,"request":{"subtype":...}}` and
//! the other answers exactly once with `{"type":"control_response","response":{"subtype":
//! "success"|"error","request_id":ID,...}}`. The request bodies are in
//! [`host_request`](crate::host_request) (host → CLI) and [`cli_request`](crate::cli_request)
//! (CLI → host).

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use crate::cli_request::CliRequest;
use crate::host_request::HostRequest;
use crate::wire::{open_enum, wire_enum, wire_struct, RawJson};

wire_struct! {
    /// A request from the host to the CLI.
    pub struct HostControlRequest {
        /// Unique among the host's requests in flight.
        "request_id" request_id: req String,
        /// What is asked.
        "request" request: req HostRequest,
    }
}

impl HostRequest {
    /// Wraps the request in its envelope with `request_id`.
    pub fn with_id(self, request_id: impl Into<String>) -> HostControlRequest {
        HostControlRequest {
            request_id: request_id.into(),
            request: self,
            extra: Default::default(),
        }
    }
}

wire_struct! {
    /// A request from the CLI to the host.
    pub struct CliControlRequest {
        /// The CLI's id (a UUID); the answer must carry it.
        "request_id" request_id: req String,
        /// What is asked.
        "request" request: req CliRequest,
        /// Set when the CLI wrote its pending output before this request (CLI 2.1.337 and
        /// later).
        "flush" flush: opt bool,
    }
}

wire_struct! {
    /// A `control_response` line, in either direction.
    pub struct ControlResponse {
        /// Success or error.
        "response" response: req ControlResponseBody,
    }
}

impl ControlResponse {
    /// A success answer to `request_id` carrying `payload` (`None` sends no `response` key).
    pub fn success(request_id: impl Into<String>, payload: Option<Value>) -> Self {
        ControlResponse {
            response: ControlResponseBody::Success(ControlSuccess {
                request_id: request_id.into(),
                response: payload.map(RawJson::from),
                pending_permission_requests: None,
                pending_user_dialog_requests: None,
                pending_elicitation_requests: None,
                extra: Default::default(),
            }),
            extra: Default::default(),
        }
    }

    /// An error answer to `request_id`.
    pub fn error(
        request_id: impl Into<String>,
        message: impl Into<String>,
        code: Option<ErrorCode>,
    ) -> Self {
        ControlResponse {
            response: ControlResponseBody::Error(ControlError {
                request_id: request_id.into(),
                error: Some(message.into()),
                error_code: code,
                extra: Default::default(),
            }),
            extra: Default::default(),
        }
    }

    /// The id of the request this answers.
    pub fn request_id(&self) -> Option<&str> {
        match &self.response {
            ControlResponseBody::Success(s) => Some(&s.request_id),
            ControlResponseBody::Error(e) => Some(&e.request_id),
            ControlResponseBody::Unknown(u) => u.get_str("request_id"),
        }
    }
}

wire_enum! {
    /// The body of a `control_response`, tagged by `subtype`.
    pub enum ControlResponseBody tag "subtype" {
        /// The request succeeded.
        "success" => Success(ControlSuccess),
        /// The request failed.
        "error" => Error(ControlError),
    }
}

wire_struct! {
    /// A successful answer.
    pub struct ControlSuccess {
        /// The request it answers.
        "request_id" request_id: req String,
        /// The payload, kept as text until decoded with [`ControlSuccess::payload`]; absent
        /// for some plain acknowledgements (`set_max_thinking_tokens`).
        "response" response: any RawJson,
        /// On an `initialize` answer: permission prompts still waiting (re-attach).
        "pending_permission_requests" pending_permission_requests: opt Vec<Value>,
        /// On an `initialize` answer: user dialogs still waiting.
        "pending_user_dialog_requests" pending_user_dialog_requests: opt Vec<Value>,
        /// On an `initialize` answer: elicitations still waiting.
        "pending_elicitation_requests" pending_elicitation_requests: opt Vec<Value>,
    }
}

impl ControlSuccess {
    /// Decodes the payload as `T` (a missing payload decodes as `{}`).
    pub fn payload<T: DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        match &self.response {
            Some(raw) => raw.parse(),
            None => T::deserialize(Value::Object(Default::default())),
        }
    }

    /// The payload as a JSON value, if there is one and a `Value` can hold it (see
    /// [`RawJson::to_value`]).
    pub fn payload_value(&self) -> Option<Value> {
        self.response.as_ref().and_then(|raw| raw.to_value().ok())
    }
}

wire_struct! {
    /// A failed answer.
    pub struct ControlError {
        /// The request it answers.
        "request_id" request_id: req String,
        /// What went wrong.
        "error" error: opt String,
        /// A machine-readable code.
        "error_code" error_code: opt ErrorCode,
    }
}

open_enum! {
    /// The `error_code` of a control error (`^[a-z][a-z0-9_]{0,63}$`).
    pub struct ErrorCode {
        /// The subtype is not supported.
        UNSUPPORTED_REQUEST = "unsupported_request",
        /// `set_permission_mode` got an invalid mode.
        INVALID_MODE = "invalid_mode",
        /// `reload_plugins` was refused while busy.
        RELOAD_PLUGINS_BUSY = "reload_plugins_busy",
    }
}

wire_struct! {
    /// `control_cancel_request`: the sender withdraws its own request; no answer follows.
    pub struct ControlCancelRequest {
        /// The request withdrawn.
        "request_id" request_id: req String,
    }
}

/// Turns a typed payload into the `response` value of a success answer.
pub fn payload_value<T: Serialize>(payload: &T) -> Result<Value, serde_json::Error> {
    serde_json::to_value(payload)
}
