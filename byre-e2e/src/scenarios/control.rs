//! Control scenarios: host → CLI requests and interrupts.

use std::time::{Duration, Instant};

use byre_proto::{
    CliMessage, ControlResponseBody, GetContextUsageRequest, InterruptRequest, McpStatusRequest,
    PermissionMode, ResultSubtype, SessionState, SetMaxThinkingTokensRequest, SetModelRequest,
    SetPermissionModeRequest, StreamEvent, SystemMessage, TaskStatus, TerminalReason,
};
use byre_session::{Error, RequestFailure};
use serde_json::json;

use crate::support::*;
use crate::{ensure, Ctx, Failure, Outcome, Scenario};

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
    let mut host = SessionHost::start(cli_options(&ctx, &env), &env).await?;

    // set_model with an alias resolves it.
    let haiku = host
        .call(set_model("haiku"))
        .await
        .map_err(Failure::from_error)?;
    let haiku = haiku.model.unwrap_or_default();
    ensure!(
        haiku.starts_with("claude-haiku") && haiku != "haiku",
        "set_model haiku resolved to {haiku:?}, expected a claude-haiku-* id"
    );

    // A first turn: it uses the resolved model. A set_model before any turn sends no
    // isReplay line.
    host.send_user("before the controls")?;
    let warm_up = host.until_result(STEP).await?;
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
        .call(set_model(UNKNOWN_MODEL))
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
    let reset = host.call(reset).await.map_err(Failure::from_error)?;
    let default_model = reset.model.unwrap_or_default();
    ensure!(
        default_model.starts_with("claude-") && default_model != haiku,
        "set_model null answered {default_model:?}, expected the default model"
    );

    // A model whose thinking has a token budget (the default model's thinking is adaptive and
    // set_max_thinking_tokens leaves it alone).
    const BUDGET_MODEL: &str = "claude-sonnet-4-5";
    let budget = host
        .call(set_model(BUDGET_MODEL))
        .await
        .map_err(Failure::from_error)?;
    ensure!(
        budget.model.as_deref() == Some(BUDGET_MODEL),
        "set_model {BUDGET_MODEL} answered {:?}",
        budget.model
    );

    // set_permission_mode: a valid mode, then one that is not.
    let mode = host
        .call(SetPermissionModeRequest {
            mode: PermissionMode::DEFAULT,
            extra: Default::default(),
        })
        .await
        .map_err(Failure::from_error)?;
    ensure!(
        mode.mode == Some(PermissionMode::DEFAULT),
        "set_permission_mode default answered {:?}",
        mode.mode
    );
    let invalid = host
        .call(SetPermissionModeRequest {
            mode: PermissionMode::new("byre-no-such-mode"),
            extra: Default::default(),
        })
        .await;
    match invalid {
        Err(Error::Request {
            failure: RequestFailure::Refused { message, code },
            ..
        }) => {
            let code = code.as_ref().map(|c| c.as_str());
            ensure!(
                code == Some("invalid_mode"),
                "invalid mode: error_code {code:?} ({message})"
            );
            // The code says why; the text is the CLI's to word.
            ensure!(!message.is_empty(), "invalid mode: no error text");
        }
        other => {
            return Err(Failure::new(format!(
                "set_permission_mode with an invalid mode did not fail: {other:?}"
            )))
        }
    }

    // mcp_status with no MCP server.
    let status = host
        .call(McpStatusRequest::default())
        .await
        .map_err(Failure::from_error)?;
    ensure!(
        status.mcp_servers.as_deref().is_some_and(<[_]>::is_empty),
        "mcp_status without servers answered {:?}",
        status.mcp_servers
    );

    // get_context_usage, summary: typed, and it does not call count_tokens.
    let usage = host
        .call(GetContextUsageRequest {
            detail: Some("summary".into()),
            extra: Default::default(),
        })
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
        .raw_request(
            SetMaxThinkingTokensRequest {
                max_thinking_tokens: Some(0),
                ..Default::default()
            }
            .into(),
        )
        .await;
    match thinking {
        Ok(payload) => ensure!(
            payload.is_none(),
            "set_max_thinking_tokens answered a payload: {payload:?}"
        ),
        Err(e) => return Err(Failure::new(format!("set_max_thinking_tokens failed: {e}"))),
    }

    // A subtype the CLI does not know, written as raw bytes (byre-proto would decode it as
    // `HostRequest::Unknown`, which a strict replay counts as unknown).
    host.send_raw(
        concat!(
            r#"{"type":"control_request","request_id":"req_bogus","#,
            r#""request":{"subtype":"byre_no_such_request"}}"#
        )
        .as_bytes(),
    )?;
    let answered = host
        .until(
            STEP,
            |m| matches!(m, CliMessage::ControlResponse(r) if r.request_id() == Some("req_bogus")),
        )
        .await?;
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
    host.send_user("after the controls")?;
    let turn = host.until_result(STEP).await?;
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

    let exit = finish(host, &model).await?;
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
    let mut host = SessionHost::start(cli_options(&ctx, &env), &env).await?;

    host.send_user("slow bash please")?;
    let mut turn = host
        .until(Duration::from_secs(15), |m| {
            matches!(m, CliMessage::System(SystemMessage::TaskStarted(_)))
        })
        .await?;
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
        .call(InterruptRequest::default())
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
    turn.extend(host.until_result(STEP).await?);
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
    let exit = finish(host, &model).await?;
    Ok(vec![recording(&exit)])
}

/// An interrupt while the model's stream hangs: the turn ends `aborted_streaming` with
/// "[Request interrupted by user]", and the session goes on.
async fn interrupt_during_stream(ctx: Ctx) -> Outcome {
    let (model, env) = ctx.fake("interrupt_during_stream").await?;
    let mut host = SessionHost::start(cli_options(&ctx, &env), &env).await?;

    host.send_user("slow stream please")?;
    let mut turn = host
        .until(STEP, |m| matches!(m, CliMessage::StreamEvent(_)))
        .await?;
    let sent = Instant::now();
    let answer = host
        .call(InterruptRequest::default())
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
    turn.extend(host.until_result(STEP).await?);

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
            && m.to_value()
                .is_ok_and(|v| v.get("abandoned_blocks").is_some())
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
    let exit = finish(host, &model).await?;
    Ok(vec![recording(&exit)])
}

/// An interrupt with no turn running, before any turn and between turns: success with an
/// empty `still_queued`, nothing else follows, and the turns succeed.
async fn interrupt_idle(ctx: Ctx) -> Outcome {
    let (model, env) = ctx.fake("interrupt_idle").await?;
    let mut host = SessionHost::start(cli_options(&ctx, &env), &env).await?;

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
    let exit = finish(host, &model).await?;
    Ok(vec![recording(&exit)])
}

async fn idle_interrupt(host: &mut SessionHost, when: &str) -> Result<(), Failure> {
    let sent = Instant::now();
    let answer = host
        .call(InterruptRequest::default())
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
    // The CLI's report that the previous turn left the run idle may come after its result.
    let mut next = host.next(QUIET).await;
    while let Next::Message(CliMessage::System(SystemMessage::SessionStateChanged(s))) = &next {
        ensure!(
            s.state == SessionState::IDLE,
            "after an idle interrupt ({when}) the state became {:?}",
            s.state
        );
        next = host.next(QUIET).await;
    }
    match next {
        Next::TimedOut => Ok(()),
        Next::Message(message) => Err(Failure::new(format!(
            "after an idle interrupt ({when}) the CLI sent {}",
            String::from_utf8_lossy(&message.to_vec())
        ))),
        Next::Ended => Err(Failure::new(format!(
            "the CLI exited after an idle interrupt ({when})"
        ))),
    }
}
