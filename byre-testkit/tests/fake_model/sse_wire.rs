//! The SSE and JSON bytes match the Messages API format byte for byte.

use byre_testkit::sse::{self, AssistantMessage};
use byre_testkit::{Block, FakeModel, Match, Reply, Rule, Script, Usage};
use serde_json::{json, Value};

use crate::client::{self, cli_body, first_turn};
use crate::testdata;

fn usage(input_tokens: u64, output_tokens: u64) -> Usage {
    Usage {
        input_tokens,
        output_tokens,
        ..Usage::default()
    }
}

fn text_message() -> AssistantMessage {
    AssistantMessage {
        id: "msg_fixture_text".into(),
        model: "claude-opus-5-5".into(),
        blocks: vec![Block::text("Hello from the fake model.")],
        stop_reason: "end_turn".into(),
        usage: usage(25, 8),
    }
}

fn tool_message() -> AssistantMessage {
    AssistantMessage {
        id: "msg_fixture_tool".into(),
        model: "claude-opus-5-5".into(),
        blocks: vec![
            Block::text("I'll run it."),
            Block::tool_use_with_id(
                "toolu_fixture01",
                "Bash",
                json!({"command": "echo hi", "description": "Print hi"}),
            ),
        ],
        stop_reason: "tool_use".into(),
        usage: usage(40, 20),
    }
}

fn fixture(name: &str) -> String {
    std::fs::read_to_string(testdata(&format!("sse/{name}"))).expect("fixture exists")
}

#[test]
fn text_reply_matches_fixture() {
    assert_eq!(
        sse::encode_stream(&text_message(), 10),
        fixture("text_reply.sse")
    );
}

#[test]
fn tool_use_reply_matches_fixture() {
    assert_eq!(
        sse::encode_stream(&tool_message(), 16),
        fixture("tool_use_reply.sse")
    );
}

#[tokio::test]
async fn server_streams_fixture_bytes() {
    let script = Script::new()
        .rule(
            Rule::when(Match::request(1)).reply(
                Reply::text("Hello from the fake model.")
                    .message_id("msg_fixture_text")
                    .chunk_size(10)
                    .usage(25, 8),
            ),
        )
        .rule(
            Rule::when(Match::request(2)).reply(
                Reply::text("I'll run it.")
                    .with_block(Block::tool_use_with_id(
                        "toolu_fixture01",
                        "Bash",
                        json!({"command": "echo hi", "description": "Print hi"}),
                    ))
                    .message_id("msg_fixture_tool")
                    .chunk_size(16)
                    .usage(40, 20),
            ),
        );
    let model = FakeModel::start(script).await.unwrap();
    let body = cli_body(first_turn("hello"), true);

    let text = client::messages(&model.base_url(), &body).await;
    assert_eq!(text.status, 200);
    assert_eq!(text.header("content-type"), Some("text/event-stream"));
    assert_eq!(text.text(), fixture("text_reply.sse"));

    let tool = client::messages(&model.base_url(), &body).await;
    assert_eq!(tool.text(), fixture("tool_use_reply.sse"));
    model.shutdown().await;
}

#[tokio::test]
async fn events_come_in_order_and_deltas_reassemble() {
    let input =
        json!({"command": "printf 'héllo wörld'", "timeout": 5000, "nested": {"a": [1, 2, 3]}});
    let reply = Reply::message(vec![
        Block::thinking("Let me think about this carefully."),
        Block::text("Ünïcödé text, split in small pieces."),
        Block::tool_use("Bash", input.clone()),
    ])
    .chunk_size(3);
    let model = FakeModel::start(Script::new().rule(Rule::any().reply(reply)))
        .await
        .unwrap();
    let response = client::messages(&model.base_url(), &cli_body(first_turn("go"), true)).await;
    let events = response.events();
    let names: Vec<&str> = events.iter().map(|(n, _)| n.as_str()).collect();

    assert_eq!(names[..3], ["message_start", "ping", "content_block_start"]);
    assert_eq!(names[names.len() - 2..], ["message_delta", "message_stop"]);
    assert_eq!(names.iter().filter(|n| **n == "ping").count(), 1);
    assert_eq!(
        names
            .iter()
            .filter(|n| **n == "content_block_start")
            .count(),
        3
    );

    let start = &events[0].1["message"];
    assert_eq!(start["model"], "claude-opus-5-5");
    assert_eq!(start["content"], json!([]));
    assert_eq!(start["stop_reason"], Value::Null);
    assert!(start["id"].as_str().unwrap().starts_with("msg_fake"));

    // Reassemble every block from its deltas.
    let mut thinking = String::new();
    let mut signature = String::new();
    let mut text = String::new();
    let mut json_text = String::new();
    let mut tool_start = Value::Null;
    for (name, data) in &events {
        if name == "content_block_start" && data["content_block"]["type"] == "tool_use" {
            tool_start = data["content_block"].clone();
        }
        if name != "content_block_delta" {
            continue;
        }
        let delta = &data["delta"];
        match delta["type"].as_str().unwrap() {
            "thinking_delta" => {
                assert_eq!(data["index"], 0);
                let piece = delta["thinking"].as_str().unwrap();
                assert!(piece.chars().count() <= 3);
                thinking.push_str(piece);
            }
            "signature_delta" => signature.push_str(delta["signature"].as_str().unwrap()),
            "text_delta" => {
                assert_eq!(data["index"], 1);
                let piece = delta["text"].as_str().unwrap();
                assert!(piece.chars().count() <= 3);
                text.push_str(piece);
            }
            "input_json_delta" => {
                assert_eq!(data["index"], 2);
                json_text.push_str(delta["partial_json"].as_str().unwrap());
            }
            other => panic!("unexpected delta {other}"),
        }
    }
    assert_eq!(thinking, "Let me think about this carefully.");
    assert_eq!(signature, "fake-signature");
    assert_eq!(text, "Ünïcödé text, split in small pieces.");
    let parsed: Value = serde_json::from_str(&json_text).unwrap();
    assert_eq!(parsed, input);
    assert_eq!(tool_start["name"], "Bash");
    assert_eq!(tool_start["id"], "toolu_fake0001");
    assert_eq!(tool_start["input"], json!({}));

    let delta = &events[events.len() - 2].1;
    assert_eq!(delta["delta"]["stop_reason"], "tool_use");
    assert_eq!(delta["usage"]["output_tokens"], 10);
    model.shutdown().await;
}

#[test]
fn whole_message_json_has_wire_field_order() {
    let json = sse::message_json(&tool_message());
    assert_eq!(
        json,
        concat!(
            r#"{"id":"msg_fixture_tool","type":"message","role":"assistant","model":"claude-opus-5-5","#,
            r#""content":[{"type":"text","text":"I'll run it."},"#,
            r#"{"type":"tool_use","id":"toolu_fixture01","name":"Bash","input":{"command":"echo hi","description":"Print hi"}}],"#,
            r#""stop_reason":"tool_use","stop_sequence":null,"#,
            r#""usage":{"input_tokens":40,"output_tokens":20,"cache_creation_input_tokens":0,"cache_read_input_tokens":0}}"#
        )
    );
}

#[test]
fn error_and_count_tokens_bodies() {
    assert_eq!(
        sse::error_json("overloaded_error", "Overloaded"),
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#
    );
    assert_eq!(sse::count_tokens_json(42), r#"{"input_tokens":42}"#);
}
