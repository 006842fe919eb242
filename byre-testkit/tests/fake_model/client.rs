//! A minimal HTTP/1.1 client over a plain TCP stream, enough to talk to the fake model.

use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// How long any single client operation may take before the test fails.
pub(crate) const LIMIT: Duration = Duration::from_secs(5);

/// A complete HTTP response.
#[derive(Debug)]
pub(crate) struct HttpResponse {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
}

impl HttpResponse {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub(crate) fn text(&self) -> String {
        String::from_utf8(self.body.clone()).expect("body is UTF-8")
    }

    pub(crate) fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("body is JSON")
    }

    /// The SSE events of the body as (event name, parsed data); checks the framing.
    pub(crate) fn events(&self) -> Vec<(String, Value)> {
        let text = self.text();
        assert!(text.ends_with("\n\n"), "SSE body ends with a blank line");
        text.strip_suffix("\n\n")
            .unwrap()
            .split("\n\n")
            .map(|frame| {
                let (event, data) = frame.split_once('\n').expect("two lines per event");
                let event = event.strip_prefix("event: ").expect("event line");
                let data = data.strip_prefix("data: ").expect("data line");
                let data: Value = serde_json::from_str(data).expect("data is JSON");
                assert_eq!(data["type"], event, "event name equals data type");
                (event.to_string(), data)
            })
            .collect()
    }
}

impl HttpResponse {
    /// The concatenated `text_delta`s of a streamed reply.
    pub(crate) fn streamed_text(&self) -> String {
        self.events()
            .iter()
            .filter(|(_, d)| d["delta"]["type"] == "text_delta")
            .map(|(_, d)| d["delta"]["text"].as_str().unwrap().to_string())
            .collect()
    }
}

fn host_port(base_url: &str) -> &str {
    base_url
        .strip_prefix("http://")
        .expect("base URL is http://")
}

/// Connects and writes one request (with `Connection: close`); returns the open stream.
pub(crate) async fn send(
    base_url: &str,
    method: &str,
    path: &str,
    body: &[u8],
    headers: &[(&str, &str)],
) -> TcpStream {
    let mut stream = tokio::time::timeout(LIMIT, TcpStream::connect(host_port(base_url)))
        .await
        .expect("connect in time")
        .expect("connect");
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
        host_port(base_url),
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).await.expect("write head");
    stream.write_all(body).await.expect("write body");
    stream.flush().await.expect("flush");
    stream
}

/// Reads from `stream` until `needle` shows up in the raw bytes; returns everything read.
pub(crate) async fn read_until(stream: &mut TcpStream, needle: &str) -> String {
    let mut raw = Vec::new();
    let mut buf = [0u8; 4096];
    tokio::time::timeout(LIMIT, async {
        while !String::from_utf8_lossy(&raw).contains(needle) {
            let n = stream.read(&mut buf).await.expect("read");
            assert!(n > 0, "connection closed before {needle:?} arrived");
            raw.extend_from_slice(&buf[..n]);
        }
    })
    .await
    .unwrap_or_else(|_| panic!("{needle:?} did not arrive in time"));
    String::from_utf8_lossy(&raw).into_owned()
}

/// Reads the rest of `stream` until the server closes it.
pub(crate) async fn read_to_close(stream: &mut TcpStream) -> Vec<u8> {
    let mut raw = Vec::new();
    tokio::time::timeout(LIMIT, stream.read_to_end(&mut raw))
        .await
        .expect("server closed the connection in time")
        .expect("read");
    raw
}

/// Sends a request and reads the whole response.
pub(crate) async fn request(
    base_url: &str,
    method: &str,
    path: &str,
    body: &[u8],
    headers: &[(&str, &str)],
) -> HttpResponse {
    let mut stream = send(base_url, method, path, body, headers).await;
    parse(&read_to_close(&mut stream).await)
}

/// `POST` of a JSON body.
pub(crate) async fn post(base_url: &str, path: &str, body: &Value) -> HttpResponse {
    request(
        base_url,
        "POST",
        path,
        body.to_string().as_bytes(),
        &[("anthropic-version", "2023-06-01")],
    )
    .await
}

/// `POST /v1/messages?beta=true` of a JSON body.
pub(crate) async fn messages(base_url: &str, body: &Value) -> HttpResponse {
    post(base_url, "/v1/messages?beta=true", body).await
}

/// Parses a complete raw response (content-length or chunked).
pub(crate) fn parse(raw: &[u8]) -> HttpResponse {
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("end of headers");
    let head = std::str::from_utf8(&raw[..split]).expect("head is UTF-8");
    let rest = &raw[split + 4..];
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap();
    let status = status_line
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("status code");
    let headers: Vec<(String, String)> = lines
        .map(|l| {
            let (n, v) = l.split_once(':').expect("header line");
            (n.trim().to_ascii_lowercase(), v.trim().to_string())
        })
        .collect();
    let chunked = headers
        .iter()
        .any(|(n, v)| n == "transfer-encoding" && v.contains("chunked"));
    let body = if chunked {
        dechunk(rest)
    } else {
        rest.to_vec()
    };
    HttpResponse {
        status,
        headers,
        body,
    }
}

fn dechunk(mut raw: &[u8]) -> Vec<u8> {
    let mut body = Vec::new();
    loop {
        let line_end = raw
            .windows(2)
            .position(|w| w == b"\r\n")
            .expect("chunk size line");
        let size_text = std::str::from_utf8(&raw[..line_end]).unwrap();
        let size = usize::from_str_radix(size_text.split(';').next().unwrap().trim(), 16)
            .expect("hex chunk size");
        raw = &raw[line_end + 2..];
        if size == 0 {
            return body;
        }
        body.extend_from_slice(&raw[..size]);
        raw = &raw[size + 2..];
    }
}

/// A request body shaped like the CLI's: `messages`, `system`, `tools`, `stream`.
pub(crate) fn cli_body(messages: Value, stream: bool) -> Value {
    json!({
        "model": "claude-opus-5-5",
        "messages": messages,
        "system": [{"type": "text", "text": "You are Claude Code."}],
        "tools": [
            {"name": "Bash", "input_schema": {"type": "object"}},
            {"name": "Read", "input_schema": {"type": "object"}}
        ],
        "metadata": {"user_id": "test"},
        "max_tokens": 32000,
        "stream": stream
    })
}

/// A first CLI turn: a user message with a `<system-reminder>` block and the text, followed by
/// the CLI's `role: "system"` environment message.
pub(crate) fn first_turn(text: &str) -> Value {
    json!([
        {"role": "user", "content": [
            {"type": "text", "text": "<system-reminder>\nContext.\n</system-reminder>"},
            {"type": "text", "text": text}
        ]},
        {"role": "system", "content": "Environment: offline test."}
    ])
}

/// The conversation after the model called a tool and the tool printed `output`.
pub(crate) fn after_tool(text: &str, output: &str) -> Value {
    let mut messages = first_turn(text);
    let list = messages.as_array_mut().unwrap();
    list.push(json!({"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_x", "name": "Bash", "input": {"command": "echo hi"}}
    ]}));
    list.push(json!({"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_x", "content": [{"type": "text", "text": output}]}
    ]}));
    messages
}
