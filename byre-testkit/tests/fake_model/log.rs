//! The request log and waiting for requests.

use std::time::Duration;

use byre_testkit::{FakeModel, FakeModelError, Match, Reply, Rule, Script};
use serde_json::json;

use crate::client::{self, cli_body, first_turn};

#[tokio::test]
async fn log_records_headers_body_rule_and_stream() {
    let script = Script::new()
        .rule(Rule::when(Match::user_text_equals("nope")).reply(Reply::text("no")))
        .rule(Rule::any().reply(Reply::text("yes")));
    let model = FakeModel::start(script).await.unwrap();
    let body = cli_body(first_turn("log me"), true);
    let response = client::request(
        &model.base_url(),
        "POST",
        "/v1/messages?beta=true",
        body.to_string().as_bytes(),
        &[
            ("User-Agent", "claude-cli/2.1.328 (external, sdk-cli)"),
            (
                "anthropic-beta",
                "claude-code-20250219,interleaved-thinking-2025-05-14",
            ),
            (
                "X-Claude-Code-Session-Id",
                "0f0e0d0c-aaaa-bbbb-cccc-000000000001",
            ),
            ("x-api-key", "sk-ant-fake-test-key"),
        ],
    )
    .await;
    assert_eq!(response.status, 200);

    let log = model.requests();
    assert_eq!(log.len(), 1);
    let r = &log[0];
    assert_eq!(r.seq, 1);
    assert_eq!(r.number, Some(1));
    assert_eq!(r.method, "POST");
    assert_eq!(r.path, "/v1/messages?beta=true");
    assert_eq!(r.rule, Some(1));
    assert!(r.stream);
    assert_eq!(r.body, body);
    assert_eq!(r.model(), Some("claude-opus-5-5"));
    assert_eq!(r.messages().len(), 2);
    assert_eq!(r.messages()[1]["role"], "system");
    assert_eq!(r.last_user_text().as_deref(), Some("log me"));
    assert_eq!(r.tool_names(), ["Bash", "Read"]);
    assert!(!r.has_tool_result());
    assert_eq!(r.session_id(), Some("0f0e0d0c-aaaa-bbbb-cccc-000000000001"));
    assert_eq!(
        r.header("user-agent"),
        Some("claude-cli/2.1.328 (external, sdk-cli)")
    );
    assert_eq!(
        r.header("Anthropic-Beta"),
        Some("claude-code-20250219,interleaved-thinking-2025-05-14")
    );
    assert_eq!(r.header("x-api-key"), Some("<redacted>"));
    model.shutdown().await;
}

#[tokio::test]
async fn wait_for_requests_returns_when_they_arrive_or_times_out() {
    let model = FakeModel::start(Script::new().rule(Rule::any().reply(Reply::text("ok"))))
        .await
        .unwrap();
    let base = model.base_url();
    let sender = tokio::spawn(async move {
        for text in ["one", "two"] {
            tokio::time::sleep(Duration::from_millis(20)).await;
            client::messages(&base, &cli_body(first_turn(text), true)).await;
        }
    });
    let got = model
        .wait_for_requests(2, Duration::from_secs(3))
        .await
        .unwrap();
    assert_eq!(got.len(), 2);
    assert_eq!(got[1].last_user_text().as_deref(), Some("two"));
    sender.await.unwrap();

    // count_tokens does not count towards the wait.
    let body = json!({"model": "m", "messages": []});
    client::post(&model.base_url(), "/v1/messages/count_tokens", &body).await;
    match model.wait_for_requests(3, Duration::from_millis(100)).await {
        Err(FakeModelError::Timeout { wanted, got }) => {
            assert_eq!((wanted, got), (3, 2));
        }
        other => panic!("expected a timeout, got {other:?}"),
    }
    assert_eq!(model.requests().len(), 3);
    model.shutdown().await;
}
