//! Control scenarios: host → CLI requests, interrupts, permissions, MCP servers, subagents,
//! resume and fork.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use byre_proto::{
    CanUseToolRequest, CliMessage, CliRequest, ContentBlock, ControlResponseBody,
    GetContextUsageRequest, InitializeRequest, InterruptRequest, JsonRpcMessage, McpServerState,
    McpStatusRequest, MessageContent, PermissionMode, PermissionResult, ResultMessage,
    ResultSubtype, SetMaxThinkingTokensRequest, SetModelRequest, SetPermissionModeRequest,
    StreamEvent, SystemMessage, TaskStatus, TerminalReason, ToolResultBlock,
};
use byre_testkit::{
    base_args, simple_mcp_server, ClaudeEnv, Host, HostError, HostExit, HostOptions, McpTool,
    Responder,
};
use serde_json::{json, Value};

use crate::{ensure, Ctx, Failure, Outcome, Recording, Scenario};

/// The longest wait for one step (an answer, a turn, an exit).
const STEP: Duration = Duration::from_secs(30);
/// How long "nothing else arrives" is watched.
const QUIET: Duration = Duration::from_millis(1200);
/// The most an answer that must come "at once" may take.
const AT_ONCE: Duration = Duration::from_secs(2);

pub(crate) fn all() -> Vec<Scenario> {
    vec![
        Scenario {
            name: "control_requests",
            run: |ctx| Box::pin(control_requests(ctx)),
        },
        Scenario {
            name: "interrupt_during_bash",
            run: |ctx| Box::pin(interrupt_during_bash(ctx)),
        },
        Scenario {
            name: "interrupt_during_stream",
            run: |ctx| Box::pin(interrupt_during_stream(ctx)),
        },
        Scenario {
            name: "interrupt_idle",
            run: |ctx| Box::pin(interrupt_idle(ctx)),
        },
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
        Scenario {
            name: "resume_and_fork",
            run: |ctx| Box::pin(resume_and_fork(ctx)),
        },
        Scenario {
            name: "resume_unknown_id",
            run: |ctx| Box::pin(resume_unknown_id(ctx)),
        },
    ]
}

// ---------------------------------------------------------------------------------------------
// control_requests

/// Host → CLI requests and their typed answers: `set_model` (an alias before any turn; after a
/// turn an unknown name, `null` and a budget-thinking model, each with an `isReplay` line and,
/// for new models, a `max_tokens: 1` probe), `set_permission_mode` (valid and invalid),
/// `mcp_status`, `get_context_usage` (summary, no `count_tokens`), `set_max_thinking_tokens`
/// (no payload; the next request has thinking disabled) and an unknown subtype; then a normal
/// turn still succeeds.
async fn control_requests(ctx: Ctx) -> Outcome {
    let (model, env) = ctx.fake("control_requests").await?;
    let mut host = spawn(&ctx, &env, base_args(), Responder::new()).await?;
    host.initialize(InitializeRequest::default(), STEP)
        .await
        .map_err(Failure::from_error)?;

    // set_model with an alias resolves it.
    let haiku = host
        .call(set_model("haiku"), STEP)
        .await
        .map_err(Failure::from_error)?;
    let haiku = haiku.model.unwrap_or_default();
    ensure!(
        haiku.starts_with("claude-haiku") && haiku != "haiku",
        "set_model haiku resolved to {haiku:?}, expected a claude-haiku-* id"
    );

    // A first turn: it uses the resolved model. A set_model before any turn sends no
    // isReplay line.
    host.send_user("before the controls")
        .await
        .map_err(Failure::from_error)?;
    let warm_up = host.until_result(STEP).await.map_err(Failure::from_error)?;
    let ready = last_result(&warm_up)?;
    ensure!(
        ready.result.as_deref() == Some("Ready."),
        "the first turn: {:?} {:?}",
        ready.subtype,
        ready.result
    );
    let early_replays = replay_texts(&warm_up);
    ensure!(
        early_replays.is_empty(),
        "a set_model before any turn sent isReplay lines: {early_replays:?}"
    );
    let first_model = model
        .message_requests()
        .first()
        .and_then(|r| r.model().map(str::to_owned));
    ensure!(
        first_model.as_deref() == Some(haiku.as_str()),
        "the first turn used model {first_model:?}, not {haiku}"
    );

    // set_model accepts a name it does not know, as it is.
    const UNKNOWN_MODEL: &str = "byre-unknown-model-7";
    let unknown = host
        .call(set_model(UNKNOWN_MODEL), STEP)
        .await
        .map_err(Failure::from_error)?;
    ensure!(
        unknown.model.as_deref() == Some(UNKNOWN_MODEL),
        "set_model {UNKNOWN_MODEL} answered {:?}",
        unknown.model
    );

    // set_model null resets to the default model.
    let mut reset = SetModelRequest::default();
    reset.set_null("model", true);
    let reset = host.call(reset, STEP).await.map_err(Failure::from_error)?;
    let default_model = reset.model.unwrap_or_default();
    ensure!(
        default_model.starts_with("claude-") && default_model != haiku,
        "set_model null answered {default_model:?}, expected the default model"
    );

    // A model whose thinking has a token budget (the default model's thinking is adaptive and
    // set_max_thinking_tokens leaves it alone).
    const BUDGET_MODEL: &str = "claude-sonnet-4-5";
    let budget = host
        .call(set_model(BUDGET_MODEL), STEP)
        .await
        .map_err(Failure::from_error)?;
    ensure!(
        budget.model.as_deref() == Some(BUDGET_MODEL),
        "set_model {BUDGET_MODEL} answered {:?}",
        budget.model
    );

    // set_permission_mode: a valid mode, then one that is not.
    let mode = host
        .call(
            SetPermissionModeRequest {
                mode: PermissionMode::DEFAULT,
                extra: Default::default(),
            },
            STEP,
        )
        .await
        .map_err(Failure::from_error)?;
    ensure!(
        mode.mode == Some(PermissionMode::DEFAULT),
        "set_permission_mode default answered {:?}",
        mode.mode
    );
    let invalid = host
        .call(
            SetPermissionModeRequest {
                mode: PermissionMode::new("byre-no-such-mode"),
                extra: Default::default(),
            },
            STEP,
        )
        .await;
    match invalid {
        Err(HostError::ControlError { message, code }) => {
            ensure!(
                code.as_deref() == Some("invalid_mode"),
                "invalid mode: error_code {code:?} ({message})"
            );
            ensure!(
                message.contains("Cannot set permission mode")
                    && message.contains("bypassPermissions"),
                "invalid mode: error text {message:?}"
            );
        }
        other => {
            return Err(Failure::new(format!(
                "set_permission_mode with an invalid mode did not fail: {other:?}"
            )))
        }
    }

    // mcp_status with no MCP server.
    let status = host
        .call(McpStatusRequest::default(), STEP)
        .await
        .map_err(Failure::from_error)?;
    ensure!(
        status.mcp_servers.as_deref().is_some_and(<[_]>::is_empty),
        "mcp_status without servers answered {:?}",
        status.mcp_servers
    );

    // get_context_usage, summary: typed, and it does not call count_tokens.
    let usage = host
        .call(
            GetContextUsageRequest {
                detail: Some("summary".into()),
                extra: Default::default(),
            },
            STEP,
        )
        .await
        .map_err(Failure::from_error)?;
    ensure!(
        usage.total_tokens.is_some() && usage.max_tokens.is_some_and(|m| m > 0),
        "get_context_usage lacks totalTokens/maxTokens: {usage:?}"
    );
    ensure!(
        usage.categories.as_ref().is_some_and(|c| !c.is_empty()),
        "get_context_usage has no categories"
    );
    let counted: Vec<String> = model
        .requests()
        .into_iter()
        .filter(|r| r.path.contains("count_tokens"))
        .map(|r| r.path)
        .collect();
    ensure!(
        counted.is_empty(),
        "get_context_usage summary called the API: {counted:?}"
    );

    // set_max_thinking_tokens: success with no payload at all.
    let thinking = host
        .request(
            SetMaxThinkingTokensRequest {
                max_thinking_tokens: Some(0),
                ..Default::default()
            },
            STEP,
        )
        .await
        .map_err(Failure::from_error)?;
    match &thinking.response {
        ControlResponseBody::Success(success) => ensure!(
            success.response.is_none(),
            "set_max_thinking_tokens answered a payload: {:?}",
            success.response
        ),
        other => {
            return Err(Failure::new(format!(
                "set_max_thinking_tokens failed: {other:?}"
            )))
        }
    }

    // A subtype the CLI does not know, written as raw bytes (byre-proto would decode it as
    // `HostRequest::Unknown`, which a strict replay counts as unknown).
    host.send_raw(
        br#"{"type":"control_request","request_id":"req_bogus","request":{"subtype":"byre_no_such_request"}}"#,
    )
    .await
    .map_err(Failure::from_error)?;
    let answered = host
        .until(
            STEP,
            |m| matches!(m, CliMessage::ControlResponse(r) if r.request_id() == Some("req_bogus")),
        )
        .await
        .map_err(Failure::from_error)?;
    let Some(CliMessage::ControlResponse(bogus)) = answered.last() else {
        return Err(Failure::new("no answer to the unknown subtype"));
    };
    match &bogus.response {
        ControlResponseBody::Error(error) => {
            ensure!(
                error.error_code.as_ref().map(|c| c.as_str()) == Some("unsupported_request"),
                "unknown subtype: error_code {:?}",
                error.error_code
            );
            ensure!(
                error.error.as_deref()
                    == Some("Unsupported control request subtype: byre_no_such_request"),
                "unknown subtype: error text {:?}",
                error.error
            );
        }
        other => {
            return Err(Failure::new(format!(
                "an unknown subtype did not fail: {other:?}"
            )))
        }
    }

    // A normal turn still works, with the model that was set last and thinking disabled.
    host.send_user("after the controls")
        .await
        .map_err(Failure::from_error)?;
    let turn = host.until_result(STEP).await.map_err(Failure::from_error)?;
    let result = last_result(&turn)?;
    ensure!(
        result.subtype == ResultSubtype::SUCCESS
            && result.result.as_deref() == Some("Controls done."),
        "the turn after the controls: {:?} {:?}",
        result.subtype,
        result.result
    );

    // What the requests produced besides their answers (queued while waiting for them).
    let mut seen = answered.clone();
    seen.extend(turn.iter().cloned());
    let status_lines: Vec<_> = seen
        .iter()
        .filter_map(|m| match m {
            CliMessage::System(SystemMessage::Status(s)) => s.permission_mode.clone(),
            _ => None,
        })
        .collect();
    ensure!(
        status_lines.contains(&PermissionMode::DEFAULT),
        "no system/status with permissionMode default: {status_lines:?}"
    );
    let replays = replay_texts(&seen);
    let expected: Vec<String> = [UNKNOWN_MODEL, default_model.as_str(), BUDGET_MODEL]
        .iter()
        .map(|m| format!("<local-command-stdout>Set model to `{m}`</local-command-stdout>"))
        .collect();
    ensure!(
        replays == expected,
        "the isReplay lines after set_model: {replays:?}, expected {expected:?}"
    );

    // set_model to a model it has not used yet validates it with a non-streaming, no-tools,
    // max_tokens 1 request (not for haiku, not for the reset). It runs on its own: wait for it.
    let requests = model
        .wait_for_requests(4, Duration::from_secs(5))
        .await
        .map_err(Failure::from_error)?;
    let streamed: Vec<_> = requests.iter().filter(|r| r.stream).collect();
    ensure!(
        streamed.len() == 2,
        "expected 2 streamed API requests, got {}",
        streamed.len()
    );
    let turn_request = streamed[1];
    ensure!(
        turn_request.model() == Some(BUDGET_MODEL),
        "the turn used model {:?}, not the one set last ({BUDGET_MODEL})",
        turn_request.model()
    );
    ensure!(
        turn_request
            .last_user_text()
            .is_some_and(|t| t.contains(&format!("Set model to `{BUDGET_MODEL}`"))),
        "the turn's user message lacks the set_model note: {:?}",
        turn_request.last_user_text()
    );
    let thinking = turn_request.body.get("thinking").cloned();
    ensure!(
        thinking == Some(json!({"type": "disabled"})),
        "after set_max_thinking_tokens 0 the request had thinking {thinking:?}"
    );
    let mut probed: Vec<&str> = Vec::new();
    for probe in requests.iter().filter(|r| !r.stream) {
        ensure!(
            probe.body.get("max_tokens") == Some(&json!(1)) && probe.tool_names().is_empty(),
            "an unexpected non-streaming request: {}",
            probe.body
        );
        probed.extend(probe.model());
    }
    probed.sort_unstable();
    ensure!(
        probed == [UNKNOWN_MODEL, BUDGET_MODEL],
        "set_model probed the models {probed:?}"
    );

    let exit = finish(host).await?;
    Ok(vec![recording(&exit)])
}

/// The texts of the `isReplay` user lines.
fn replay_texts(messages: &[CliMessage]) -> Vec<String> {
    messages
        .iter()
        .filter_map(|m| match m {
            CliMessage::User(u) if u.is_replay == Some(true) => Some(u.message.content.text()),
            _ => None,
        })
        .collect()
}

fn set_model(model: &str) -> SetModelRequest {
    SetModelRequest {
        model: Some(model.into()),
        extra: Default::default(),
    }
}

// ---------------------------------------------------------------------------------------------
// interrupts

/// An interrupt while a foreground Bash runs as a task: answered at once, the task stops, the
/// tool result is an error, the turn ends `aborted_tools`, and the session goes on.
async fn interrupt_during_bash(ctx: Ctx) -> Outcome {
    let (model, env) = ctx.fake("interrupt_during_bash").await?;
    let mut host = spawn(&ctx, &env, base_args(), Responder::new()).await?;
    host.initialize(InitializeRequest::default(), STEP)
        .await
        .map_err(Failure::from_error)?;

    host.send_user("slow bash please")
        .await
        .map_err(Failure::from_error)?;
    let mut turn = host
        .until(Duration::from_secs(15), |m| {
            matches!(m, CliMessage::System(SystemMessage::TaskStarted(_)))
        })
        .await
        .map_err(Failure::from_error)?;
    let Some(CliMessage::System(SystemMessage::TaskStarted(task))) = turn.last() else {
        return Err(Failure::new("no task_started"));
    };
    ensure!(
        task.tool_use_id.as_deref() == Some("toolu_slow_bash")
            && task.is_backgrounded == Some(false),
        "task_started for {:?} (backgrounded {:?})",
        task.tool_use_id,
        task.is_backgrounded
    );
    let task_id = task.task_id.clone();

    let sent = Instant::now();
    let answer = host
        .call(InterruptRequest::default(), STEP)
        .await
        .map_err(Failure::from_error)?;
    let answered_in = sent.elapsed();
    ensure!(
        answered_in < AT_ONCE,
        "the interrupt was answered after {answered_in:?}"
    );
    ensure!(
        answer.still_queued.as_deref() == Some(&[][..]),
        "interrupt answered still_queued {:?}",
        answer.still_queued
    );
    turn.extend(host.until_result(STEP).await.map_err(Failure::from_error)?);
    let ended_in = sent.elapsed();
    ensure!(
        ended_in < Duration::from_secs(8),
        "the interrupted turn took {ended_in:?} to end (the sleep was not cut short)"
    );

    let stopped = position(&turn, |m| {
        matches!(m, CliMessage::System(SystemMessage::TaskNotification(n))
            if n.task_id == task_id && n.status == Some(TaskStatus::STOPPED))
    })
    .ok_or_else(|| Failure::new("no task_notification status stopped"))?;
    let errored = tool_results(&turn)
        .into_iter()
        .find(|(_, b)| b.tool_use_id == "toolu_slow_bash")
        .ok_or_else(|| Failure::new("no tool_result for the interrupted Bash"))?;
    ensure!(
        errored.1.is_error == Some(true),
        "the interrupted Bash's tool_result is not an error: {:?}",
        errored.1
    );
    let marker = user_texts(&turn)
        .into_iter()
        .find(|(_, t)| t == "[Request interrupted by user for tool use]")
        .ok_or_else(|| Failure::new("no \"[Request interrupted by user for tool use]\" line"))?;
    let end = turn.len() - 1;
    ensure!(
        stopped < errored.0 && errored.0 < marker.0 && marker.0 < end,
        "out of order: task_notification {stopped}, tool_result {}, marker {}, result {end}",
        errored.0,
        marker.0
    );
    let result = last_result(&turn)?;
    ensure!(
        result.subtype == ResultSubtype::ERROR_DURING_EXECUTION
            && result.is_error == Some(true)
            && result.terminal_reason == Some(TerminalReason::ABORTED_TOOLS),
        "interrupted result: {:?} is_error {:?} terminal_reason {:?}",
        result.subtype,
        result.is_error,
        result.terminal_reason
    );
    let session = result.session_id.clone();
    ensure!(
        model.message_requests().len() == 1,
        "the CLI called the model after the interrupt"
    );

    let next = next_turn_succeeds(&mut host, "after the interrupt").await?;
    ensure!(
        next.session_id == session
            && next.result.as_deref() == Some("Still here after the interrupt."),
        "the turn after the interrupt: {:?} in session {:?}",
        next.result,
        next.session_id
    );
    let requests = model.message_requests();
    ensure!(
        requests.len() == 2,
        "expected 2 API requests, got {}",
        requests.len()
    );
    // The next API user message holds the error result, the marker and the new prompt.
    let interrupted = api_tool_result(&requests[1].body, "toolu_slow_bash");
    ensure!(
        interrupted.as_ref().and_then(|b| b.get("is_error")) == Some(&json!(true)),
        "the next API request lacks the interrupted tool's error result: {interrupted:?}"
    );
    let texts = requests[1].last_user_text().unwrap_or_default();
    ensure!(
        ordered(
            &texts,
            &[
                "[Request interrupted by user for tool use]",
                "after the interrupt"
            ]
        ),
        "the API user message after the interrupt: {texts:?}"
    );
    let exit = finish(host).await?;
    Ok(vec![recording(&exit)])
}

/// An interrupt while the model's stream hangs: the turn ends `aborted_streaming` with
/// "[Request interrupted by user]", and the session goes on.
async fn interrupt_during_stream(ctx: Ctx) -> Outcome {
    let (model, env) = ctx.fake("interrupt_during_stream").await?;
    let mut host = spawn(&ctx, &env, base_args(), Responder::new()).await?;
    host.initialize(InitializeRequest::default(), STEP)
        .await
        .map_err(Failure::from_error)?;

    host.send_user("slow stream please")
        .await
        .map_err(Failure::from_error)?;
    let mut turn = host
        .until(STEP, |m| matches!(m, CliMessage::StreamEvent(_)))
        .await
        .map_err(Failure::from_error)?;
    let sent = Instant::now();
    let answer = host
        .call(InterruptRequest::default(), STEP)
        .await
        .map_err(Failure::from_error)?;
    ensure!(
        sent.elapsed() < AT_ONCE,
        "the interrupt was answered after {:?}",
        sent.elapsed()
    );
    ensure!(
        answer.still_queued.as_deref() == Some(&[][..]),
        "interrupt answered still_queued {:?}",
        answer.still_queued
    );
    let start = turn.len();
    turn.extend(host.until_result(STEP).await.map_err(Failure::from_error)?);

    let marker = user_texts(&turn)
        .into_iter()
        .find(|(_, t)| t == "[Request interrupted by user]")
        .ok_or_else(|| Failure::new("no \"[Request interrupted by user]\" line"))?;
    ensure!(
        marker.0 >= start,
        "the interrupt marker came before the interrupt"
    );
    let abandoned = position(&turn, |m| {
        matches!(m, CliMessage::StreamEvent(e) if matches!(e.event, StreamEvent::MessageStop(_)))
            && m.to_value().get("abandoned_blocks").is_some()
    });
    ensure!(
        abandoned.is_some_and(|i| i > marker.0),
        "no message_stop with abandoned_blocks after the marker"
    );
    let result = last_result(&turn)?;
    ensure!(
        result.subtype == ResultSubtype::ERROR_DURING_EXECUTION
            && result.is_error == Some(true)
            && result.terminal_reason == Some(TerminalReason::ABORTED_STREAMING),
        "interrupted result: {:?} is_error {:?} terminal_reason {:?}",
        result.subtype,
        result.is_error,
        result.terminal_reason
    );
    let session = result.session_id.clone();

    let next = next_turn_succeeds(&mut host, "after the interrupt").await?;
    ensure!(
        next.session_id == session
            && next.result.as_deref() == Some("Still here after the interrupt."),
        "the turn after the interrupt: {:?} in session {:?}",
        next.result,
        next.session_id
    );
    let requests = model.message_requests();
    ensure!(
        requests.len() == 2,
        "expected 2 API requests, got {}",
        requests.len()
    );
    // The interrupted prompt had no answer, so the next API user message holds it, the
    // marker and the new prompt.
    let merged = requests[1].last_user_text().unwrap_or_default();
    ensure!(
        ordered(
            &merged,
            &[
                "slow stream please",
                "[Request interrupted by user]",
                "after the interrupt"
            ]
        ),
        "the API user message after the interrupt: {merged:?}"
    );
    let exit = finish(host).await?;
    Ok(vec![recording(&exit)])
}

/// An interrupt with no turn running, before any turn and between turns: success with an
/// empty `still_queued`, nothing else follows, and the turns succeed.
async fn interrupt_idle(ctx: Ctx) -> Outcome {
    let (_model, env) = ctx.fake("interrupt_idle").await?;
    let mut host = spawn(&ctx, &env, base_args(), Responder::new()).await?;
    host.initialize(InitializeRequest::default(), STEP)
        .await
        .map_err(Failure::from_error)?;

    idle_interrupt(&mut host, "before any turn").await?;
    let first = next_turn_succeeds(&mut host, "first turn").await?;
    ensure!(
        first.result.as_deref() == Some("First answer."),
        "first result {:?}",
        first.result
    );
    idle_interrupt(&mut host, "between turns").await?;
    let second = next_turn_succeeds(&mut host, "second turn").await?;
    ensure!(
        second.result.as_deref() == Some("Second answer.") && second.session_id == first.session_id,
        "second result {:?} in session {:?}",
        second.result,
        second.session_id
    );
    let exit = finish(host).await?;
    Ok(vec![recording(&exit)])
}

async fn idle_interrupt(host: &mut Host, when: &str) -> Result<(), Failure> {
    let sent = Instant::now();
    let answer = host
        .call(InterruptRequest::default(), STEP)
        .await
        .map_err(Failure::from_error)?;
    ensure!(
        sent.elapsed() < AT_ONCE,
        "idle interrupt ({when}) answered after {:?}",
        sent.elapsed()
    );
    ensure!(
        answer.still_queued.as_deref() == Some(&[][..]),
        "idle interrupt ({when}) answered still_queued {:?}",
        answer.still_queued
    );
    match host.next(QUIET).await {
        Err(HostError::Timeout { .. }) => Ok(()),
        Ok(Some(message)) => Err(Failure::new(format!(
            "after an idle interrupt ({when}) the CLI sent {}",
            message.to_value()
        ))),
        Ok(None) => Err(Failure::new(format!(
            "the CLI closed stdout after an idle interrupt ({when})"
        ))),
        Err(e) => Err(Failure::from_error(e)),
    }
}

// ---------------------------------------------------------------------------------------------
// sdk MCP servers

/// The `--mcp-config` of the in-process server "byre".
fn mcp_config(always_load: bool) -> String {
    let mut server = json!({"type": "sdk", "name": "byre"});
    if always_load {
        server["alwaysLoad"] = json!(true);
    }
    json!({"mcpServers": {"byre": server}}).to_string()
}

/// The "byre" server with its `lookup` tool; every call's arguments are pushed on `calls`.
/// The word "missing" fails.
fn byre_server(
    calls: Arc<Mutex<Vec<Value>>>,
) -> impl Fn(&JsonRpcMessage) -> Option<JsonRpcMessage> + Send + Sync + 'static {
    let lookup = McpTool::new(
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
            if word == "missing" {
                Err(format!("no entry for {word}"))
            } else {
                Ok(format!("{word}: a cow shed"))
            }
        },
    );
    simple_mcp_server("byre", vec![lookup])
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
fn note_mcp_before_initialize(host: &mut Host) {
    let methods: Vec<String> = host
        .transcript()
        .iter()
        .filter(|l| l.is_recv())
        .filter_map(|l| l.msg())
        .take_while(|m| m["type"] != "control_response")
        .filter(|m| m["request"]["subtype"] == "mcp_message")
        .map(|m| {
            m["request"]["message"]["method"]
                .as_str()
                .unwrap_or("")
                .to_owned()
        })
        .collect();
    host.note(format!(
        "MCP requests before the initialize answer: {methods:?}"
    ));
}

/// Checks `mcp_status`: "byre" connected over sdk with its `lookup` tool.
async fn check_mcp_status(host: &mut Host) -> Result<(), Failure> {
    let status = host
        .call(McpStatusRequest::default(), STEP)
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
    let responder = Responder::new().mcp_server("byre", byre_server(Arc::clone(&calls)));
    let mut args = base_args();
    args.extend(["--mcp-config".to_owned(), mcp_config(true)]);
    let mut host = spawn(&ctx, &env, args, responder).await?;
    host.initialize(InitializeRequest::default(), STEP)
        .await
        .map_err(Failure::from_error)?;
    note_mcp_before_initialize(&mut host);

    host.send_user("please look up byre")
        .await
        .map_err(Failure::from_error)?;
    let seen = host.until_result(STEP).await.map_err(Failure::from_error)?;
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
    host.send_user("please look up missing")
        .await
        .map_err(Failure::from_error)?;
    let failed = host.until_result(STEP).await.map_err(Failure::from_error)?;
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

    let exit = finish(host).await?;
    Ok(vec![recording(&exit)])
}

/// An sdk MCP server without `alwaysLoad`: its tool is deferred (not offered; ToolSearch is).
/// Calling it directly works; ToolSearch `select:` returns a `tool_reference` and the next
/// request offers the tool.
async fn sdk_mcp_deferred(ctx: Ctx) -> Outcome {
    let (model, env) = ctx.fake("sdk_mcp_deferred").await?;
    let calls = Arc::new(Mutex::new(Vec::new()));
    let responder = Responder::new().mcp_server("byre", byre_server(Arc::clone(&calls)));
    let mut args = base_args();
    args.extend(["--mcp-config".to_owned(), mcp_config(false)]);
    let mut host = spawn(&ctx, &env, args, responder).await?;
    host.initialize(InitializeRequest::default(), STEP)
        .await
        .map_err(Failure::from_error)?;
    note_mcp_before_initialize(&mut host);

    // Turn 1: the model calls the deferred tool directly.
    host.send_user("please call the tool directly")
        .await
        .map_err(Failure::from_error)?;
    let direct = host.until_result(STEP).await.map_err(Failure::from_error)?;
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
    host.send_user("please search for the tool")
        .await
        .map_err(Failure::from_error)?;
    let searched = host.until_result(STEP).await.map_err(Failure::from_error)?;
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

    let exit = finish(host).await?;
    Ok(vec![recording(&exit)])
}

/// For a tool_use id, the `tool_result` block of the last user message of an API request body.
fn api_tool_result(body: &Value, tool_use_id: &str) -> Option<Value> {
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

// ---------------------------------------------------------------------------------------------
// can_use_tool

/// `--permission-prompt-tool stdio` in default mode: each Bash call that needs approval asks
/// the host; the allowed one runs, the denied one gives the model the host's message as an
/// error and is listed in the result's permission denials.
async fn can_use_tool(ctx: Ctx) -> Outcome {
    let (model, env) = ctx.fake("can_use_tool").await?;
    let responder = Responder::new().can_use_tool(|ask: &CanUseToolRequest| {
        let command = ask
            .input
            .get("command")
            .and_then(Value::as_str)
            .unwrap_or("");
        if command.contains("allowed.txt") {
            PermissionResult::allow(ask.input.clone())
        } else {
            PermissionResult::deny("host says no")
        }
    });
    let mut args = without_permission_flags(base_args());
    args.extend(
        [
            "--permission-mode",
            "default",
            "--permission-prompt-tool",
            "stdio",
        ]
        .map(String::from),
    );
    let mut host = spawn(&ctx, &env, args, responder).await?;
    host.initialize(InitializeRequest::default(), STEP)
        .await
        .map_err(Failure::from_error)?;

    host.send_user("please make two files")
        .await
        .map_err(Failure::from_error)?;
    let turn = host.until_result(STEP).await.map_err(Failure::from_error)?;

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

    let exit = finish(host).await?;
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

/// `args` without `--permission-mode X` and `--allow-dangerously-skip-permissions`.
fn without_permission_flags(args: Vec<String>) -> Vec<String> {
    let mut out = Vec::with_capacity(args.len());
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--permission-mode" => {
                args.next();
            }
            "--allow-dangerously-skip-permissions" => {}
            _ => out.push(arg),
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// resume and fork

/// Process A runs two turns; B resumes A (same id, the API sees A's turns); C forks A after
/// its first answer into a new id from another directory (the API sees only the first turn)
/// and leaves A's session file untouched.
async fn resume_and_fork(ctx: Ctx) -> Outcome {
    let (model, env) = ctx.fake("resume_and_fork").await?;

    // A: two turns.
    let mut a = spawn(&ctx, &env, base_args(), Responder::new()).await?;
    a.initialize(InitializeRequest::default(), STEP)
        .await
        .map_err(Failure::from_error)?;
    a.send_user("please remember the word apple")
        .await
        .map_err(Failure::from_error)?;
    let turn1 = a.until_result(STEP).await.map_err(Failure::from_error)?;
    let session = last_result(&turn1)?
        .session_id
        .clone()
        .ok_or_else(|| Failure::new("A's first result has no session_id"))?;
    let first_answer = turn1
        .iter()
        .rev()
        .find_map(|m| match m {
            CliMessage::Assistant(a) => a.uuid.clone(),
            _ => None,
        })
        .ok_or_else(|| Failure::new("A's first turn has no assistant line with a uuid"))?;
    let turn2 = next_turn_succeeds(&mut a, "the second turn of A").await?;
    ensure!(
        turn2.session_id.as_deref() == Some(session.as_str()),
        "A's session id changed"
    );
    let exit_a = finish(a).await?;
    let a_file = find_file(
        &env.home().join(".claude/projects"),
        &format!("{session}.jsonl"),
    )
    .ok_or_else(|| Failure::new(format!("no session file {session}.jsonl under HOME")))?;

    // B: resume A.
    let resume = format!("--resume={session}");
    let mut b = spawn(
        &ctx,
        &env,
        with(base_args(), [resume.clone()]),
        Responder::new(),
    )
    .await?;
    b.initialize(InitializeRequest::default(), STEP)
        .await
        .map_err(Failure::from_error)?;
    b.send_user("which word did I say")
        .await
        .map_err(Failure::from_error)?;
    let turn_b = b.until_result(STEP).await.map_err(Failure::from_error)?;
    let result_b = last_result(&turn_b)?;
    ensure!(
        result_b.result.as_deref() == Some("You said apple."),
        "B's turn: {:?} {:?}",
        result_b.subtype,
        result_b.result
    );
    all_in_session(&turn_b, &session, "B")?;
    let request_b = model
        .message_requests()
        .pop()
        .ok_or_else(|| Failure::new("B made no API request"))?;
    let history_b = serde_json::to_string(request_b.messages()).unwrap_or_default();
    for part in [
        "remember the word apple",
        "I will remember apple.",
        "the second turn of A",
        "Second answer of A.",
    ] {
        ensure!(
            history_b.contains(part),
            "B's API request lacks A's {part:?}"
        );
    }
    ensure!(
        request_b.session_id() == Some(session.as_str()),
        "B's API session header {:?}",
        request_b.session_id()
    );
    let exit_b = finish(b).await?;
    let a_before_fork =
        std::fs::read(&a_file).map_err(|e| Failure::new(format!("{}: {e}", a_file.display())))?;

    // C: fork A after its first answer, into a new id, from another directory.
    let fork_id = uuid_v4();
    let env_c = env.with_fresh_cwd().map_err(Failure::from_error)?;
    let args_c = with(
        base_args(),
        [
            resume,
            format!("--resume-session-at={first_answer}"),
            "--fork-session".to_owned(),
            format!("--session-id={fork_id}"),
        ],
    );
    let mut c = spawn(&ctx, &env_c, args_c, Responder::new()).await?;
    c.initialize(InitializeRequest::default(), STEP)
        .await
        .map_err(Failure::from_error)?;
    c.send_user("a question in the fork")
        .await
        .map_err(Failure::from_error)?;
    let turn_c = c.until_result(STEP).await.map_err(Failure::from_error)?;
    let result_c = last_result(&turn_c)?;
    ensure!(
        result_c.result.as_deref() == Some("Answer in the fork."),
        "C's turn: {:?} {:?}",
        result_c.subtype,
        result_c.result
    );
    all_in_session(&turn_c, &fork_id, "C")?;
    let init_cwd = turn_c.iter().find_map(|m| match m {
        CliMessage::System(SystemMessage::Init(i)) => i.cwd.clone(),
        _ => None,
    });
    ensure!(
        init_cwd.as_deref() == Some(&*env_c.cwd().to_string_lossy()),
        "C's system/init cwd {init_cwd:?}"
    );
    let request_c = model
        .message_requests()
        .pop()
        .ok_or_else(|| Failure::new("C made no API request"))?;
    let history_c = serde_json::to_string(request_c.messages()).unwrap_or_default();
    for part in [
        "remember the word apple",
        "I will remember apple.",
        "a question in the fork",
    ] {
        ensure!(history_c.contains(part), "C's API request lacks {part:?}");
    }
    for part in [
        "the second turn of A",
        "Second answer of A.",
        "which word did I say",
    ] {
        ensure!(
            !history_c.contains(part),
            "C's API request was not cut after the first answer: it holds {part:?}"
        );
    }
    let roles: Vec<&str> = request_c
        .messages()
        .iter()
        .filter_map(|m| m.get("role").and_then(Value::as_str))
        .collect();
    ensure!(
        roles.iter().filter(|r| **r == "assistant").count() == 1,
        "C's API request has roles {roles:?}"
    );
    ensure!(
        request_c.session_id() == Some(fork_id.as_str()),
        "C's API session header {:?}",
        request_c.session_id()
    );
    let exit_c = finish(c).await?;

    let a_after_fork =
        std::fs::read(&a_file).map_err(|e| Failure::new(format!("{}: {e}", a_file.display())))?;
    ensure!(
        a_after_fork == a_before_fork,
        "the fork changed A's session file {}",
        a_file.display()
    );
    let fork_file = find_file(
        &env.home().join(".claude/projects"),
        &format!("{fork_id}.jsonl"),
    )
    .ok_or_else(|| Failure::new(format!("no session file {fork_id}.jsonl under HOME")))?;
    ensure!(
        fork_file.parent() != a_file.parent(),
        "the fork's session file is in A's project directory: {}",
        fork_file.display()
    );

    Ok(vec![
        recording(&exit_a),
        recording(&exit_b),
        recording(&exit_c),
    ])
}

/// `--resume` of an id that does not exist: a start-up error `result` instead of the
/// initialize answer, exit 1, and the host's `initialize` fails fast.
async fn resume_unknown_id(ctx: Ctx) -> Outcome {
    let (model, env) = ctx.fake("resume_unknown_id").await?;
    let missing = uuid_v4();
    let mut host = spawn(
        &ctx,
        &env,
        with(base_args(), [format!("--resume={missing}")]),
        Responder::new(),
    )
    .await?;
    let started = Instant::now();
    let answer = host.initialize(InitializeRequest::default(), STEP).await;
    let took = started.elapsed();
    ensure!(
        matches!(answer, Err(HostError::Exited { .. })),
        "initialize did not fail because the CLI exited: {answer:?}"
    );
    ensure!(
        took < Duration::from_secs(10),
        "initialize took {took:?} to fail"
    );

    let exit = host.wait(STEP).await.map_err(Failure::from_error)?;
    ensure!(
        exit.status.code() == Some(1),
        "exit status {:?}, expected 1",
        exit.status
    );
    let expected = format!("No conversation found with session ID: {missing}");
    ensure!(
        exit.stderr.contains(&expected),
        "stderr lacks {expected:?}: {}",
        exit.stderr
    );
    let result = last_result(&exit.messages)?;
    ensure!(
        result.is_error == Some(true)
            && result.subtype == ResultSubtype::ERROR_DURING_EXECUTION
            && result
                .errors
                .as_ref()
                .is_some_and(|e| e.iter().any(|e| e.contains(&expected))),
        "the start-up result: {:?} is_error {:?} errors {:?}",
        result.subtype,
        result.is_error,
        result.errors
    );
    ensure!(
        result.session_id.as_deref() == Some(missing.as_str()),
        "the start-up result names session {:?}",
        result.session_id
    );
    ensure!(
        !exit
            .messages
            .iter()
            .any(|m| matches!(m, CliMessage::ControlResponse(_))),
        "the CLI answered initialize after all"
    );
    // Unlike a turn's result, the start-up result has `type` as its first key.
    let raw = exit
        .transcript
        .iter()
        .find(|l| l.is_recv() && l.msg().is_some_and(|m| m["type"] == "result"))
        .map(|l| l.raw.clone())
        .unwrap_or_default();
    ensure!(
        raw.starts_with(r#"{"type":"result","#),
        "the start-up result line does not start with its type: {}",
        &raw[..raw.len().min(80)]
    );
    ensure!(
        model.requests().is_empty(),
        "the CLI called the API: {:?}",
        model.requests().iter().map(|r| &r.path).collect::<Vec<_>>()
    );
    Ok(vec![recording(&exit)])
}

fn all_in_session(messages: &[CliMessage], session: &str, who: &str) -> Result<(), Failure> {
    for message in messages {
        if let Some(id) = message.session_id() {
            ensure!(
                id == session,
                "{who}: a {} line has session_id {id}, expected {session}",
                message.kind()
            );
        }
    }
    Ok(())
}

/// The first file called `name` in `dir` or its subdirectories.
fn find_file(dir: &Path, name: &str) -> Option<PathBuf> {
    let entries = std::fs::read_dir(dir).ok()?;
    let mut subdirs = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            subdirs.push(path);
        } else if entry.file_name() == name {
            return Some(path);
        }
    }
    subdirs.sort();
    subdirs.into_iter().find_map(|d| find_file(&d, name))
}

/// A random (version 4) UUID, from `/dev/urandom` mixed with the clock.
fn uuid_v4() -> String {
    let mut bytes = [0u8; 16];
    if let Ok(mut random) = std::fs::File::open("/dev/urandom") {
        let _ = random.read_exact(&mut bytes);
    }
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos()
        ^ u128::from(std::process::id()) << 64;
    for (byte, mix) in bytes.iter_mut().zip(now.to_le_bytes()) {
        *byte ^= mix;
    }
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

// ---------------------------------------------------------------------------------------------
// shared helpers

/// Starts the CLI in `env` with exactly `args`.
async fn spawn(
    ctx: &Ctx,
    env: &ClaudeEnv,
    args: Vec<String>,
    responder: Responder,
) -> Result<Host, Failure> {
    let mut options = HostOptions::new(&ctx.bin, env).responder(responder);
    options.args = args;
    Host::spawn(options).await.map_err(Failure::from_error)
}

/// `args` followed by `more`.
fn with(mut args: Vec<String>, more: impl IntoIterator<Item = String>) -> Vec<String> {
    args.extend(more);
    args
}

/// Sends `text` and checks that its turn ends in success; returns that result.
async fn next_turn_succeeds(host: &mut Host, text: &str) -> Result<ResultMessage, Failure> {
    host.send_user(text).await.map_err(Failure::from_error)?;
    let turn = host.until_result(STEP).await.map_err(Failure::from_error)?;
    let result = last_result(&turn)?;
    ensure!(
        result.subtype == ResultSubtype::SUCCESS && result.is_error != Some(true),
        "the turn {text:?} did not succeed: {:?} {:?}",
        result.subtype,
        result.error_text()
    );
    Ok(result.clone())
}

/// Closes stdin and checks the CLI exits 0.
async fn finish(host: Host) -> Result<HostExit, Failure> {
    let exit = host.wait(STEP).await.map_err(Failure::from_error)?;
    ensure!(
        exit.status.success(),
        "exit status {:?}; stderr: {}",
        exit.status,
        exit.stderr
    );
    Ok(exit)
}

/// The recording of one finished process.
fn recording(exit: &HostExit) -> Recording {
    Recording {
        lines: exit.transcript.clone(),
    }
}

/// The last `result` among `messages`.
fn last_result(messages: &[CliMessage]) -> Result<&ResultMessage, Failure> {
    messages
        .iter()
        .rev()
        .find_map(|m| match m {
            CliMessage::Result(r) => Some(&**r),
            _ => None,
        })
        .ok_or_else(|| Failure::new("no result line"))
}

/// Whether `text` holds each of `parts`, in this order.
fn ordered(text: &str, parts: &[&str]) -> bool {
    let mut rest = text;
    parts.iter().all(|part| match rest.find(part) {
        Some(at) => {
            rest = &rest[at + part.len()..];
            true
        }
        None => false,
    })
}

/// The index of the first message matching `pred`.
fn position(messages: &[CliMessage], pred: impl Fn(&CliMessage) -> bool) -> Option<usize> {
    messages.iter().position(pred)
}

/// The text of each `user` line that has text (index, text).
fn user_texts(messages: &[CliMessage]) -> Vec<(usize, String)> {
    messages
        .iter()
        .enumerate()
        .filter_map(|(i, m)| match m {
            CliMessage::User(u) => {
                let text = u.message.content.text();
                (!text.is_empty()).then_some((i, text))
            }
            _ => None,
        })
        .collect()
}

/// Every `tool_result` block of the `user` lines (index of the line, block).
fn tool_results(messages: &[CliMessage]) -> Vec<(usize, &ToolResultBlock)> {
    let mut out = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        if let CliMessage::User(u) = m {
            if let MessageContent::Blocks(blocks) = &u.message.content {
                for block in blocks {
                    if let ContentBlock::ToolResult(result) = block {
                        out.push((i, result));
                    }
                }
            }
        }
    }
    out
}

/// The text of a tool_result block (a string, or its text blocks joined).
fn block_text(block: &ToolResultBlock) -> String {
    match &block.content {
        Some(content) => content.text(),
        None => String::new(),
    }
}
