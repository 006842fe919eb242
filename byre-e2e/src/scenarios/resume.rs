//! Resume and fork scenarios: `--resume`, `--resume-session-at`, `--fork-session`,
//! `--session-id`, and an unknown session id.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use byre_proto::{CliMessage, ResultSubtype, SystemMessage};
use byre_session::Error;
use serde_json::Value;

use crate::support::*;
use crate::{ensure, Ctx, Failure, Outcome, Scenario};

pub(crate) fn all() -> Vec<Scenario> {
    vec![
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

/// Process A runs two turns; B resumes A (same id, the API sees A's turns); C forks A after
/// its first answer into a new id from another directory (the API sees only the first turn)
/// and leaves A's session file untouched.
async fn resume_and_fork(ctx: Ctx) -> Outcome {
    let (model, env) = ctx.fake("resume_and_fork").await?;

    // A: two turns.
    let mut a = SessionHost::start(cli_options(&ctx, &env), &env).await?;
    a.send_user("please remember the word apple")?;
    let turn1 = a.until_result(STEP).await?;
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
    let exit_a = finish(a, &model).await?;
    let a_file = find_file(
        &env.home().join(".claude/projects"),
        &format!("{session}.jsonl"),
    )
    .ok_or_else(|| Failure::new(format!("no session file {session}.jsonl under HOME")))?;

    // B: resume A (`--resume=<id>`).
    let mut b = SessionHost::start(cli_options(&ctx, &env).resume(&session), &env).await?;
    b.send_user("which word did I say")?;
    let turn_b = b.until_result(STEP).await?;
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
    let exit_b = finish(b, &model).await?;
    let a_before_fork =
        std::fs::read(&a_file).map_err(|e| Failure::new(format!("{}: {e}", a_file.display())))?;

    // C: fork A after its first answer, into a new id, from another directory
    // (`--resume=<id> --resume-session-at=<uuid> --fork-session --session-id=<new id>`).
    let env_c = env.with_fresh_cwd().map_err(Failure::from_error)?;
    let (options_c, fork_id) = cli_options(&ctx, &env_c).fork(&session, &first_answer, env_c.cwd());
    ensure!(
        fork_id != session,
        "the fork's new session id is A's: {fork_id}"
    );
    let mut c = SessionHost::start(options_c, &env_c).await?;
    c.send_user("a question in the fork")?;
    let turn_c = c.until_result(STEP).await?;
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
    let exit_c = finish(c, &model).await?;

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
    let missing = byre_session::new_session_id();
    let started = Instant::now();
    let mut host = SessionHost::spawn(cli_options(&ctx, &env).resume(&missing), &env).await?;
    let answer = host.initialize().await;
    let took = started.elapsed();
    ensure!(
        matches!(&answer, Err(Error::UnknownSession { session_id, .. }) if *session_id == missing),
        "initialize did not fail as an unknown session: {answer:?}"
    );
    ensure!(
        took < Duration::from_secs(10),
        "initialize took {took:?} to fail"
    );

    let exit = host.wait(STEP).await?;
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
            .any(|m| matches!(m, CliMessage::ControlResponse(_)))
            && !exit
                .transcript
                .iter()
                .any(|l| l.is_recv() && l.msg().is_some_and(|m| m["type"] == "control_response")),
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
