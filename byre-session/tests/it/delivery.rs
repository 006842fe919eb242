//! What reaches the CLI over stdin rather than its command line, against the real CLI:
//! settings, MCP servers (an in-process one with `alwaysLoad`, and one the CLI starts with a
//! secret in its `env`), subagents and the system prompts all work, and the secret is neither
//! in the process's argv nor in the transcript.

use std::sync::{Arc, Mutex};

use byre_session::proto::CliMessage;
use byre_session::proto::SystemMessage;
use byre_session::transport::Delivery;
use byre_session::{Claude, Event, McpServer, Options};
use byre_testkit::{FakeModel, Reply, Rule, Script};
use serde_json::json;

use crate::support::*;

const SECRET: &str = "s3cret-token-4217";

/// A secret in the settings' `env` with a quote and a backslash: escaped once in JSON, twice
/// in the launch note's argv.
const QUOTED_SECRET: &str = r#"qu"ot\ed-9031"#;

/// Options with everything that can travel either way: settings that deny `Write`, the
/// in-process `byre` server (always loaded), a stdio server with a secret in its `env`, a
/// subagent, a system prompt and an appended one, and a transcript with the launch line.
fn loaded(options: Options, transcript: &std::path::Path) -> Options {
    let mut settings = serde_json::Map::new();
    settings.insert("permissions".into(), json!({"deny": ["Write"]}));
    settings.insert("env".into(), json!({"BYRE_QUOTED": QUOTED_SECRET}));
    let server = McpServer::tools(
        "byre",
        [crate::mcp::lookup(Arc::new(Mutex::new(Vec::new())))],
    )
    .unwrap();
    let stdio = byre_testkit::mcp_stdio_bin().unwrap();
    options
        .settings(settings)
        .serve_mcp(server)
        .mcp_config(
            "ext",
            json!({"type": "stdio", "command": stdio, "args": [], "env": {"BYRE_TOKEN": SECRET}}),
        )
        .agents_json(
            json!({"reviewer": {"description": "Reviews a change", "prompt": "You review."}}),
        )
        .system_prompt("You are the delivery probe.")
        .append_system_prompt("Appended by the host.")
        .transcript(transcript)
        .transcript_launch(true)
}

/// Runs one turn with `delivery`; returns the argv, the transcript's text, the first API
/// request's tools and system prompt, and the `system/init` line.
async fn run(delivery: Delivery) -> (String, String, Vec<String>, String, SystemMessage) {
    let model = FakeModel::start(Script::new().rule(Rule::any().reply(Reply::text("Done."))))
        .await
        .unwrap();
    let (options, env) = options(&model);
    let transcript = env.cwd().join("delivery.jsonl");
    let options = loaded(options, &transcript).delivery(delivery);
    let (claude, mut events) = Claude::start(options).await.unwrap();
    let pid = claude.initialize_response().unwrap().pid.unwrap();
    let argv = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap();
    let argv = String::from_utf8_lossy(&argv).replace('\0', " ");
    claude.send("hello").unwrap();
    let (seen, result) = until_result(&mut events).await;
    assert_eq!(result.result.as_deref(), Some("Done."));
    claude.close().await.unwrap();
    let init = seen
        .into_iter()
        .find_map(|e| match e {
            Event::Message(CliMessage::System(s)) if matches!(s, SystemMessage::Init(_)) => Some(s),
            _ => None,
        })
        .expect("a system/init line");
    let request = &model.message_requests()[0];
    let system = request.body["system"].to_string();
    let text = std::fs::read_to_string(&transcript).unwrap();
    (argv, text, request.tool_names(), system, init)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settings_servers_agents_and_prompts_go_over_stdin_and_no_secret_shows() {
    let (argv, transcript, tools, system, init) = run(Delivery::Initialize).await;
    // Nothing secret, and none of it, on the command line or in the transcript.
    assert!(!argv.contains(SECRET), "{argv}");
    assert!(argv.contains("--await-initialize"), "{argv}");
    for flag in ["--mcp-config", "--settings", "--agents", "--system-prompt"] {
        assert!(!argv.contains(flag), "{flag} in {argv}");
    }
    assert!(
        !transcript.contains(SECRET),
        "the transcript holds the secret"
    );
    assert!(transcript.contains("\"BYRE_TOKEN\":\"[redacted]\""));
    assert!(!transcript.contains("ed-9031"), "{transcript}");
    // Yet all of it took effect.
    check_effects(&tools, &system, &init);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_the_command_line_the_same_options_work_and_the_secret_is_in_argv() {
    let (argv, transcript, tools, system, init) = run(Delivery::Argv).await;
    assert!(argv.contains(SECRET), "{argv}");
    assert!(!argv.contains("--await-initialize"), "{argv}");
    // The transcript's launch note is the argv, with every secret of the MCP servers and the
    // settings redacted, however escaped; so is the rest.
    let note = transcript.lines().next().unwrap();
    assert!(note.contains("--mcp-config"), "{note}");
    assert!(note.contains("[redacted]"), "{note}");
    assert!(!transcript.contains(SECRET), "{transcript}");
    for escaped in ["ot\\\\", "qu\\\"", "ed-9031"] {
        assert!(!transcript.contains(escaped), "{escaped} in {transcript}");
    }
    check_effects(&tools, &system, &init);
}

/// The settings denied `Write`, the in-process server is always loaded, the stdio server is
/// connected, the subagent is offered and both prompts are in the system prompt.
fn check_effects(tools: &[String], system: &str, init: &SystemMessage) {
    assert!(!tools.iter().any(|t| t == "Write"), "{tools:?}");
    assert!(tools.iter().any(|t| t == "mcp__byre__lookup"), "{tools:?}");
    assert!(system.contains("You are the delivery probe."), "{system}");
    assert!(system.contains("Appended by the host."), "{system}");
    let SystemMessage::Init(init) = init else {
        unreachable!()
    };
    let servers = init.mcp_servers.as_ref().unwrap();
    for name in ["byre", "ext"] {
        let server = servers.iter().find(|s| s.name == name).expect(name);
        assert_eq!(
            server.status.as_ref().map(|s| s.as_str()),
            Some("connected"),
            "{server:?}"
        );
    }
    assert!(
        init.agents
            .as_ref()
            .unwrap()
            .iter()
            .any(|a| a == "reviewer"),
        "{:?}",
        init.agents
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subagent_defined_in_initialize_runs_through_the_agent_tool() {
    use byre_testkit::Match;
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
        .rule(
            Rule::when(Match::has_tool_result(true)).reply(Reply::text("The reviewer is happy.")),
        );
    let model = FakeModel::start(script).await.unwrap();
    let (options, _env) = options(&model);
    let options = options.agents_json(json!({"reviewer": {
        "description": "Reviews a change", "prompt": "You are the REVIEWER-PERSONA."}}));
    let (claude, mut events) = Claude::start(options).await.unwrap();
    claude.send("please ask the reviewer").unwrap();
    let (_, result) = until_result(&mut events).await;
    assert_eq!(result.result.as_deref(), Some("The reviewer is happy."));
    claude.close().await.unwrap();
    // The subagent's own request carries its definition's prompt.
    let sub = model
        .message_requests()
        .into_iter()
        .find(|r| {
            r.last_user_text()
                .is_some_and(|t| t.contains("REVIEW-TASK"))
        })
        .expect("the subagent's request");
    assert!(
        sub.body["system"].to_string().contains("REVIEWER-PERSONA"),
        "{}",
        sub.body["system"]
    );
}

#[test]
fn the_debug_of_options_shows_no_secret() {
    let mut settings = serde_json::Map::new();
    settings.insert("env".into(), json!({"BYRE_QUOTED": QUOTED_SECRET}));
    let options = Options::new()
        .env("ANTHROPIC_API_KEY", "sk-ant-debug-7781")
        .settings(settings)
        .mcp_config(
            "ext",
            json!({"type": "http", "url": "http://127.0.0.1:1/mcp",
                   "headers": {"Authorization": "Bearer hdr-5521"},
                   "env": {"BYRE_TOKEN": SECRET}}),
        );
    let shown = format!("{options:?} {:?}", options.launch());
    for secret in ["sk-ant-debug-7781", "hdr-5521", SECRET, "ed-9031"] {
        assert!(!shown.contains(secret), "{secret} in {shown}");
    }
    // What is not secret is still shown.
    assert!(shown.contains("ANTHROPIC_API_KEY"), "{shown}");
    assert!(shown.contains("Authorization"), "{shown}");
    assert!(shown.contains("http://127.0.0.1:1/mcp"), "{shown}");
}

/// A plugin with one slash command, in a folder of `root`.
fn probe_plugin(root: &std::path::Path) -> std::path::PathBuf {
    let dir = root.join("probe-plugin");
    std::fs::create_dir_all(dir.join(".claude-plugin")).unwrap();
    std::fs::create_dir_all(dir.join("commands")).unwrap();
    std::fs::write(
        dir.join(".claude-plugin/plugin.json"),
        r#"{"name": "probe", "version": "1.0.0", "description": "A probe"}"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("commands/greet.md"),
        "---\ndescription: Greets\n---\nSay hello.\n",
    )
    .unwrap();
    dir
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn denied_tools_directories_and_plugins_take_effect_either_way() {
    let version = byre_testkit::cli_under_test().unwrap();
    let takes_dirs = byre_session::transport::CliVersion::parse(&version)
        .is_some_and(|v| v >= byre_session::transport::CliVersion::parse("2.1.337").unwrap());
    for (delivery, dirs_in_initialize) in [
        (Delivery::Initialize, false),
        (Delivery::Argv, false),
        (Delivery::Initialize, true),
    ] {
        let model = FakeModel::start(Script::new().rule(Rule::any().reply(Reply::text("Done."))))
            .await
            .unwrap();
        let (options, env) = options(&model);
        // Outside the working directory: one inside it is no extra.
        let outside = tempfile::tempdir().unwrap();
        let extra = outside.path().to_owned();
        let plugin = probe_plugin(env.cwd());
        let mut options = options
            .disallowed_tools(["Edit"])
            .add_dir(&extra)
            .plugin_dir(&plugin)
            .delivery(delivery);
        if dirs_in_initialize {
            options = options.add_dirs_in_initialize();
        }
        let started = Claude::start(options).await;
        if dirs_in_initialize && !takes_dirs {
            // An older CLI refuses the field, and says which.
            let Err(error) = started else {
                panic!("CLI {version} took additionalDirectories");
            };
            assert!(
                error.to_string().contains("additionalDirectories"),
                "{error}"
            );
            continue;
        }
        let (claude, mut events) = started.unwrap();
        let response = claude.initialize_response().unwrap();
        let pid = response.pid.unwrap();
        let argv = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap();
        let argv = String::from_utf8_lossy(&argv).replace('\0', " ");
        let on_argv = delivery == Delivery::Argv;
        for flag in ["--disallowedTools", "--plugin-dir"] {
            assert_eq!(
                argv.contains(flag),
                on_argv,
                "{delivery:?}: {flag} in {argv}"
            );
        }
        assert_eq!(argv.contains("--add-dir"), !dirs_in_initialize, "{argv}");
        if !on_argv {
            let fields = if dirs_in_initialize {
                "settings,disallowedTools,additionalDirectories"
            } else {
                "settings,disallowedTools"
            };
            assert!(
                argv.contains(&format!("--initialize-fields={fields} ")),
                "{argv}"
            );
            assert_eq!(
                response.disallowed_tools_applied,
                Some(true),
                "{response:?}"
            );
            assert_eq!(response.plugins_applied, Some(true), "{response:?}");
        }
        if dirs_in_initialize {
            assert_eq!(response.additional_directories_applied, Some(true));
        }
        let commands = response.commands.as_deref().unwrap_or_default();
        assert!(
            commands.iter().any(|c| c.name == "probe:greet"),
            "{delivery:?}: {:?}",
            commands.iter().map(|c| &c.name).collect::<Vec<_>>()
        );
        claude.send("hello").unwrap();
        let (_, result) = until_result(&mut events).await;
        assert_eq!(result.result.as_deref(), Some("Done."));
        claude.close().await.unwrap();
        let request = &model.message_requests()[0];
        let tools = request.tool_names();
        assert!(
            !tools.iter().any(|t| t == "Edit"),
            "{delivery:?}: {tools:?}"
        );
        assert!(tools.iter().any(|t| t == "Read"), "{tools:?}");
        let body = request.body.to_string();
        let extra = extra.canonicalize().unwrap();
        assert!(
            body.contains(&*extra.to_string_lossy()),
            "{delivery:?}: the model is not told of the extra directory: {body}"
        );
    }
}
