//! `byre-mcp-stdio`: a small MCP server on stdio (JSON-RPC, one message per line), for tests
//! that need a server the CLI starts itself (`{"type":"stdio","command":...}` in
//! `--mcp-config`). Its tools:
//!
//! - `echo {text}`: returns the text;
//! - `ask {question}`: asks the client to fill in a one-field form (`elicitation/create`, with
//!   `requestedSchema` `{answer: string}`), and returns `elicitation: <action> <content>` with
//!   the client's answer (or `elicitation failed: <error>`).
//!
//! Requests that come while `ask` waits for its answer are answered (a second `ask` gets an
//! error). Any other method, or a call of an unknown tool, gets JSON-RPC `-32601`: the CLI
//! (2.1.328) first probes `server/discover` (MCP `2026-07-28`), then falls back to
//! `initialize`.
//!
//! Everything it reads goes to stderr, one line each, prefixed with `mcp<` (for debugging a
//! test).

use std::io::{BufRead, Write};

use serde_json::{json, Value};

fn main() {
    let stdin = std::io::stdin();
    let mut lines = stdin.lock().lines();
    let mut out = std::io::stdout().lock();
    let mut next_id = 0u64;
    while let Some(Ok(line)) = lines.next() {
        eprintln!("mcp< {line}");
        let Some((id, method, params)) = request(&line) else {
            // A notification, or a response to nothing this server asked: nothing to answer.
            continue;
        };
        let reply = if method == "tools/call" && params["name"] == "ask" {
            next_id += 1;
            let asked = format!("elicit-{next_id}");
            let question = params["arguments"]["question"].as_str().unwrap_or("");
            send(
                &mut out,
                &json!({
                    "jsonrpc": "2.0",
                    "id": asked,
                    "method": "elicitation/create",
                    "params": {
                        "message": question,
                        "requestedSchema": {
                            "type": "object",
                            "properties": {"answer": {"type": "string"}},
                            "required": ["answer"],
                        },
                    },
                }),
            );
            Ok(text_result(&await_answer(&mut lines, &mut out, &asked)))
        } else {
            answer(&method, &params)
        };
        send(&mut out, &response(id, reply));
    }
}

/// A request's id, method and params; `None` for anything else.
fn request(line: &str) -> Option<(Value, String, Value)> {
    let message: Value = serde_json::from_str(line).ok()?;
    let method = message.get("method")?.as_str()?.to_owned();
    let id = message.get("id")?.clone();
    let params = message.get("params").cloned().unwrap_or(Value::Null);
    Some((id, method, params))
}

/// The answer to any request but a call of `ask`.
fn answer(method: &str, params: &Value) -> Result<Value, String> {
    match method {
        "initialize" => Ok(json!({
            "protocolVersion": params["protocolVersion"].as_str().unwrap_or("2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "byre-mcp-stdio", "version": env!("CARGO_PKG_VERSION")},
        })),
        "ping" => Ok(json!({})),
        "tools/list" => Ok(json!({"tools": [
            {
                "name": "echo",
                "description": "Return the text.",
                "inputSchema": {
                    "type": "object",
                    "properties": {"text": {"type": "string"}},
                    "required": ["text"],
                },
            },
            {
                "name": "ask",
                "description": "Ask the user a question through an MCP elicitation form.",
                "inputSchema": {
                    "type": "object",
                    "properties": {"question": {"type": "string"}},
                    "required": ["question"],
                },
            },
        ]})),
        "tools/call" => match params["name"].as_str() {
            Some("echo") => Ok(text_result(
                params["arguments"]["text"].as_str().unwrap_or(""),
            )),
            Some("ask") => Err("ask is busy with another question".to_owned()),
            other => Err(format!("no tool {other:?}")),
        },
        other => Err(format!("method not found: {other}")),
    }
}

fn response(id: Value, reply: Result<Value, String>) -> Value {
    match reply {
        Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
        Err(message) => json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": {"code": -32601, "message": message},
        }),
    }
}

/// Reads until the response to request `id` comes, answering other requests meanwhile (a
/// second `ask` gets an error); describes the response.
fn await_answer(
    lines: &mut impl Iterator<Item = std::io::Result<String>>,
    out: &mut impl Write,
    id: &str,
) -> String {
    for line in lines.by_ref() {
        let Ok(line) = line else { break };
        eprintln!("mcp< {line}");
        if let Some((other, method, params)) = request(&line) {
            send(out, &response(other, answer(&method, &params)));
            continue;
        }
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        if message.get("id").and_then(Value::as_str) != Some(id) {
            continue;
        }
        if let Some(error) = message.get("error") {
            return format!("elicitation failed: {error}");
        }
        let result = &message["result"];
        let action = result["action"].as_str().unwrap_or("?");
        let content = result.get("content").cloned().unwrap_or(Value::Null);
        return format!("elicitation: {action} {content}");
    }
    "elicitation failed: stdin closed".to_owned()
}

fn text_result(text: &str) -> Value {
    json!({"content": [{"type": "text", "text": text}]})
}

fn send(out: &mut impl Write, message: &Value) {
    let _ = writeln!(out, "{message}");
    let _ = out.flush();
}
