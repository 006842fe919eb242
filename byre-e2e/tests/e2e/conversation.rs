//! Conversation scenarios, and checks on what their recordings keep: each line the CLI wrote,
//! byte for byte, in its own key order.

use byre_e2e::Recording;
use byre_testkit::{TranscriptDir, TranscriptKind};

use crate::check;

/// Runs the scenario and checks what every recording of it must hold; returns the single
/// recording.
async fn recorded(name: &str) -> Recording {
    let mut recordings = check(name).await;
    assert_eq!(recordings.len(), 1, "{name}: one CLI process");
    let recording = recordings.remove(0);
    check_lines(name, &recording);
    recording
}

/// Every message line is valid JSON kept as its exact text; the file line wraps that text;
/// `result` lines keep the CLI's key order (`type` in the middle).
fn check_lines(name: &str, recording: &Recording) {
    let mut results = 0;
    for line in &recording.lines {
        let written = line.to_json();
        let back: serde_json::Value =
            serde_json::from_str(&written).unwrap_or_else(|e| panic!("{name}: {written}: {e}"));
        assert_eq!(back, line.to_value(), "{name}: {written}");
        if line.kind != TranscriptKind::Msg {
            continue;
        }
        assert!(
            written.ends_with(&format!(",\"msg\":{}}}", line.raw)),
            "{name}: the file line does not hold the exact text: {written}"
        );
        let keys = top_level_keys(&line.raw);
        if line.dir == TranscriptDir::Recv && keys.contains(&"type".to_owned()) {
            let msg = line.msg().expect("a message");
            if msg["type"] == "result" {
                results += 1;
                let at = keys.iter().position(|k| k == "type").unwrap();
                assert_eq!(
                    keys[0], "duration_api_ms",
                    "{name}: the result's first key: {keys:?}"
                );
                assert!(
                    at > 10,
                    "{name}: `type` is key {at} of a result, expected the middle: {keys:?}"
                );
            }
        }
        if line.dir == TranscriptDir::Send {
            assert_eq!(keys[0], "type", "{name}: sent lines start with `type`");
        }
    }
    assert!(results > 0, "{name}: no result line recorded");
}

/// The top-level keys of a JSON object, in the order of the text.
fn top_level_keys(raw: &str) -> Vec<String> {
    /// Parses one JSON value at the start of `text`: the value and the bytes it took.
    fn one(text: &str) -> (serde_json::Value, usize) {
        let mut values = serde_json::Deserializer::from_str(text).into_iter();
        let value = values
            .next()
            .and_then(Result::ok)
            .unwrap_or_else(|| panic!("not JSON at: {text}"));
        (value, values.byte_offset())
    }
    let mut keys = Vec::new();
    let mut text = raw.trim_start().strip_prefix('{').expect("an object");
    loop {
        text = text.trim_start();
        if let Some(after) = text.strip_prefix('}') {
            assert!(
                after.trim().is_empty(),
                "trailing text after the object: {after}"
            );
            return keys;
        }
        let (key, used) = one(text);
        keys.push(key.as_str().expect("a string key").to_owned());
        text = text[used..]
            .trim_start()
            .strip_prefix(':')
            .expect("a colon");
        let (_, used) = one(text.trim_start());
        text = text.trim_start()[used..].trim_start();
        text = text.strip_prefix(',').unwrap_or(text);
    }
}

/// The exact text of the first received line that contains `needle`.
fn recv_containing<'a>(recording: &'a Recording, needle: &str) -> &'a str {
    recording
        .lines
        .iter()
        .find(|l| l.is_recv() && l.raw.contains(needle))
        .map(|l| l.raw.as_str())
        .unwrap_or_else(|| panic!("no received line contains {needle}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_two_turns() {
    let recording = recorded("text_two_turns").await;
    let results: Vec<_> = recording
        .lines
        .iter()
        .filter(|l| l.is_recv() && l.msg().is_some_and(|m| m["type"] == "result"))
        .collect();
    assert_eq!(results.len(), 2);
    for result in results {
        assert!(
            result.raw.starts_with("{\"duration_api_ms\":"),
            "{}",
            result.raw
        );
        assert!(
            result.raw.contains(",\"type\":\"result\","),
            "{}",
            result.raw
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bash_tool() {
    let recording = recorded("bash_tool").await;
    // A successful Bash tool_result block has its own key order.
    recv_containing(
        &recording,
        r#"{"tool_use_id":"toolu_bash_hi","type":"tool_result","content":"hi","is_error":false}"#,
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bash_background() {
    let recording = recorded("bash_background").await;
    let origin = recv_containing(&recording, "\"origin\":{\"kind\":\"task-notification\"");
    assert!(origin.contains("\"producer\":\"session-task\""), "{origin}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_hook_block() {
    let recording = recorded("stop_hook_block").await;
    // The hook's reason comes back in a synthetic user line (the CLI's wording around it
    // differs between versions).
    let feedback = recording
        .lines
        .iter()
        .find(|l| {
            l.is_recv() && l.raw.starts_with("{\"type\":\"user\"") && l.raw.contains("keep going")
        })
        .map(|l| l.raw.as_str())
        .expect("a user line with the Stop hook's reason");
    assert!(feedback.contains("\"isSynthetic\":true"), "{feedback}");
    // The host's two answers: block, then no opinion.
    let answers: Vec<_> = recording
        .lines
        .iter()
        .filter(|l| l.is_send() && l.raw.starts_with("{\"type\":\"control_response\""))
        .map(|l| l.msg().unwrap()["response"]["response"].clone())
        .collect();
    assert_eq!(
        answers,
        [
            serde_json::json!({"decision": "block", "reason": "keep going"}),
            serde_json::json!({}),
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pretooluse_deny() {
    let recording = recorded("pretooluse_deny").await;
    // An error tool_result block puts `type` first and `tool_use_id` last.
    recv_containing(
        &recording,
        r#"{"type":"tool_result","content":"PreToolUse:Bash hook error: Bash is blocked by the host","is_error":true,"tool_use_id":"toolu_denied"}"#,
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn image_turn() {
    let recording = recorded("image_turn").await;
    let sent = recording
        .lines
        .iter()
        .find(|l| l.is_send() && l.raw.contains("\"type\":\"image\""))
        .expect("the image prompt is recorded");
    let msg = sent.msg().unwrap();
    assert_eq!(msg["message"]["content"][0]["type"], "image");
    assert_eq!(msg["message"]["content"][1]["type"], "text");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queued_with_uuids() {
    let recording = recorded("queued_with_uuids").await;
    let lifecycle = recording
        .lines
        .iter()
        .filter(|l| l.is_recv() && l.raw.starts_with("{\"type\":\"command_lifecycle\""))
        .count();
    assert_eq!(lifecycle, 9, "three states for each of three messages");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdin_closed_mid_turn() {
    let recording = recorded("stdin_closed_mid_turn").await;
    let notes: Vec<&str> = recording.lines.iter().filter_map(|l| l.note()).collect();
    assert!(notes.contains(&"stdin closed"), "{notes:?}");
    assert_eq!(notes.last(), Some(&"exited: exit status: 0"), "{notes:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_stdin_line() {
    let recording = recorded("malformed_stdin_line").await;
    let raw = recording
        .lines
        .iter()
        .find(|l| l.kind == TranscriptKind::Raw)
        .expect("the malformed line is recorded");
    assert_eq!(raw.dir, TranscriptDir::Send);
    assert!(raw.msg().is_none());
    let notes: Vec<&str> = recording.lines.iter().filter_map(|l| l.note()).collect();
    assert!(notes.contains(&"exited: exit status: 1"), "{notes:?}");
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("stderr: Error parsing streaming input line")),
        "{notes:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subagent_foreground() {
    let recording = recorded("subagent_foreground").await;
    // Nested lines put `agent_id` right after `parent_tool_use_id`.
    let nested = recv_containing(&recording, "\"parent_tool_use_id\":\"toolu_agent_fg\"");
    assert!(
        nested.contains("\"parent_tool_use_id\":\"toolu_agent_fg\",\"agent_id\":\""),
        "{nested}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subagent_background() {
    let recording = recorded("subagent_background").await;
    let launched = recv_containing(&recording, "\"status\":\"async_launched\"");
    assert!(launched.contains("\"isAsync\":true"), "{launched}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_retry() {
    let recording = recorded("api_retry").await;
    assert!(recording
        .received()
        .iter()
        .any(|m| m.get("subtype").and_then(|s| s.as_str()) == Some("api_retry")));
}
