//! The scenarios' views of messages as JSON values (object keys sorted): by key, never by
//! position. These read the CLI's messages ([`json_of`]) and the bodies of the API requests
//! the fake model received.

use byre_proto::CliMessage;
use serde_json::Value;

use crate::{ensure, Failure};

/// Every message as JSON (object keys sorted), for assertions by key.
pub(crate) fn json_of(messages: &[CliMessage]) -> Vec<Value> {
    messages
        .iter()
        .map(|m| m.to_value().expect("the CLI's payloads are values"))
        .collect()
}

/// The `result` lines.
pub(crate) fn results_of(values: &[Value]) -> Vec<&Value> {
    values.iter().filter(|v| v["type"] == "result").collect()
}

/// The single `result` of a turn.
pub(crate) fn only_result(values: &[Value]) -> Result<&Value, Failure> {
    let results = results_of(values);
    ensure!(
        results.len() == 1,
        "expected one result, got {}",
        results.len()
    );
    Ok(results[0])
}

/// The `system` lines of one subtype, with their indexes.
pub(crate) fn systems<'a>(values: &'a [Value], subtype: &str) -> Vec<(usize, &'a Value)> {
    values
        .iter()
        .enumerate()
        .filter(|(_, v)| v["type"] == "system" && v["subtype"] == subtype)
        .collect()
}

/// How many `system/status` lines say `requesting`.
pub(crate) fn statuses_requesting(values: &[Value]) -> usize {
    systems(values, "status")
        .iter()
        .filter(|(_, v)| v["status"] == "requesting")
        .count()
}

/// The `hook_callback` inputs for `callback_id`, with their indexes.
pub(crate) fn hook_calls<'a>(values: &'a [Value], callback_id: &str) -> Vec<(usize, &'a Value)> {
    values
        .iter()
        .enumerate()
        .filter(|(_, v)| {
            v["type"] == "control_request"
                && v["request"]["subtype"] == "hook_callback"
                && v["request"]["callback_id"] == callback_id
        })
        .map(|(i, v)| (i, &v["request"]["input"]))
        .collect()
}

/// The `user` line holding the `tool_result` for `tool_use_id`: its index, the line and the
/// block.
pub(crate) fn tool_result_for<'a>(
    values: &'a [Value],
    tool_use_id: &str,
) -> Option<(usize, &'a Value, &'a Value)> {
    values.iter().enumerate().find_map(|(i, v)| {
        if v["type"] != "user" {
            return None;
        }
        let block = v["message"]["content"]
            .as_array()?
            .iter()
            .find(|b| b["type"] == "tool_result" && b["tool_use_id"] == tool_use_id)?;
        Some((i, v, block))
    })
}

/// The text of message content: a string, or its text blocks joined by newlines.
pub(crate) fn content_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// Every text block of the last user message of an API request (`<system-reminder>` blocks
/// included), joined by newlines.
pub(crate) fn last_user_text_all(messages: &[Value]) -> String {
    last_user_message(messages)
        .map(|m| content_text(&m["content"]))
        .unwrap_or_default()
}

/// The last `role: "user"` message of an API request's messages.
pub(crate) fn last_user_message(messages: &[Value]) -> Option<&Value> {
    messages.iter().rev().find(|m| m["role"] == "user")
}

/// Checks the subagent's lines: every `assistant`/`user` line with `agent_id` belongs to the
/// Agent call `agent_call` and names the subagent; every top-level line has neither; no
/// stream_event belongs to the subagent. Returns the indexes of the nested lines.
pub(crate) fn check_nested(
    values: &[Value],
    agent_call: &str,
    agent_id: &str,
    description: &str,
) -> Result<Vec<usize>, Failure> {
    let mut nested = Vec::new();
    for (i, v) in values.iter().enumerate() {
        let kind = v["type"].as_str().unwrap_or("");
        if kind == "stream_event" {
            ensure!(
                v["parent_tool_use_id"].is_null(),
                "a stream_event belongs to the subagent: {v}"
            );
        }
        if kind != "assistant" && kind != "user" {
            continue;
        }
        if v["parent_tool_use_id"].is_null() {
            ensure!(
                v.get("agent_id").is_none(),
                "a top-level {kind} line has an agent_id: {v}"
            );
            continue;
        }
        ensure!(
            v["parent_tool_use_id"] == agent_call
                && v["agent_id"] == agent_id
                && v["subagent_type"] == "general-purpose"
                && v["task_description"] == description,
            "a nested {kind} line does not name the subagent: {v}"
        );
        nested.push(i);
    }
    ensure!(
        nested.len() >= 2,
        "expected the subagent's tool call and tool result as nested lines, got {}",
        nested.len()
    );
    Ok(nested)
}

/// A result line without its bulky usage fields, for failure messages.
pub(crate) fn brief(result: &Value) -> Value {
    let mut short = result.clone();
    if let Value::Object(map) = &mut short {
        for key in [
            "usage",
            "modelUsage",
            "model_usage_since_last_result",
            "subagent_stats",
        ] {
            map.remove(key);
        }
    }
    short
}

/// For a tool_use id, the `tool_result` block of the last user message of an API request body.
pub(crate) fn api_tool_result(body: &Value, tool_use_id: &str) -> Option<Value> {
    let messages = body.get("messages")?.as_array()?;
    let last = messages
        .iter()
        .rev()
        .find(|m| m.get("role").and_then(Value::as_str) == Some("user"))?;
    last.get("content")?
        .as_array()?
        .iter()
        .find(|b| {
            b.get("type").and_then(Value::as_str) == Some("tool_result")
                && b.get("tool_use_id").and_then(Value::as_str) == Some(tool_use_id)
        })
        .cloned()
}
