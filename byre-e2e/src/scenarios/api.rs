//! API-side scenarios: the CLI retries when the Messages API is overloaded.

use byre_proto::{CliMessage, ResultSubtype, SystemMessage};

use crate::support::*;
use crate::{ensure, Ctx, Outcome, Scenario};

pub(crate) fn all() -> Vec<Scenario> {
    vec![Scenario {
        name: "api_retry",
        run: |ctx| Box::pin(api_retry(ctx)),
    }]
}

/// The first API call answers 529 overloaded: the CLI reports `system/api_retry` with the
/// status, calls again, and the turn succeeds.
async fn api_retry(ctx: Ctx) -> Outcome {
    let (model, mut env) = ctx.fake("api_retry").await?;
    // The CLI's own default; byre's test environment turns retrying off.
    env.set_var("CLAUDE_CODE_MAX_RETRIES", "10");
    let mut host = start(&ctx, &env).await?;
    host.send_user("please answer despite the overload")?;
    let turn = host.until_result(STEP).await?;
    let retries: Vec<_> = turn
        .iter()
        .filter_map(|m| match m {
            CliMessage::System(SystemMessage::ApiRetry(r)) => Some(r),
            _ => None,
        })
        .collect();
    ensure!(
        retries.len() == 1,
        "expected one api_retry, got {}",
        retries.len()
    );
    let retry = retries[0];
    ensure!(
        retry.attempt == Some(1),
        "api_retry attempt: {:?}",
        retry.attempt
    );
    ensure!(
        retry.error_status.as_ref().and_then(|s| s.as_u64()) == Some(529),
        "api_retry status: {:?}",
        retry.error_status
    );
    let result = last_result(&turn)?;
    ensure!(
        result.subtype == ResultSubtype::SUCCESS,
        "result: {result:?}"
    );
    ensure!(
        result.result.as_deref() == Some("Answered after a retry."),
        "result text: {:?}",
        result.result
    );
    let requests = model.message_requests();
    ensure!(
        requests.len() == 2,
        "expected 2 API calls, got {}",
        requests.len()
    );
    ensure!(
        requests[0].body == requests[1].body,
        "the retry did not resend the same request"
    );
    let exit = finish(host, &model).await?;
    Ok(vec![recording(&exit)])
}
