//! Error, non-streaming, count_tokens, 404, delay and hang replies.

use std::time::{Duration, Instant};

use byre_testkit::{ErrorReply, FakeModel, Match, Reply, Rule, Script};
use serde_json::json;

use crate::client::{self, cli_body, first_turn};

#[tokio::test]
async fn error_replies_have_status_body_and_retry_after() {
    let script = Script::new()
        .rule(Rule::when(Match::request(1)).reply(Reply::overloaded()))
        .rule(Rule::when(Match::request(2)).reply(Reply::rate_limited()))
        .rule(Rule::when(Match::request(3)).reply(Reply::error(500, "api_error", "Internal boom")))
        .rule(
            Rule::when(Match::request(4)).reply(Reply::Error(ErrorReply {
                status: 503,
                kind: None,
                message: None,
                retry_after: Some(2),
                delay_ms: 0,
            })),
        )
        .rule(Rule::any().reply(Reply::text("recovered")));
    let model = FakeModel::start(script).await.unwrap();
    let body = cli_body(first_turn("hi"), true);

    let overloaded = client::messages(&model.base_url(), &body).await;
    assert_eq!(overloaded.status, 529);
    assert_eq!(overloaded.header("retry-after"), Some("0"));
    assert_eq!(overloaded.header("content-type"), Some("application/json"));
    assert_eq!(
        overloaded.json(),
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    );

    let limited = client::messages(&model.base_url(), &body).await;
    assert_eq!(limited.status, 429);
    assert_eq!(limited.header("retry-after"), Some("0"));
    assert_eq!(limited.json()["error"]["type"], "rate_limit_error");

    let internal = client::messages(&model.base_url(), &body).await;
    assert_eq!(internal.status, 500);
    assert_eq!(internal.header("retry-after"), None);
    assert_eq!(
        internal.text(),
        r#"{"type":"error","error":{"type":"api_error","message":"Internal boom"}}"#
    );

    let unavailable = client::messages(&model.base_url(), &body).await;
    assert_eq!(unavailable.status, 503);
    assert_eq!(unavailable.header("retry-after"), Some("2"));
    assert_eq!(unavailable.json()["error"]["type"], "api_error");

    let ok = client::messages(&model.base_url(), &body).await;
    assert_eq!(ok.status, 200);
    model.shutdown().await;
}

#[tokio::test]
async fn non_streaming_reply_is_one_message() {
    let script = Script::new().rule(
        Rule::any().reply(
            Reply::text("Hi")
                .with_block(byre_testkit::Block::tool_use(
                    "Read",
                    json!({"file_path": "/tmp/x"}),
                ))
                .usage(8, 1),
        ),
    );
    let model = FakeModel::start(script).await.unwrap();
    let probe = json!({"model": "claude-opus-5-5", "max_tokens": 1, "messages": [{"role": "user", "content": "Hi"}]});
    let response = client::messages(&model.base_url(), &probe).await;
    assert_eq!(response.status, 200);
    assert_eq!(response.header("content-type"), Some("application/json"));
    let message = response.json();
    assert_eq!(message["type"], "message");
    assert_eq!(message["role"], "assistant");
    assert_eq!(message["model"], "claude-opus-5-5");
    assert_eq!(message["stop_reason"], "tool_use");
    assert_eq!(message["stop_sequence"], serde_json::Value::Null);
    assert_eq!(
        message["content"],
        json!([
            {"type": "text", "text": "Hi"},
            {"type": "tool_use", "id": "toolu_fake0001", "name": "Read", "input": {"file_path": "/tmp/x"}}
        ])
    );
    assert_eq!(message["usage"]["input_tokens"], 8);
    assert_eq!(message["usage"]["output_tokens"], 1);
    assert!(response.text().starts_with(r#"{"id":"msg_fake"#));
    // Generated tool ids keep counting on this server.
    let again = client::messages(&model.base_url(), &probe).await.json();
    assert_eq!(again["content"][1]["id"], "toolu_fake0002");
    assert_ne!(again["id"], message["id"]);
    model.shutdown().await;
}

#[tokio::test]
async fn count_tokens_and_unknown_routes() {
    let model = FakeModel::start(Script::new()).await.unwrap();
    let body = cli_body(first_turn("count me"), true);
    let size = body.to_string().len() as u64;
    let counted = client::post(
        &model.base_url(),
        "/v1/messages/count_tokens?beta=true",
        &body,
    )
    .await;
    assert_eq!(counted.status, 200);
    assert_eq!(counted.json(), json!({"input_tokens": size / 4}));

    let missing = client::request(&model.base_url(), "GET", "/v1/models", b"", &[]).await;
    assert_eq!(missing.status, 404);
    assert_eq!(missing.json()["type"], "error");
    assert_eq!(missing.json()["error"]["type"], "not_found_error");

    let get_messages = client::request(&model.base_url(), "GET", "/v1/messages", b"", &[]).await;
    assert_eq!(get_messages.status, 404);

    let log = model.requests();
    assert_eq!(log.len(), 3);
    assert_eq!(log[0].path, "/v1/messages/count_tokens?beta=true");
    assert_eq!(log[0].number, None);
    assert!(!log[0].is_unmatched());
    assert_eq!(log[1].method, "GET");
    assert!(model.message_requests().is_empty());
    model.shutdown().await;
}

#[tokio::test]
async fn bad_json_is_a_400() {
    let model = FakeModel::start(Script::new()).await.unwrap();
    let response =
        client::request(&model.base_url(), "POST", "/v1/messages", b"{not json", &[]).await;
    assert_eq!(response.status, 400);
    assert_eq!(response.json()["error"]["type"], "invalid_request_error");
    assert_eq!(model.requests()[0].number, Some(1));
    model.shutdown().await;
}

#[tokio::test]
async fn delays_slow_down_the_reply() {
    let script = Script::new().rule(
        Rule::any().reply(
            Reply::text("abcdef")
                .chunk_size(2)
                .delay_ms(100)
                .chunk_delay_ms(30),
        ),
    );
    let model = FakeModel::start(script).await.unwrap();
    let started = Instant::now();
    let response = client::messages(&model.base_url(), &cli_body(first_turn("x"), true)).await;
    let elapsed = started.elapsed();
    assert_eq!(response.events().len(), 9);
    // 100 ms before the first event plus 3 deltas at 30 ms each.
    assert!(
        elapsed >= Duration::from_millis(190),
        "took only {elapsed:?}"
    );
    assert!(elapsed < Duration::from_secs(3), "took {elapsed:?}");
    model.shutdown().await;
}

#[tokio::test]
async fn hang_does_not_block_others_and_shutdown_ends_it() {
    let script = Script::new()
        .rule(Rule::when(Match::user_text_equals("hang")).reply(Reply::hang()))
        .rule(Rule::any().reply(Reply::text("still alive")));
    let model = FakeModel::start(script).await.unwrap();
    let base = model.base_url();

    let hang_body = cli_body(first_turn("hang"), true).to_string();
    let mut hanging = client::send(
        &base,
        "POST",
        "/v1/messages?beta=true",
        hang_body.as_bytes(),
        &[],
    )
    .await;
    let seen = client::read_until(&mut hanging, "event: ping").await;
    assert!(seen.starts_with("HTTP/1.1 200"));
    assert!(seen.contains("event: message_start"));
    assert!(!seen.contains("content_block_start"));

    let other = client::messages(&base, &cli_body(first_turn("hello"), true)).await;
    assert_eq!(other.status, 200);
    assert_eq!(other.streamed_text(), "still alive");

    model
        .wait_for_requests(2, Duration::from_secs(1))
        .await
        .unwrap();
    model.shutdown().await;
    let rest = client::read_to_close(&mut hanging).await;
    assert!(!String::from_utf8_lossy(&rest).contains("message_stop"));
}

#[tokio::test]
async fn hang_before_headers_ends_on_drop() {
    let script = Script::new()
        .rule(Rule::when(Match::request(1)).reply(Reply::hang_before_headers()))
        .rule(Rule::when(Match::request(2)).reply(Reply::hang()))
        .rule(Rule::any().reply(Reply::text("fine")));
    let model = FakeModel::start(script).await.unwrap();
    let base = model.base_url();
    let body = cli_body(first_turn("x"), true).to_string();
    let mut silent = client::send(&base, "POST", "/v1/messages", body.as_bytes(), &[]).await;
    model
        .wait_for_requests(1, Duration::from_secs(2))
        .await
        .unwrap();

    // A non-streaming request that hangs gets its headers but no body.
    let probe = json!({"model": "m", "messages": [{"role": "user", "content": "Hi"}]}).to_string();
    let mut headers_only = client::send(&base, "POST", "/v1/messages", probe.as_bytes(), &[]).await;
    let head = client::read_until(&mut headers_only, "\r\n\r\n").await;
    assert!(head.starts_with("HTTP/1.1 200"));
    assert!(head.contains("application/json"));

    let ok = client::messages(&base, &cli_body(first_turn("x"), false)).await;
    assert_eq!(ok.json()["content"][0]["text"], "fine");

    drop(model);
    assert!(client::read_to_close(&mut silent).await.is_empty());
    client::read_to_close(&mut headers_only).await;
}

#[tokio::test]
async fn fixed_port_and_base_url() {
    // Find a free port, release it, and start on it.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let model = FakeModel::start_on(port, Script::new()).await.unwrap();
    assert_eq!(model.base_url(), format!("http://127.0.0.1:{port}"));
    assert!(model.addr().ip().is_loopback());
    let response = client::messages(&model.base_url(), &cli_body(first_turn("x"), true)).await;
    assert_eq!(response.status, 200);
    model.shutdown().await;
}
