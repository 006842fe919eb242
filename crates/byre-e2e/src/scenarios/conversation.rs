//! Conversation scenarios: text turns, tools, hooks, images, queued messages, bad input.

use std::time::Duration;

use byre_proto::{CliMessage, InitializeRequest, ResultSubtype};
use byre_testkit::{base_args, Host, HostOptions};

use crate::{ensure, Ctx, Failure, Outcome, Recording, Scenario};

const STEP: Duration = Duration::from_secs(30);

pub(crate) fn all() -> Vec<Scenario> {
    vec![Scenario {
        name: "text_two_turns",
        run: |ctx| Box::pin(text_two_turns(ctx)),
    }]
}

/// Two text turns in one process: two results, one session id, and the API sees the first
/// turn when answering the second.
async fn text_two_turns(ctx: Ctx) -> Outcome {
    let (model, env) = ctx.fake("text_two_turns").await?;
    let options = HostOptions::new(&ctx.bin, &env).args(base_args());
    let mut host = Host::spawn(options).await.map_err(Failure::from_error)?;
    host.initialize(InitializeRequest::default(), STEP)
        .await
        .map_err(Failure::from_error)?;

    host.send_user("first question")
        .await
        .map_err(Failure::from_error)?;
    let first = host.until_result(STEP).await.map_err(Failure::from_error)?;
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

    host.send_user("second question")
        .await
        .map_err(Failure::from_error)?;
    let second = host.until_result(STEP).await.map_err(Failure::from_error)?;
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

    let exit = host.wait(STEP).await.map_err(Failure::from_error)?;
    ensure!(
        exit.status.success(),
        "exit status {:?}; stderr: {}",
        exit.status,
        exit.stderr
    );
    Ok(vec![Recording {
        lines: exit.transcript,
    }])
}

/// The last `result` of a turn's messages.
pub(crate) fn last_result(messages: &[CliMessage]) -> Result<&byre_proto::ResultMessage, Failure> {
    messages
        .iter()
        .rev()
        .find_map(|m| match m {
            CliMessage::Result(r) => Some(&**r),
            _ => None,
        })
        .ok_or_else(|| Failure::new("the turn ended without a result"))
}
