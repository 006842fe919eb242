//! The CLI's requests: which the host answers and which get their answer from the core at
//! once (no handler for them, or a part that did not fit the model, so that no handler sees a
//! request it could not read whole).

use byre_proto::{CliControlRequest, CliRequest, JsonRpcMessage, McpMessageResponse};

use super::{Action, Answer, Event, ProtocolViolation, RequestId, Session};

impl<T> Session<T> {
    pub(super) fn on_request(&mut self, request: &CliControlRequest) {
        let id = RequestId::new(request.request_id.clone());
        let subtype = request.request.tag().unwrap_or_default().to_owned();
        if self
            .requests
            .incoming
            .start(id.clone(), subtype, String::new())
            .is_err()
        {
            self.events
                .push_back(Event::Protocol(ProtocolViolation::DuplicateRequestId(
                    id.to_string(),
                )));
            return;
        }
        // Requests the host cannot or did not offer to answer get their reply here.
        let automatic: Option<Answer> = match &request.request {
            CliRequest::HookCallback(hook) if !self.callback_ids.contains(&hook.callback_id) => {
                Some(Err(format!(
                    "no hook callback {:?} is registered",
                    hook.callback_id
                )))
            }
            CliRequest::McpMessage(mcp) if !self.config.mcp_servers.contains(&mcp.server_name) => {
                let reply = JsonRpcMessage::error(
                    mcp.message.id.clone(),
                    JsonRpcMessage::METHOD_NOT_FOUND,
                    format!("Server '{}' not found", mcp.server_name),
                );
                Some(Ok(
                    serde_json::to_value(McpMessageResponse::new(reply)).unwrap_or_default()
                ))
            }
            CliRequest::HookCallback(_) | CliRequest::McpMessage(_) => None,
            CliRequest::Unknown(u) => Some(Err(format!(
                "Unsupported control request subtype: {}",
                u.get_str("subtype").unwrap_or("?")
            ))),
            CliRequest::Elicitation(_) if !self.config.answers.contains("elicitation") => {
                Some(Ok(serde_json::json!({"action": "decline"})))
            }
            other => match other.tag() {
                Some(subtype) if self.config.answers.contains(subtype) => None,
                subtype => Some(Err(format!(
                    "this host does not answer {}",
                    subtype.unwrap_or("this request")
                ))),
            },
        };
        match automatic {
            Some(answer) => {
                if self.requests.incoming.finish(&id).is_some() {
                    self.reply(id.as_str(), answer);
                }
            }
            None => {
                let request = Box::new(request.request.clone());
                self.actions.push_back(Action::Dispatch {
                    id: id.clone(),
                    request: request.clone(),
                });
                self.events.push_back(Event::Request { id, request });
            }
        }
    }

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
