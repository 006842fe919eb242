//! Rule selection: order, `times`, request numbers and the request-content matchers.

use byre_testkit::{FakeModel, Match, Reply, RequestView, Rule, Script, UNMATCHED_TEXT};
use serde_json::{json, Value};

use crate::client::{self, after_tool, cli_body, first_turn};

/// The concatenated text deltas of a streamed reply, or the text of a whole message.
async fn ask(model: &FakeModel, body: &Value) -> String {
    let response = client::messages(&model.base_url(), body).await;
    assert_eq!(response.status, 200, "{}", response.text());
    if body["stream"] == true {
        response.streamed_text()
    } else {
        let message = response.json();
        message["content"][0]["text"].as_str().unwrap().to_string()
    }
}

fn select(script: &Script, number: u32, body: &Value) -> Option<usize> {
    script.select(&RequestView { number, body }, &[])
}

#[tokio::test]
async fn first_matching_rule_wins() {
    let script = Script::new()
        .rule(Rule::when(Match::user_text_contains("hello")).reply(Reply::text("first")))
        .rule(Rule::when(Match::user_text_contains("hello world")).reply(Reply::text("second")))
        .rule(Rule::any().reply(Reply::text("fallback")));
    let model = FakeModel::start(script).await.unwrap();
    assert_eq!(
        ask(&model, &cli_body(first_turn("hello world"), true)).await,
        "first"
    );
    assert_eq!(
        ask(&model, &cli_body(first_turn("bye"), true)).await,
        "fallback"
    );
    let rules: Vec<_> = model.requests().iter().map(|r| r.rule).collect();
    assert_eq!(rules, [Some(0), Some(2)]);
    assert_eq!(model.rule_hits(), [1, 0, 1]);
    model.shutdown().await;
}

#[tokio::test]
async fn times_limits_a_rule_then_falls_through() {
    let script = Script::new()
        .rule(Rule::any().reply(Reply::text("once")).times(1))
        .rule(Rule::any().times(2).reply(Reply::text("twice")))
        .rule(Rule::any().reply(Reply::text("forever")));
    let model = FakeModel::start(script).await.unwrap();
    let body = cli_body(first_turn("hi"), true);
    let mut got = Vec::new();
    for _ in 0..5 {
        got.push(ask(&model, &body).await);
    }
    assert_eq!(got, ["once", "twice", "twice", "forever", "forever"]);
    model.shutdown().await;
}

#[tokio::test]
async fn request_number_counts_only_messages_posts() {
    let script = Script::new()
        .rule(Rule::when(Match::request(2)).reply(Reply::text("two")))
        .rule(Rule::any().reply(Reply::text("other")));
    let model = FakeModel::start(script).await.unwrap();
    let body = cli_body(first_turn("hi"), true);
    assert_eq!(ask(&model, &body).await, "other");
    // Neither count_tokens nor an unknown route takes a request number.
    let counted = client::post(
        &model.base_url(),
        "/v1/messages/count_tokens?beta=true",
        &body,
    )
    .await;
    assert_eq!(counted.status, 200);
    let missing = client::post(&model.base_url(), "/v1/complete", &body).await;
    assert_eq!(missing.status, 404);
    assert_eq!(ask(&model, &body).await, "two");
    assert_eq!(ask(&model, &body).await, "other");
    let numbers: Vec<_> = model.requests().iter().map(|r| r.number).collect();
    assert_eq!(numbers, [Some(1), None, None, Some(2), Some(3)]);
    model.shutdown().await;
}

#[test]
fn user_text_skips_system_messages_and_reminders() {
    let script = Script::new()
        .rule(Rule::when(Match::user_text_equals("what is 2+2?")).reply(Reply::text("4")));
    // The CLI's shape: [user(reminder, text), system(environment)].
    let cli = cli_body(first_turn("what is 2+2?"), true);
    assert_eq!(select(&script, 1, &cli), Some(0));
    // String content works too.
    let plain = cli_body(json!([{"role": "user", "content": "what is 2+2?"}]), true);
    assert_eq!(select(&script, 1, &plain), Some(0));
    // Only the last user message counts: a later message with other text does not match.
    let later = cli_body(
        json!([
            {"role": "user", "content": "what is 2+2?"},
            {"role": "assistant", "content": [{"type": "text", "text": "4"}]},
            {"role": "user", "content": [{"type": "text", "text": "and 3+3?"}]}
        ]),
        true,
    );
    assert_eq!(select(&script, 2, &later), None);
    // A reminder alone is no user text.
    let reminder_only = cli_body(
        json!([{"role": "user", "content": [{"type": "text", "text": "<system-reminder>what is 2+2?</system-reminder>"}]}]),
        true,
    );
    assert_eq!(select(&script, 1, &reminder_only), None);
}

#[tokio::test]
async fn user_text_matching_through_the_server() {
    let script = Script::new()
        .rule(Rule::when(Match::user_text_contains("Context")).reply(Reply::text("saw reminder")))
        .rule(Rule::when(Match::user_text_contains("Environment")).reply(Reply::text("saw system")))
        .rule(Rule::when(Match::user_text_equals("ping")).reply(Reply::text("pong")));
    let model = FakeModel::start(script).await.unwrap();
    assert_eq!(
        ask(&model, &cli_body(first_turn("ping"), true)).await,
        "pong"
    );
    let logged = &model.requests()[0];
    assert_eq!(logged.last_user_text().as_deref(), Some("ping"));
    assert_eq!(logged.rule, Some(2));
    model.shutdown().await;
}

#[tokio::test]
async fn tool_result_matchers() {
    let script = Script::new()
        .rule(
            Rule::when(Match::has_tool_result(true).and(Match::tool_result_contains("error")))
                .reply(Reply::text("it failed")),
        )
        .rule(Rule::when(Match::has_tool_result(true)).reply(Reply::text("it worked")))
        .rule(
            Rule::when(Match::has_tool_result(false))
                .reply(Reply::tool_use("Bash", json!({"command": "echo hi"}))),
        );
    let model = FakeModel::start(script).await.unwrap();
    let first = client::messages(&model.base_url(), &cli_body(first_turn("run it"), true)).await;
    assert!(first
        .events()
        .iter()
        .any(|(_, d)| d["content_block"]["type"] == "tool_use"));
    assert_eq!(
        ask(&model, &cli_body(after_tool("run it", "hi\n"), true)).await,
        "it worked"
    );
    assert_eq!(
        ask(&model, &cli_body(after_tool("run it", "error: boom"), true)).await,
        "it failed"
    );
    // tool_result content given as a plain string.
    let mut messages = after_tool("run it", "x");
    messages.as_array_mut().unwrap().last_mut().unwrap()["content"][0]["content"] =
        json!("an error as a string");
    assert_eq!(ask(&model, &cli_body(messages, true)).await, "it failed");
    let log = model.requests();
    assert!(!log[0].has_tool_result());
    assert!(log[1].has_tool_result());
    assert_eq!(log[1].tool_results(), ["hi\n"]);
    model.shutdown().await;
}

#[tokio::test]
async fn tools_model_and_stream_matchers() {
    let script = Script::new()
        .rule(
            Rule::when(Match::stream(false).and(Match::no_tools(true))).reply(Reply::text("probe")),
        )
        .rule(Rule::when(Match::tool_offered("Agent")).reply(Reply::text("agent offered")))
        .rule(Rule::when(Match::model("claude-haiku")).reply(Reply::text("haiku")))
        .rule(Rule::any().reply(Reply::text("default")));
    let model = FakeModel::start(script).await.unwrap();

    // The set_model probe: non-streaming, no tools, max_tokens 1.
    let probe = json!({
        "model": "claude-haiku-5-5",
        "max_tokens": 1,
        "messages": [{"role": "user", "content": "Hi"}]
    });
    assert_eq!(ask(&model, &probe).await, "probe");

    let mut with_agent = cli_body(first_turn("x"), true);
    with_agent["tools"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "Agent"}));
    assert_eq!(ask(&model, &with_agent).await, "agent offered");

    let mut haiku = cli_body(first_turn("x"), true);
    haiku["model"] = json!("claude-haiku-5-5");
    assert_eq!(ask(&model, &haiku).await, "haiku");

    assert_eq!(
        ask(&model, &cli_body(first_turn("x"), true)).await,
        "default"
    );
    // A non-streaming request that offers tools is not the probe.
    assert_eq!(
        ask(&model, &cli_body(first_turn("x"), false)).await,
        "default"
    );

    let log = model.requests();
    assert!(!log[0].stream);
    assert!(log[0].tool_names().is_empty());
    assert_eq!(log[1].tool_names(), ["Bash", "Read", "Agent"]);
    assert!(log[1].stream);
    model.shutdown().await;
}

#[tokio::test]
async fn unmatched_request_gets_fallback_text_and_is_logged() {
    let script = Script::new()
        .rule(Rule::when(Match::user_text_equals("only this")).reply(Reply::text("ok")));
    let model = FakeModel::start(script).await.unwrap();
    assert_eq!(
        ask(&model, &cli_body(first_turn("something else"), true)).await,
        UNMATCHED_TEXT
    );
    assert_eq!(
        ask(&model, &cli_body(first_turn("something else"), false)).await,
        UNMATCHED_TEXT
    );
    assert_eq!(
        ask(&model, &cli_body(first_turn("only this"), true)).await,
        "ok"
    );
    let unmatched = model.unmatched();
    assert_eq!(unmatched.len(), 2);
    assert_eq!(unmatched[0].number, Some(1));
    assert!(unmatched[0].is_unmatched());
    assert_eq!(unmatched[1].number, Some(2));
    model.shutdown().await;
}

#[test]
fn and_combines_conditions() {
    let m = Match::request(1).and(Match::model("claude-opus"));
    assert_eq!(m.request, Some(1));
    assert_eq!(m.model.as_deref(), Some("claude-opus"));
    let body = cli_body(first_turn("x"), true);
    assert!(m.matches(&RequestView {
        number: 1,
        body: &body
    }));
    assert!(!m.matches(&RequestView {
        number: 2,
        body: &body
    }));
    assert!(Match::any().matches(&RequestView {
        number: 9,
        body: &json!({})
    }));
}

#[test]
fn a_task_notification_inside_a_reminder_block_is_matched() {
    let script = Script::new()
        .rule(Rule::when(Match::user_text_contains("task-notification")).reply(Reply::text("text")))
        .rule(Rule::when(Match::task_notification()).reply(Reply::text("notified")));
    let notification = json!({
        "model": "m",
        "stream": true,
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "hi"}]},
            {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
            {"role": "user", "content": [{"type": "text", "text":
                "<system-reminder>\n<task-notification>\n<task-id>b1</task-id>\n<status>completed</status>\n</task-notification>\n</system-reminder>"}]}
        ]
    });
    // The user-text matchers skip reminder blocks; the task-notification matcher does not.
    assert_eq!(select(&script, 3, &notification), Some(1));
    assert_eq!(
        select(&script, 1, &cli_body(first_turn("hello"), true)),
        None
    );
}

#[test]
fn new_text_sees_a_system_message_after_the_prompt_and_nothing_before_the_last_answer() {
    let body = json!({
        "model": "m",
        "messages": [
            {"role": "user", "content": "an old question about apples"},
            {"role": "assistant", "content": [{"type": "text", "text": "an old answer"}]},
            {"role": "user", "content": [{"type": "text", "text": "the new prompt"}]},
            {"role": "system", "content": "hook context: pears"},
        ],
    });
    let script = Script::new()
        .rule(Rule::when(Match::new_text_contains("apples")).reply(Reply::text("old")))
        .rule(Rule::when(Match::new_text_contains("pears")).reply(Reply::text("hook")));
    assert_eq!(select(&script, 1, &body), Some(1));
    // The user-text conditions look at the last user message only.
    let user_only = Script::new()
        .rule(Rule::when(Match::any_user_text_contains("pears")).reply(Reply::text("x")));
    assert_eq!(select(&user_only, 1, &body), None);
}

#[test]
fn a_predicate_of_the_tests_own_joins_the_other_conditions() {
    let body = cli_body(first_turn("hello"), true);
    let long = Match::when(|request| request.body["messages"].as_array().map_or(0, Vec::len) > 5);
    let first = Match::when(|request| request.number == 1).and(Match::user_text_contains("hello"));
    let script = Script::new()
        .rule(Rule::when(long).reply(Reply::text("long")))
        .rule(Rule::when(first.clone()).reply(Reply::text("first")));
    assert_eq!(select(&script, 1, &body), Some(1));
    assert_eq!(select(&script, 2, &body), None);
    assert_eq!(first.clone(), first, "a predicate equals itself");
    assert!(!script.to_json().contains("predicate"), "not serialized");
}
