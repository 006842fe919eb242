//! Control requests both ways: the host's, sent to the CLI with who waits for each answer, and
//! the CLI's, handed to the program's handlers (hooks, permission prompts, in-process MCP
//! servers), each answered once: by its handler, or with an error when it fails, panics, takes
//! too long or is cancelled.

use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, Instant};

use byre_proto::{CliRequest, HostRequest, RawJson};
use serde_json::Value;
use tokio::sync::oneshot;

use super::error::Error;
use super::run::{Driver, Waiter};
use crate::correlation::RequestId;

impl Driver {
    /// Sends a host request; `reply` gets its answer.
    pub(super) fn request(
        &mut self,
        request: HostRequest,
        timeout: Option<Duration>,
        reply: oneshot::Sender<Result<Option<RawJson>, Error>>,
    ) {
        let subtype = request.tag().unwrap_or("?").to_owned();
        let span = match &self.turn_span {
            Some(turn) => tracing::debug_span!(
                parent: turn,
                "control_request",
                id = tracing::field::Empty,
                subtype,
                from = "host"
            ),
            None => tracing::debug_span!(
                "control_request",
                id = tracing::field::Empty,
                subtype,
                from = "host"
            ),
        };
        if let Err(e) = self.session.check_open() {
            // An answer to the caller, not a write of the user's data: a caller that stopped
            // waiting for it (its future dropped) has nothing to be told.
            let _ = reply.send(Err(Error::Closed(e.to_string())));
            return;
        }
        let waiter = Waiter {
            reply,
            span: span.clone(),
            sent: Instant::now(),
        };
        if let Ok(id) = self
            .session
            .request_with(Instant::now(), request, timeout, waiter)
        {
            span.record("id", id.as_str());
            span.in_scope(|| tracing::debug!("sent"));
        }
    }

    /// A handler finished (or panicked, or was aborted): its request gets its one answer.
    pub(super) fn handled(
        &mut self,
        done: Result<(RequestId, Result<Value, String>), tokio::task::JoinError>,
    ) {
        let (id, answer) = match done {
            Ok(done) => done,
            Err(e) => {
                // A handler that panicked (or was aborted): find its id.
                let task = e.id();
                let Some(id) = self
                    .running_ids
                    .iter()
                    .find(|(_, h)| h.id() == task)
                    .map(|(id, _)| id.clone())
                else {
                    return;
                };
                let why = if e.is_panic() {
                    tracing::warn!(id = %id, "a handler panicked; answered with an error");
                    "the handler panicked"
                } else {
                    "cancelled"
                };
                (id, Err(why.to_owned()))
            }
        };
        if self.running_ids.remove(&id).is_some() {
            let _ = self.session.answer(Instant::now(), &id, answer);
        }
    }

    /// Starts the handler for a CLI request. A request with no handler is answered with an
    /// error at once, so the CLI never waits.
    pub(super) fn dispatch(&mut self, id: RequestId, request: CliRequest) {
        let task = match &request {
            CliRequest::HookCallback(hook) => self.hooks.get(&hook.callback_id).map(|handler| {
                let fut = handler(hook.input.clone(), hook.tool_use_id.clone());
                Box::pin(async move {
                    let output = fut.await?;
                    serde_json::to_value(output).map_err(|e| e.to_string())
                }) as Pin<Box<dyn Future<Output = Result<Value, String>> + Send>>
            }),
            CliRequest::McpMessage(mcp) => self
                .mcp
                .get(&mcp.server_name)
                .map(|handler| handler(request.clone())),
            other => other
                .tag()
                .and_then(|subtype| self.handlers.get(subtype))
                .map(|handler| handler(request.clone())),
        };
        let Some(task) = task else {
            let subtype = request.tag().unwrap_or("?").to_owned();
            let _ = self.session.answer(
                Instant::now(),
                &id,
                Err(format!("this host has no handler for {subtype}")),
            );
            return;
        };
        let subtype = request.tag().unwrap_or("?");
        let span = match &self.turn_span {
            Some(turn) => tracing::debug_span!(
                parent: turn,
                "control_request",
                id = %id,
                subtype,
                from = "cli"
            ),
            None => tracing::debug_span!("control_request", id = %id, subtype, from = "cli"),
        };
        let task: Pin<Box<dyn Future<Output = Result<Value, String>> + Send>> =
            match self.handler_timeout {
                Some(limit) => Box::pin(async move {
                    match tokio::time::timeout(limit, task).await {
                        Ok(answer) => answer,
                        Err(_) => Err(format!("the handler did not answer within {limit:?}")),
                    }
                }),
                None => task,
            };
        let task_id = id.clone();
        let started = Instant::now();
        let handle = self.running.spawn(tracing::Instrument::instrument(
            async move {
                tracing::debug!("handling");
                let answer = task.await;
                let elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
                match &answer {
                    Ok(_) => tracing::debug!(elapsed_ms, "answered"),
                    Err(error) => tracing::info!(elapsed_ms, %error, "answered with an error"),
                }
                (task_id, answer)
            },
            span,
        ));
        self.running_ids.insert(id, handle);
    }
}
