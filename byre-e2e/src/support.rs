//! Everything the scenarios share: the CLI process driven through byre-session
//! ([`session_host`]), starting and finishing a run, the typed views of its messages used by
//! several scenarios, and the JSON-value views ([`json`]: by key, never by position).
//!
//! Every scenario that ends with the CLI exiting 0 ends with [`finish`], which also fails on
//! a late `result` and on an API request that matched no rule of the fake model's script.

mod json;
mod session_host;

use std::time::Duration;

use byre_proto::{
    CliMessage, ContentBlock, MessageContent, ResultMessage, ResultSubtype, ToolResultBlock,
};
use byre_testkit::{ClaudeEnv, FakeModel};

pub(crate) use self::json::*;
pub(crate) use self::session_host::{cli_options, Next, SessionExit, SessionHost, STEP};
use crate::{ensure, Ctx, Failure, Recording};

/// How long "nothing else arrives" is watched.
pub(crate) const QUIET: Duration = Duration::from_millis(1200);
/// The most an answer that must come "at once" may take.
pub(crate) const AT_ONCE: Duration = Duration::from_secs(2);

/// Starts the CLI in `env` with the default options and waits for its initialize answer.
pub(crate) async fn start(ctx: &Ctx, env: &ClaudeEnv) -> Result<SessionHost, Failure> {
    SessionHost::start(cli_options(ctx, env), env).await
}

/// Ends the input and waits: the process must exit 0 with no further result, and every API
/// request must have matched a rule of the script.
pub(crate) async fn finish(host: SessionHost, model: &FakeModel) -> Result<SessionExit, Failure> {
    let exit = host.wait(STEP).await?;
    ensure!(
        exit.status.success(),
        "exit status {:?}; stderr: {}",
        exit.status,
        exit.stderr
    );
    let late = json_of(&exit.messages);
    ensure!(
        results_of(&late).is_empty(),
        "an unexpected result came after the scenario's turns: {}",
        brief(results_of(&late)[0])
    );
    no_unmatched(model)?;
    Ok(exit)
}

/// Fails when an API request matched no rule of the script.
pub(crate) fn no_unmatched(model: &FakeModel) -> Result<(), Failure> {
    let unmatched = model.unmatched();
    ensure!(
        unmatched.is_empty(),
        "{} API request(s) matched no rule; the first one's last user text: {:?}",
        unmatched.len(),
        unmatched[0].last_user_text()
    );
    Ok(())
}

/// The recording of one finished process.
pub(crate) fn recording(exit: &SessionExit) -> Recording {
    Recording {
        lines: exit.transcript.clone(),
    }
}

/// Sends `text` and checks that its turn ends in success; returns that result.
pub(crate) async fn next_turn_succeeds(
    host: &mut SessionHost,
    text: &str,
) -> Result<ResultMessage, Failure> {
    host.send_user(text)?;
    let turn = host.until_result(STEP).await?;
    let result = last_result(&turn)?;
    ensure!(
        result.subtype == ResultSubtype::SUCCESS && result.is_error != Some(true),
        "the turn {text:?} did not succeed: {:?} {:?}",
        result.subtype,
        result.error_text()
    );
    Ok(result.clone())
}

/// The last `result` of a turn's messages.
pub(crate) fn last_result(messages: &[CliMessage]) -> Result<&ResultMessage, Failure> {
    messages
        .iter()
        .rev()
        .find_map(|m| match m {
            CliMessage::Result(r) => Some(&**r),
            _ => None,
        })
        .ok_or_else(|| Failure::new("the turn ended without a result"))
}

/// Whether `message` is the result of a turn the CLI started after a background task.
pub(crate) fn is_notification_result(message: &CliMessage) -> bool {
    matches!(message, CliMessage::Result(r)
        if r.origin.as_ref().is_some_and(|o| o.kind == "task-notification"))
}

/// The index of the first item (a message, or a message as JSON) that satisfies `pred`.
pub(crate) fn position<T>(items: &[T], pred: impl Fn(&T) -> bool) -> Option<usize> {
    items.iter().position(pred)
}

/// Whether `text` holds each of `parts`, in this order.
pub(crate) fn ordered(text: &str, parts: &[&str]) -> bool {
    let mut rest = text;
    parts.iter().all(|part| match rest.find(part) {
        Some(at) => {
            rest = &rest[at + part.len()..];
            true
        }
        None => false,
    })
}

/// The text of each `user` line that has text (index, text).
pub(crate) fn user_texts(messages: &[CliMessage]) -> Vec<(usize, String)> {
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
pub(crate) fn tool_results(messages: &[CliMessage]) -> Vec<(usize, &ToolResultBlock)> {
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
pub(crate) fn block_text(block: &ToolResultBlock) -> String {
    match &block.content {
        Some(content) => content.text(),
        None => String::new(),
    }
}
