//! JSON scripts: the example scenario file, round trips, builder equivalence, strictness.

use std::time::Duration;

use byre_testkit::{Block, FakeModel, Match, Reply, Rule, Script, ScriptError};
use serde_json::json;

use crate::client::{self, after_tool, cli_body, first_turn};
use crate::testdata;

fn example() -> Script {
    Script::from_file(testdata("scenarios/example.json")).expect("example script loads")
}

#[test]
fn example_round_trips_through_json() {
    let script = example();
    assert_eq!(script.rules.len(), 7);
    assert_eq!(Script::from_json(&script.to_json()).unwrap(), script);
}

#[test]
fn builder_and_json_agree() {
    let built = Script::new()
        .description("two rules")
        .rule(
            Rule::when(Match::user_text_contains("run").and(Match::tool_offered("Bash")))
                .reply(
                    Reply::text("I'll run it.")
                        .with_block(Block::tool_use("Bash", json!({"command": "ls"})))
                        .chunk_size(4),
                )
                .times(1),
        )
        .rule(Rule::any().reply(Reply::overloaded().delay_ms(5)));
    let parsed = Script::from_json(
        r#"{
            "description": "two rules",
            "rules": [
                {"when": {"user_text_contains": "run", "tool_offered": "Bash"}, "times": 1,
                 "reply": {"type": "message", "chunk_size": 4, "blocks": [
                    {"type": "text", "text": "I'll run it."},
                    {"type": "tool_use", "name": "Bash", "input": {"command": "ls"}}]}},
                {"reply": {"type": "error", "status": 529, "kind": "overloaded_error",
                           "message": "Overloaded", "delay_ms": 5}}
            ]
        }"#,
    )
    .unwrap();
    assert_eq!(built, parsed);
}

#[test]
fn unknown_fields_and_bad_files_are_errors() {
    let typo =
        Script::from_json(r#"{"rules": [{"when": {"user_txt": "x"}, "reply": {"type": "hang"}}]}"#);
    assert!(
        matches!(typo, Err(ScriptError::Parse { path: None, .. })),
        "{typo:?}"
    );
    let bad_block = Script::from_json(
        r#"{"rules": [{"reply": {"type": "message", "blocks": [{"type": "text", "txt": "x"}]}}]}"#,
    );
    assert!(bad_block.is_err());
    let bad_reply =
        Script::from_json(r#"{"rules": [{"reply": {"type": "message", "colour": 1}}]}"#);
    assert!(bad_reply.is_err());
    let missing = Script::from_file(testdata("scenarios/does-not-exist.json"));
    assert!(matches!(missing, Err(ScriptError::Read { .. })));
    assert!(missing
        .unwrap_err()
        .to_string()
        .contains("does-not-exist.json"));
    let hang_before =
        Script::from_json(r#"{"rules": [{"reply": {"type": "hang_before_headers"}}]}"#).unwrap();
    assert_eq!(hang_before.rules[0].reply, Reply::hang_before_headers());
}

#[tokio::test]
async fn example_script_drives_a_tool_turn() {
    let model = FakeModel::start(example()).await.unwrap();
    let base = model.base_url();

    // The set_model probe.
    let probe = json!({"model": "claude-opus-5-5", "max_tokens": 1,
                       "messages": [{"role": "user", "content": "Hi"}]});
    let hi = client::messages(&base, &probe).await.json();
    assert_eq!(hi["content"][0]["text"], "Hi");
    assert_eq!(hi["usage"]["output_tokens"], 1);

    // The tool call: thinking, text, tool_use.
    let call = client::messages(&base, &cli_body(first_turn("please run echo hi"), true)).await;
    let events = call.events();
    let blocks: Vec<_> = events
        .iter()
        .filter(|(n, _)| n == "content_block_start")
        .map(|(_, d)| d["content_block"]["type"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(blocks, ["thinking", "text", "tool_use"]);
    let json_text: String = events
        .iter()
        .filter(|(_, d)| d["delta"]["type"] == "input_json_delta")
        .map(|(_, d)| {
            let piece = d["delta"]["partial_json"].as_str().unwrap();
            assert!(piece.chars().count() <= 8);
            piece.to_string()
        })
        .collect();
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&json_text).unwrap(),
        json!({"command": "echo hi", "description": "Print hi"})
    );

    // times: 1, so asking again falls through to the default rule.
    let again = client::messages(&base, &cli_body(first_turn("please run echo hi"), true)).await;
    assert!(again.streamed_text() == "Done.");

    // The follow-up after the tool ran.
    let follow = client::messages(
        &base,
        &cli_body(after_tool("please run echo hi", "hi\n"), true),
    )
    .await;
    assert!(follow.streamed_text() == "The command printed: hi");

    // Two 529s, then recovery.
    let body = cli_body(first_turn("overload me"), true);
    assert_eq!(client::messages(&base, &body).await.status, 529);
    assert_eq!(client::messages(&base, &body).await.status, 529);
    assert!(client::messages(&base, &body).await.streamed_text() == "Recovered after two 529s.");

    let rules: Vec<_> = model
        .wait_for_requests(7, Duration::from_secs(1))
        .await
        .unwrap()
        .iter()
        .map(|r| r.rule)
        .collect();
    assert_eq!(
        rules,
        [
            Some(0),
            Some(1),
            Some(6),
            Some(2),
            Some(3),
            Some(3),
            Some(4)
        ]
    );
    assert!(model.unmatched().is_empty());
    model.shutdown().await;
}
