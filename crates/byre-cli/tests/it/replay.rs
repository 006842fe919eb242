//! `byre replay`: transcripts written by `--transcript`, NDJSON from `--output json`, the
//! recorded transcripts of testdata, and files that are neither.

use std::path::PathBuf;

use byre_testkit::{Block, Match, Reply, Rule, Script};
use serde_json::json;

use crate::support::{output, Offline};

fn testdata(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/transcripts/cli-2.1.328")
        .join(name)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_s_transcript_reads_as_the_conversation() {
    let script = Script::new()
        .rule(Rule::when(Match::has_tool_result(true)).reply(Reply::text("It printed hi.")))
        .rule(Rule::any().reply(Reply::message(vec![
            Block::text("Running it."),
            Block::tool_use("Bash", json!({"command": "echo hi"})),
        ])));
    let offline = Offline::start(script).await;
    let transcript = offline.env.home().join("t.jsonl");
    let json = offline.env.home().join("run.ndjson");
    let run = output(
        offline.run(&[
            "--transcript",
            transcript.to_str().unwrap(),
            "--output",
            "json",
            "run echo hi",
        ]),
        None,
    )
    .await;
    assert!(run.status.success(), "{run:?}");
    std::fs::write(&json, &run.stdout).unwrap();

    let replay = output(
        offline.command(&["replay", transcript.to_str().unwrap()]),
        None,
    )
    .await;
    assert!(replay.status.success(), "{replay:?}");
    let lines: Vec<&str> = replay.stdout.lines().filter(|l| !l.is_empty()).collect();
    assert_eq!(lines[0], "you: run echo hi", "{replay:?}");
    assert!(lines[1].starts_with("session "), "{replay:?}");
    assert_eq!(
        &lines[2..6],
        [
            "claude: Running it.",
            "  ▸ Bash echo hi",
            "  ✓ Bash · hi",
            "claude: It printed hi."
        ],
        "{replay:?}"
    );
    assert!(lines[6].starts_with("── done · 2 turns · "), "{replay:?}");

    // The NDJSON of --output json replays the same, without the prompt (it is not a CLI line).
    let from_json = output(offline.command(&["replay", json.to_str().unwrap()]), None).await;
    assert!(from_json.status.success(), "{from_json:?}");
    let json_lines: Vec<&str> = from_json.stdout.lines().filter(|l| !l.is_empty()).collect();
    assert_eq!(json_lines, lines[1..], "{from_json:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recorded_transcripts_show_subagents_hooks_and_interrupts() {
    let offline = Offline::start(Script::new()).await;
    let show = |name: &str| {
        let path = testdata(name);
        offline.command(&["replay", path.to_str().unwrap()])
    };
    let subagent = output(show("subagent_foreground.jsonl"), None).await;
    assert!(subagent.status.success(), "{subagent:?}");
    assert!(subagent.stdout.contains("  ▸ Agent "), "{subagent:?}");
    assert!(
        subagent.stdout.contains("    ▸ Bash "),
        "the subagent's own tool call is nested: {subagent:?}"
    );

    let hook = output(show("stop_hook_block.jsonl"), None).await;
    assert!(hook.status.success(), "{hook:?}");
    assert!(hook.stdout.contains("  ↪ hook Stop"), "{hook:?}");

    let interrupt = output(show("interrupt_during_stream.jsonl"), None).await;
    assert!(interrupt.status.success(), "{interrupt:?}");
    assert!(interrupt.stdout.contains("  [interrupt]"), "{interrupt:?}");
    assert!(
        interrupt
            .stdout
            .contains("── error: error_during_execution (aborted_streaming)"),
        "{interrupt:?}"
    );

    let unknown = output(show("resume_unknown_id.jsonl"), None).await;
    assert!(unknown.status.success(), "{unknown:?}");
    assert!(
        unknown
            .stdout
            .contains("  error: No conversation found with session ID"),
        "{unknown:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_that_is_not_a_transcript_is_an_error_naming_the_line() {
    let offline = Offline::start(Script::new()).await;
    let path = offline.env.home().join("bad.jsonl");
    std::fs::write(
        &path,
        "{\"dir\":\"note\",\"note\":\"hi\"}\n\nnot json at all\n",
    )
    .unwrap();
    let out = output(offline.command(&["replay", path.to_str().unwrap()]), None).await;
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        out.stderr.contains("bad.jsonl: line 3: not JSON"),
        "{out:?}"
    );

    std::fs::write(&path, "{\"hello\":1}\n").unwrap();
    let out = output(offline.command(&["replay", path.to_str().unwrap()]), None).await;
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        out.stderr.contains("line 1: neither a transcript line"),
        "{out:?}"
    );

    let missing = offline.env.home().join("missing.jsonl");
    let out = output(
        offline.command(&["replay", missing.to_str().unwrap()]),
        None,
    )
    .await;
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(out.stderr.contains("missing.jsonl"), "{out:?}");
}
