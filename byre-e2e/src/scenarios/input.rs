//! Input scenarios: what the host writes on stdin besides one prompt at a time: messages
//! queued with uuids while a turn runs, stdin closed mid-turn, and a malformed line.
//!
//! Each scenario checks what CLI 2.1.328 was observed to do, looking at the messages as JSON
//! values (by key, never by position), at what the fake model received, and at how the process
//! ended.

use byre_proto::{CliMessage, UserMessage};
use byre_testkit::{TranscriptDir, TranscriptKind, TranscriptLine};

use crate::support::*;
use crate::{ensure, Ctx, Outcome, Recording, Scenario};

pub(crate) fn all() -> Vec<Scenario> {
    vec![
        Scenario {
            name: "queued_with_uuids",
            run: |ctx| Box::pin(queued_with_uuids(ctx)),
        },
        Scenario {
            name: "stdin_closed_mid_turn",
            run: |ctx| Box::pin(stdin_closed_mid_turn(ctx)),
        },
        Scenario {
            name: "malformed_stdin_line",
            run: |ctx| Box::pin(malformed_stdin_line(ctx)),
        },
    ]
}

/// A message with a uuid, then two more sent while its slow turn runs: command_lifecycle
/// for each uuid, the two queued messages merged into one turn, 2 results in all, the second
/// listing both uuids (§4).
async fn queued_with_uuids(ctx: Ctx) -> Outcome {
    const U1: &str = "7c3f0f52-0c1e-4b39-9b7e-000000000001";
    const U2: &str = "7c3f0f52-0c1e-4b39-9b7e-000000000002";
    const U3: &str = "7c3f0f52-0c1e-4b39-9b7e-000000000003";
    let (model, env) = ctx.fake("queued_with_uuids").await?;
    let mut host = start(&ctx, &env).await?;
    let user = |text: &str, uuid: &str| UserMessage::prompt(text).uuid(uuid);
    host.send(user("first message", U1))?;
    // The first turn is running once its lifecycle says `started`; its reply takes 1.5 s.
    let mut seen = host
        .until(STEP, |m| {
            matches!(m, CliMessage::CommandLifecycle(c)
                if c.command_uuid == U1 && c.state.as_str() == "started")
        })
        .await?;
    host.send(user("second message", U2))?;
    host.send(user("third message", U3))?;
    seen.extend(host.until_result(STEP).await?);
    ensure!(
        model.message_requests().len() == 1,
        "the queued messages did not wait for the first turn"
    );
    seen.extend(host.until_result(STEP).await?);
    // `completed` comes after the turn's result: wait for both queued messages'.
    let mut completed = 0;
    seen.extend(
        host.until(STEP, |m| {
            if matches!(m, CliMessage::CommandLifecycle(c)
                if (c.command_uuid == U2 || c.command_uuid == U3)
                    && c.state.as_str() == "completed")
            {
                completed += 1;
            }
            completed == 2
        })
        .await?,
    );
    let all = json_of(&seen);

    for uuid in [U1, U2, U3] {
        let states: Vec<&str> = all
            .iter()
            .filter(|v| v["type"] == "command_lifecycle" && v["command_uuid"] == uuid)
            .filter_map(|v| v["state"].as_str())
            .collect();
        ensure!(
            states == ["queued", "started", "completed"],
            "command_lifecycle of {uuid}: {states:?}"
        );
    }
    let results = results_of(&all);
    ensure!(
        results.len() == 2,
        "expected 2 results, got {}",
        results.len()
    );
    ensure!(
        results[0]["result"] == "Reply one." && results[0]["user_message_uuid"] == U1,
        "the first result: {}",
        brief(results[0])
    );
    ensure!(
        results[1]["result"] == "Reply two."
            && results[1]["user_message_uuids"] == serde_json::json!([U2, U3]),
        "the second result: {}",
        brief(results[1])
    );
    let lifecycle_at = |uuid: &str, state: &str| {
        position(&all, |v| {
            v["type"] == "command_lifecycle" && v["command_uuid"] == uuid && v["state"] == state
        })
    };
    let first_result_at = position(&all, |v| v["type"] == "result");
    let second_result_at = all.iter().rposition(|v| v["type"] == "result");
    ensure!(
        lifecycle_at(U2, "queued") < first_result_at
            && lifecycle_at(U3, "queued") < first_result_at
            && first_result_at < lifecycle_at(U2, "started")
            && first_result_at < lifecycle_at(U3, "started"),
        "the second and third messages were not queued behind the first turn"
    );
    ensure!(
        first_result_at < lifecycle_at(U1, "completed")
            && second_result_at < lifecycle_at(U2, "completed")
            && second_result_at < lifecycle_at(U3, "completed"),
        "`completed` came before the turn's result"
    );
    let inits = systems(&all, "init");
    ensure!(
        inits.len() == 2
            && inits[0].1["user_message_uuids"] == serde_json::json!([U1])
            && inits[1].1["user_message_uuids"] == serde_json::json!([U2, U3]),
        "system/init user_message_uuids: {:?}",
        inits
            .iter()
            .map(|(_, v)| &v["user_message_uuids"])
            .collect::<Vec<_>>()
    );

    let requests = model.message_requests();
    ensure!(
        requests.len() == 2,
        "expected 2 API requests (the queued messages merged), got {}",
        requests.len()
    );
    let merged = requests[1].last_user_text().unwrap_or_default();
    ensure!(
        merged.contains("second message") && merged.contains("third message"),
        "the second API request's last user message: {merged:?}"
    );
    let with_second = requests[1]
        .messages()
        .iter()
        .filter(|m| m["role"] == "user" && m.to_string().contains("second message"))
        .count();
    ensure!(
        with_second == 1,
        "\"second message\" is in {with_second} user messages of the second request"
    );
    let exit = finish(host, &model).await?;
    Ok(vec![recording(&exit)])
}

/// stdin is closed right after a prompt whose reply is slow: the turn still runs to its
/// result, then the process exits 0 (§1).
async fn stdin_closed_mid_turn(ctx: Ctx) -> Outcome {
    let (model, env) = ctx.fake("stdin_closed_mid_turn").await?;
    let host = start(&ctx, &env).await?;
    host.send_user("answer slowly please")?;
    host.close_stdin()?;
    let exit = host.wait(STEP).await?;
    ensure!(
        exit.status.code() == Some(0),
        "exit status {:?}; stderr: {}",
        exit.status,
        exit.stderr
    );
    let turn = json_of(&exit.messages);
    let result = only_result(&turn)?;
    ensure!(
        result["subtype"] == "success" && result["result"] == "Slow answer.",
        "the result: {}",
        brief(result)
    );
    ensure!(
        result["duration_ms"]
            .as_f64()
            .is_some_and(|ms| ms >= 1500.0),
        "the turn took {} ms, less than the model's 1.5 s delay",
        result["duration_ms"]
    );
    let closed = exit
        .transcript
        .iter()
        .position(|l| l.note() == Some("stdin closed"));
    let result_line = exit
        .transcript
        .iter()
        .position(|l| l.is_recv() && l.msg().is_some_and(|m| m["type"] == "result"));
    ensure!(
        closed.is_some() && closed < result_line,
        "stdin was not closed before the result arrived"
    );
    ensure!(
        model.message_requests().len() == 1,
        "expected 1 API request, got {}",
        model.message_requests().len()
    );
    no_unmatched(&model)?;
    Ok(vec![recording(&exit)])
}

/// A malformed JSON line after a normal turn: the CLI exits 1 with `Error parsing streaming
/// input line` on stderr and writes no further result (§4).
async fn malformed_stdin_line(ctx: Ctx) -> Outcome {
    let (model, env) = ctx.fake("malformed_stdin_line").await?;
    let mut host = start(&ctx, &env).await?;
    host.send_user("ping")?;
    let turn = json_of(&host.until_result(STEP).await?);
    let result = only_result(&turn)?;
    ensure!(
        result["subtype"] == "success" && result["result"] == "pong",
        "the result: {}",
        brief(result)
    );
    host.send_raw(br#"{"type":"user","message":{"role":"user","content":"oops"}"#)?;
    let exit = host.wait(STEP).await?;
    ensure!(
        exit.status.code() == Some(1),
        "exit status {:?}; stderr: {}",
        exit.status,
        exit.stderr
    );
    // It says why on stderr, in words that are its own.
    ensure!(
        !exit.stderr.trim().is_empty(),
        "the CLI exited on the malformed line without a word on stderr"
    );
    let after = json_of(&exit.messages);
    ensure!(
        results_of(&after).is_empty(),
        "a result came after the malformed line"
    );
    let mut lines = exit.transcript;
    let said = exit
        .stderr
        .lines()
        .find(|l| l.contains("Error parsing streaming input line"))
        .or_else(|| exit.stderr.lines().find(|l| !l.trim().is_empty()))
        .unwrap_or_default();
    lines.push(TranscriptLine {
        dir: TranscriptDir::Note,
        t: lines.last().map_or(0.0, |l| l.t),
        kind: TranscriptKind::Note,
        raw: format!("stderr: {said}"),
    });
    ensure!(
        model.message_requests().len() == 1,
        "expected 1 API request, got {}",
        model.message_requests().len()
    );
    no_unmatched(&model)?;
    Ok(vec![Recording { lines }])
}
