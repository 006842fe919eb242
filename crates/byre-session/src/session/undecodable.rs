//! What the session core does with a CLI request in which a part did not fit the model: it
//! still gets an answer (an error) at once, so the CLI never waits, and no handler sees a
//! request it could not read whole.

use byre_proto::CliControlRequest;

use super::{Event, ProtocolViolation, RequestId, Session};

impl<T> Session<T> {
    /// A CLI request with misfits (each a path and a reason): answered with an error at once.
    /// One without a request id cannot be answered: reported only.
    pub(super) fn on_misfit_request(&mut self, request: &CliControlRequest, misfits: &[String]) {
        let subtype = request.request.tag().unwrap_or("unknown").to_owned();
        if request.extra.misfit("request_id").is_some() {
            self.events
                .push_back(Event::Protocol(ProtocolViolation::RequestWithoutId {
                    subtype,
                }));
            return;
        }
        let id = RequestId::new(request.request_id.clone());
        if self.requests.incoming.get(&id).is_some() {
            self.events
                .push_back(Event::Protocol(ProtocolViolation::DuplicateRequestId(
                    id.to_string(),
                )));
            return;
        }
        let why = format!("parts of it do not fit: {}", misfits.join("; "));
        self.reply(
            id.as_str(),
            Err(format!("the {subtype} request does not decode: {why}")),
        );
        self.events
            .push_back(Event::Protocol(ProtocolViolation::UndecodableRequest {
                id: id.into_string(),
                why,
            }));
    }
}
