//! Unit tests of the MCP bridge and the light tool API: the CLI's recorded `mcp_message` lines
//! replayed through a bridge, cancellation both ways, a stopped server, the server's own
//! messages, and tools that fail in every way a tool can.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use byre_proto::{CliMessage, CliRequest, JsonRpcMessage};
use byre_transport::TranscriptLine;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ContentBlock, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde::Deserialize;
use serde_json::{json, Value};

use super::bridge::{Bridge, Outgoing, INVALID_REQUEST, MAX_RESTARTS, REQUEST_CANCELLED};
use super::{McpError, McpServer, Start, Tool, ToolOutput, ToolServer};
use crate::driver::Options;
use crate::HandlerError;

const STEP: Duration = Duration::from_secs(10);

/// The `lookup` tool of byre's recorded MCP scenarios, with their hand-written schema.
fn lookup() -> Tool {
    Tool::with_schema(
        "lookup",
        "Look up a word in the byre dictionary.",
        json!({
            "type": "object",
            "properties": {"word": {"type": "string"}},
            "required": ["word"],
        }),
        |arguments: Value| async move {
            let word = arguments["word"].as_str().unwrap_or_default().to_owned();
            if word == "missing" {
                Err(format!("no entry for {word}").into())
            } else {
                Ok(format!("{word}: a cow shed"))
            }
        },
    )
    .unwrap()
}

/// A bridge serving `service`, and what its server sent to the CLI by itself.
fn serve<S: rmcp::ServerHandler>(service: S) -> (Arc<Bridge>, Arc<Mutex<Vec<JsonRpcMessage>>>) {
    let sent = Arc::new(Mutex::new(Vec::new()));
    let log = sent.clone();
    let outgoing: Outgoing = Arc::new(move |message| {
        log.lock().unwrap().push(message);
        Box::pin(std::future::ready(Ok(())))
    });
    let (bridge, transport) = Bridge::with_outgoing("byre", outgoing);
    tokio::spawn(async move {
        if let Ok(running) = rmcp::serve_server(service, transport).await {
            let _ = running.waiting().await;
        }
    });
    (Arc::new(bridge), sent)
}

/// The JSON-RPC response inside an `mcp_message` answer.
fn response(answer: Result<Value, String>) -> Value {
    let answer = answer.expect("a success answer");
    answer
        .get("mcp_response")
        .cloned()
        .unwrap_or_else(|| panic!("no mcp_response in {answer}"))
}

fn message(value: Value) -> JsonRpcMessage {
    serde_json::from_value(value).unwrap()
}

/// The CLI's `mcp_message` requests in a recorded transcript, each with the answer recorded.
fn recorded(path: &Path) -> Vec<(JsonRpcMessage, Value)> {
    let lines = byre_transport::read_transcript(path).unwrap();
    let sent: Vec<Value> = lines
        .iter()
        .filter(|l| l.is_send())
        .filter_map(TranscriptLine::msg)
        .collect();
    let answer = |id: &str| {
        sent.iter()
            .filter(|m| m["type"] == "control_response")
            .find(|m| m["response"]["request_id"] == id)
            .map(|m| m["response"]["response"]["mcp_response"].clone())
            .unwrap_or_else(|| panic!("no recorded answer to {id}"))
    };
    lines
        .iter()
        .filter_map(TranscriptLine::decode_recv)
        .filter_map(|message| match message.ok()? {
            CliMessage::ControlRequest(r) => match r.request {
                CliRequest::McpMessage(m) => Some((m.message, answer(&r.request_id))),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

/// A result without `"isError": false`, which byre writes and the recorded server left out.
fn normalized(mut value: Value) -> Value {
    if let Some(result) = value.get_mut("result").and_then(Value::as_object_mut) {
        if result.get("isError") == Some(&Value::Bool(false)) {
            result.remove("isError");
        }
    }
    value
}

#[tokio::test]
async fn recorded_mcp_messages_get_the_recorded_answers() {
    let corpus = byre_testkit::corpus::transcripts_dir()
        .expect("the recorded transcripts")
        .join("cli-2.1.328");
    for name in ["sdk_mcp_always_load.jsonl", "sdk_mcp_deferred.jsonl"] {
        let exchanges = recorded(&corpus.join(name));
        let methods: Vec<_> = exchanges
            .iter()
            .map(|(m, _)| m.method.clone().unwrap_or_default())
            .collect();
        assert_eq!(
            methods[..3],
            ["initialize", "notifications/initialized", "tools/list"],
            "{name}"
        );
        assert!(methods[3..].iter().all(|m| m == "tools/call"), "{name}");
        let (bridge, sent) = serve(ToolServer::new("byre", [lookup()]).unwrap());
        for (request, expected) in exchanges {
            let got = response(bridge.handle(request.clone()).await);
            assert_eq!(normalized(got), expected, "{name}: {request:?}");
        }
        assert!(sent.lock().unwrap().is_empty(), "{name}");
    }
}

#[tokio::test]
async fn a_notification_is_acknowledged_and_a_bad_message_refused() {
    let (bridge, _) = serve(ToolServer::new("byre", [lookup()]).unwrap());
    let ack = bridge
        .handle(message(
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        ))
        .await;
    assert_eq!(
        ack.unwrap(),
        json!({"mcp_response": {"jsonrpc": "2.0", "result": {}}})
    );

    // Neither a request, a notification nor a response.
    let bad = response(
        bridge
            .handle(message(json!({"jsonrpc": "2.0", "id": 7})))
            .await,
    );
    assert_eq!(bad["id"], 7);
    assert_eq!(bad["error"]["code"], INVALID_REQUEST);

    // A request whose id is neither a number nor a string.
    let bad = response(
        bridge
            .handle(message(
                json!({"jsonrpc": "2.0", "id": [1], "method": "tools/list"}),
            ))
            .await,
    );
    assert_eq!(bad["id"], json!([1]));
    assert_eq!(bad["error"]["code"], INVALID_REQUEST);
}

/// A tool that waits until released, and tells when its future was dropped.
fn slow(started: Arc<tokio::sync::Notify>, dropped: Arc<AtomicBool>) -> Tool {
    struct OnDrop(Arc<AtomicBool>);
    impl Drop for OnDrop {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }
    #[derive(Deserialize, schemars::JsonSchema)]
    struct Nothing {}
    Tool::new("slow", "Takes an hour.", move |_: Nothing| {
        let guard = OnDrop(dropped.clone());
        started.notify_one();
        async move {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            drop(guard);
            Ok::<_, HandlerError>("done")
        }
    })
    .unwrap()
}

async fn handshake(bridge: &Arc<Bridge>) {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "claude-code", "version": "2.1.328"}}});
    let answer = response(bridge.handle(message(init)).await);
    assert_eq!(answer["result"]["protocolVersion"], "2025-11-25");
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    bridge.handle(message(initialized)).await.unwrap();
}

fn call(id: i64, tool: &str, arguments: Value) -> JsonRpcMessage {
    message(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": arguments}}))
}

async fn wait_for(flag: &AtomicBool) {
    tokio::time::timeout(STEP, async {
        while !flag.load(Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("in time");
}

#[tokio::test]
async fn a_withdrawn_request_is_cancelled_in_the_server() {
    let started = Arc::new(tokio::sync::Notify::new());
    let dropped = Arc::new(AtomicBool::new(false));
    let tools = [slow(started.clone(), dropped.clone()), lookup()];
    let (bridge, _) = serve(ToolServer::new("byre", tools).unwrap());
    handshake(&bridge).await;
    // The driver drops the handler's future when the CLI sends control_cancel_request.
    let pending = bridge.handle(call(2, "slow", json!({})));
    let running = tokio::spawn(pending);
    tokio::time::timeout(STEP, started.notified())
        .await
        .unwrap();
    running.abort();
    wait_for(&dropped).await;
    // The server goes on.
    let again = response(
        bridge
            .handle(call(3, "lookup", json!({"word": "byre"})))
            .await,
    );
    assert_eq!(again["result"]["content"][0]["text"], "byre: a cow shed");
}

#[tokio::test]
async fn the_clis_own_cancellation_answers_the_request() {
    let started = Arc::new(tokio::sync::Notify::new());
    let dropped = Arc::new(AtomicBool::new(false));
    let (bridge, _) =
        serve(ToolServer::new("byre", [slow(started.clone(), dropped.clone())]).unwrap());
    handshake(&bridge).await;
    let pending = tokio::spawn(bridge.handle(call(2, "slow", json!({}))));
    tokio::time::timeout(STEP, started.notified())
        .await
        .unwrap();
    // As CLI 2.1.328 sends it when the turn is interrupted during the call.
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 2, "reason": "AbortError: remote-cancel"}});
    let ack = bridge.handle(message(cancel)).await.unwrap();
    assert_eq!(
        ack,
        json!({"mcp_response": {"jsonrpc": "2.0", "result": {}}})
    );
    let answer = response(tokio::time::timeout(STEP, pending).await.unwrap().unwrap());
    assert_eq!(answer["id"], 2);
    assert_eq!(answer["error"]["code"], REQUEST_CANCELLED);
    wait_for(&dropped).await;
}

#[tokio::test]
async fn an_id_already_in_flight_is_refused() {
    let started = Arc::new(tokio::sync::Notify::new());
    let dropped = Arc::new(AtomicBool::new(false));
    let (bridge, _) = serve(ToolServer::new("byre", [slow(started.clone(), dropped)]).unwrap());
    handshake(&bridge).await;
    let _first = tokio::spawn(bridge.handle(call(5, "slow", json!({}))));
    tokio::time::timeout(STEP, started.notified())
        .await
        .unwrap();
    let second = response(bridge.handle(call(5, "slow", json!({}))).await);
    assert_eq!(second["error"]["code"], INVALID_REQUEST);
    assert!(second["error"]["message"]
        .as_str()
        .unwrap()
        .contains("already in flight"));
}

#[tokio::test]
async fn a_server_that_stopped_answers_with_an_internal_error() {
    let outgoing: Outgoing = Arc::new(|_| Box::pin(std::future::ready(Ok(()))));
    let (bridge, transport) = Bridge::with_outgoing("byre", outgoing);
    let bridge = Arc::new(bridge);
    let waiting = bridge.handle(message(
        json!({"jsonrpc": "2.0", "id": 0, "method": "ping"}),
    ));
    // The service ends (here: before it ever read its transport).
    drop(transport);
    let stopped = response(waiting.await);
    assert_eq!(stopped["error"]["code"], JsonRpcMessage::INTERNAL_ERROR);
    let later = response(bridge.handle(call(1, "lookup", json!({}))).await);
    assert_eq!(later["id"], 1);
    assert_eq!(later["error"]["code"], JsonRpcMessage::INTERNAL_ERROR);
}

/// A bridge serving `lookup` that starts its service again when it stops; the count of starts,
/// and a notify that stops the service running at the time.
fn restartable() -> (Arc<Bridge>, Arc<AtomicUsize>, Arc<tokio::sync::Notify>) {
    let starts = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(tokio::sync::Notify::new());
    let (count, stopper) = (starts.clone(), stop.clone());
    let start: Start = Arc::new(move |transport| {
        count.fetch_add(1, Ordering::SeqCst);
        let stop = stopper.clone();
        let server = ToolServer::new("byre", [lookup()]).unwrap();
        Box::pin(async move {
            let serve = async {
                if let Ok(running) = rmcp::serve_server(server, transport).await {
                    let _ = running.waiting().await;
                }
            };
            // Stopping drops the service, with its transport, wherever it is.
            tokio::select! {
                _ = serve => {}
                _ = stop.notified() => {}
            }
        })
    });
    let outgoing: Outgoing = Arc::new(|_| Box::pin(std::future::ready(Ok(()))));
    (
        Arc::new(Bridge::serve("byre", outgoing, start)),
        starts,
        stop,
    )
}

/// Stops the bridge's service and waits until the bridge knows.
async fn stop_service(bridge: &Bridge, stop: &tokio::sync::Notify) {
    stop.notify_one();
    wait_stopped(bridge).await;
}

/// Waits until the bridge knows that its service has stopped.
async fn wait_stopped(bridge: &Bridge) {
    tokio::time::timeout(STEP, async {
        while !bridge.has_stopped() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("the service stops");
}

#[tokio::test]
async fn a_stopped_server_is_started_again_with_the_clis_handshake() {
    let (bridge, starts, stop) = restartable();
    handshake(&bridge).await;
    let first = response(
        bridge
            .handle(call(1, "lookup", json!({"word": "byre"})))
            .await,
    );
    assert_eq!(first["result"]["content"][0]["text"], "byre: a cow shed");
    assert_eq!(starts.load(Ordering::SeqCst), 1);

    // Each time the service stops, the next call starts it again: the new service got the
    // CLI's handshake first (rmcp refuses a call before it), and the call is answered.
    for restart in 1..=MAX_RESTARTS {
        stop_service(&bridge, &stop).await;
        let id = 1 + restart as i64;
        let answer = response(
            bridge
                .handle(call(id, "lookup", json!({"word": "shed"})))
                .await,
        );
        assert_eq!(answer["id"], id);
        assert_eq!(answer["result"]["content"][0]["text"], "shed: a cow shed");
        assert_eq!(starts.load(Ordering::SeqCst), 1 + restart);
    }

    // Not more often than that: then the server has stopped for good.
    stop_service(&bridge, &stop).await;
    let answer = response(
        bridge
            .handle(call(9, "lookup", json!({"word": "byre"})))
            .await,
    );
    assert_eq!(answer["id"], 9);
    assert_eq!(answer["error"]["code"], JsonRpcMessage::INTERNAL_ERROR);
    assert!(answer["error"]["message"]
        .as_str()
        .unwrap()
        .contains("has stopped"));
    assert_eq!(starts.load(Ordering::SeqCst), 1 + MAX_RESTARTS);
}

#[tokio::test]
async fn a_server_that_cannot_be_started_again_stays_stopped() {
    let starts = Arc::new(AtomicUsize::new(0));
    let count = starts.clone();
    // Its factory panics from the second start on.
    let start: Start = Arc::new(move |transport| {
        assert_eq!(count.fetch_add(1, Ordering::SeqCst), 0, "the factory fails");
        let server = ToolServer::new("byre", [lookup()]).unwrap();
        Box::pin(async move {
            if let Ok(running) = rmcp::serve_server(server, transport).await {
                let _ = running.waiting().await;
            }
        })
    });
    let outgoing: Outgoing = Arc::new(|_| Box::pin(std::future::ready(Ok(()))));
    let bridge = Arc::new(Bridge::serve("byre", outgoing, start));
    handshake(&bridge).await;
    // The CLI ends the service by closing its side: rmcp stops.
    bridge.close_service();
    wait_stopped(&bridge).await;
    for id in [1, 2] {
        let answer = response(
            bridge
                .handle(call(id, "lookup", json!({"word": "byre"})))
                .await,
        );
        assert_eq!(answer["error"]["code"], JsonRpcMessage::INTERNAL_ERROR);
    }
    assert_eq!(starts.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn a_server_stopped_before_the_handshake_starts_again_for_the_clis_initialize() {
    let (bridge, starts, stop) = restartable();
    stop_service(&bridge, &stop).await;
    // A call before any handshake cannot be served by a new service.
    let answer = response(
        bridge
            .handle(call(1, "lookup", json!({"word": "byre"})))
            .await,
    );
    assert_eq!(answer["error"]["code"], JsonRpcMessage::INTERNAL_ERROR);
    assert_eq!(starts.load(Ordering::SeqCst), 1);
    // The CLI's own handshake starts one.
    handshake(&bridge).await;
    assert_eq!(starts.load(Ordering::SeqCst), 2);
    let answer = response(
        bridge
            .handle(call(2, "lookup", json!({"word": "byre"})))
            .await,
    );
    assert_eq!(answer["result"]["content"][0]["text"], "byre: a cow shed");
}

/// A server whose `announce` tool tells the client that its tools changed and asks it for its
/// roots.
#[derive(Clone)]
struct Announcer;

impl rmcp::ServerHandler for Announcer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    #[allow(deprecated)]
    async fn call_tool(
        &self,
        _request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        context.peer.notify_tool_list_changed().await.unwrap();
        let roots = context.peer.list_roots().await;
        let text = match roots {
            Ok(roots) => format!("{} roots", roots.roots.len()),
            Err(e) => format!("no roots: {e}"),
        };
        Ok(rmcp::model::CallToolResult::success(vec![ContentBlock::text(text)]).into())
    }
}

#[tokio::test]
async fn the_servers_own_messages_go_to_the_cli_and_its_answers_come_back() {
    let (bridge, sent) = serve(Announcer);
    handshake(&bridge).await;
    let call = tokio::spawn(bridge.handle(call(3, "announce", json!({}))));
    // The server's notification, then its request, reach the CLI by themselves.
    let request = tokio::time::timeout(STEP, async {
        loop {
            if let Some(r) = sent.lock().unwrap().iter().find(|m| m.is_request()) {
                return r.clone();
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .unwrap();
    let methods: Vec<_> = sent
        .lock()
        .unwrap()
        .iter()
        .map(|m| m.method.clone().unwrap_or_default())
        .collect();
    assert_eq!(methods, ["notifications/tools/list_changed", "roots/list"]);
    // The CLI answers the server's request in an mcp_message of its own.
    let roots =
        json!({"jsonrpc": "2.0", "id": request.id, "result": {"roots": [{"uri": "file:///srv"}]}});
    let ack = bridge.handle(message(roots)).await.unwrap();
    assert_eq!(
        ack,
        json!({"mcp_response": {"jsonrpc": "2.0", "result": {}}})
    );
    let answer = response(tokio::time::timeout(STEP, call).await.unwrap().unwrap());
    assert_eq!(answer["result"]["content"][0]["text"], "1 roots");
}

#[tokio::test]
async fn a_server_request_the_cli_refuses_fails_at_once() {
    let outgoing: Outgoing = Arc::new(|message: JsonRpcMessage| {
        Box::pin(std::future::ready(if message.is_request() {
            Err("the CLI refused".to_owned())
        } else {
            Ok(())
        }))
    });
    let (bridge, transport) = Bridge::with_outgoing("byre", outgoing);
    tokio::spawn(async move {
        if let Ok(running) = rmcp::serve_server(Announcer, transport).await {
            let _ = running.waiting().await;
        }
    });
    let bridge = Arc::new(bridge);
    handshake(&bridge).await;
    let answer = response(
        tokio::time::timeout(STEP, bridge.handle(call(3, "announce", json!({}))))
            .await
            .unwrap(),
    );
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("no roots"), "{text}");
}

// ----- the light tool API -----------------------------------------------------------------

#[derive(Deserialize, schemars::JsonSchema)]
struct Add {
    /// The first number.
    a: i64,
    /// The second number.
    b: i64,
}

fn add() -> Tool {
    Tool::new("add", "Add two numbers.", |args: Add| async move {
        args.a
            .checked_add(args.b)
            .map(|sum| ToolOutput::text(sum.to_string()))
            .ok_or_else(|| "the sum overflows".into())
    })
    .unwrap()
}

fn text_of(result: &rmcp::model::CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| match c {
            ContentBlock::Text(t) => Some(t.text.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn the_input_schema_is_derived_from_the_type() {
    let tool = add();
    let schema = Value::Object((*tool.definition().input_schema).clone());
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["properties"]["a"]["type"], "integer");
    assert_eq!(
        schema["properties"]["b"]["description"],
        "The second number."
    );
    assert_eq!(schema["required"], json!(["a", "b"]));
    assert_eq!(
        tool.definition().description.as_deref(),
        Some("Add two numbers.")
    );
}

#[tokio::test]
async fn every_tool_failure_is_a_result_the_model_reads() {
    let tool = add();
    let ok = tool.call(json!({"a": 2, "b": 3})).await;
    assert_eq!((text_of(&ok), ok.is_error), ("5".to_owned(), Some(false)));

    let err = tool.call(json!({"a": i64::MAX, "b": 1})).await;
    assert_eq!(
        (text_of(&err), err.is_error),
        ("the sum overflows".to_owned(), Some(true))
    );

    let bad = tool.call(json!({"a": "two"})).await;
    assert_eq!(bad.is_error, Some(true));
    assert!(
        text_of(&bad).starts_with("invalid arguments"),
        "{}",
        text_of(&bad)
    );

    #[derive(Deserialize, schemars::JsonSchema)]
    struct Nothing {}
    let panics = Tool::new("boom", "Panics.", |_: Nothing| async move {
        if true {
            panic!("a bug in the tool");
        }
        Ok::<_, HandlerError>("never")
    })
    .unwrap();
    let panicked = panics.call(json!({})).await;
    assert_eq!(
        (text_of(&panicked), panicked.is_error),
        ("the tool panicked".to_owned(), Some(true))
    );

    // Through the server: an unknown tool is an error result too, not a JSON-RPC error.
    let (bridge, _) = serve(ToolServer::new("byre", [add()]).unwrap());
    handshake(&bridge).await;
    let unknown = response(bridge.handle(call(9, "subtract", json!({}))).await);
    assert_eq!(unknown["result"]["isError"], true);
    assert_eq!(
        unknown["result"]["content"][0]["text"],
        "no tool named \"subtract\""
    );
}

#[tokio::test]
async fn outputs_carry_text_images_and_structured_content() {
    #[derive(serde::Serialize, schemars::JsonSchema)]
    struct Weather {
        celsius: i32,
    }
    #[derive(Deserialize, schemars::JsonSchema)]
    struct City {
        name: String,
    }
    let weather = Tool::new("weather", "The weather.", |city: City| async move {
        let output = ToolOutput::structured(&Weather { celsius: 21 }).map_err(|e| e.to_string())?;
        Ok::<_, HandlerError>(output.and_text(format!("in {}", city.name)))
    })
    .unwrap()
    .output_schema::<Weather>();
    let result = weather.call(json!({"name": "Oslo"})).await;
    assert_eq!(result.structured_content, Some(json!({"celsius": 21})));
    assert_eq!(text_of(&result), "{\"celsius\":21}in Oslo");
    let schema = weather.definition().output_schema.clone().unwrap();
    assert_eq!(schema["properties"]["celsius"]["type"], "integer");

    let image = ToolOutput::image("iVBORw0KGgo=", "image/png")
        .and_text("a pixel")
        .into_result();
    let wire = serde_json::to_value(&image).unwrap();
    assert_eq!(
        wire["content"],
        json!([
            {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
            {"type": "text", "text": "a pixel"},
        ])
    );
}

#[test]
fn bad_definitions_are_typed_errors() {
    let handler = |_: Value| async move { Ok::<_, HandlerError>("x") };
    let err = Tool::with_schema("no spaces", "x", json!({"type": "object"}), handler).unwrap_err();
    assert!(
        matches!(err, McpError::BadName { what: "tool", .. }),
        "{err}"
    );
    let err = Tool::with_schema("t", "x", json!({"type": "string"}), handler).unwrap_err();
    assert!(matches!(err, McpError::InputSchema { .. }), "{err}");
    let err = Tool::new(
        "t",
        "x",
        |_: String| async move { Ok::<_, HandlerError>("x") },
    )
    .unwrap_err();
    assert!(matches!(err, McpError::InputSchema { .. }), "{err}");
    let err = ToolServer::new("byre", [add(), add()]).unwrap_err();
    assert_eq!(err, McpError::DuplicateTool("add".into()));
    let err = McpServer::tools("by re", [add()]).unwrap_err();
    assert!(
        matches!(err, McpError::BadName { what: "server", .. }),
        "{err}"
    );
    assert!(McpServer::tools(&"x".repeat(65), [add()]).is_err());
}

#[test]
fn serve_mcp_declares_the_server_in_the_mcp_config_and_in_initialize() {
    let options = Options::new()
        .serve_mcp(McpServer::tools("calc", [add()]).unwrap())
        .serve_mcp(
            McpServer::tools("later", [lookup()])
                .unwrap()
                .always_load(false),
        );
    assert_eq!(
        options.launch.mcp_config(),
        Some(json!({"mcpServers": {
            "calc": {"type": "sdk", "name": "calc", "alwaysLoad": true},
            "later": {"type": "sdk", "name": "later"},
        }}))
    );
    assert_eq!(
        options.initialize.sdk_mcp_servers,
        Some(vec!["calc".to_owned(), "later".to_owned()])
    );
    // A server of the same name replaces the first.
    let options = options.serve_mcp(
        McpServer::tools("calc", [lookup()])
            .unwrap()
            .always_load(false),
    );
    assert_eq!(
        options.launch.mcp_config().unwrap()["mcpServers"]["calc"],
        json!({"type": "sdk", "name": "calc"})
    );
    assert_eq!(options.launch.sdk_servers.len(), 2);
    assert_eq!(
        options.initialize.sdk_mcp_servers.as_ref().map(Vec::len),
        Some(2)
    );
}

/// A server whose handler panics on every call.
#[derive(Clone)]
struct Panics;

impl rmcp::ServerHandler for Panics {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    #[allow(deprecated)]
    async fn call_tool(
        &self,
        _request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        panic!("a handler that panics")
    }
}

#[tokio::test]
async fn a_handler_that_panics_is_answered_with_an_error_and_the_server_goes_on() {
    let outgoing: Outgoing = Arc::new(|_| Box::pin(std::future::ready(Ok(()))));
    let server = McpServer::rmcp("byre", Panics).unwrap();
    let bridge = Arc::new(Bridge::serve("byre", outgoing, server.start.clone()));
    handshake(&bridge).await;
    for id in [1, 2] {
        let answer = tokio::time::timeout(STEP, bridge.handle(call(id, "any", json!({}))))
            .await
            .expect("an answer, not a wait");
        let answer = response(answer);
        assert_eq!(answer["id"], id);
        assert_eq!(answer["error"]["code"], JsonRpcMessage::INTERNAL_ERROR);
        assert!(answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("panicked"));
    }
    assert!(!bridge.has_stopped());
}
