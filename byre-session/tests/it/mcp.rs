//! In-process MCP servers against the real CLI, offline: a light tool loaded up front and one
//! deferred behind ToolSearch, failing and slow tools, images and structured content, an rmcp
//! `#[tool_router]` server whose own notification reaches the CLI, and an rmcp handler that
//! panics.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use byre_proto::{
    CliMessage, CliRequest, ContentBlock, JsonRpcMessage, McpServerState, McpStatusRequest,
    MessageContent, ResultSubtype, TerminalReason, ToolResultBlock,
};
use byre_session::schemars::{self, JsonSchema};
use byre_session::{Claude, Event, Events, HandlerError, McpServer, Tool, ToolOutput};
use byre_testkit::{ClaudeEnv, FakeModel, Match, Reply, Rule, Script};
use futures::StreamExt;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::support::{next_event as next, options, until_result};

const STEP: Duration = Duration::from_secs(30);

/// A script of byre's recorded MCP scenarios.
fn scenario(name: &str) -> Script {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/scenarios")
        .join(name);
    Script::from_file(path).unwrap()
}

/// The JSON-RPC messages the CLI sent to `server`, in order.
fn mcp_messages(events: &[Event], server: &str) -> Vec<JsonRpcMessage> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Request { request, .. } => match &**request {
                CliRequest::McpMessage(m) if m.server_name == server => Some(m.message.clone()),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

fn methods(messages: &[JsonRpcMessage]) -> Vec<String> {
    messages
        .iter()
        .map(|m| m.method.clone().unwrap_or_default())
        .collect()
}

/// The tool_result blocks of the CLI's `user` lines.
fn tool_results(events: &[Event]) -> Vec<ToolResultBlock> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Message(CliMessage::User(u)) => match &u.message.content {
                MessageContent::Blocks(blocks) => Some(blocks.clone()),
                _ => None,
            },
            _ => None,
        })
        .flatten()
        .filter_map(|b| match b {
            ContentBlock::ToolResult(r) => Some(r),
            _ => None,
        })
        .collect()
}

/// For a tool_use id, the `tool_result` block of the last user message of an API request body.
fn api_tool_result(body: &Value, tool_use_id: &str) -> Option<Value> {
    let messages = body.get("messages")?.as_array()?;
    let last = messages.iter().rev().find(|m| m["role"] == "user")?;
    last["content"]
        .as_array()?
        .iter()
        .find(|b| b["type"] == "tool_result" && b["tool_use_id"] == tool_use_id)
        .cloned()
}

/// Checks `mcp_status`: `server` connected over sdk, with these tools.
async fn check_status(claude: &Claude, server: &str, tools: &[&str]) {
    let status = claude.request(McpStatusRequest::default()).await.unwrap();
    let servers = status.mcp_servers.unwrap_or_default();
    let entry = servers
        .iter()
        .find(|s| s.name == server)
        .unwrap_or_else(|| panic!("mcp_status lacks {server}: {servers:?}"));
    assert_eq!(entry.status, Some(McpServerState::CONNECTED), "{entry:?}");
    assert_eq!(entry.transport.as_deref(), Some("sdk"), "{entry:?}");
    let mut listed: Vec<&str> = entry
        .tools
        .iter()
        .flatten()
        .map(|t| t.name.as_str())
        .collect();
    listed.sort_unstable();
    assert_eq!(listed, tools);
}

#[derive(Deserialize, JsonSchema)]
struct Lookup {
    /// The word to look up.
    word: String,
}

/// The light `lookup` tool of the recorded scenarios; every word it is asked is pushed on
/// `calls`. The word "missing" fails.
pub(crate) fn lookup(calls: Arc<Mutex<Vec<String>>>) -> Tool {
    Tool::new(
        "lookup",
        "Look up a word in the byre dictionary.",
        move |args: Lookup| {
            calls.lock().unwrap().push(args.word.clone());
            async move {
                if args.word == "missing" {
                    Err(format!("no entry for {}", args.word).into())
                } else {
                    Ok(format!("{}: a cow shed", args.word))
                }
            }
        },
    )
    .unwrap()
}

/// The fake model of scenario `name`, and a session serving `byre` with the `lookup` tool
/// (whose calls are recorded) against it; the environment must outlive the session.
async fn serving_lookup(
    name: &str,
    allowed: &[&str],
) -> (
    FakeModel,
    ClaudeEnv,
    Claude,
    Events,
    Arc<Mutex<Vec<String>>>,
) {
    let model = FakeModel::start(scenario(name)).await.unwrap();
    let (options, env) = options(&model);
    let calls = Arc::new(Mutex::new(Vec::new()));
    let server = McpServer::tools("byre", [lookup(calls.clone())]).unwrap();
    let options = options
        .serve_mcp(server)
        .allowed_tools(allowed.iter().copied());
    let (claude, events) = Claude::start(options).await.unwrap();
    (model, env, claude, events, calls)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_with_always_load_is_offered_from_the_first_request() {
    let (model, _env, claude, mut events, calls) =
        serving_lookup("sdk_mcp_always_load.json", &[]).await;
    claude.send("please look up byre").unwrap();
    let (seen, result) = until_result(&mut events).await;
    assert_eq!(result.result.as_deref(), Some("A byre is a cow shed."));

    // The CLI's handshake, then the call, each answered by the server.
    let messages = mcp_messages(&seen, "byre");
    assert_eq!(
        methods(&messages),
        [
            "initialize",
            "notifications/initialized",
            "tools/list",
            "tools/call"
        ]
    );
    assert_eq!(
        messages[0].params.as_ref().unwrap()["protocolVersion"],
        "2025-11-25"
    );
    assert_eq!(*calls.lock().unwrap(), ["byre"]);

    // Offered from the first request; the tool's result reached the model.
    let requests = model.message_requests();
    assert_eq!(requests.len(), 2);
    assert!(
        requests[0]
            .tool_names()
            .contains(&"mcp__byre__lookup".to_owned()),
        "{:?}",
        requests[0].tool_names()
    );
    assert_eq!(requests[1].tool_results(), ["byre: a cow shed"]);
    check_status(&claude, "byre", &["lookup"]).await;

    // A failing call: the model reads an error tool_result.
    claude.send("please look up missing").unwrap();
    let (seen, result) = until_result(&mut events).await;
    assert_eq!(result.result.as_deref(), Some("The lookup failed."));
    let block = tool_results(&seen)
        .into_iter()
        .find(|b| b.tool_use_id == "toolu_lookup_missing")
        .expect("a tool_result for the failing call");
    assert_eq!(block.is_error, Some(true), "{block:?}");
    let to_model = api_tool_result(
        &model.message_requests().last().unwrap().body,
        "toolu_lookup_missing",
    )
    .expect("the model got the tool_result");
    assert_eq!(to_model["is_error"], true, "{to_model}");
    assert!(
        to_model.to_string().contains("no entry for missing"),
        "{to_model}"
    );
    claude.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deferred_tool_is_found_through_tool_search_and_called_directly() {
    let model = FakeModel::start(scenario("sdk_mcp_deferred.json"))
        .await
        .unwrap();
    let (options, _env) = options(&model);
    let calls = Arc::new(Mutex::new(Vec::new()));
    let server = McpServer::tools("byre", [lookup(calls.clone())])
        .unwrap()
        .always_load(false);
    let (claude, mut events) = Claude::start(options.serve_mcp(server)).await.unwrap();

    // Turn 1: not offered, only named; the model calls it directly and the CLI runs it.
    claude.send("please call the tool directly").unwrap();
    let (_, result) = until_result(&mut events).await;
    assert_eq!(result.result.as_deref(), Some("Found it directly."));
    let requests = model.message_requests();
    let tools = requests[0].tool_names();
    assert!(
        !tools.contains(&"mcp__byre__lookup".to_owned())
            && tools.contains(&"ToolSearch".to_owned()),
        "{tools:?}"
    );
    assert!(serde_json::to_string(requests[0].messages())
        .unwrap()
        .contains("mcp__byre__lookup"));
    assert_eq!(requests[1].tool_results(), ["direct: a cow shed"]);

    // Turn 2: ToolSearch loads it, then the model calls it.
    claude.send("please search for the tool").unwrap();
    let (seen, result) = until_result(&mut events).await;
    assert_eq!(
        result.result.as_deref(),
        Some("Found it through ToolSearch.")
    );
    let search = tool_results(&seen)
        .into_iter()
        .find(|b| b.tool_use_id == "toolu_search")
        .expect("ToolSearch's tool_result");
    let references: Vec<String> = match &search.content {
        Some(MessageContent::Blocks(blocks)) => blocks
            .iter()
            .filter_map(|b| match b {
                ContentBlock::ToolReference(r) => Some(r.tool_name.clone()),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    assert_eq!(references, ["mcp__byre__lookup"]);
    let requests = model.message_requests();
    assert_eq!(requests.len(), 5);
    assert!(!requests[2]
        .tool_names()
        .contains(&"mcp__byre__lookup".to_owned()));
    assert!(requests[3]
        .tool_names()
        .contains(&"mcp__byre__lookup".to_owned()));
    assert_eq!(requests[4].tool_results(), ["byre: a cow shed"]);
    assert_eq!(*calls.lock().unwrap(), ["direct", "byre"]);
    check_status(&claude, "byre", &["lookup"]).await;
    claude.close().await.unwrap();
}

#[derive(Deserialize, JsonSchema)]
struct Wait {
    /// How long.
    seconds: u64,
}

/// Sets its flag when dropped.
struct OnDrop(Arc<AtomicBool>);

impl Drop for OnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// Waits until `flag` is set.
async fn wait_for(flag: &AtomicBool) {
    tokio::time::timeout(STEP, async {
        while !flag.load(Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the flag was set in time");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_tool_is_cancelled_by_an_interrupt() {
    let script = Script::new()
        .rule(Rule::when(Match::user_text_contains("after")).reply(Reply::text("Still here.")))
        .rule(Rule::when(Match::has_tool_result(true)).reply(Reply::text("Waited.")))
        .rule(Rule::any().reply(Reply::tool_use("mcp__byre__wait", json!({"seconds": 3600}))));
    let model = FakeModel::start(script).await.unwrap();
    let (mut options, env) = options(&model);
    let transcript = env.home().join("transcript.jsonl");
    options = options.transcript(transcript.clone());
    let started = Arc::new(AtomicBool::new(false));
    let dropped = Arc::new(AtomicBool::new(false));
    let (running, flag) = (started.clone(), dropped.clone());
    let wait = Tool::new("wait", "Wait a while.", move |args: Wait| {
        running.store(true, Ordering::SeqCst);
        let guard = OnDrop(flag.clone());
        async move {
            tokio::time::sleep(Duration::from_secs(args.seconds)).await;
            drop(guard);
            Ok::<_, HandlerError>(ToolOutput::text("waited"))
        }
    })
    .unwrap();
    let server = McpServer::tools("byre", [wait]).unwrap();
    let (claude, mut events) = Claude::start(options.serve_mcp(server)).await.unwrap();
    claude.send("please wait").unwrap();
    // The control request of the call, and the call's JSON-RPC id.
    let (call_id, rpc_id) = loop {
        if let Event::Request { request, id } = next(&mut events).await {
            let CliRequest::McpMessage(m) = *request else {
                continue;
            };
            if m.message.method.as_deref() == Some("tools/call") {
                break (id, m.message.id.clone().expect("a request id"));
            }
        }
    };
    wait_for(&started).await;
    claude.interrupt().await.unwrap();
    let (seen, result) = until_result(&mut events).await;
    assert_eq!(result.subtype, ResultSubtype::ERROR_DURING_EXECUTION);
    assert_eq!(result.terminal_reason, Some(TerminalReason::ABORTED_TOOLS));
    // The CLI cancels the call in MCP terms; the tool's future is dropped.
    let cancelled: Vec<_> = mcp_messages(&seen, "byre")
        .into_iter()
        .filter(|m| m.method.as_deref() == Some("notifications/cancelled"))
        .collect();
    assert_eq!(cancelled.len(), 1, "{cancelled:?}");
    assert_eq!(cancelled[0].params.as_ref().unwrap()["requestId"], rpc_id);
    wait_for(&dropped).await;

    claude.send("after the interrupt").unwrap();
    let (_, result) = until_result(&mut events).await;
    assert_eq!(result.result.as_deref(), Some("Still here."));
    claude.close().await.unwrap();

    // The call's control request still got exactly one answer: a JSON-RPC error.
    let text = std::fs::read_to_string(&transcript).unwrap();
    let answers: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|l| l["dir"] == "send" && l["msg"]["response"]["request_id"] == call_id.to_string())
        .collect();
    assert_eq!(answers.len(), 1, "{answers:?}");
    let response = &answers[0]["msg"]["response"]["response"]["mcp_response"];
    assert_eq!(response["id"], rpc_id, "{response}");
    // -32800: cancelled by the client (the code LSP uses).
    assert_eq!(response["error"]["code"], -32800, "{response}");
}

/// An rmcp server written with the `#[tool_router]` macros: `unlock` reveals the `secret` tool
/// and tells the client that the tool list changed.
mod vault {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    use byre_session::rmcp::handler::server::router::tool::ToolRouter;
    use byre_session::rmcp::handler::server::tool::ToolCallContext;
    use byre_session::rmcp::handler::server::wrapper::Parameters;
    use byre_session::rmcp::model::{
        CallToolRequestParams, CallToolResponse, ListToolsResult, PaginatedRequestParams,
        ServerCapabilities, ServerConfig,
    };
    use byre_session::rmcp::service::RequestContext;
    use byre_session::rmcp::{self, tool, tool_router, ErrorData, Peer, RoleServer};
    use byre_session::schemars::{self, JsonSchema};
    use serde::Deserialize;

    #[derive(Clone)]
    pub(super) struct Vault {
        unlocked: Arc<AtomicBool>,
        tool_router: ToolRouter<Self>,
    }

    #[derive(Deserialize, JsonSchema)]
    pub(super) struct Unlock {
        /// The code.
        code: String,
    }

    #[tool_router]
    impl Vault {
        pub(super) fn new() -> Self {
            Vault {
                unlocked: Arc::new(AtomicBool::new(false)),
                tool_router: Self::tool_router(),
            }
        }

        #[tool(description = "Unlock the vault.")]
        async fn unlock(
            &self,
            Parameters(unlock): Parameters<Unlock>,
            peer: Peer<RoleServer>,
        ) -> Result<String, String> {
            if unlock.code != "1234" {
                return Err("wrong code".into());
            }
            self.unlocked.store(true, Ordering::SeqCst);
            peer.notify_tool_list_changed()
                .await
                .map_err(|e| e.to_string())?;
            Ok("unlocked".into())
        }

        #[tool(description = "Tell the secret.")]
        async fn secret(&self) -> String {
            "the secret is 42".into()
        }
    }

    impl rmcp::ServerHandler for Vault {
        fn get_info(&self) -> ServerConfig {
            ServerConfig::new(
                ServerCapabilities::builder()
                    .enable_tools()
                    .enable_tool_list_changed()
                    .build(),
            )
        }

        async fn list_tools(
            &self,
            _request: Option<PaginatedRequestParams>,
            _context: RequestContext<RoleServer>,
        ) -> Result<ListToolsResult, ErrorData> {
            let open = self.unlocked.load(Ordering::SeqCst);
            let tools = self.tool_router.list_all();
            Ok(ListToolsResult::with_all_items(
                tools
                    .into_iter()
                    .filter(|t| open || t.name != "secret")
                    .collect(),
            ))
        }

        async fn call_tool(
            &self,
            request: CallToolRequestParams,
            context: RequestContext<RoleServer>,
        ) -> Result<CallToolResponse, ErrorData> {
            let call = ToolCallContext::new(self, request, context);
            self.tool_router.call(call).await
        }
    }
}

/// An rmcp server whose `lookup` tool panics.
mod panicking {
    use std::sync::Arc;

    use byre_session::rmcp::model::{
        CallToolRequestParams, CallToolResponse, ListToolsResult, PaginatedRequestParams,
        ServerCapabilities, ServerConfig, Tool,
    };
    use byre_session::rmcp::service::RequestContext;
    use byre_session::rmcp::{self, ErrorData, RoleServer};
    use serde_json::json;

    #[derive(Clone)]
    pub(super) struct Panics;

    impl rmcp::ServerHandler for Panics {
        fn get_info(&self) -> ServerConfig {
            ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
        }

        async fn list_tools(
            &self,
            _request: Option<PaginatedRequestParams>,
            _context: RequestContext<RoleServer>,
        ) -> Result<ListToolsResult, ErrorData> {
            let schema = json!({"type": "object", "properties": {"word": {"type": "string"}}});
            let serde_json::Value::Object(schema) = schema else {
                unreachable!("an object")
            };
            Ok(ListToolsResult::with_all_items(vec![Tool::new(
                "lookup",
                "Look up a word in the byre dictionary.",
                Arc::new(schema),
            )]))
        }

        #[allow(deprecated)]
        async fn call_tool(
            &self,
            _request: CallToolRequestParams,
            _context: RequestContext<RoleServer>,
        ) -> Result<CallToolResponse, ErrorData> {
            panic!("the dictionary is on fire")
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_rmcp_handler_that_panics_fails_the_call_and_the_turn_goes_on() {
    let model = FakeModel::start(scenario("sdk_mcp_always_load.json"))
        .await
        .unwrap();
    let (options, _env) = options(&model);
    let server = McpServer::rmcp("byre", panicking::Panics).unwrap();
    let (claude, mut events) = Claude::start(options.serve_mcp(server)).await.unwrap();
    claude.send("please look up byre").unwrap();
    // The turn ends (the CLI got an answer to its call), and the model read the failure.
    let (seen, _result) = until_result(&mut events).await;
    let block = tool_results(&seen)
        .into_iter()
        .find(|b| b.tool_use_id == "toolu_lookup_byre")
        .expect("a tool_result for the call");
    assert_eq!(block.is_error, Some(true), "{block:?}");
    let to_model = api_tool_result(
        &model.message_requests().last().unwrap().body,
        "toolu_lookup_byre",
    )
    .expect("the model got the tool_result");
    assert!(to_model.to_string().contains("panicked"), "{to_model}");
    // The server is still there.
    check_status(&claude, "byre", &["lookup"]).await;
    claude.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_rmcp_server_runs_beside_a_light_one_and_its_own_notification_reaches_the_cli() {
    let script = Script::new()
        .rule(
            Rule::when(Match::tool_result_contains("the secret is"))
                .reply(Reply::text("It is 42.")),
        )
        .rule(Rule::when(Match::tool_result_contains("unlocked")).reply(Reply::text("Open.")))
        .rule(
            Rule::when(Match::user_text_contains("unlock")).reply(Reply::tool_use(
                "mcp__vault__unlock",
                json!({"code": "1234"}),
            )),
        )
        .rule(
            Rule::when(
                Match::user_text_contains("secret").and(Match::tool_offered("mcp__vault__secret")),
            )
            .reply(Reply::tool_use("mcp__vault__secret", json!({}))),
        )
        .rule(Rule::any().reply(Reply::text("There is no secret tool.")));
    let model = FakeModel::start(script).await.unwrap();
    let (options, _env) = options(&model);
    let calls = Arc::new(Mutex::new(Vec::new()));
    let options = options
        .serve_mcp(McpServer::tools("byre", [lookup(calls)]).unwrap())
        .serve_mcp(McpServer::rmcp("vault", vault::Vault::new()).unwrap());
    let (claude, mut events) = Claude::start(options).await.unwrap();

    claude.send("please unlock the vault").unwrap();
    let (mut seen, result) = until_result(&mut events).await;
    assert_eq!(result.result.as_deref(), Some("Open."));
    let first = model.message_requests()[0].tool_names();
    assert!(
        first.contains(&"mcp__byre__lookup".to_owned())
            && first.contains(&"mcp__vault__unlock".to_owned())
            && !first.contains(&"mcp__vault__secret".to_owned()),
        "{first:?}"
    );
    // The server's notification went to the CLI as a host request, which the CLI accepted
    // and followed by listing the tools again.
    while mcp_messages(&seen, "vault")
        .iter()
        .filter(|m| m.method.as_deref() == Some("tools/list"))
        .count()
        < 2
    {
        seen.push(next(&mut events).await);
    }
    let accepted = seen.iter().any(
        |e| matches!(e, Event::Response { subtype, result: Ok(_), .. } if subtype == "mcp_message"),
    );
    assert!(accepted, "no accepted host mcp_message");

    claude.send("tell me the secret").unwrap();
    let (_, result) = until_result(&mut events).await;
    assert_eq!(result.result.as_deref(), Some("It is 42."));
    assert_eq!(
        model.message_requests().last().unwrap().tool_results(),
        ["the secret is 42"]
    );
    check_status(&claude, "vault", &["secret", "unlock"]).await;
    check_status(&claude, "byre", &["lookup"]).await;
    claude.close().await.unwrap();
}

#[derive(serde::Serialize, JsonSchema)]
struct Weather {
    /// Degrees Celsius.
    celsius: i32,
}

/// A 1x1 PNG.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn images_and_structured_content_reach_the_model() {
    let script = Script::new()
        .rule(Rule::when(Match::has_tool_result(true)).reply(Reply::text("Seen.")))
        .rule(Rule::any().reply(Reply::tool_use("mcp__byre__look", json!({"word": "sky"}))));
    let model = FakeModel::start(script).await.unwrap();
    let (options, _env) = options(&model);
    let look = Tool::new("look", "Look at the sky.", |_: Lookup| async move {
        let output = ToolOutput::structured(&Weather { celsius: 21 }).map_err(|e| e.to_string())?;
        Ok::<_, HandlerError>(output.and_image(PNG, "image/png"))
    })
    .unwrap()
    .output_schema::<Weather>();
    let server = McpServer::tools("byre", [look]).unwrap();
    let (claude, mut events) = Claude::start(options.serve_mcp(server)).await.unwrap();
    claude.send("look up").unwrap();
    let (_, result) = until_result(&mut events).await;
    assert_eq!(result.result.as_deref(), Some("Seen."));
    let requests = model.message_requests();
    let to_model = api_tool_result(&requests.last().unwrap().body, "toolu_fake0001")
        .expect("the model got the tool_result");
    let content = to_model["content"].as_array().expect("content blocks");
    assert!(
        content.iter().any(|b| b["type"] == "image"
            && b["source"]["media_type"] == "image/png"
            && b["source"]["data"] == PNG),
        "{to_model}"
    );
    assert!(
        content
            .iter()
            .any(|b| b["type"] == "text" && b["text"] == r#"{"celsius":21}"#),
        "{to_model}"
    );
    claude.close().await.unwrap();
}

/// Polls `mcp_status` until `server` is connected, or is gone when `tools` is `None`.
async fn wait_status(claude: &Claude, server: &str, tools: Option<&[&str]>) {
    let deadline = tokio::time::Instant::now() + STEP;
    loop {
        let status = claude.request(McpStatusRequest::default()).await.unwrap();
        let servers = status.mcp_servers.unwrap_or_default();
        let entry = servers.iter().find(|s| s.name == server);
        let done = match (entry, tools) {
            (None, None) => true,
            (Some(entry), Some(_)) => entry.status == Some(McpServerState::CONNECTED),
            _ => false,
        };
        if done {
            if let Some(tools) = tools {
                check_status(claude, server, tools).await;
            }
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{server} did not reach the state wanted: {servers:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_added_to_a_live_session_and_removed_again() {
    let (model, _env, claude, mut events, launch_calls) =
        serving_lookup("sdk_mcp_live.json", &["mcp__live"]).await;

    // Not there yet.
    claude.send("please use the live tool").unwrap();
    let (_, result) = until_result(&mut events).await;
    assert_eq!(result.result.as_deref(), Some("No live tool."));

    // Added: the launch server stays, the new one connects with its tool.
    let live_calls = Arc::new(Mutex::new(Vec::new()));
    let live = McpServer::tools("live", [lookup(live_calls.clone())]).unwrap();
    let pump = tokio::spawn(async move {
        // The handshake's requests come while the answer is awaited: keep reading.
        let mut seen = Vec::new();
        while let Some(event) = events.next().await {
            let is_result = matches!(event, Event::Message(CliMessage::Result(_)));
            seen.push(event);
            if is_result {
                break;
            }
        }
        (events, seen)
    });
    let added = claude.add_mcp_server(live).await.unwrap();
    assert_eq!(added.added.as_deref(), Some(&["live".to_owned()][..]));
    assert_eq!(added.removed.as_deref(), Some(&[][..]));
    wait_status(&claude, "live", Some(&["lookup"])).await;
    wait_status(&claude, "byre", Some(&["lookup"])).await;

    // Offered to the model from the next turn, and served.
    claude.send("please use the live tool").unwrap();
    let (events, seen) = pump.await.unwrap();
    let mut events = events;
    let result = seen
        .iter()
        .find_map(|e| match e {
            Event::Message(CliMessage::Result(r)) => Some(r.result.clone()),
            _ => None,
        })
        .flatten();
    assert_eq!(result.as_deref(), Some("The live tool answered."));
    // Tools of a server added live are deferred (alwaysLoad is not honoured there), and the CLI
    // tells the model at once that they are ready.
    let requests = model.message_requests();
    let announced = serde_json::to_string(requests[1].messages()).unwrap();
    assert!(
        announced.contains("tool_addition") && announced.contains("mcp__live__lookup"),
        "{announced}"
    );
    assert_eq!(*live_calls.lock().unwrap(), ["shed"]);
    assert!(launch_calls.lock().unwrap().is_empty());
    let messages = mcp_messages(&seen, "live");
    assert_eq!(
        methods(&messages),
        [
            "initialize",
            "notifications/initialized",
            "tools/list",
            "tools/call"
        ]
    );

    // A name already in the session is refused; so is removing one it does not have, and an
    // in-process server given as a bare configuration (nothing would serve it).
    let again = McpServer::tools("live", [lookup(live_calls.clone())]).unwrap();
    assert!(claude.add_mcp_server(again).await.is_err());
    assert!(claude.remove_mcp_server("nope").await.is_err());
    assert!(claude
        .add_mcp_config("bare", json!({"type": "sdk", "name": "bare"}))
        .await
        .is_err());

    // Removed: gone from the status; the launch server stays.
    let removed = claude.remove_mcp_server("live").await.unwrap();
    assert_eq!(removed.removed.as_deref(), Some(&["live".to_owned()][..]));
    wait_status(&claude, "live", None).await;
    wait_status(&claude, "byre", Some(&["lookup"])).await;
    claude.send("is the live tool still there?").unwrap();
    let (_, result) = until_result(&mut events).await;
    assert_eq!(result.result.as_deref(), Some("Checked."));
    let body = serde_json::to_string(&model.message_requests().last().unwrap().body).unwrap();
    // Only the CLI's notice says so: the tool stays in `tools` (no structural mark to match).
    assert!(
        body.contains("no longer available") && body.contains("mcp__live__lookup"),
        "the model is told the tool went: {body}"
    );
    assert_eq!(*live_calls.lock().unwrap(), ["shed"]);

    // A caller that stops waiting does not undo the change: it is made and recorded.
    let quick = McpServer::tools("quick", [lookup(live_calls.clone())]).unwrap();
    // Polled once, then dropped (on a loaded machine the change may even be done by then:
    // either way it must be recorded).
    let gave_up = futures::FutureExt::now_or_never(claude.add_mcp_server(quick));
    assert!(
        gave_up.as_ref().is_none_or(Result::is_ok),
        "an add that failed: {gave_up:?}"
    );
    wait_status(&claude, "quick", Some(&["lookup"])).await;
    let removed = claude.remove_mcp_server("quick").await.unwrap();
    assert_eq!(removed.removed.as_deref(), Some(&["quick".to_owned()][..]));

    // A server the CLI starts itself: one that cannot start is reported, and stays in the
    // session (failed) until removed; the rest goes on.
    let broken =
        json!({"type": "stdio", "command": "/nonexistent/byre-no-such-server", "args": []});
    let external = claude.add_mcp_config("broken", broken).await.unwrap();
    assert_eq!(external.added.as_deref(), Some(&["broken".to_owned()][..]));
    let why = external.errors.unwrap_or_default().remove("broken");
    assert!(why.as_deref().is_some_and(|w| !w.is_empty()), "{why:?}");
    let status = claude.request(McpStatusRequest::default()).await.unwrap();
    let entry = status
        .mcp_servers
        .unwrap_or_default()
        .into_iter()
        .find(|s| s.name == "broken")
        .expect("the failed server is listed");
    assert_eq!(entry.status, Some(McpServerState::FAILED), "{entry:?}");
    let removed = claude.remove_mcp_server("broken").await.unwrap();
    assert_eq!(removed.removed.as_deref(), Some(&["broken".to_owned()][..]));
    wait_status(&claude, "broken", None).await;
    check_status(&claude, "byre", &["lookup"]).await;
    claude.close().await.unwrap();
}
