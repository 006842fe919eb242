//! `byre-mcp-stdio` spoken to directly over its stdin and stdout: the handshake, its tools, an
//! elicitation round trip with other requests answered in the middle, and errors for unknown
//! tools and methods.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{json, Value};

/// How long one answer may take before the test fails (instead of hanging).
const ANSWER: Duration = Duration::from_secs(30);

struct Server {
    child: Child,
    stdin: ChildStdin,
    /// Lines of its stdout, read on a thread of their own.
    lines: mpsc::Receiver<String>,
}

impl Server {
    fn start() -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_byre-mcp-stdio"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the server starts");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in stdout.lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Server {
            child,
            stdin,
            lines,
        }
    }

    fn send(&mut self, message: Value) {
        writeln!(self.stdin, "{message}").unwrap();
        self.stdin.flush().unwrap();
    }

    fn read(&mut self) -> Value {
        let line = self
            .lines
            .recv_timeout(ANSWER)
            .expect("the server answers in time");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"))
    }

    fn call(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let answer = self.read();
        assert_eq!(answer["id"], id, "{answer}");
        answer
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn handshake_tools_and_an_elicitation_round_trip() {
    let mut server = Server::start();
    let init = server.call(1, "initialize", json!({"protocolVersion": "2025-11-25"}));
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(init["result"]["serverInfo"]["name"], "byre-mcp-stdio");
    server.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let tools = server.call(2, "tools/list", json!({}));
    let names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["echo", "ask"]);
    let echo = server.call(
        3,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "hi"}}),
    );
    assert_eq!(echo["result"]["content"][0]["text"], "hi");

    // `ask` asks the client first; a ping while it waits is answered.
    server.send(json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
        "params": {"name": "ask", "arguments": {"question": "Which colour?"}}}));
    let asked = server.read();
    assert_eq!(asked["method"], "elicitation/create", "{asked}");
    assert_eq!(asked["params"]["message"], "Which colour?");
    assert_eq!(
        asked["params"]["requestedSchema"]["required"],
        json!(["answer"])
    );
    let ping = server.call(5, "ping", json!({}));
    assert_eq!(ping["result"], json!({}));
    let echo = server.call(
        8,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "meanwhile"}}),
    );
    assert_eq!(echo["result"]["content"][0]["text"], "meanwhile");
    let busy = server.call(
        9,
        "tools/call",
        json!({"name": "ask", "arguments": {"question": "And?"}}),
    );
    assert_eq!(busy["error"]["code"], -32601, "{busy}");
    server.send(json!({"jsonrpc": "2.0", "id": asked["id"],
        "result": {"action": "accept", "content": {"answer": "Blue"}}}));
    let answer = server.read();
    assert_eq!(answer["id"], 4);
    assert_eq!(
        answer["result"]["content"][0]["text"],
        r#"elicitation: accept {"answer":"Blue"}"#
    );

    let unknown = server.call(6, "tools/call", json!({"name": "nope", "arguments": {}}));
    assert_eq!(unknown["error"]["code"], -32601);
    let unknown = server.call(7, "resources/list", json!({}));
    assert_eq!(unknown["error"]["code"], -32601);
}
