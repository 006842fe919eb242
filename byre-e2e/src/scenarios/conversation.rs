//! Conversation scenarios: text turns, tools, hooks, images and background tasks (what the
//! host writes on stdin besides plain prompts is in [`input`](super::input)).
//!
//! Each scenario checks what CLI 2.1.328 was observed to do. Assertions
//! look at the messages as JSON values (by key, never by position), at what the fake model
//! received, and at how the process ended.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use byre_proto::{HookEvent, HookOutput, ResultSubtype, UserMessage};

use crate::support::*;
use crate::{ensure, Ctx, Failure, Outcome, Scenario};

/// A valid 1x1 RGB PNG (one orange pixel), base64.
const PNG_1X1: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP438AAAAQBAYDFKhhdAAAAAElFTkSuQmCC";

pub(crate) fn all() -> Vec<Scenario> {
    vec![
        Scenario {
            name: "text_two_turns",
            run: |ctx| Box::pin(text_two_turns(ctx)),
        },
        Scenario {
            name: "bash_tool",
            run: |ctx| Box::pin(bash_tool(ctx)),
        },
        Scenario {
            name: "bash_background",
            run: |ctx| Box::pin(bash_background(ctx)),
        },
        Scenario {
            name: "stop_hook_block",
            run: |ctx| Box::pin(stop_hook_block(ctx)),
        },
        Scenario {
            name: "pretooluse_deny",
            run: |ctx| Box::pin(pretooluse_deny(ctx)),
        },
        Scenario {
            name: "image_turn",
            run: |ctx| Box::pin(image_turn(ctx)),
        },
    ]
}

/// Two text turns in one process: two results, one session id, and the API sees the first
/// turn when answering the second.
async fn text_two_turns(ctx: Ctx) -> Outcome {
    let (model, env) = ctx.fake("text_two_turns").await?;
    let mut host = start(&ctx, &env).await?;

    host.send_user("first question")?;
    let first = host.until_result(STEP).await?;
    let first_result = last_result(&first)?;
    ensure!(
        first_result.subtype == ResultSubtype::SUCCESS,
        "first turn: {first_result:?}"
    );
    ensure!(
        first_result.result.as_deref() == Some("Answer one."),
        "first result text: {:?}",
        first_result.result
    );

    host.send_user("second question")?;
    let second = host.until_result(STEP).await?;
    let second_result = last_result(&second)?;
    ensure!(
        second_result.result.as_deref() == Some("Answer two."),
        "second result text: {:?}",
        second_result.result
    );
    ensure!(
        first_result.session_id == second_result.session_id,
        "the session id changed between turns"
    );

    let requests = model.message_requests();
    ensure!(
        requests.len() == 2,
        "expected 2 API requests, got {}",
        requests.len()
    );
    let history = serde_json::to_string(requests[1].messages()).unwrap_or_default();
    ensure!(
        history.contains("first question") && history.contains("Answer one."),
        "the second API request lacks the first turn: {history}"
    );

    let exit = finish(host, &model).await?;
    Ok(vec![recording(&exit)])
}

/// The model runs Bash `echo hi`: the tool result holds `hi`, the second API request carries
/// it, and the turn ends in one result counting two model turns (§2, §7).
async fn bash_tool(ctx: Ctx) -> Outcome {
    let (model, env) = ctx.fake("bash_tool").await?;
    let mut host = start(&ctx, &env).await?;
    host.send_user("please say hi with bash")?;
    let turn = json_of(&host.until_result(STEP).await?);

    let call = position(&turn, |v| {
        v["type"] == "assistant"
            && v["message"]["content"][0]["type"] == "tool_use"
            && v["message"]["content"][0]["id"] == "toolu_bash_hi"
    })
    .ok_or_else(|| Failure::new("no assistant line with the Bash call"))?;
    ensure!(
        turn[call]["message"]["content"][0]["name"] == "Bash"
            && turn[call]["message"]["content"][0]["input"]["command"] == "echo hi",
        "the tool call: {}",
        turn[call]
    );
    ensure!(
        turn[call]["message"]["stop_reason"].is_null(),
        "assistant lines carry stop_reason null: {}",
        turn[call]
    );
    let (at, line, block) = tool_result_for(&turn, "toolu_bash_hi")
        .ok_or_else(|| Failure::new("no tool_result for the Bash call"))?;
    ensure!(at > call, "the tool_result came before the call");
    ensure!(
        block["content"] == "hi" && block["is_error"] == false,
        "the tool_result block: {block}"
    );
    ensure!(
        line["parent_tool_use_id"].is_null(),
        "a top-level tool result has parent_tool_use_id null: {line}"
    );
    ensure!(
        line["tool_use_result"]["stdout"] == "hi"
            && line["tool_use_result"]["stderr"] == ""
            && line["tool_use_result"]["interrupted"] == false,
        "tool_use_result: {}",
        line["tool_use_result"]
    );
    let decision = &line["tool_result_meta"][0];
    ensure!(
        decision["id"] == "toolu_bash_hi"
            && decision["permission_decision"]["decision"] == "accept"
            && decision["permission_decision"]["source"] == "config",
        "tool_result_meta: {}",
        line["tool_result_meta"]
    );
    ensure!(
        systems(&turn, "task_started").is_empty(),
        "a short Bash made a task"
    );
    ensure!(
        statuses_requesting(&turn) == 2,
        "expected 2 `requesting` statuses (one per API call), got {}",
        statuses_requesting(&turn)
    );
    let result = only_result(&turn)?;
    ensure!(
        result["subtype"] == "success"
            && result["num_turns"] == 2
            && result["result"] == "The command printed: hi"
            && result["terminal_reason"] == "completed",
        "the result: {}",
        brief(result)
    );

    let requests = model.message_requests();
    ensure!(
        requests.len() == 2,
        "expected 2 API requests, got {}",
        requests.len()
    );
    ensure!(
        requests[0].tool_names().iter().any(|n| n == "Bash"),
        "Bash was not offered: {:?}",
        requests[0].tool_names()
    );
    ensure!(
        requests[1].tool_results() == ["hi"],
        "the second API request's tool results: {:?}",
        requests[1].tool_results()
    );
    let exit = finish(host, &model).await?;
    Ok(vec![recording(&exit)])
}

/// A Bash with `run_in_background: true`: the turn ends while the task runs; then
/// task_updated, task_notification and background_tasks_changed(`[]`) arrive and the CLI
/// starts a turn by itself whose result has `origin.kind == "task-notification"` (§7).
async fn bash_background(ctx: Ctx) -> Outcome {
    let (model, env) = ctx.fake("bash_background").await?;
    let mut host = start(&ctx, &env).await?;
    host.send_user("please start the background job")?;
    let first = json_of(&host.until_result(STEP).await?);

    let (changed_at, changed) = systems(&first, "background_tasks_changed")
        .into_iter()
        .next()
        .ok_or_else(|| Failure::new("no background_tasks_changed when the task started"))?;
    let task_id = changed["tasks"][0]["task_id"]
        .as_str()
        .ok_or_else(|| Failure::new(format!("no task in {changed}")))?
        .to_owned();
    ensure!(
        changed["tasks"][0]["task_type"] == "local_bash",
        "background_tasks_changed: {changed}"
    );
    let (started_at, started) = systems(&first, "task_started")
        .into_iter()
        .next()
        .ok_or_else(|| Failure::new("no task_started"))?;
    ensure!(
        started["task_id"] == task_id.as_str()
            && started["is_backgrounded"] == true
            && started["task_type"] == "local_bash"
            && started["tool_use_id"] == "toolu_bash_bg",
        "task_started: {started}"
    );
    let (result_at, line, block) = tool_result_for(&first, "toolu_bash_bg")
        .ok_or_else(|| Failure::new("no tool_result for the background Bash"))?;
    ensure!(
        changed_at < started_at && started_at < result_at,
        "expected background_tasks_changed, task_started, tool_result in this order"
    );
    // The model is told the task's id (the CLI's wording around it is not checked).
    ensure!(
        content_text(&block["content"]).contains(task_id.as_str()),
        "the tool_result: {block}"
    );
    ensure!(
        line["tool_use_result"]["backgroundTaskId"] == task_id.as_str(),
        "tool_use_result.backgroundTaskId: {}",
        line["tool_use_result"]
    );
    let first_result = only_result(&first)?;
    ensure!(
        first_result["subtype"] == "success"
            && first_result["result"] == "Started it in the background."
            && first_result.get("origin").is_none(),
        "the first result: {}",
        brief(first_result)
    );
    ensure!(
        systems(&first, "task_notification").is_empty(),
        "the task finished before the turn's result"
    );

    // stdin stays open: the CLI starts the next turn by itself.
    let rest = json_of(&host.until(STEP, is_notification_result).await?);
    let (updated_at, updated) = systems(&rest, "task_updated")
        .into_iter()
        .next()
        .ok_or_else(|| Failure::new("no task_updated"))?;
    ensure!(
        updated["task_id"] == task_id.as_str()
            && updated["patch"]["status"] == "completed"
            && updated["patch"]["end_time"].is_number(),
        "task_updated: {updated}"
    );
    let (notified_at, notified) = systems(&rest, "task_notification")
        .into_iter()
        .next()
        .ok_or_else(|| Failure::new("no task_notification"))?;
    ensure!(
        notified["task_id"] == task_id.as_str()
            && notified["status"] == "completed"
            && notified["tool_use_id"] == "toolu_bash_bg",
        "task_notification: {notified}"
    );
    // The task really ran: its output file starts with both lines (the CLI may append an
    // `[exited with code 0]` trailer, sometimes after the notification).
    let output_file = notified["output_file"].as_str().unwrap_or_default();
    let output = std::fs::read_to_string(output_file).unwrap_or_default();
    ensure!(
        output.starts_with("x\ndone\n"),
        "the task's output file {output_file:?} holds {output:?}"
    );
    let (emptied_at, _) = systems(&rest, "background_tasks_changed")
        .into_iter()
        .find(|(_, v)| v["tasks"].as_array().is_some_and(Vec::is_empty))
        .ok_or_else(|| Failure::new("no background_tasks_changed with tasks: []"))?;
    let (init_at, _) = systems(&rest, "init")
        .into_iter()
        .next()
        .ok_or_else(|| Failure::new("no system/init for the notification turn"))?;
    let results = results_of(&rest);
    ensure!(
        results.len() == 1,
        "expected only the notification turn's result, got {}",
        results.len()
    );
    let notification_result = results[0];
    ensure!(
        updated_at < notified_at && notified_at < emptied_at && emptied_at < init_at,
        "expected task_updated, task_notification, background_tasks_changed, system/init in \
         this order"
    );
    ensure!(
        notification_result["origin"]["kind"] == "task-notification"
            && notification_result["origin"]["producer"] == "session-task"
            && notification_result["origin"]["runId"] == started["run_id"]
            && notification_result["result"] == "The background job finished."
            && notification_result["session_id"] == first_result["session_id"],
        "the notification turn's result: {}",
        brief(notification_result)
    );

    let requests = model.message_requests();
    ensure!(
        requests.len() == 3,
        "expected 3 API requests, got {}",
        requests.len()
    );
    // The notification is a `<system-reminder>` block of the last user message.
    let injected = last_user_text_all(requests[2].messages());
    ensure!(
        injected.contains("<task-notification>")
            && injected.contains(&format!("<task-id>{task_id}</task-id>"))
            && injected.contains("<status>completed</status>"),
        "the notification turn's last user message: {injected}"
    );
    let exit = finish(host, &model).await?;
    Ok(vec![recording(&exit)])
}

/// A Stop hook blocks once with "keep going": a synthetic user line with the reason, a
/// second API call that carries it, `stop_hook_active: true` on the second Stop input, and
/// still one result for the turn with `num_turns: 2` (§5.2). The CLI's wording around the
/// reason ("Stop hook feedback:", a `<system-reminder>` since 2.1.332) is not checked.
async fn stop_hook_block(ctx: Ctx) -> Outcome {
    let (model, env) = ctx.fake("stop_hook_block").await?;
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&calls);
    // The driver registers the first hook as callback `hook_0`.
    let options = cli_options(&ctx, &env).hook(HookEvent::STOP, move |_input, _tool_use| {
        let first = counter.fetch_add(1, Ordering::SeqCst) == 0;
        async move {
            Ok(if first {
                HookOutput::block("keep going")
            } else {
                HookOutput::none()
            })
        }
    });
    let mut host = SessionHost::start(options, &env).await?;
    host.send_user("stop hook test")?;
    let turn = json_of(&host.until_result(STEP).await?);

    let hooks = hook_calls(&turn, "hook_0");
    ensure!(
        hooks.len() == 2 && calls.load(Ordering::SeqCst) == 2,
        "expected 2 Stop callbacks, got {}",
        hooks.len()
    );
    let (first_at, first) = hooks[0];
    let (second_at, second) = hooks[1];
    ensure!(
        first["hook_event_name"] == "Stop"
            && first["stop_hook_active"] == false
            && first["last_assistant_message"] == "First answer.",
        "the first Stop input: {first}"
    );
    ensure!(
        second["stop_hook_active"] == true
            && second["last_assistant_message"] == "Continuing because the Stop hook asked.",
        "the second Stop input: {second}"
    );
    let feedback = position(&turn, |v| {
        v["type"] == "user" && content_text(&v["message"]["content"]).contains("keep going")
    })
    .ok_or_else(|| Failure::new("no synthetic Stop hook feedback line"))?;
    ensure!(
        turn[feedback]["isSynthetic"] == true && turn[feedback]["parent_tool_use_id"].is_null(),
        "the feedback line: {}",
        turn[feedback]
    );
    ensure!(
        first_at < feedback && feedback < second_at,
        "the feedback line is not between the two Stop callbacks"
    );
    let notice = systems(&turn, "notification");
    ensure!(
        notice.iter().any(|(_, v)| v["key"] == "stop-hook-error"),
        "no system/notification stop-hook-error: {:?}",
        notice.iter().map(|(_, v)| v).collect::<Vec<_>>()
    );
    let result = only_result(&turn)?;
    ensure!(
        result["subtype"] == "success"
            && result["num_turns"] == 2
            && result["result"] == "Continuing because the Stop hook asked.",
        "the result: {}",
        brief(result)
    );

    let requests = model.message_requests();
    ensure!(
        requests.len() == 2,
        "expected 2 API requests, got {}",
        requests.len()
    );
    ensure!(
        requests[1]
            .user_texts()
            .iter()
            .any(|t| t.contains("keep going")),
        "the second API request's last user message: {:?}",
        requests[1].user_texts()
    );
    let exit = finish(host, &model).await?;
    Ok(vec![recording(&exit)])
}

/// A PreToolUse hook (matcher "Bash") denies the call: an error tool_result with the hook's
/// reason, `permission_decision.source == "hook"`, and a `permission_denials` entry (§5.2).
async fn pretooluse_deny(ctx: Ctx) -> Outcome {
    const REASON: &str = "Bash is blocked by the host";
    let (model, env) = ctx.fake("pretooluse_deny").await?;
    // The driver registers the hook as callback `hook_0`.
    let options = cli_options(&ctx, &env).hook(
        byre_session::Hook::new(HookEvent::PRE_TOOL_USE).matcher("Bash"),
        |_input, _tool_use| async { Ok(HookOutput::deny_tool(REASON)) },
    );
    let mut host = SessionHost::start(options, &env).await?;
    host.send_user("run echo hi")?;
    let turn = json_of(&host.until_result(STEP).await?);

    let hooks = hook_calls(&turn, "hook_0");
    ensure!(
        hooks.len() == 1,
        "expected 1 PreToolUse callback, got {}",
        hooks.len()
    );
    let (hook_at, input) = hooks[0];
    ensure!(
        input["hook_event_name"] == "PreToolUse"
            && input["tool_name"] == "Bash"
            && input["tool_input"]["command"] == "echo hi"
            && input["tool_use_id"] == "toolu_denied",
        "the PreToolUse input: {input}"
    );
    let expected = format!("PreToolUse:Bash hook error: {REASON}");
    let (result_at, line, block) = tool_result_for(&turn, "toolu_denied")
        .ok_or_else(|| Failure::new("no tool_result for the denied call"))?;
    ensure!(hook_at < result_at, "the tool_result came before the hook");
    ensure!(
        block["is_error"] == true && block["content"] == expected.as_str(),
        "the tool_result block: {block}"
    );
    ensure!(
        line["tool_use_result"] == format!("Error: {expected}").as_str(),
        "tool_use_result: {}",
        line["tool_use_result"]
    );
    let decision = &line["tool_result_meta"][0];
    ensure!(
        decision["id"] == "toolu_denied"
            && decision["permission_decision"]["decision"] == "reject"
            && decision["permission_decision"]["source"] == "hook"
            && decision["non_execution_kind"] == "permission-rule",
        "tool_result_meta: {}",
        line["tool_result_meta"]
    );
    let result = only_result(&turn)?;
    ensure!(
        result["subtype"] == "success" && result["result"] == "The tool was denied, ok.",
        "the result: {}",
        brief(result)
    );
    let denials = result["permission_denials"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    ensure!(
        denials.len() == 1
            && denials[0]["tool_name"] == "Bash"
            && denials[0]["tool_use_id"] == "toolu_denied"
            && denials[0]["tool_input"]["command"] == "echo hi",
        "permission_denials: {denials:?}"
    );

    let requests = model.message_requests();
    ensure!(
        requests.len() == 2,
        "expected 2 API requests, got {}",
        requests.len()
    );
    ensure!(
        requests[1].tool_results() == [expected.clone()],
        "the second API request's tool results: {:?}",
        requests[1].tool_results()
    );
    let exit = finish(host, &model).await?;
    Ok(vec![recording(&exit)])
}

/// A user turn with a base64 PNG followed by text: the API's last user message holds the
/// image and the text, and the turn succeeds (§4).
async fn image_turn(ctx: Ctx) -> Outcome {
    let (model, env) = ctx.fake("image_turn").await?;
    let mut host = start(&ctx, &env).await?;
    let prompt = UserMessage::with_images(
        [("image/png".to_owned(), PNG_1X1.to_owned())],
        "what is in this image?",
    );
    host.send(prompt)?;
    let turn = json_of(&host.until_result(STEP).await?);
    let result = only_result(&turn)?;
    ensure!(
        result["subtype"] == "success" && result["result"] == "I see an orange pixel.",
        "the result: {}",
        brief(result)
    );

    let requests = model.message_requests();
    ensure!(
        requests.len() == 1,
        "expected 1 API request, got {}",
        requests.len()
    );
    let last = last_user_message(requests[0].messages())
        .ok_or_else(|| Failure::new("the API request has no user message"))?;
    let blocks = last["content"].as_array().cloned().unwrap_or_default();
    let image = blocks
        .iter()
        .position(|b| b["type"] == "image")
        .ok_or_else(|| Failure::new(format!("no image block in {last}")))?;
    let source = &blocks[image]["source"];
    ensure!(
        source["type"] == "base64"
            && source["media_type"] == "image/png"
            && source["data"] == PNG_1X1,
        "the image block's source: {source}"
    );
    let text = blocks
        .iter()
        // The CLI ends the prompt text with a newline.
        .position(|b| {
            b["type"] == "text"
                && b["text"].as_str().map(str::trim_end) == Some("what is in this image?")
        })
        .ok_or_else(|| Failure::new(format!("no prompt text block in {last}")))?;
    ensure!(
        image < text,
        "the image does not come before the text: {last}"
    );
    ensure!(
        blocks.iter().any(|b| b["type"] == "text"
            && b["text"]
                .as_str()
                .is_some_and(|t| t.starts_with("[Image: source: "))),
        "no `[Image: source: …]` text block in {last}"
    );
    let exit = finish(host, &model).await?;
    Ok(vec![recording(&exit)])
}
