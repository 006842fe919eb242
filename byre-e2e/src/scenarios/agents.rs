//! Subagent scenarios: the Agent tool in the foreground and in the background.

use crate::support::*;
use crate::{ensure, Ctx, Failure, Outcome, Scenario};

pub(crate) fn all() -> Vec<Scenario> {
    vec![
        Scenario {
            name: "subagent_foreground",
            run: |ctx| Box::pin(subagent_foreground(ctx)),
        },
        Scenario {
            name: "subagent_background",
            run: |ctx| Box::pin(subagent_background(ctx)),
        },
    ]
}

/// The model calls `Agent` in the foreground; the subagent runs Bash and reports. Nested lines
/// carry `parent_tool_use_id` = the Agent call and `agent_id`; task_started, task_notification
/// and the top-level Agent tool_result frame them (§7).
async fn subagent_foreground(ctx: Ctx) -> Outcome {
    const AGENT: &str = "toolu_agent_fg";
    const PROMPT: &str = "SUBTASK-FG: run echo from the subagent";
    let (model, env) = ctx.fake("subagent_foreground").await?;
    let mut host = start(&ctx, &env).await?;
    host.send_user("please spawn a foreground agent")?;
    let turn = json_of(&host.until_result(STEP).await?);

    let (started_at, started) = systems(&turn, "task_started")
        .into_iter()
        .next()
        .ok_or_else(|| Failure::new("no task_started for the subagent"))?;
    ensure!(
        started["task_type"] == "local_agent"
            && started["is_backgrounded"] == false
            && started["tool_use_id"] == AGENT
            && started["subagent_type"] == "general-purpose"
            && started["prompt"] == PROMPT
            && started["spawn_depth"] == 1,
        "task_started: {started}"
    );
    let agent_id = started["task_id"].as_str().unwrap_or_default().to_owned();
    let nested = check_nested(&turn, AGENT, &agent_id, "Echo in subagent")?;
    // In the foreground the subagent's prompt is sent as its first nested line.
    ensure!(
        turn[nested[0]]["type"] == "user"
            && content_text(&turn[nested[0]]["message"]["content"]) == PROMPT
            && started_at < nested[0],
        "the first nested line is not the subagent's prompt: {}",
        turn[nested[0]]
    );
    // Its final text is not forwarded (no --forward-subagent-text).
    ensure!(
        !nested
            .iter()
            .any(|&i| content_text(&turn[i]["message"]["content"]).contains("DONE-FG")),
        "the subagent's final text was forwarded"
    );
    let progress = systems(&turn, "task_progress");
    ensure!(
        progress
            .iter()
            .any(|(_, v)| v["task_id"] == agent_id.as_str() && v["last_tool_name"] == "Bash"),
        "no task_progress naming Bash: {:?}",
        progress.iter().map(|(_, v)| v).collect::<Vec<_>>()
    );
    let sub_call = nested
        .iter()
        .copied()
        .find(|&i| {
            turn[i]["type"] == "assistant"
                && turn[i]["message"]["content"][0]["id"] == "toolu_sub_fg_bash"
        })
        .ok_or_else(|| Failure::new("no nested assistant line with the subagent's Bash call"))?;
    let (sub_result_at, _, sub_block) = tool_result_for(&turn, "toolu_sub_fg_bash")
        .ok_or_else(|| Failure::new("no nested tool_result for the subagent's Bash"))?;
    ensure!(
        nested.contains(&sub_result_at) && sub_block["content"] == "from-sub",
        "the subagent's tool_result: {}",
        turn[sub_result_at]
    );
    ensure!(
        started_at < sub_call && sub_call < sub_result_at,
        "expected task_started, nested tool call, nested tool result in this order"
    );
    let (notified_at, notified) = systems(&turn, "task_notification")
        .into_iter()
        .next()
        .ok_or_else(|| Failure::new("no task_notification for the subagent"))?;
    ensure!(
        notified["task_id"] == agent_id.as_str()
            && notified["tool_use_id"] == AGENT
            && notified["status"] == "completed"
            && notified["summary"] == "Subagent report: DONE-FG"
            && notified["usage"]["tool_uses"] == 1,
        "task_notification: {notified}"
    );
    let (updated_at, updated) = systems(&turn, "task_updated")
        .into_iter()
        .next()
        .ok_or_else(|| Failure::new("no task_updated for the subagent"))?;
    ensure!(
        updated["task_id"] == agent_id.as_str()
            && updated["patch"]["status"] == "completed"
            && updated_at < notified_at,
        "task_updated: {updated}"
    );
    let (agent_result_at, agent_line, agent_block) = tool_result_for(&turn, AGENT)
        .ok_or_else(|| Failure::new("no top-level tool_result for the Agent call"))?;
    ensure!(
        sub_result_at < notified_at && notified_at < agent_result_at,
        "expected nested lines, task_notification, Agent tool_result in this order"
    );
    ensure!(
        agent_line["parent_tool_use_id"].is_null()
            && agent_line.get("agent_id").is_none()
            && content_text(&agent_block["content"]).contains("DONE-FG"),
        "the Agent tool_result: {agent_line}"
    );
    let output = &agent_line["tool_use_result"];
    ensure!(
        output["status"] == "completed"
            && output["agentId"] == agent_id.as_str()
            && output["prompt"] == PROMPT
            && output["totalToolUseCount"] == 1,
        "the Agent tool_use_result: {output}"
    );
    let result = only_result(&turn)?;
    ensure!(
        result["subtype"] == "success"
            && result["result"] == "Main agent got the report."
            && result["subagent_stats"]["spawned"] == 1
            && result["subagent_stats"]["completed"] == 1,
        "the result: {}",
        brief(result)
    );

    let requests = model.message_requests();
    ensure!(
        requests.len() == 4,
        "expected 4 API requests (2 parent, 2 subagent), got {}",
        requests.len()
    );
    ensure!(
        requests[1]
            .last_user_text()
            .is_some_and(|t| t.contains(PROMPT))
            && !requests[1].tool_names().is_empty(),
        "the subagent's first API request: last user text {:?}",
        requests[1].last_user_text()
    );
    ensure!(
        requests[3]
            .tool_results()
            .iter()
            .any(|t| t.contains("DONE-FG")),
        "the parent's second API request lacks the subagent's report: {:?}",
        requests[3].tool_results()
    );
    let exit = finish(host, &model).await?;
    Ok(vec![recording(&exit)])
}

/// The model calls `Agent` with `run_in_background: true`: the tool_result comes back at once
/// (`async_launched`), the parent turn ends, the subagent finishes and the CLI starts a
/// notification turn whose result has `origin.kind == "task-notification"` (§7).
async fn subagent_background(ctx: Ctx) -> Outcome {
    const AGENT: &str = "toolu_agent_bg";
    const PROMPT: &str = "SUBTASK-BG: run echo from the subagent";
    let (model, env) = ctx.fake("subagent_background").await?;
    let mut host = start(&ctx, &env).await?;
    host.send_user("please spawn a background agent")?;
    let all = json_of(&host.until(STEP, is_notification_result).await?);

    let (launched_at, launched, _) = tool_result_for(&all, AGENT)
        .ok_or_else(|| Failure::new("no tool_result for the Agent call"))?;
    let output = &launched["tool_use_result"];
    ensure!(
        output["status"] == "async_launched" && output["isAsync"] == true,
        "the Agent tool_use_result: {output}"
    );
    let agent_id = output["agentId"].as_str().unwrap_or_default().to_owned();
    let results = results_of(&all);
    ensure!(
        results.len() == 2,
        "expected 2 results, got {}",
        results.len()
    );
    let parent_result_at = position(&all, |v| v["type"] == "result").unwrap_or(0);
    ensure!(
        launched_at < parent_result_at
            && results[0]["result"] == "The agent runs in the background."
            && results[0].get("origin").is_none(),
        "the parent turn's result: {}",
        brief(results[0])
    );
    let (_, started) = systems(&all, "task_started")
        .into_iter()
        .next()
        .ok_or_else(|| Failure::new("no task_started for the subagent"))?;
    ensure!(
        started["task_type"] == "local_agent"
            && started["is_backgrounded"] == true
            && started["tool_use_id"] == AGENT
            && started["task_id"] == agent_id.as_str(),
        "task_started: {started}"
    );
    let nested = check_nested(&all, AGENT, &agent_id, "Echo in background subagent")?;
    let (sub_result_at, _, sub_block) = tool_result_for(&all, "toolu_sub_bg_bash")
        .ok_or_else(|| Failure::new("no nested tool_result for the subagent's Bash"))?;
    ensure!(
        nested.contains(&sub_result_at) && sub_block["content"] == "from-bg-sub",
        "the subagent's tool_result: {}",
        all[sub_result_at]
    );
    let (notified_at, notified) = systems(&all, "task_notification")
        .into_iter()
        .next()
        .ok_or_else(|| Failure::new("no task_notification for the subagent"))?;
    ensure!(
        notified["task_id"] == agent_id.as_str()
            && notified["tool_use_id"] == AGENT
            && notified["status"] == "completed"
            && notified["summary"] == "Subagent report: DONE-BG"
            && notified["summary_is_report"] == true,
        "task_notification: {notified}"
    );
    // In the background the subagent's final text is sent as a nested line.
    ensure!(
        nested.iter().any(|&i| all[i]["type"] == "assistant"
            && content_text(&all[i]["message"]["content"]) == "Subagent report: DONE-BG"),
        "the background subagent's final text was not sent"
    );
    let changes = systems(&all, "background_tasks_changed");
    ensure!(
        changes.len() == 2
            && changes[0].1["tasks"][0]["task_id"] == agent_id.as_str()
            && changes[0].1["tasks"][0]["task_type"] == "local_agent"
            && changes[1].1["tasks"] == serde_json::json!([])
            && notified_at < changes[1].0,
        "background_tasks_changed: {:?}",
        changes.iter().map(|(_, v)| &v["tasks"]).collect::<Vec<_>>()
    );
    let inits: Vec<usize> = systems(&all, "init").into_iter().map(|(i, _)| i).collect();
    let notification_result_at = all.len() - 1;
    ensure!(
        inits.len() == 2 && sub_result_at < notified_at && notified_at < inits[1],
        "expected the subagent's lines, task_notification, then a second system/init"
    );
    ensure!(
        results[1]["origin"]["kind"] == "task-notification"
            && results[1]["origin"]["runId"] == started["run_id"]
            && results[1]["result"] == "The background agent reported DONE-BG."
            && notification_result_at > inits[1],
        "the notification turn's result: {}",
        brief(results[1])
    );

    let requests = model.message_requests();
    ensure!(
        requests.len() == 5,
        "expected 5 API requests (3 parent, 2 subagent), got {}",
        requests.len()
    );
    ensure!(
        requests
            .iter()
            .any(|r| r.last_user_text().is_some_and(|t| t.contains(PROMPT))),
        "no API request with the subagent's prompt"
    );
    // The notification is a `<system-reminder>` block of the last user message.
    let injected = requests
        .last()
        .map(|r| last_user_text_all(r.messages()))
        .unwrap_or_default();
    ensure!(
        injected.contains("<task-notification>") && injected.contains(&agent_id),
        "the notification turn's last user message: {injected}"
    );
    let exit = finish(host, &model).await?;
    Ok(vec![recording(&exit)])
}
