//! Questions for the user, against the real CLI: the model's `AskUserQuestion` calls answered
//! by a typed handler, beside a permission handler for other tools; an MCP server's
//! elicitation form (from `byre-mcp-stdio`, a server the CLI starts) answered by the
//! elicitation handler, or declined without one.

use std::sync::{Arc, Mutex};

use byre_proto::{AskUserQuestionInput, ElicitationRequest, ElicitationResponse, PermissionResult};
use byre_session::{Claude, Options};
use byre_testkit::{ClaudeEnv, FakeModel, Match, Reply, Rule, Script};
use serde_json::json;

fn options(model: &FakeModel, mode: &str) -> (Options, ClaudeEnv) {
    let (mut options, env) = crate::support::options(model);
    options = options.permission_mode(mode);
    (options, env)
}

fn questions() -> serde_json::Value {
    json!({"questions": [
        {"question": "Which colour?", "header": "Colour", "multiSelect": false,
         "options": [{"label": "Red", "description": "warm"}, {"label": "Blue", "description": "cool"}]},
        {"question": "Which sizes?", "header": "Sizes", "multiSelect": true,
         "options": [{"label": "S", "description": "small"}, {"label": "M", "description": "medium"},
                     {"label": "L", "description": "large"}]}
    ]})
}

async fn run_to_result(claude: &Claude, events: &mut byre_session::Events, prompt: &str) {
    let result = crate::support::turn(claude, events, prompt).await;
    assert_eq!(result.is_error, Some(false), "{result:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_user_question_is_answered_and_other_tools_go_to_the_permission_handler() {
    let script = Script::new()
        .rule(
            Rule::when(Match::tool_result_contains("have been answered")).reply(Reply::tool_use(
                "Bash",
                json!({"command": "touch asked.txt", "description": "Create asked.txt"}),
            )),
        )
        .rule(Rule::when(Match::has_tool_result(true)).reply(Reply::text("Done.")))
        .rule(Rule::any().reply(Reply::tool_use("AskUserQuestion", questions())));
    let model = FakeModel::start(script).await.unwrap();
    let (options, _env) = options(&model, "default");
    let asked: Arc<Mutex<Vec<AskUserQuestionInput>>> = Arc::default();
    let seen = asked.clone();
    let permissions: Arc<Mutex<Vec<String>>> = Arc::default();
    let tools = permissions.clone();
    let options = options
        .ask_user_question(move |input| {
            seen.lock().unwrap().push(input);
            async {
                Ok(vec![
                    ("Which colour?".to_owned(), "Blue".to_owned()),
                    ("Which sizes?".to_owned(), "S, L".to_owned()),
                ])
            }
        })
        .can_use_tool(move |request| {
            tools.lock().unwrap().push(request.tool_name.clone());
            async move { Ok(PermissionResult::allow(request.input)) }
        });
    let (claude, mut events) = Claude::start(options).await.unwrap();
    run_to_result(&claude, &mut events, "ask me").await;
    claude.close().await.unwrap();

    let asked = asked.lock().unwrap();
    assert_eq!(asked.len(), 1);
    let question = &asked[0].questions[1];
    assert_eq!(question.question, "Which sizes?");
    assert_eq!(question.multi_select, Some(true));
    assert_eq!(question.options.as_ref().map(Vec::len), Some(3));
    assert_eq!(*permissions.lock().unwrap(), vec!["Bash".to_owned()]);
    let requests = model.message_requests();
    let results: Vec<String> = requests.iter().flat_map(|r| r.tool_results()).collect();
    assert!(
        results
            .iter()
            .any(|r| r.contains("Blue") && r.contains("S, L")),
        "the model reads the answers: {results:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_question_reaches_the_model_as_a_denial() {
    let script = Script::new()
        .rule(Rule::when(Match::has_tool_result(true)).reply(Reply::text("Understood.")))
        .rule(Rule::any().reply(Reply::tool_use("AskUserQuestion", questions())));
    let model = FakeModel::start(script).await.unwrap();
    let (options, _env) = options(&model, "bypassPermissions");
    let options = options.ask_user_question(|_| async { Err("the user closed the dialog".into()) });
    let (claude, mut events) = Claude::start(options).await.unwrap();
    run_to_result(&claude, &mut events, "ask me").await;
    claude.close().await.unwrap();
    let results: Vec<String> = model
        .message_requests()
        .iter()
        .flat_map(|r| r.tool_results())
        .collect();
    assert!(
        results
            .iter()
            .any(|r| r.contains("the user closed the dialog")),
        "{results:?}"
    );
}

/// A fake model that has the `asker` server's `ask` tool called, and options that declare
/// `asker` (byre-mcp-stdio, a server the CLI starts itself).
async fn asking() -> (FakeModel, Options, ClaudeEnv) {
    let script = Script::new()
        .rule(Rule::when(Match::tool_result_contains("elicitation:")).reply(Reply::text("Done.")))
        .rule(
            Rule::when(Match::user_text_contains("ask me")).reply(Reply::tool_use(
                "mcp__asker__ask",
                json!({"question": "Which colour?"}),
            )),
        );
    let model = FakeModel::start(script).await.unwrap();
    let (mut options, env) = options(&model, "bypassPermissions");
    let server = byre_testkit::mcp_stdio_bin().unwrap();
    options = options.mcp_config(
        "asker",
        json!({"type": "stdio", "command": server, "args": []}),
    );
    (model, options, env)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_servers_elicitation_reaches_the_handler_and_its_answer_goes_back() {
    let (model, options, _env) = asking().await;
    let asked = Arc::new(Mutex::new(Vec::new()));
    let seen = asked.clone();
    let options = options.on_request(move |request: ElicitationRequest| {
        seen.lock().unwrap().push(request);
        async { Ok(ElicitationResponse::accept(json!({"answer": "Blue"}))) }
    });
    let (claude, mut events) = Claude::start(options).await.unwrap();
    run_to_result(&claude, &mut events, "please ask me something").await;

    // The CLI forwarded the server's form, typed.
    let asked = asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0].mcp_server_name, "asker");
    assert_eq!(asked[0].message, "Which colour?");
    assert_eq!(asked[0].mode.as_deref(), Some("form"));
    assert_eq!(
        asked[0].requested_schema.as_ref().unwrap()["properties"]["answer"]["type"],
        "string"
    );
    // The answer went back to the server, whose tool result reached the model.
    let requests = model.message_requests();
    assert_eq!(
        requests.last().unwrap().tool_results(),
        [r#"elicitation: accept {"answer":"Blue"}"#]
    );
    claude.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_handler_an_elicitation_is_declined() {
    let (model, options, _env) = asking().await;
    let (claude, mut events) = Claude::start(options).await.unwrap();
    run_to_result(&claude, &mut events, "please ask me something").await;
    let requests = model.message_requests();
    assert_eq!(
        requests.last().unwrap().tool_results(),
        ["elicitation: decline null"]
    );
    claude.close().await.unwrap();
}
