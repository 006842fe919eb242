//! The launcher's argv and environment.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use byre_transport::{CliVersion, Delivery, GitIdentity, Launch, LaunchError, SdkServer};

fn strings(args: Vec<OsString>) -> Vec<String> {
    args.into_iter().map(|a| a.into_string().unwrap()).collect()
}

#[test]
fn the_default_argv_leaves_the_permission_mode_to_the_cli() {
    assert_eq!(
        strings(Launch::new().args()),
        [
            "--output-format",
            "stream-json",
            "--input-format",
            "stream-json",
            "--verbose",
            "--include-partial-messages",
            "--await-initialize",
            "--initialize-fields=settings",
        ]
    );
    // bypassPermissions only when asked for, and then with the flag the CLI wants beside it.
    let bypass = Launch {
        permission_mode: Some("bypassPermissions".into()),
        ..Launch::new()
    };
    assert_eq!(
        &strings(bypass.args())[6..9],
        [
            "--permission-mode",
            "bypassPermissions",
            "--allow-dangerously-skip-permissions"
        ]
    );
    // On the command line instead, the settings come after the permission flags.
    let argv = Launch {
        delivery: Delivery::Argv,
        ..Launch::new()
    };
    assert_eq!(
        &strings(argv.args())[6..],
        ["--settings", r#"{"attribution":{"commit":"","pr":""}}"#]
    );
}

#[test]
fn over_stdin_the_servers_agents_prompts_and_settings_fill_initialize() {
    let launch = Launch {
        sdk_servers: vec![SdkServer {
            name: "byre".into(),
            always_load: true,
        }],
        agents: Some(serde_json::json!({"r": {"description": "d", "prompt": "p"}})),
        system_prompt: Some("You are terse.".into()),
        append_system_prompt: Some("And kind.".into()),
        ..Launch::new()
    };
    let args = strings(launch.args());
    for flag in [
        "--mcp-config",
        "--agents",
        "--system-prompt",
        "--append-system-prompt",
    ] {
        assert!(
            !args.iter().any(|a| a.starts_with(flag)),
            "{flag} in {args:?}"
        );
    }
    let mut init = byre_proto::InitializeRequest::default();
    launch.fill_initialize(&mut init).unwrap();
    assert_eq!(
        init.mcp_servers.unwrap()["byre"],
        serde_json::json!({"type": "sdk", "name": "byre", "alwaysLoad": true})
    );
    assert_eq!(init.agents.unwrap()["r"].prompt, "p");
    assert_eq!(
        init.system_prompt,
        Some(serde_json::json!(["You are terse."]))
    );
    assert_eq!(init.append_system_prompt.as_deref(), Some("And kind."));
    assert_eq!(init.settings.unwrap()["attribution"]["commit"], "");
    // Definitions that are not subagents are an error, not a silent drop.
    let bad = Launch {
        agents: Some(serde_json::json!({"r": 3})),
        ..Launch::new()
    };
    assert!(bad
        .fill_initialize(&mut byre_proto::InitializeRequest::default())
        .is_err());
    // On the command line, initialize is left alone.
    let argv = Launch {
        delivery: Delivery::Argv,
        ..launch
    };
    let mut init = byre_proto::InitializeRequest::default();
    argv.fill_initialize(&mut init).unwrap();
    assert!(init.mcp_servers.is_none() && init.settings.is_none());
}

#[test]
fn sessions_models_and_sdk_servers_in_the_seeds_order() {
    let launch = Launch {
        sdk_servers: vec![SdkServer {
            name: "byre".into(),
            always_load: false,
        }],
        model: Some("claude-haiku-5-5".into()),
        session_id: Some("new-id".into()),
        resume: Some("old-id".into()),
        resume_session_at: Some("uuid-1".into()),
        fork_session: true,
        delivery: Delivery::Argv,
        ..Launch::new()
    };
    let args = strings(launch.args());
    assert_eq!(
        &args[8..],
        [
            "--mcp-config",
            r#"{"mcpServers":{"byre":{"name":"byre","type":"sdk"}}}"#,
            "--model",
            "claude-haiku-5-5",
            "--session-id=new-id",
            "--resume=old-id",
            "--resume-session-at=uuid-1",
            "--fork-session",
        ]
    );
}

#[test]
fn always_load_is_declared_per_server() {
    let launch = Launch {
        sdk_servers: vec![
            SdkServer {
                name: "a".into(),
                always_load: true,
            },
            SdkServer {
                name: "b".into(),
                always_load: false,
            },
        ],
        ..Launch::new()
    };
    let config = launch.mcp_config().unwrap();
    assert_eq!(config["mcpServers"]["a"]["alwaysLoad"], true);
    assert!(config["mcpServers"]["b"].get("alwaysLoad").is_none());
}

#[test]
fn a_value_that_looks_like_a_flag_is_joined_to_its_flag() {
    let launch = Launch {
        model: Some("--dangerous".into()),
        resume: Some("-x".into()),
        system_prompt: Some("-be brief".into()),
        delivery: Delivery::Argv,
        add_dirs: vec![PathBuf::from("-dir")],
        extra_args: vec![
            ("debug-file".into(), Some("-f".into())),
            ("strict".into(), None),
        ],
        ..Launch::new()
    };
    let args = strings(launch.args());
    for expected in [
        "--model=--dangerous",
        "--resume=-x",
        "--system-prompt=-be brief",
        "--add-dir=-dir",
        "--debug-file=-f",
        "--strict",
    ] {
        assert!(
            args.iter().any(|a| a == expected),
            "{expected} missing from {args:?}"
        );
    }
    // No argument starting with `-` stands alone as a value.
    for pair in args.windows(2) {
        if pair[0].starts_with("--") && !pair[0].contains('=') && pair[1].starts_with('-') {
            assert!(
                !["--model", "--resume", "--system-prompt", "--add-dir"]
                    .contains(&pair[0].as_str()),
                "{pair:?}"
            );
        }
    }
}

#[test]
fn other_permission_modes_drop_the_bypass_flag() {
    let launch = Launch {
        permission_mode: Some("default".into()),
        permission_prompt_tool: Some("stdio".into()),
        ..Launch::new()
    };
    let args = strings(launch.args());
    assert!(!args
        .iter()
        .any(|a| a == "--allow-dangerously-skip-permissions"));
    assert!(args
        .windows(2)
        .any(|p| p == ["--permission-mode", "default"]));
    assert!(args
        .windows(2)
        .any(|p| p == ["--permission-prompt-tool", "stdio"]));
}

#[test]
fn user_settings_keep_empty_attribution() {
    let mut launch = Launch::new();
    launch.settings.insert("model".into(), "x".into());
    assert_eq!(
        launch.settings_json(),
        serde_json::json!({"model": "x", "attribution": {"commit": "", "pr": ""}})
    );
}

#[test]
fn every_sdk_option_maps_to_its_flag() {
    let launch = Launch {
        continue_conversation: true,
        append_system_prompt: Some("extra".into()),
        tools: Some(vec![]),
        allowed_tools: vec!["Bash".into(), "Read".into()],
        disallowed_tools: vec!["Write".into()],
        max_turns: Some(3),
        max_budget_usd: Some(0.5),
        fallback_model: Some("haiku".into()),
        agents: Some(serde_json::json!({"a": {"description": "d", "prompt": "p"}})),
        include_hook_events: true,
        replay_user_messages: true,
        strict_mcp_config: true,
        setting_sources: Some(vec![]),
        plugin_dirs: vec![PathBuf::from("/p")],
        betas: vec!["b1".into(), "b2".into()],
        effort: Some("high".into()),
        max_thinking_tokens: Some(1000),
        json_schema: Some(serde_json::json!({"type": "object"})),
        no_partial_messages: true,
        delivery: Delivery::Argv,
        ..Launch::new()
    };
    let args = strings(launch.args());
    assert!(!args.iter().any(|a| a == "--include-partial-messages"));
    for pair in [
        ["--append-system-prompt", "extra"],
        ["--tools", ""],
        ["--allowedTools", "Bash,Read"],
        ["--disallowedTools", "Write"],
        ["--max-turns", "3"],
        ["--max-budget-usd", "0.5"],
        ["--fallback-model", "haiku"],
        ["--agents", r#"{"a":{"description":"d","prompt":"p"}}"#],
        ["--plugin-dir", "/p"],
        ["--betas", "b1,b2"],
        ["--effort", "high"],
        ["--max-thinking-tokens", "1000"],
        ["--json-schema", r#"{"type":"object"}"#],
    ] {
        assert!(
            args.windows(2).any(|p| p == pair),
            "{pair:?} missing from {args:?}"
        );
    }
    for flag in [
        "--continue",
        "--include-hook-events",
        "--replay-user-messages",
        "--strict-mcp-config",
        "--setting-sources=",
    ] {
        assert!(args.iter().any(|a| a == flag), "{flag} missing");
    }
}

#[test]
fn denied_tools_directories_and_plugins_go_in_initialize_by_default() {
    let launch = Launch {
        disallowed_tools: vec!["Write".into(), "Bash(rm:*)".into()],
        add_dirs: vec![PathBuf::from("/data")],
        plugin_dirs: vec![PathBuf::from("/plugins/a")],
        add_dirs_in_initialize: true,
        ..Launch::new()
    };
    let args = strings(launch.args());
    assert!(
        args.iter()
            .any(|a| a == "--initialize-fields=settings,disallowedTools,additionalDirectories"),
        "{args:?}"
    );
    for flag in ["--disallowedTools", "--add-dir", "--plugin-dir"] {
        assert!(
            !args.iter().any(|a| a.starts_with(flag)),
            "{flag} in {args:?}"
        );
    }
    let mut initialize = byre_proto::InitializeRequest::default();
    launch.fill_initialize(&mut initialize).unwrap();
    assert_eq!(
        initialize.disallowed_tools.as_deref(),
        Some(&["Write".to_owned(), "Bash(rm:*)".to_owned()][..])
    );
    assert_eq!(
        initialize.additional_directories.as_deref(),
        Some(&["/data".to_owned()][..])
    );
    assert_eq!(
        initialize.plugins,
        Some(serde_json::json!([{"type": "local", "path": "/plugins/a"}]))
    );
    // Without any, only the settings are named; directories stay on argv unless asked.
    let plain = strings(Launch::new().args());
    assert!(plain.iter().any(|a| a == "--initialize-fields=settings"));
    let dirs = Launch {
        add_dirs: vec![PathBuf::from("/data")],
        ..Launch::new()
    };
    let args = strings(dirs.args());
    assert!(
        args.windows(2).any(|p| p == ["--add-dir", "/data"]),
        "{args:?}"
    );
    assert!(args.iter().any(|a| a == "--initialize-fields=settings"));
}

#[test]
fn environment_changes() {
    let launch = Launch {
        identity: Some(GitIdentity {
            name: "Bot".into(),
            email: "bot@example.com".into(),
        }),
        env: vec![("MY_VAR".into(), "1".into())],
        env_remove: vec!["SECRET".into()],
        ..Launch::new()
    };
    let changes = launch.env_changes();
    let get = |name: &str| {
        changes
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    };
    assert_eq!(get("CLAUDECODE"), Some(None));
    assert_eq!(get("CLAUDE_CODE_ENTRYPOINT"), Some(Some("sdk-byre".into())));
    assert_eq!(
        get("CLAUDE_CODE_SDK_READS_SESSION_STATE"),
        Some(Some("1".into()))
    );
    assert_eq!(get("GIT_AUTHOR_NAME"), Some(Some("Bot".into())));
    assert_eq!(
        get("GIT_COMMITTER_EMAIL"),
        Some(Some("bot@example.com".into()))
    );
    assert_eq!(get("SECRET"), Some(None));
    assert_eq!(get("MY_VAR"), Some(Some("1".into())));
}

#[test]
fn version_text_parses() {
    let v = CliVersion::parse("2.1.328 (Claude Code)\n").unwrap();
    assert_eq!(v.parts, (2, 1, 328));
    assert_eq!(v.text, "2.1.328 (Claude Code)");
    assert!(CliVersion::parse("2.1.328").unwrap() > CliVersion::parse("2.1.99").unwrap());
    assert!(CliVersion::parse("not a version").is_none());
    assert!(CliVersion::parse("").is_none());
}

#[test]
fn an_explicit_path_that_does_not_exist_is_not_found_and_says_where() {
    let missing = Path::new("/nonexistent/byre/claude");
    let err = byre_transport::find_claude(Some(missing)).unwrap_err();
    let LaunchError::NotFound { looked } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(looked, &[missing.to_path_buf()]);
    assert!(
        err.to_string().contains("/nonexistent/byre/claude"),
        "{err}"
    );
    assert!(err.to_string().contains("npm install"), "{err}");
}

#[test]
fn a_file_that_is_not_executable_is_reported() {
    let path = std::env::temp_dir().join(format!("byre-not-exec-{}", std::process::id()));
    std::fs::write(&path, "not a program").unwrap();
    let err = byre_transport::find_claude(Some(&path)).unwrap_err();
    std::fs::remove_file(&path).unwrap();
    assert!(matches!(err, LaunchError::NotExecutable { .. }), "{err:?}");
}

#[test]
fn the_thinking_budget_persistence_and_diagnostics_options_map_to_their_flags() {
    let launch = Launch {
        thinking: Some(byre_transport::Thinking::Adaptive),
        thinking_display: Some("summarized".into()),
        task_budget: Some(50_000),
        no_session_persistence: true,
        agent: Some("reviewer".into()),
        permission_prompts: Some("none".into()),
        resume_drops_turn: Some("3f1c0f5e-prompt".into()),
        project_config_root: Some(PathBuf::from("/proj")),
        debug_file: Some(PathBuf::from("/tmp/debug.log")),
        file_checkpointing: true,
        client_app: Some("my-bot/1.0".into()),
        ..Launch::new()
    };
    let args = strings(launch.args());
    for pair in [
        ["--thinking-display", "summarized"],
        ["--task-budget", "50000"],
        ["--agent", "reviewer"],
        ["--permission-prompts", "none"],
        ["--project-config-root", "/proj"],
        ["--debug-file", "/tmp/debug.log"],
    ] {
        assert!(
            args.windows(2).any(|p| p == pair),
            "{pair:?} missing from {args:?}"
        );
    }
    for flag in [
        "--thinking=adaptive",
        "--no-session-persistence",
        "--resume-drops-turn=3f1c0f5e-prompt",
    ] {
        assert!(args.iter().any(|a| a == flag), "{flag} missing");
    }
    let env = launch.env_changes();
    let get = |name: &str| env.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    assert_eq!(
        get("CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING"),
        Some(Some("1".into()))
    );
    assert_eq!(
        get("CLAUDE_AGENT_SDK_CLIENT_APP"),
        Some(Some("my-bot/1.0".into()))
    );
    // A budget is `--max-thinking-tokens`; disabled thinking drops the display.
    let budget = Launch {
        thinking: Some(byre_transport::Thinking::Budget(2048)),
        ..Launch::new()
    };
    assert!(strings(budget.args())
        .windows(2)
        .any(|p| p == ["--max-thinking-tokens", "2048"]));
    let off = Launch {
        thinking: Some(byre_transport::Thinking::Disabled),
        thinking_display: Some("summarized".into()),
        ..Launch::new()
    };
    let args = strings(off.args());
    assert!(args.iter().any(|a| a == "--thinking=disabled"));
    assert!(!args.iter().any(|a| a == "--thinking-display"));
}
