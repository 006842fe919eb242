//! Options that change what the real CLI does, offline: thinking, a task budget, no session
//! persistence, a settings file, file checkpointing with `rewind_files`, skills and typed
//! sandbox settings.

use byre_session::proto::FindUnknown;
use byre_session::proto::PermissionMode;
use byre_session::proto::UserMessage;
use byre_session::transport::Thinking;
use byre_session::{new_session_id, Claude, Options};
use byre_testkit::{FakeModel, Match, Reply, Rule, Script};
use serde_json::json;

use crate::support::*;

/// One turn answered "Done." with `adjust`ed options; the fake model and the environment.
async fn one(adjust: impl FnOnce(Options) -> Options) -> (FakeModel, byre_testkit::ClaudeEnv) {
    let model = FakeModel::start(Script::new().rule(Rule::any().reply(Reply::text("Done."))))
        .await
        .unwrap();
    let (options, env) = options(&model);
    let (claude, mut events) = Claude::start(adjust(options)).await.unwrap();
    claude.send("hello").unwrap();
    let (_, result) = until_result(&mut events).await;
    assert_eq!(result.result.as_deref(), Some("Done."));
    claude.close().await.unwrap();
    (model, env)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_thinking_mode_and_display_reach_the_model_request() {
    let (model, _env) = one(|o| {
        o.thinking(Thinking::Adaptive)
            .thinking_display("summarized")
    })
    .await;
    let thinking = &model.message_requests()[0].body["thinking"];
    assert_eq!(thinking["type"], "adaptive", "{thinking}");
    assert_eq!(thinking["display"], "summarized", "{thinking}");
    // The CLI's default models say `supportsThinkingOff: false` and keep thinking on;
    // a model that may think less takes `disabled`, and thinks with a budget otherwise.
    let (model, _env) = one(|o| o.model("claude-sonnet-4-5").thinking(Thinking::Disabled)).await;
    let thinking = &model.message_requests()[0].body["thinking"];
    assert_eq!(thinking, &json!({"type": "disabled"}));
    let (model, _env) = one(|o| o.model("claude-sonnet-4-5")).await;
    let thinking = &model.message_requests()[0].body["thinking"];
    assert_eq!(thinking["type"], "enabled", "{thinking}");
}

/// The `.jsonl` session files under the scratch `HOME`.
fn session_files(env: &byre_testkit::ClaudeEnv) -> Vec<std::path::PathBuf> {
    let projects = env.home().join(".claude/projects");
    let Ok(dirs) = std::fs::read_dir(projects) else {
        return Vec::new();
    };
    dirs.flatten()
        .flat_map(|d| std::fs::read_dir(d.path()).into_iter().flatten().flatten())
        .map(|f| f.path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_persistence_no_session_file_is_written() {
    let (_model, env) = one(|o| o).await;
    assert_eq!(session_files(&env).len(), 1, "a session is kept by default");
    let (_model, env) = one(Options::no_session_persistence).await;
    assert!(session_files(&env).is_empty(), "{:?}", session_files(&env));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_settings_file_is_read_and_applied() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("settings.json");
    std::fs::write(&file, r#"{"permissions": {"deny": ["Write"]}}"#).unwrap();
    let (model, _env) = one(|o| o.settings_file(&file)).await;
    let tools = model.message_requests()[0].tool_names();
    assert!(!tools.iter().any(|t| t == "Write"), "{tools:?}");
    assert!(tools.iter().any(|t| t == "Read"), "{tools:?}");
    // A file that is not there fails the start, saying which.
    let model = FakeModel::start(Script::new()).await.unwrap();
    let (options, _env) = options(&model);
    let err = Claude::start(options.settings_file(dir.path().join("missing.json")))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("missing.json"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn file_checkpoints_let_rewind_files_restore_a_written_file() {
    // The scratch directory comes first: the script names the file by its path there.
    let mut env = byre_testkit::ClaudeEnv::new("http://127.0.0.1:9").unwrap();
    let note = env.cwd().join("note.txt");
    let script = Script::new()
        .rule(
            Rule::when(Match::user_text_contains("write the note")).reply(Reply::tool_use(
                "Write",
                json!({"file_path": note, "content": "written by the model\n"}),
            )),
        )
        .rule(Rule::when(Match::has_tool_result(true)).reply(Reply::text("Written.")));
    let model = FakeModel::start(script).await.unwrap();
    env.set_var("ANTHROPIC_BASE_URL", model.base_url());
    let options = env.options().unwrap();
    // acceptEdits: the CLI's default mode would ask before the write, with no one to answer.
    let options = options.permission_mode(PermissionMode::ACCEPT_EDITS);
    let (claude, mut events) = Claude::start(options.file_checkpointing()).await.unwrap();
    let prompt = new_session_id();
    claude
        .send_message(UserMessage::prompt("please write the note").uuid(prompt.clone()))
        .unwrap();
    let (_, result) = until_result(&mut events).await;
    assert_eq!(result.result.as_deref(), Some("Written."));
    assert!(note.is_file());

    let preview = claude.rewind_files(prompt.clone(), true).await.unwrap();
    assert_eq!(preview.can_rewind, Some(true), "{preview:?}");
    assert!(note.is_file(), "a dry run changes nothing");
    let done = claude.rewind_files(prompt, false).await.unwrap();
    assert_eq!(done.can_rewind, Some(true), "{done:?}");
    assert!(!note.exists(), "the file the turn created is gone again");
    claude.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_named_live_methods_reach_the_real_cli() {
    let model = FakeModel::start(Script::new().rule(Rule::any().reply(Reply::text("Done."))))
        .await
        .unwrap();
    let (options, _env) = options(&model);
    let (claude, mut events) = Claude::start(options).await.unwrap();
    // What the initialize answer offers.
    let models = claude.supported_models();
    assert!(models.iter().any(|m| m.value == "sonnet"), "{models:?}");
    assert!(!claude.supported_commands().is_empty());
    assert!(claude
        .supported_agents()
        .iter()
        .any(|a| a.name == "general-purpose"));
    assert!(claude.account_info().is_some());
    claude.send("hello").unwrap();
    let _ = until_result(&mut events).await;
    // Live requests the CLI answers.
    claude.set_max_thinking_tokens(Some(1024)).await.unwrap();
    claude.set_max_thinking_tokens(None).await.unwrap();
    claude.background_tasks(None).await.unwrap();
    let cost = claude.session_cost().await.unwrap();
    assert!(cost.extra_paths().is_empty(), "{cost:?}");
    // An unknown server is refused with the CLI's error, typed.
    assert!(claude.mcp_toggle("no-such-server", false).await.is_err());
    assert!(claude.mcp_reconnect("no-such-server").await.is_err());
    claude.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_settings_file_and_reload_requests_reach_the_real_cli() {
    let model = FakeModel::start(Script::new().rule(Rule::any().reply(Reply::text("Done."))))
        .await
        .unwrap();
    let (options, env) = options(&model);
    std::fs::write(env.cwd().join("notes.txt"), "hello from a file").unwrap();
    let (claude, mut events) = Claude::start(options).await.unwrap();
    claude.send("hello").unwrap();
    let _ = until_result(&mut events).await;
    let file = claude.read_file("notes.txt", None, None).await.unwrap();
    let answer = serde_json::to_string(&file).unwrap();
    assert!(answer.contains("hello from a file"), "{answer}");
    claude
        .apply_flag_settings(json!({"cleanupPeriodDays": 30}))
        .await
        .unwrap();
    claude
        .seed_read_state(env.cwd().join("notes.txt"), 1_700_000_000_000)
        .await
        .unwrap();
    let skills = claude.reload_skills().await.unwrap();
    assert!(skills.extra_paths().is_empty(), "{skills:?}");
    let styles = claude.reload_output_styles().await.unwrap();
    assert!(
        styles
            .available_output_styles
            .as_ref()
            .is_some_and(|s| !s.is_empty()),
        "{styles:?}"
    );
    let plugins = claude
        .reload_plugins(byre_proto::ReloadPluginsRequest::default())
        .await
        .unwrap();
    assert!(plugins.extra_paths().is_empty(), "{plugins:?}");
    // An override for a server not (yet) known is stored, with a warning; so is clearing it.
    let set = claude
        .set_mcp_permission_mode_override("no-such-server", Some("default"))
        .await
        .unwrap();
    assert!(
        set.warning.as_deref().is_some_and(|w| w.contains("stored")),
        "{set:?}"
    );
    let cleared = claude
        .set_mcp_permission_mode_override("no-such-server", None)
        .await
        .unwrap();
    assert!(
        cleared
            .warning
            .as_deref()
            .is_some_and(|w| w.contains("cleared")),
        "{cleared:?}"
    );
    claude.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_budget_reaches_the_model_request() {
    let (model, _env) = one(|o| o.task_budget(50_000)).await;
    let config = &model.message_requests()[0].body["output_config"];
    assert_eq!(
        config["task_budget"],
        json!({"total": 50_000, "type": "tokens"}),
        "{config}"
    );
    let (model, _env) = one(|o| o).await;
    let config = &model.message_requests()[0].body["output_config"];
    assert!(config.get("task_budget").is_none(), "{config}");
}

/// One turn in a directory with the project skill `greet`, the model calling it; the first
/// request's body and the CLI's command line.
async fn with_greet_skill(skills: Option<byre_session::Skills>) -> (String, String) {
    let script = Script::new()
        .rule(Rule::when(Match::has_tool_result(true)).reply(Reply::text("Greeted.")))
        .rule(Rule::any().reply(Reply::tool_use("Skill", json!({"skill": "greet"}))));
    let model = FakeModel::start(script).await.unwrap();
    let (options, env) = options(&model);
    let dir = env.cwd().join(".claude/skills/greet");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: greet\ndescription: Greets the user warmly\n---\nSay hello.\n",
    )
    .unwrap();
    let options = match skills {
        Some(skills) => options.skills(skills),
        None => options,
    };
    let (claude, mut events) = Claude::start(options).await.unwrap();
    let pid = claude.initialize_response().unwrap().pid.unwrap();
    let argv = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap();
    let argv = String::from_utf8_lossy(&argv).replace('\0', " ");
    claude.send("greet me").unwrap();
    let (_, result) = until_result(&mut events).await;
    assert_eq!(result.result.as_deref(), Some("Greeted."));
    claude.close().await.unwrap();
    let body = model.message_requests()[0].body.to_string();
    (body, argv)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn skills_filter_what_the_model_is_offered_and_are_allowed_by_rule() {
    use byre_session::Skills;
    // Unset: the CLI offers every skill it finds.
    let (body, argv) = with_greet_skill(None).await;
    assert!(body.contains("Greets the user warmly"));
    assert!(!argv.contains("Skill"), "{argv}");
    // Listed: offered, and allowed by a `Skill(greet)` rule.
    let (body, argv) = with_greet_skill(Some(Skills::from(["greet"]))).await;
    assert!(body.contains("Greets the user warmly"));
    assert!(argv.contains("Skill(greet)"), "{argv}");
    // All: the `Skill` tool is allowed outright.
    let (body, argv) = with_greet_skill(Some(Skills::All)).await;
    assert!(body.contains("Greets the user warmly"));
    assert!(argv.contains("--allowedTools Skill"), "{argv}");
    // Another one listed: this one is not offered.
    let (body, _) = with_greet_skill(Some(Skills::from(["other"]))).await;
    assert!(!body.contains("Greets the user warmly"));
    // A name no rule can carry fails the start.
    let err = Claude::start(Options::new().skills(["a,b"]))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("skill name"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typed_sandbox_settings_reach_the_cli_as_it_spells_them() {
    use byre_session::{Sandbox, SandboxNetwork};
    let model = FakeModel::start(Script::new().rule(Rule::any().reply(Reply::text("Done."))))
        .await
        .unwrap();
    let (options, _env) = options(&model);
    let sandbox = Sandbox {
        excluded_commands: Some(vec!["git".into()]),
        network: Some(SandboxNetwork {
            allowed_domains: Some(vec!["example.com".into()]),
            ..SandboxNetwork::default()
        }),
        ..Sandbox::enabled()
    };
    let (claude, _events) = Claude::start(options.sandbox(sandbox)).await.unwrap();
    let settings = claude
        .request(byre_session::proto::GetSettingsRequest::default())
        .await
        .unwrap();
    let effective = settings.effective.unwrap_or_default();
    assert_eq!(effective["sandbox"]["enabled"], true, "{effective}");
    assert_eq!(effective["sandbox"]["excludedCommands"], json!(["git"]));
    assert_eq!(
        effective["sandbox"]["network"]["allowedDomains"],
        json!(["example.com"])
    );
    claude.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verbatim_prompts_skip_the_path_expansion() {
    for verbatim in [false, true] {
        let model = FakeModel::start(Script::new().rule(Rule::any().reply(Reply::text("Done."))))
            .await
            .unwrap();
        let (options, env) = options(&model);
        std::fs::write(env.cwd().join("note.txt"), "the secret word is plover\n").unwrap();
        let options = if verbatim {
            options.verbatim_prompts()
        } else {
            options
        };
        let (claude, mut events) = Claude::start(options).await.unwrap();
        claude.send("What does @note.txt say?").unwrap();
        let _ = until_result(&mut events).await;
        claude.close().await.unwrap();
        let body = model.message_requests()[0].body.to_string();
        assert_eq!(body.contains("plover"), !verbatim, "verbatim {verbatim}");
        assert!(body.contains("What does @note.txt say?"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_question_preview_format_changes_the_tool_the_model_sees() {
    let mut descriptions = Vec::new();
    for html in [false, true] {
        let (model, _env) = one(|o| {
            // The tool is offered to a host that answers permission prompts.
            let o = o.can_use_tool(|request| async move { Ok(request.allow()) });
            if html {
                o.question_preview_format("html")
            } else {
                o
            }
        })
        .await;
        let tools = model.message_requests()[0].body["tools"].clone();
        let ask = tools
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == "AskUserQuestion")
            .cloned()
            .expect("AskUserQuestion is offered");
        descriptions.push(ask.to_string());
    }
    assert_ne!(descriptions[0], descriptions[1]);
    assert!(descriptions[1].to_lowercase().contains("html"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn excluding_dynamic_sections_keeps_the_session_out_of_the_system_prompt() {
    for exclude in [false, true] {
        let (model, env) = one(|o| {
            if exclude {
                o.exclude_dynamic_sections()
            } else {
                o.cli_system_prompt()
            }
        })
        .await;
        // The session-specific sections (its memory folder under HOME among them) move out of
        // the system prompt, which then stays the same from session to session.
        let system = model.message_requests()[0].body["system"].to_string();
        let home = env.home().to_string_lossy().into_owned();
        assert_eq!(system.contains(&home), !exclude, "exclude {exclude}");
    }
}

#[test]
fn a_typed_agent_definition_is_sent_as_the_cli_spells_it() {
    let agent = byre_session::proto::AgentDefinition::new("Reviews a change", "You review.")
        .tools(["Read"])
        .max_turns(3);
    let options = Options::new()
        .agents_json(json!({"other": {"description": "d", "prompt": "p"}}))
        .agents([("reviewer", agent)]);
    let agents = options.launch().agents.clone().unwrap();
    assert_eq!(agents["other"]["prompt"], "p");
    assert_eq!(
        agents["reviewer"],
        json!({"description": "Reviews a change", "prompt": "You review.", "tools": ["Read"], "maxTurns": 3})
    );
}

#[test]
fn the_git_identity_and_replayed_user_messages_reach_the_command() {
    let options = Options::new()
        .git_identity("Review Bot", "bot@example.com")
        .replay_user_messages();
    let launch = options.launch();
    assert!(launch.args().iter().any(|a| a == "--replay-user-messages"));
    let env = launch.env_changes();
    for (name, value) in [
        ("GIT_AUTHOR_NAME", "Review Bot"),
        ("GIT_COMMITTER_EMAIL", "bot@example.com"),
    ] {
        assert!(
            env.iter()
                .any(|(n, v)| n == name && v.as_deref() == Some(value.as_ref())),
            "{name} in {env:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_debug_log_goes_to_the_stderr_callback() {
    let lines = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let sink = lines.clone();
    let (_model, _env) = one(move |o| {
        o.debug_to_stderr()
            .on_stderr(move |line| sink.lock().unwrap().push(line.to_owned()))
    })
    .await;
    let lines = lines.lock().unwrap();
    assert!(
        lines.iter().any(|l| l.contains("[DEBUG]")),
        "{:?}",
        &lines[..lines.len().min(5)]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_has_an_empty_system_prompt_unless_it_keeps_the_clis_own() {
    let (model, _env) = one(|o| o.cli_system_prompt()).await;
    let own = model.message_requests()[0].body["system"].to_string();
    assert!(own.contains("# Memory"), "the CLI's own prompt when kept");
    for (name, set) in [
        ("by default", (|o| o) as fn(Options) -> Options),
        ("given empty", |o| o.system_prompt("")),
        ("given empty after keeping", |o| {
            o.cli_system_prompt().system_prompt("")
        }),
    ] {
        let (model, _env) = one(set).await;
        let empty = model.message_requests()[0].body["system"].to_string();
        assert!(!empty.contains("# Memory"), "{name}: {empty}");
        assert!(empty.len() < own.len() / 4, "{name}: {empty}");
    }
    // Appending keeps the CLI's own prompt, with the text after it.
    let (model, _env) = one(|o| o.append_system_prompt("Answer like a cow.")).await;
    let appended = model.message_requests()[0].body["system"].to_string();
    assert!(appended.contains("# Memory"), "{appended}");
    assert!(appended.contains("Answer like a cow."), "{appended}");
}
