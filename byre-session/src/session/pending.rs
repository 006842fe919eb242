//! The CLI's requests an `initialize` answer lists as still waiting (permission prompts, user
//! dialogs, elicitations): dispatched again unless in flight or answered already.

use byre_proto::CliControlRequest;
use serde_json::Value;

use super::{Event, ProtocolViolation, Session};
use crate::correlation::RequestId;

impl<T> Session<T> {
    /// The CLI's requests an `initialize` answer lists as still waiting, in its order.
    pub(super) fn pending_requests(ok: &byre_proto::ControlSuccess) -> Vec<Value> {
        [
            &ok.pending_permission_requests,
            &ok.pending_user_dialog_requests,
            &ok.pending_elicitation_requests,
        ]
        .into_iter()
        .flatten()
        .flatten()
        .cloned()
        .collect()
    }

    /// Dispatches a request an `initialize` answer lists as waiting, unless it is in flight
    /// or was answered already (its answer is on its way).
    pub(super) fn redeliver(&mut self, envelope: Value) {
        let id = envelope.get("request_id").and_then(Value::as_str);
        let Some(id) = id.map(RequestId::new) else {
            self.events
                .push_back(Event::Protocol(ProtocolViolation::UndecodableRequest {
                    id: String::new(),
                    why: "a pending request without a request_id".into(),
                }));
            return;
        };
        if self.requests.incoming.get(&id).is_some() || self.answered.contains(&id) {
            return;
        }
        match serde_json::from_value::<CliControlRequest>(envelope) {
            Ok(request) => self.on_request(&request),
            Err(e) => {
                self.reply(
                    id.as_str(),
                    Err(format!("the request does not decode: {e}")),
                );
                self.events
                    .push_back(Event::Protocol(ProtocolViolation::UndecodableRequest {
                        id: id.into_string(),
                        why: e.to_string(),
                    }));
            }
        }
    }
}
