//! In-process MCP server and permission scenarios: tools loaded up front or deferred behind
//! ToolSearch, and `can_use_tool` answered by the host.

use std::sync::{Arc, Mutex};

use byre_proto::{
    CanUseToolRequest, CliMessage, CliRequest, ContentBlock, McpServerState, McpStatusRequest,
    MessageContent, PermissionResult, ResultSubtype, SystemMessage,
};
use byre_session::{McpServer, Tool};
use serde_json::{json, Value};

use crate::support::*;
use crate::{ensure, Ctx, Failure, Outcome, Scenario};

pub(crate) fn all() -> Vec<Scenario> {
    vec![
        Scenario {
            name: "sdk_mcp_always_load",
            run: |ctx| Box::pin(sdk_mcp_always_load(ctx)),
        },
        Scenario {
            name: "sdk_mcp_deferred",
            run: |ctx| Box::pin(sdk_mcp_deferred(ctx)),
        },
        Scenario {
            name: "can_use_tool",
            run: |ctx| Box::pin(can_use_tool(ctx)),
        },
    ]
}

/// The "byre" server with its `lookup` tool (the same input schema the model has always been
/// shown); every call's arguments are pushed on `calls`. The word "missing" fails: an
/// `isError` tool result the model reads.
fn byre_server(calls: Arc<Mutex<Vec<Value>>>) -> Result<McpServer, Failure> {
    let lookup = Tool::with_schema(
        "lookup",
        "Look up a word in the byre dictionary.",
        json!({
            "type": "object",
            "properties": {"word": {"type": "string"}},
            "required": ["word"],
        }),
        move |arguments: Value| {
            calls
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(arguments.clone());
            let word = arguments.get("word").and_then(Value::as_str).unwrap_or("");
            let answer = if word == "missing" {
                Err(format!("no entry for {word}").into())
            } else {
                Ok(format!("{word}: a cow shed"))
            };
            async move { answer }
        },
    )
    .map_err(Failure::from_error)?;
    McpServer::tools("byre", [lookup]).map_err(Failure::from_error)
}

/// The MCP methods the CLI sent to `server`, in order.
fn mcp_methods(messages: &[CliMessage], server: &str) -> Vec<(String, Value)> {
    messages
        .iter()
        .filter_map(|m| match m {
            CliMessage::ControlRequest(r) => match &r.request {
                CliRequest::McpMessage(mcp) if mcp.server_name == server => Some((
                    mcp.message.method.clone().unwrap_or_default(),
                    mcp.message.params.clone().unwrap_or(Value::Null),
                )),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

/// Checks the MCP handshake in `messages`: initialize (2025-11-25), notifications/initialized,
/// tools/list, in this order, before any tools/call.
fn check_mcp_handshake(messages: &[CliMessage]) -> Result<(), Failure> {
    let methods = mcp_methods(messages, "byre");
    let names: Vec<&str> = methods.iter().map(|(m, _)| m.as_str()).collect();
    let at = |name: &str| names.iter().position(|n| *n == name);
    let (Some(init), Some(initialized), Some(list)) = (
        at("initialize"),
        at("notifications/initialized"),
        at("tools/list"),
    ) else {
        return Err(Failure::new(format!("incomplete MCP handshake: {names:?}")));
    };
    ensure!(
        init < initialized && initialized < list,
        "MCP handshake out of order: {names:?}"
    );
    if let Some(call) = at("tools/call") {
        ensure!(list < call, "tools/call before tools/list: {names:?}");
    }
    let version = methods[init].1.get("protocolVersion").cloned();
    ensure!(
        version == Some(json!("2025-11-25")),
        "MCP initialize protocolVersion {version:?}"
    );
    Ok(())
}

/// Notes in the transcript which MCP requests came before the initialize answer.
fn note_mcp_before_initialize(host: &SessionHost) -> Result<(), Failure> {
    let methods: Vec<String> = mcp_methods(host.before_initialize(), "byre")
        .into_iter()
        .map(|(method, _)| method)
        .collect();
    host.note(format!(
        "MCP requests before the initialize answer: {methods:?}"
    ))
}

/// Checks `mcp_status`: "byre" connected over sdk with its `lookup` tool.
async fn check_mcp_status(host: &mut SessionHost) -> Result<(), Failure> {
    let status = host
        .call(McpStatusRequest::default())
        .await
        .map_err(Failure::from_error)?;
    let servers = status.mcp_servers.unwrap_or_default();
    let byre = servers
        .iter()
        .find(|s| s.name == "byre")
        .ok_or_else(|| Failure::new(format!("mcp_status lacks byre: {servers:?}")))?;
    ensure!(
        byre.status == Some(McpServerState::CONNECTED) && byre.transport.as_deref() == Some("sdk"),
        "mcp_status byre: status {:?} transport {:?}",
        byre.status,
        byre.transport
    );
    ensure!(
        byre.tools
            .as_ref()
            .is_some_and(|t| t.iter().any(|t| t.name == "lookup")),
        "mcp_status byre lacks the lookup tool: {:?}",
        byre.tools
    );
    Ok(())
}

/// An sdk MCP server with `alwaysLoad`: its handshake is served, its tool is offered from the
/// first request, a call reaches the handler and its result the model, `mcp_status` reports it,
/// and a failing call gives the model an error tool_result.
async fn sdk_mcp_always_load(ctx: Ctx) -> Outcome {
    let (model, env) = ctx.fake("sdk_mcp_always_load").await?;
    let calls = Arc::new(Mutex::new(Vec::new()));
    // byre-session declares the server in `--mcp-config`, with `alwaysLoad` (the default).
    let options = cli_options(&ctx, &env).serve_mcp(byre_server(Arc::clone(&calls))?);
    let mut host = SessionHost::start(options, &env).await?;
    note_mcp_before_initialize(&host)?;

    host.send_user("please look up byre")?;
    let seen = host.until_result(STEP).await?;
    let first = last_result(&seen)?;
    ensure!(
        first.subtype == ResultSubtype::SUCCESS
            && first.result.as_deref() == Some("A byre is a cow shed."),
        "the lookup turn: {:?} {:?}",
        first.subtype,
        first.result
    );
    check_mcp_handshake(&seen)?;
    let init = seen.iter().find_map(|m| match m {
        CliMessage::System(SystemMessage::Init(i)) => Some(i),
        _ => None,
    });
    ensure!(
        init.and_then(|i| i.mcp_servers.as_ref()).is_some_and(|s| s
            .iter()
            .any(|s| s.name == "byre" && s.status == Some(McpServerState::CONNECTED))),
        "system/init does not list byre as connected"
    );
    let meta = seen.iter().find_map(|m| match m {
        CliMessage::Assistant(a) => a.tool_use_meta.as_ref()?.first().cloned(),
        _ => None,
    });
    ensure!(
        meta.as_ref().and_then(|m| m.tool_name.as_deref()) == Some("lookup"),
        "the assistant tool_use line lacks tool_use_meta for lookup: {meta:?}"
    );
    ensure!(
        calls.lock().unwrap_or_else(|e| e.into_inner()).as_slice() == [json!({"word": "byre"})],
        "the lookup handler got {:?}",
        calls.lock().unwrap_or_else(|e| e.into_inner())
    );

    let requests = model.message_requests();
    ensure!(
        requests.len() == 2,
        "expected 2 API requests, got {}",
        requests.len()
    );
    let tools = requests[0].tool_names();
    ensure!(
        tools.iter().any(|t| t == "mcp__byre__lookup"),
        "the first API request does not offer mcp__byre__lookup: {tools:?}"
    );
    ensure!(
        requests[1]
            .tool_results()
            .iter()
            .any(|t| t == "byre: a cow shed"),
        "the tool's result did not reach the model: {:?}",
        requests[1].tool_results()
    );

    check_mcp_status(&mut host).await?;

    // A failing call: the model gets an error tool_result.
    host.send_user("please look up missing")?;
    let failed = host.until_result(STEP).await?;
    let result = last_result(&failed)?;
    ensure!(
        result.result.as_deref() == Some("The lookup failed."),
        "the failing lookup turn: {:?}",
        result.result
    );
    let block = tool_results(&failed)
        .into_iter()
        .find(|(_, b)| b.tool_use_id == "toolu_lookup_missing")
        .map(|(_, b)| b.clone())
        .ok_or_else(|| Failure::new("no tool_result for the failing lookup"))?;
    ensure!(
        block.is_error == Some(true) && block_text(&block).contains("no entry for missing"),
        "the failing lookup's tool_result: {block:?}"
    );
    let requests = model.message_requests();
    let to_model = requests
        .last()
        .map(|r| api_tool_result(&r.body, "toolu_lookup_missing"))
        .unwrap_or_default();
    ensure!(
        to_model.as_ref().and_then(|b| b.get("is_error")) == Some(&json!(true)),
        "the model did not get an is_error tool_result: {to_model:?}"
    );

    let exit = finish(host, &model).await?;
    Ok(vec![recording(&exit)])
}

/// An sdk MCP server without `alwaysLoad`: its tool is deferred (not offered; ToolSearch is).
/// Calling it directly works; ToolSearch `select:` returns a `tool_reference` and the next
/// request offers the tool.
async fn sdk_mcp_deferred(ctx: Ctx) -> Outcome {
    let (model, env) = ctx.fake("sdk_mcp_deferred").await?;
    let calls = Arc::new(Mutex::new(Vec::new()));
    // byre-session declares the server in `--mcp-config`, without `alwaysLoad`.
    let options =
        cli_options(&ctx, &env).serve_mcp(byre_server(Arc::clone(&calls))?.always_load(false));
    let mut host = SessionHost::start(options, &env).await?;
    note_mcp_before_initialize(&host)?;

    // Turn 1: the model calls the deferred tool directly.
    host.send_user("please call the tool directly")?;
    let direct = host.until_result(STEP).await?;
    check_mcp_handshake(&direct)?;
    let result = last_result(&direct)?;
    ensure!(
        result.result.as_deref() == Some("Found it directly."),
        "the direct call turn: {:?} {:?}",
        result.subtype,
        result.result
    );
    let requests = model.message_requests();
    ensure!(
        requests.len() == 2,
        "expected 2 API requests, got {}",
        requests.len()
    );
    let tools = requests[0].tool_names();
    ensure!(
        !tools.iter().any(|t| t == "mcp__byre__lookup") && tools.iter().any(|t| t == "ToolSearch"),
        "the first request should offer ToolSearch and not mcp__byre__lookup: {tools:?}"
    );
    let first_body = serde_json::to_string(requests[0].messages()).unwrap_or_default();
    ensure!(
        first_body.contains("mcp__byre__lookup"),
        "the first request does not name the deferred tool anywhere in its messages"
    );
    ensure!(
        requests[1]
            .tool_results()
            .iter()
            .any(|t| t == "direct: a cow shed"),
        "the direct call's result did not reach the model: {:?}",
        requests[1].tool_results()
    );

    // Turn 2: ToolSearch loads the tool, then the model calls it.
    host.send_user("please search for the tool")?;
    let searched = host.until_result(STEP).await?;
    let result = last_result(&searched)?;
    ensure!(
        result.result.as_deref() == Some("Found it through ToolSearch."),
        "the ToolSearch turn: {:?} {:?}",
        result.subtype,
        result.result
    );
    let search_result = tool_results(&searched)
        .into_iter()
        .find(|(_, b)| b.tool_use_id == "toolu_search")
        .map(|(_, b)| b.clone())
        .ok_or_else(|| Failure::new("no tool_result for ToolSearch"))?;
    let references: Vec<String> = match &search_result.content {
        Some(MessageContent::Blocks(blocks)) => blocks
            .iter()
            .filter_map(|b| match b {
                ContentBlock::ToolReference(r) => Some(r.tool_name.clone()),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    ensure!(
        references == ["mcp__byre__lookup"],
        "ToolSearch's tool_result: {search_result:?}"
    );
    let requests = model.message_requests();
    ensure!(
        requests.len() == 5,
        "expected 5 API requests, got {}",
        requests.len()
    );
    ensure!(
        !requests[2]
            .tool_names()
            .iter()
            .any(|t| t == "mcp__byre__lookup"),
        "the tool was offered before ToolSearch loaded it: {:?}",
        requests[2].tool_names()
    );
    ensure!(
        requests[3]
            .tool_names()
            .iter()
            .any(|t| t == "mcp__byre__lookup"),
        "the request after ToolSearch does not offer the tool: {:?}",
        requests[3].tool_names()
    );
    ensure!(
        requests[4]
            .tool_results()
            .iter()
            .any(|t| t == "byre: a cow shed"),
        "the loaded tool's result did not reach the model: {:?}",
        requests[4].tool_results()
    );
    ensure!(
        calls.lock().unwrap_or_else(|e| e.into_inner()).as_slice()
            == [json!({"word": "direct"}), json!({"word": "byre"})],
        "the lookup handler got {:?}",
        calls.lock().unwrap_or_else(|e| e.into_inner())
    );
    check_mcp_status(&mut host).await?;

    let exit = finish(host, &model).await?;
    Ok(vec![recording(&exit)])
}

// ---------------------------------------------------------------------------------------------
// can_use_tool

/// `--permission-prompt-tool stdio` in default mode: each Bash call that needs approval asks
/// the host; the allowed one runs, the denied one gives the model the host's message as an
/// error and is listed in the result's permission denials.
async fn can_use_tool(ctx: Ctx) -> Outcome {
    let (model, env) = ctx.fake("can_use_tool").await?;
    // `can_use_tool` starts the CLI with `--permission-prompt-tool stdio`.
    let mut options = cli_options(&ctx, &env).can_use_tool(|ask: CanUseToolRequest| {
        let command = ask
            .input
            .get("command")
            .and_then(Value::as_str)
            .unwrap_or("");
        let answer = if command.contains("allowed.txt") {
            PermissionResult::allow(ask.input.clone())
        } else {
            PermissionResult::deny("host says no")
        };
        async move { Ok(answer) }
    });
    options = options.permission_mode("default");
    let mut host = SessionHost::start(options, &env).await?;

    host.send_user("please make two files")?;
    let turn = host.until_result(STEP).await?;

    let asks: Vec<&CanUseToolRequest> = turn
        .iter()
        .filter_map(|m| match m {
            CliMessage::ControlRequest(r) => match &r.request {
                CliRequest::CanUseTool(ask) => Some(ask),
                _ => None,
            },
            _ => None,
        })
        .collect();
    ensure!(
        asks.len() == 2,
        "expected 2 can_use_tool requests, got {}",
        asks.len()
    );
    for (ask, (id, command)) in asks.iter().zip([
        ("toolu_touch_allowed", "touch allowed.txt"),
        ("toolu_touch_denied", "touch denied.txt"),
    ]) {
        ensure!(
            ask.tool_name == "Bash"
                && ask.tool_use_id.as_deref() == Some(id)
                && ask.input.get("command") == Some(&json!(command)),
            "can_use_tool asked about {} {:?} {}",
            ask.tool_name,
            ask.tool_use_id,
            ask.input
        );
        ensure!(
            ask.permission_suggestions
                .as_ref()
                .is_some_and(|s| !s.is_empty()),
            "can_use_tool for {id} has no permission_suggestions"
        );
        let file = command.trim_start_matches("touch ");
        let blocked = env.cwd().join(file);
        ensure!(
            ask.blocked_path.as_deref() == Some(&*blocked.to_string_lossy()),
            "can_use_tool for {id} has blocked_path {:?}, expected {}",
            ask.blocked_path,
            blocked.display()
        );
    }

    let cwd = env.cwd();
    ensure!(
        cwd.join("allowed.txt").is_file(),
        "the allowed command did not run: no {}",
        cwd.join("allowed.txt").display()
    );
    ensure!(
        !cwd.join("denied.txt").exists(),
        "the denied command ran: {} exists",
        cwd.join("denied.txt").display()
    );

    let results = tool_results(&turn);
    let allowed = results
        .iter()
        .find(|(_, b)| b.tool_use_id == "toolu_touch_allowed")
        .ok_or_else(|| Failure::new("no tool_result for the allowed call"))?;
    ensure!(
        allowed.1.is_error != Some(true),
        "the allowed call failed: {:?}",
        allowed.1
    );
    let denied = results
        .iter()
        .find(|(_, b)| b.tool_use_id == "toolu_touch_denied")
        .ok_or_else(|| Failure::new("no tool_result for the denied call"))?;
    ensure!(
        denied.1.is_error == Some(true) && block_text(denied.1) == "host says no",
        "the denied call's tool_result: {:?}",
        denied.1
    );

    for (id, decision, source) in [
        ("toolu_touch_allowed", "accept", "user_temporary"),
        ("toolu_touch_denied", "reject", "user_reject"),
    ] {
        let meta = permission_decision(&turn, id);
        ensure!(
            meta == Some((decision.to_owned(), source.to_owned())),
            "tool_result_meta of {id}: {meta:?}, expected {decision}/{source}"
        );
    }

    let result = last_result(&turn)?;
    ensure!(
        result.subtype == ResultSubtype::SUCCESS
            && result.result.as_deref() == Some("The second file was refused."),
        "the turn: {:?} {:?}",
        result.subtype,
        result.result
    );
    let denials = result.permission_denials.clone().unwrap_or_default();
    ensure!(
        denials.len() == 1
            && denials[0].tool_name == "Bash"
            && denials[0].tool_use_id.as_deref() == Some("toolu_touch_denied"),
        "permission_denials: {denials:?}"
    );
    let requests = model.message_requests();
    ensure!(
        requests
            .last()
            .is_some_and(|r| r.tool_results() == ["host says no"]),
        "the model did not get the host's message"
    );

    let exit = finish(host, &model).await?;
    Ok(vec![recording(&exit)])
}

/// The `(decision, source)` of the permission decision behind the tool result for `id`.
fn permission_decision(messages: &[CliMessage], id: &str) -> Option<(String, String)> {
    messages.iter().find_map(|m| match m {
        CliMessage::User(u) => u
            .tool_result_meta
            .as_ref()?
            .iter()
            .find(|meta| meta.id.as_deref() == Some(id))
            .and_then(|meta| meta.permission_decision.as_ref())
            .map(|d| {
                (
                    d.decision.clone().unwrap_or_default(),
                    d.source.clone().unwrap_or_default(),
                )
            }),
        _ => None,
    })
}
