//! `byre-mcp-stdio`: a small MCP server on stdio (JSON-RPC, one message per line), for tests
//! that need a server the CLI starts itself (`{"type":"stdio","command":...}` in
//! `--mcp-config`). Its tools:
//!
//! - `echo {text}`: returns the text;
//! - `ask {question}`: asks the client to fill in a one-field form (`elicitation/create`, with
//!   `requestedSchema` `{answer: string}`), and returns `elicitation: <action> <content>` with
//!   the client's answer (or `elicitation failed: <error>`).
//!
//! Any other method gets JSON-RPC `-32601`: the CLI (2.1.328) first probes `server/discover`
//! (MCP `2026-07-28`), then falls back to `initialize`.
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
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let Some(method) = message.get("method").and_then(Value::as_str) else {
            // A response to nothing this server asked: ignored.
            continue;
        };
        let Some(id) = message.get("id").cloned() else {
            // A notification.
            continue;
        };
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        let reply = match method {
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
            "tools/call" => {
                let args = &params["arguments"];
                match params["name"].as_str() {
                    Some("echo") => Ok(text_result(args["text"].as_str().unwrap_or(""))),
                    Some("ask") => {
                        next_id += 1;
                        let asked = format!("elicit-{next_id}");
                        let request = json!({
                            "jsonrpc": "2.0",
                            "id": asked,
                            "method": "elicitation/create",
                            "params": {
                                "message": args["question"].as_str().unwrap_or(""),
                                "requestedSchema": {
                                    "type": "object",
                                    "properties": {"answer": {"type": "string"}},
                                    "required": ["answer"],
                                },
                            },
                        });
                        send(&mut out, &request);
                        Ok(text_result(&await_answer(&mut lines, &mut out, &asked)))
                    }
                    other => Err(format!("no tool {other:?}")),
                }
            }
            other => Err(format!("method not found: {other}")),
        };
        let response = match reply {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err(message) => json!({
                "jsonrpc": "2.0",
                "id": id,
                "error": {"code": -32601, "message": message},
            }),
        };
        send(&mut out, &response);
    }
}

/// Reads until the response to request `id` comes, answering pings meanwhile; describes it.
fn await_answer(
    lines: &mut impl Iterator<Item = std::io::Result<String>>,
    out: &mut impl Write,
    id: &str,
) -> String {
    for line in lines.by_ref() {
        let Ok(line) = line else { break };
        eprintln!("mcp< {line}");
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        if message.get("method").and_then(Value::as_str) == Some("ping") {
            if let Some(ping) = message.get("id") {
                send(out, &json!({"jsonrpc": "2.0", "id": ping, "result": {}}));
            }
            continue;
        }
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
