//! The driver's spans in the shape of OpenTelemetry's GenAI conventions: a turn is an
//! `invoke_agent claude-code` span with the session id, the model, the usage and the cost of
//! its result; each tool call an `execute_tool {name}` span inside it, from the model's call to
//! its result. The `gen_ai.*` names are string literals (the conventions are still
//! experimental); `otel.name`, `otel.kind` and `otel.status_code` give an OpenTelemetry
//! layer the span's name, kind and status while the `tracing` names stay `turn` and `tool`.

use std::collections::HashMap;

use byre_proto::{CliMessage, ContentBlock, MessageContent, ResultMessage};
use tracing::field::Empty;
use tracing::Span;

/// A turn's span.
pub(super) fn turn(turn: u64, origin: &dyn std::fmt::Debug, session: Option<&str>) -> Span {
    tracing::info_span!(
        "turn",
        turn,
        origin = ?origin,
        otel.name = "invoke_agent claude-code",
        otel.kind = "internal",
        otel.status_code = Empty,
        gen_ai.operation.name = "invoke_agent",
        gen_ai.provider.name = "anthropic",
        gen_ai.agent.name = "claude-code",
        gen_ai.conversation.id = session,
        gen_ai.request.model = Empty,
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        gen_ai.usage.cache_read.input_tokens = Empty,
        gen_ai.usage.cache_creation.input_tokens = Empty,
        gen_ai.response.finish_reasons = Empty,
        byre.cost_usd = Empty,
        error.type = Empty,
    )
}

/// The most tool calls a turn keeps spans open for: a CLI that writes calls without results
/// does not make the driver hold spans without bound (later calls get none).
const MAX_OPEN_TOOL_SPANS: usize = 1024;

/// The spans of the tool calls in flight, by call id.
#[derive(Debug, Default)]
pub(super) struct ToolSpans(HashMap<String, Span>);

impl ToolSpans {
    /// Opens a span for each tool call in `message` (inside `turn`), and closes the span of
    /// each call whose result it carries.
    pub(super) fn observe(&mut self, message: &CliMessage, turn: Option<&Span>) {
        match message {
            CliMessage::Assistant(m) => {
                for block in &m.message.content {
                    if let ContentBlock::ToolUse(call) = block {
                        if self.0.len() >= MAX_OPEN_TOOL_SPANS {
                            break;
                        }
                        let parent = turn.cloned().unwrap_or_else(Span::current);
                        let span = tracing::info_span!(
                            parent: &parent,
                            "tool",
                            otel.name = format!("execute_tool {}", call.name),
                            otel.kind = "internal",
                            otel.status_code = Empty,
                            gen_ai.operation.name = "execute_tool",
                            gen_ai.tool.name = call.name.as_str(),
                            gen_ai.tool.call.id = call.id.as_str(),
                            gen_ai.agent.parent_call.id = m.parent_tool_use_id.as_deref(),
                            error.type = Empty,
                        );
                        self.0.insert(call.id.clone(), span);
                    }
                }
            }
            CliMessage::User(m) => {
                let MessageContent::Blocks(blocks) = &m.message.content else {
                    return;
                };
                for block in blocks {
                    if let ContentBlock::ToolResult(result) = block {
                        if let Some(span) = self.0.remove(&result.tool_use_id) {
                            if result.is_error == Some(true) {
                                span.record("otel.status_code", "ERROR");
                                span.record("error.type", "tool_error");
                            }
                        }
                    }
                }
            }
            _ => {}
        }
    }

    /// Closes every span still open (the turn ended).
    pub(super) fn clear(&mut self) {
        self.0.clear();
    }
}

/// Records a turn's result on its span: the model, the usage, the cost, how it ended.
pub(super) fn record_result(span: &Span, result: &ResultMessage) {
    if let Some(model) = result.model_usage.as_ref().and_then(|m| m.keys().next()) {
        span.record("gen_ai.request.model", model.as_str());
    }
    if let Some(usage) = &result.usage {
        let fields = [
            ("gen_ai.usage.input_tokens", usage.input_tokens),
            ("gen_ai.usage.output_tokens", usage.output_tokens),
            (
                "gen_ai.usage.cache_read.input_tokens",
                usage.cache_read_input_tokens,
            ),
            (
                "gen_ai.usage.cache_creation.input_tokens",
                usage.cache_creation_input_tokens,
            ),
        ];
        for (field, value) in fields {
            if let Some(value) = value {
                span.record(field, value);
            }
        }
    }
    if let Some(cost) = result.cost_usd() {
        span.record("byre.cost_usd", cost);
    }
    if let Some(reason) = &result.stop_reason {
        span.record("gen_ai.response.finish_reasons", reason.as_str());
    }
    if result.is_error == Some(true) {
        span.record("otel.status_code", "ERROR");
        span.record("error.type", result.subtype.as_str());
    } else {
        span.record("otel.status_code", "OK");
    }
}
