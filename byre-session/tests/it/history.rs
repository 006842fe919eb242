//! The CLI's own session history, against files the real CLI wrote: listing a project's
//! sessions with what a picker shows, and reading one back as its conversation, parallel tool
//! calls included.

use byre_session::proto::EntryKind;
use byre_session::transport::{project_dir_name, SessionHistory, SessionLog};
use byre_session::Claude;
use byre_testkit::{Block, FakeModel, Match, Reply, Rule, Script};
use serde_json::json;

use crate::support::*;

#[test]
fn project_folders_are_named_as_the_cli_names_them() {
    let name = |p: &str| project_dir_name(std::path::Path::new(p));
    assert_eq!(name("/tmp/sr/cwd"), "-tmp-sr-cwd");
    assert_eq!(name("/home/u/.x_y"), "-home-u--x-y");
    assert_eq!(name("/tmp/café"), "-tmp-caf-");
    let long = format!("/{}", "a".repeat(250));
    assert_eq!(name(&long), format!("-{}-feo44x", "a".repeat(199)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_the_cli_wrote_is_listed_and_read_back_in_order() {
    let script = Script::new()
        .rule(
            Rule::when(Match::user_text_contains("second question"))
                .reply(Reply::text("Second answer.")),
        )
        .rule(Rule::when(Match::has_tool_result(true)).reply(Reply::text("Both ran.")))
        .rule(Rule::any().reply(Reply::message(vec![
            Block::text("Running two."),
            Block::tool_use("Bash", json!({"command": "echo one", "description": "One"})),
            Block::tool_use("Bash", json!({"command": "echo two", "description": "Two"})),
        ])));
    let model = FakeModel::start(script).await.unwrap();
    let (options, env) = options(&model);
    let (claude, mut events) = Claude::start(options).await.unwrap();
    turn(&claude, &mut events, "first question: run two commands").await;
    turn(&claude, &mut events, "second question").await;
    let id = claude.session_id().unwrap();
    claude.close().await.unwrap();

    let history = SessionHistory::new(env.home().join(".claude"));
    let sessions = history.list(env.cwd(), 0, None);
    assert_eq!(sessions.len(), 1, "{sessions:#?}");
    let info = &sessions[0];
    assert_eq!(info.session_id, id);
    assert_eq!(
        info.first_prompt.as_deref(),
        Some("first question: run two commands")
    );
    assert_eq!(info.last_prompt.as_deref(), Some("second question"));
    assert_eq!(info.cwd.as_deref(), Some(&*env.cwd().to_string_lossy()));
    assert!(info.created.is_some() && info.size > 0);
    let path = info.path.clone().expect("a session on disk has its file");
    assert_eq!(history.find(&id), Some(path.clone()));
    assert_eq!(history.list_all(0, None).len(), 1);
    assert!(history.list(env.cwd(), 1, None).is_empty(), "offset");

    let log = SessionLog::read(&path).unwrap();
    assert!(log.bad_lines.is_empty(), "{:?}", log.bad_lines);
    let conversation = log.conversation();
    let shape: Vec<String> = conversation
        .iter()
        .map(|e| {
            let what = if e.is_tool_result() {
                "result".to_owned()
            } else if let Some(text) = e.text() {
                text
            } else {
                let content = &e.message.as_ref().unwrap()["content"];
                format!(
                    "call {}",
                    content[0]["input"]["command"].as_str().unwrap_or("?")
                )
            };
            format!("{} {what}", e.kind)
        })
        .collect();
    assert_eq!(
        shape,
        [
            "user first question: run two commands",
            "assistant Running two.",
            "assistant call echo one",
            "assistant call echo two",
            "user result",
            "user result",
            "assistant Both ran.",
            "user second question",
            "assistant Second answer.",
        ],
        "{shape:#?}"
    );
    assert!(conversation.iter().all(|e| e.kind != EntryKind::ATTACHMENT));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn renamed_tagged_forked_and_deleted_sessions_are_what_the_cli_resumes() {
    let script = Script::new()
        .rule(Rule::when(Match::user_text_contains("third")).reply(Reply::text("Third answer.")))
        .rule(Rule::when(Match::user_text_contains("second")).reply(Reply::text("Second answer.")))
        .rule(Rule::any().reply(Reply::text("First answer.")));
    let model = FakeModel::start(script).await.unwrap();
    let (options, env) = options(&model);
    let (claude, mut events) = Claude::start(options.clone()).await.unwrap();
    turn(&claude, &mut events, "the first question").await;
    turn(&claude, &mut events, "the second question").await;
    let id = claude.session_id().unwrap();
    claude.close().await.unwrap();
    let history = SessionHistory::new(env.home().join(".claude"));

    history.rename(&id, "Questions").unwrap();
    history.tag(&id, Some("triage")).unwrap();
    let info = &history.list(env.cwd(), 0, None)[0];
    assert_eq!(info.title.as_deref(), Some("Questions"));
    assert_eq!(info.tag.as_deref(), Some("triage"));
    history.tag(&id, None).unwrap();
    assert_eq!(history.list(env.cwd(), 0, None)[0].tag, None);
    assert!(history
        .rename("00000000-0000-4000-8000-000000000000", "x")
        .is_err());

    // Fork at the first answer: the fork holds the first exchange only, and resumes.
    let log = SessionLog::read(&history.find(&id).unwrap()).unwrap();
    let first_answer = log
        .conversation()
        .into_iter()
        .find(|e| e.text().as_deref() == Some("First answer."))
        .and_then(|e| e.uuid.clone())
        .unwrap();
    let fork = history.fork(&id, Some(&first_answer)).unwrap();
    assert_ne!(fork, id);
    let forked = history.list(env.cwd(), 0, None);
    assert_eq!(forked.len(), 2);
    let fork_info = forked.iter().find(|s| s.session_id == fork).unwrap();
    assert_eq!(fork_info.title.as_deref(), Some("Questions (fork)"));
    let before = model.message_requests().len();
    let (claude, mut events) = Claude::start(options.clone().resume(&fork)).await.unwrap();
    let result = turn(&claude, &mut events, "the third question").await;
    assert_eq!(result.result.as_deref(), Some("Third answer."));
    claude.close().await.unwrap();
    let request = &model.message_requests()[before..]
        .iter()
        .find(|r| {
            r.user_texts()
                .iter()
                .any(|t| t.contains("the third question"))
        })
        .cloned()
        .expect("the resumed fork asked the model");
    let body = request.body.to_string();
    assert!(body.contains("the first question") && body.contains("First answer."));
    assert!(
        !body.contains("the second question"),
        "the fork was cut at the first answer"
    );

    // The renamed original resumes too, whole.
    let (claude, mut events) = Claude::start(options.resume(&id)).await.unwrap();
    turn(&claude, &mut events, "the third question").await;
    claude.close().await.unwrap();
    let last = model.message_requests().pop().unwrap().body.to_string();
    assert!(last.contains("the second question"));

    history.delete(&fork).unwrap();
    let left: Vec<String> = history
        .list(env.cwd(), 0, None)
        .into_iter()
        .map(|s| s.session_id)
        .collect();
    assert!(!left.contains(&fork), "{left:?}");
    assert!(history.delete(&fork).is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subagents_transcript_is_found_beside_its_session() {
    let script = Script::new()
        .rule(
            Rule::when(Match::user_text_contains("REVIEW-TASK")).reply(Reply::text("Looks fine.")),
        )
        .rule(
            Rule::when(Match::user_text_contains("ask the reviewer")).reply(Reply::tool_use(
                "Agent",
                json!({"description": "Review", "prompt": "REVIEW-TASK: check the change",
                       "subagent_type": "reviewer"}),
            )),
        )
        .rule(Rule::when(Match::has_tool_result(true)).reply(Reply::text("The reviewer is happy.")))
        .rule(Rule::any().reply(Reply::text("Nothing to do.")));
    let model = FakeModel::start(script).await.unwrap();
    let (options, env) = options(&model);
    let options = options.agents_json(json!({"reviewer": {
        "description": "Reviews a change", "prompt": "You review."}}));
    let (claude, mut events) = Claude::start(options).await.unwrap();
    turn(&claude, &mut events, "please ask the reviewer").await;
    let id = claude.session_id().unwrap();
    claude.close().await.unwrap();

    let history = SessionHistory::new(env.home().join(".claude"));
    let subagents = history.subagents(&id).unwrap();
    assert_eq!(subagents.len(), 1, "{subagents:#?}");
    let sub = &subagents[0];
    assert_eq!(sub.agent_type.as_deref(), Some("reviewer"));
    assert!(sub.tool_use_id.is_some());
    let log = SessionLog::read(&sub.path).unwrap();
    let texts: Vec<String> = log.messages().iter().filter_map(|e| e.text()).collect();
    assert_eq!(
        texts,
        ["REVIEW-TASK: check the change", "Looks fine."],
        "{texts:?}"
    );
    assert!(log
        .entries
        .iter()
        .all(|e| e.agent_id.as_deref() == Some(sub.agent_id.as_str()) || !e.kind.is_chain()));
    // The main conversation holds the call and its result, not the subagent's own talk.
    let main = SessionLog::read(&history.find(&id).unwrap()).unwrap();
    let main_texts: Vec<String> = main
        .conversation()
        .iter()
        .filter_map(|e| e.text())
        .collect();
    assert!(
        !main_texts.iter().any(|t| t == "Looks fine."),
        "{main_texts:?}"
    );
    assert!(main_texts.iter().any(|t| t == "The reviewer is happy."));
}
