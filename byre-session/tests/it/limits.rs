//! Limits shared by sessions, and what they spent, against the real CLI: with at most two
//! turns at once, six sessions never run more than two; a shared budget refuses new prompts
//! and new sessions once spent; each session's spend is counted, and each subagent's cost is
//! read from its transcript.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use byre_session::{Claude, Error, Limits};
use byre_testkit::{FakeModel, Match, Reply, Rule, Script};

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn six_sessions_with_a_limit_of_two_never_run_more_than_two_turns_at_once() {
    // When each API request came: a turn's one request, answered 700 ms later.
    let arrivals: Arc<Mutex<Vec<Instant>>> = Arc::default();
    let seen = arrivals.clone();
    let stamp = Match::when(move |_| {
        seen.lock().unwrap().push(Instant::now());
        true
    });
    let script = Script::new().rule(Rule::when(stamp).reply(Reply::text("Done.").delay_ms(700)));
    let model = FakeModel::start(script).await.unwrap();
    let limits = Limits::new().max_running_turns(2);
    let mut sessions = Vec::new();
    for n in 0..6 {
        let (options, env) = options(&model);
        let options = options.limits(limits.clone());
        sessions.push(tokio::spawn(async move {
            let (claude, mut events) = Claude::start(options).await.unwrap();
            let result = turn(&claude, &mut events, &format!("question {n}")).await;
            claude.close().await.unwrap();
            drop(env);
            result
        }));
    }
    for session in sessions {
        let result = session.await.unwrap();
        assert_eq!(result.result.as_deref(), Some("Done."));
    }
    let arrivals = arrivals.lock().unwrap().clone();
    assert_eq!(arrivals.len(), 6, "one API request a turn");
    // A turn lasts at least the 700 ms its answer takes: three arrivals within 600 ms would
    // be three turns at once.
    let most = arrivals
        .iter()
        .map(|at| {
            let window = *at + Duration::from_millis(600);
            arrivals.iter().filter(|a| *a >= at && **a < window).count()
        })
        .max()
        .unwrap();
    assert!(most <= 2, "{most} turns ran at once: {arrivals:?}");
    assert_eq!(limits.running_turns(), 0, "every permit came back");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shared_budget_stops_new_turns_and_new_sessions_once_spent() {
    let model = FakeModel::start(Script::new().rule(Rule::any().reply(Reply::text("Ok."))))
        .await
        .unwrap();
    // A turn of the fake model costs $0.0006: two of them spend the budget.
    let limits = Limits::new().budget_usd(0.001);
    let (options, _env) = options(&model);
    let options = options.limits(limits.clone());
    let (claude, mut events) = Claude::start(options.clone()).await.unwrap();
    let id = claude.session_id();
    turn(&claude, &mut events, "first").await;
    assert!(limits.spent_usd() > 0.0005, "{}", limits.spent_usd());
    turn(&claude, &mut events, "second").await;
    let refused = claude.send("third").unwrap_err();
    assert!(matches!(refused, Error::BudgetSpent { .. }), "{refused:?}");
    assert_eq!(refused.fault(), byre_session::Fault::Limit);
    assert!(refused.to_string().contains("budget is spent"), "{refused}");
    let id = id.or_else(|| claude.session_id()).unwrap();
    assert!((limits.spent_by(&id) - limits.spent_usd()).abs() < 1e-12);
    claude.close().await.unwrap();
    let Err(error) = Claude::start(options).await else {
        panic!("a session started on a spent budget");
    };
    assert!(matches!(error, Error::BudgetSpent { .. }), "{error:?}");
    assert_eq!(model.message_requests().len(), 2);
    assert_eq!(limits.remaining_usd(), Some(0.0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_says_what_each_subagent_cost() {
    use serde_json::json;
    let script = Script::new()
        .rule(Rule::when(Match::user_text_contains("REVIEW-TASK")).reply(Reply::text("Fine.")))
        .rule(
            Rule::when(Match::user_text_contains("ask the reviewer")).reply(Reply::tool_use(
                "Agent",
                json!({"description": "Review", "prompt": "REVIEW-TASK: check it",
                       "subagent_type": "general-purpose"}),
            )),
        )
        .rule(Rule::when(Match::has_tool_result(true)).reply(Reply::text("Reviewed.")));
    let model = FakeModel::start(script).await.unwrap();
    let (options, env) = options(&model);
    let (claude, mut events) = Claude::start(options).await.unwrap();
    claude.send("please ask the reviewer").unwrap();
    let output = events.turn().finish().await.unwrap();
    claude.close().await.unwrap();
    assert_eq!(output.agent_calls.len(), 1, "{:?}", output.agent_calls);
    let history = byre_session::transport::SessionHistory::new(env.home().join(".claude"));
    let costs = output.subagent_costs(&history).unwrap();
    let [cost] = costs.as_slice() else {
        panic!("one subagent: {costs:?}");
    };
    assert_eq!(cost.tool_use_id, output.agent_calls[0]);
    assert_eq!(cost.agent_type.as_deref(), Some("general-purpose"));
    // The subagent made one API call of the fake model's 100 input and 10 output tokens, priced
    // at the rates of the turn's result: what each call of the result's model usage cost (every
    // call of the fake model has those tokens). The result's total may count the subagent's
    // call or not: the CLI's accounting of a subagent ends before or after it writes the result.
    let tokens: Vec<_> = cost.tokens.values().copied().collect();
    assert_eq!((tokens[0].input, tokens[0].output), (100, 10), "{cost:?}");
    let usage = output
        .result
        .model_usage_since_last_result
        .as_ref()
        .unwrap();
    let (model_cost, model_input) = usage.values().fold((0.0, 0), |(cost, input), usage| {
        let usd = usage.cost_usd.as_ref().and_then(|n| n.as_f64()).unwrap();
        (cost + usd, input + usage.input_tokens.unwrap())
    });
    let per_call = model_cost / (model_input as f64 / 100.0);
    assert!(
        (cost.cost_usd.unwrap() - per_call).abs() < 1e-12,
        "{per_call} a call: {cost:?}"
    );
}
