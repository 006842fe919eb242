//! What the session core does with a CLI line that did not decode into a known shape: a CLI
//! request among them still gets an answer (an error) at once, so the CLI never waits.

use super::{Event, ProtocolViolation, RequestId, Session};

impl<T> Session<T> {
    /// A line that did not decode. When it is a CLI request (it has `type: control_request`
    /// and a `request_id`), the CLI waits for an answer: it gets an error at once.
    pub(super) fn on_undecodable(&mut self, unknown: &byre_proto::Unknown) {
        if unknown.get_str("type") != Some("control_request") {
            return;
        }
        let Some(id) = unknown.get_str("request_id") else {
            let subtype = unknown
                .fields
                .get("request")
                .and_then(|r| r.get("subtype"))
                .and_then(serde_json::Value::as_str)
                .unwrap_or("unknown")
                .to_owned();
            self.events
                .push_back(Event::Protocol(ProtocolViolation::RequestWithoutId {
                    subtype,
                }));
            return;
        };
        let why = unknown
            .mismatch
            .clone()
            .unwrap_or_else(|| "an unknown shape".to_owned());
        let id = RequestId::new(id);
        if self.requests.incoming.get(&id).is_some() {
            self.events
                .push_back(Event::Protocol(ProtocolViolation::DuplicateRequestId(
                    id.to_string(),
                )));
            return;
        }
        self.reply(
            id.as_str(),
            Err(format!("the request does not decode: {why}")),
        );
        self.events
            .push_back(Event::Protocol(ProtocolViolation::UndecodableRequest {
                id: id.into_string(),
                why,
            }));
    }
}
