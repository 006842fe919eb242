//! The surface users program against, against the real CLI: safe defaults (a tool that needs
//! approval is denied when no one is there to ask, the program's own tools run, a permission
//! handler is asked, never shadowed), hooks that fail closed, typed start-up and turn errors,
//! turn helpers and structured output.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use byre_session::proto::ResultSubtype;
use byre_session::proto::{HookEvent, HookOutput, PermissionMode};
use byre_session::transport::LaunchError;
use byre_session::{Claude, Error, Hook, McpServer, Options, TurnError, UsageError};
use byre_testkit::{ClaudeEnv, FakeModel, Match, Reply, Rule, Script};
use serde::Deserialize;
use serde_json::json;

use crate::support::{options, touch_script};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_permission_handler_is_asked_under_default_options() {
    let model = FakeModel::start(touch_script()).await.unwrap();
    let (options, env) = options(&model);
    let asked = Arc::new(AtomicUsize::new(0));
    let count = asked.clone();
    // No permission mode chosen: byre starts the CLI in `default`, whatever the settings say.
    let options = options.can_use_tool(move |request| {
        count.fetch_add(1, Ordering::SeqCst);
        let answer = if request.tool_name == "Bash" {
            request.deny("no shell in this test")
        } else {
            request.allow()
        };
        async move { Ok(answer) }
    });
    let (claude, mut events) = Claude::start(options).await.unwrap();
    claude.send("make a file").unwrap();
    let output = events.turn().finish().await.unwrap();
    assert_eq!(output.text, "Done.");
    assert_eq!(asked.load(Ordering::SeqCst), 1);
    assert!(!env.cwd().join("made.txt").exists(), "the denied Bash ran");
    let requests = model.message_requests();
    assert!(requests[1]
        .tool_results()
        .join("\n")
        .contains("no shell in this test"));
    claude.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_no_mode_and_no_handler_a_tool_that_needs_approval_is_denied() {
    let model = FakeModel::start(touch_script()).await.unwrap();
    let (options, env) = options(&model);
    let (claude, mut events) = Claude::start(options).await.unwrap();
    claude.send("make a file").unwrap();
    let output = events.turn().finish().await.unwrap();
    assert_eq!(output.text, "Done.");
    assert!(
        !env.cwd().join("made.txt").exists(),
        "an unapproved Bash ran"
    );
    let denials = output.permission_denials();
    assert_eq!(denials.len(), 1, "{denials:?}");
    assert_eq!(denials[0].tool_name, "Bash");
    let input = denials[0]
        .tool_input
        .as_ref()
        .expect("the denied call's input");
    assert_eq!(input["command"], "touch made.txt");
    let told = model.message_requests()[1].tool_results().join("\n");
    assert!(told.contains("needs approval"), "{told}");
    claude.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_programs_own_tools_run_unasked_unless_a_permission_handler_is_registered() {
    let script = Script::new()
        .rule(Rule::when(Match::has_tool_result(true)).reply(Reply::text("Looked.")))
        .rule(Rule::any().reply(Reply::tool_use(
            "mcp__byre__lookup",
            json!({"word": "byre"}),
        )));
    for with_handler in [false, true] {
        let model = FakeModel::start(script.clone()).await.unwrap();
        let (options, _env) = options(&model);
        let calls = Arc::new(std::sync::Mutex::new(Vec::new()));
        let server = McpServer::tools("byre", [crate::mcp::lookup(calls.clone())]).unwrap();
        let mut options = options.serve_mcp(server);
        let asked = Arc::new(std::sync::Mutex::new(Vec::new()));
        if with_handler {
            let asked = asked.clone();
            options = options.can_use_tool(move |request| {
                asked.lock().unwrap().push(request.tool_name.clone());
                let answer = request.deny("not today");
                async move { Ok(answer) }
            });
        }
        let (claude, mut events) = Claude::start(options).await.unwrap();
        claude.send("look up byre").unwrap();
        assert_eq!(events.turn().finish().await.unwrap().text, "Looked.");
        claude.close().await.unwrap();
        let told = model.message_requests()[1].tool_results().join("\n");
        if with_handler {
            assert_eq!(*asked.lock().unwrap(), ["mcp__byre__lookup"]);
            assert!(calls.lock().unwrap().is_empty(), "a denied tool ran");
            assert!(told.contains("not today"), "{told}");
        } else {
            assert_eq!(*calls.lock().unwrap(), ["byre"]);
            assert!(told.contains("a cow shed"), "{told}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_explicit_bypass_with_a_permission_handler_is_refused_before_anything_starts() {
    let options = Options::new()
        .program("/nonexistent/claude")
        .permission_mode(PermissionMode::BYPASS_PERMISSIONS)
        .can_use_tool(|r| async move { Ok(r.allow()) });
    let err = Claude::start(options).await.unwrap_err();
    assert!(
        matches!(&err, Error::Usage(UsageError::PermissionHandlerShadowed { mode }) if mode == "bypassPermissions"),
        "{err}"
    );
    assert!(err.to_string().contains("leave the mode unset"), "{err}");
    let dont_ask = Options::new()
        .permission_mode("dontAsk")
        .can_use_tool(|r| async move { Ok(r.allow()) });
    assert!(matches!(
        Claude::start(dont_ask).await.unwrap_err(),
        Error::Usage(UsageError::PermissionHandlerShadowed { .. })
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_raw_handler_for_a_subtype_byre_routes_itself_is_refused() {
    for subtype in ["mcp_message", "hook_callback"] {
        let options = Options::new()
            .program("/nonexistent/claude")
            .raw_handler(subtype, Arc::new(|_| Box::pin(async { Ok(json!({})) })));
        let err = Claude::start(options).await.unwrap_err();
        assert!(
            matches!(&err, Error::Usage(UsageError::ReservedSubtype { subtype: s }) if s == subtype),
            "{err}"
        );
    }
}

/// Runs the touch script with a fail-closed PreToolUse hook for Bash whose handler is
/// `handler`; returns whether the file was made and the tool result the model read.
async fn guarded<F, Fut>(hook: Hook, handler: F) -> (bool, String)
where
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<HookOutput, byre_session::HandlerError>>
        + Send
        + 'static,
{
    let model = FakeModel::start(touch_script()).await.unwrap();
    let (options, env) = options(&model);
    // The hook is the only guard: the mode lets every tool run unasked.
    let options = options
        .permission_mode(PermissionMode::BYPASS_PERMISSIONS)
        .hook(hook, move |_input, _id| handler());
    let (claude, mut events) = Claude::start(options).await.unwrap();
    claude.send("make a file").unwrap();
    let output = events.turn().finish().await.unwrap();
    assert_eq!(output.text, "Done.");
    claude.close().await.unwrap();
    let requests = model.message_requests();
    (
        env.cwd().join("made.txt").exists(),
        requests[1].tool_results().join("\n"),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fail_closed_hook_that_fails_blocks_the_tool() {
    let hook = Hook::new(HookEvent::PRE_TOOL_USE)
        .matcher("Bash")
        .fail_closed();
    let (made, told) = guarded(hook, || async {
        Err(std::io::Error::other("policy service unreachable").into())
    })
    .await;
    assert!(!made, "the tool ran although its guard failed");
    assert!(told.contains("policy service unreachable"), "{told}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fail_closed_hook_that_panics_or_times_out_blocks_the_tool() {
    let hook = Hook::new(HookEvent::PRE_TOOL_USE)
        .matcher("Bash")
        .fail_closed();
    let (made, told) = guarded(hook.clone(), || async { panic!("the policy hook broke") }).await;
    assert!(!made, "the tool ran although its guard panicked");
    assert!(told.contains("panicked"), "{told}");
    let slow = hook.timeout(Duration::from_secs(1));
    let (made, told) = guarded(slow, || async {
        tokio::time::sleep(Duration::from_secs(30)).await;
        Ok(HookOutput::none())
    })
    .await;
    assert!(!made, "the tool ran although its guard timed out");
    assert!(told.contains("did not answer"), "{told}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hook_that_fails_open_lets_the_tool_run() {
    let (made, _) = guarded(
        Hook::new(HookEvent::PRE_TOOL_USE).matcher("Bash"),
        || async { Err("policy service unreachable".into()) },
    )
    .await;
    assert!(made, "a hook that fails open lets the call go on");
}

#[derive(Debug, Deserialize, schemars::JsonSchema, PartialEq)]
struct Verdict {
    approve: bool,
    reasons: Vec<String>,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn structured_output_decodes_into_a_rust_type() {
    let script = Script::new()
        .rule(Rule::when(Match::has_tool_result(true)).reply(Reply::text("Verdict given.")))
        .rule(
            Rule::when(Match::tool_offered("StructuredOutput")).reply(Reply::tool_use(
                "StructuredOutput",
                json!({"approve": true, "reasons": ["small change", "tests pass"]}),
            )),
        )
        .rule(Rule::any().reply(Reply::text("No schema here.")));
    let model = FakeModel::start(script).await.unwrap();
    let (options, _env) = options(&model);
    let (claude, mut events) = Claude::start(options.output_schema::<Verdict>())
        .await
        .unwrap();
    claude.send("review it").unwrap();
    let output = events.turn().finish().await.unwrap();
    let verdict: Verdict = output.structured().unwrap();
    assert_eq!(
        verdict,
        Verdict {
            approve: true,
            reasons: vec!["small change".into(), "tests pass".into()],
        }
    );
    claude.close().await.unwrap();
    // Without a schema there is none, and that is a typed error.
    let (options, _env) = crate::support::options(&model);
    let (claude, mut events) = Claude::start(options).await.unwrap();
    claude.send("review it").unwrap();
    let plain = events.turn().finish().await.unwrap();
    assert_eq!(plain.text, "No schema here.");
    assert!(matches!(
        plain.structured::<Verdict>(),
        Err(TurnError::NoStructuredOutput)
    ));
    claude.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn start_up_failures_are_typed_by_their_real_causes() {
    // Not found.
    let err = Claude::start(Options::new().program("/nonexistent/claude"))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::Launch(e) if matches!(**e, LaunchError::NotFound { .. })),
        "{err}"
    );
    assert!(
        std::error::Error::source(&err).is_some(),
        "the chain goes on"
    );
    let dir = tempfile::tempdir().unwrap();
    // Not executable.
    let plain = dir.path().join("claude-plain");
    std::fs::write(&plain, "not a program").unwrap();
    let err = Claude::start(Options::new().program(&plain))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::Launch(e) if matches!(**e, LaunchError::NotExecutable { .. })),
        "{err}"
    );
    // Exited early, with its status and stderr.
    let early = dir.path().join("claude-early");
    std::fs::write(&early, "#!/bin/sh\necho 'cannot start today' >&2\nexit 3\n").unwrap();
    make_executable(&early);
    let err = Claude::start(Options::new().program(&early))
        .await
        .unwrap_err();
    match &err {
        Error::Launch(e) => match &**e {
            LaunchError::ExitedEarly {
                status,
                stderr_tail,
                ..
            } => {
                assert_eq!(status.code(), Some(3));
                assert!(stderr_tail.contains("cannot start today"), "{stderr_tail}");
            }
            other => panic!("{other}"),
        },
        other => panic!("{other}"),
    }
    // An unknown session to resume.
    let model = FakeModel::start(Script::new()).await.unwrap();
    let (options, _env) = options(&model);
    let missing = "7c3f0f52-0c1e-4b39-9b7e-00000000beef";
    let err = Claude::start(options.clone().resume(missing))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::UnknownSession { session_id, .. } if session_id == missing),
        "{err}"
    );
    // Refused as root with bypassPermissions (only where the tests run as root).
    if byre_testkit::running_as_root() {
        let bypass = options.permission_mode(PermissionMode::BYPASS_PERMISSIONS);
        let err = Claude::start(bypass.env("IS_SANDBOX", "0"))
            .await
            .unwrap_err();
        assert!(
            matches!(&err, Error::Launch(e) if matches!(**e, LaunchError::RootBypass { .. })),
            "{err}"
        );
    }
}

#[cfg(unix)]
fn make_executable(path: &std::path::Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cli_without_credentials_fails_the_turn_as_not_logged_in() {
    let model = FakeModel::start(Script::new()).await.unwrap();
    let mut env = ClaudeEnv::new(&model.base_url()).unwrap();
    env.remove_var("ANTHROPIC_API_KEY");
    let (claude, mut events) = Claude::start(env.options().unwrap()).await.unwrap();
    claude.send("hello").unwrap();
    let err = events.turn().finish().await.unwrap_err();
    assert!(matches!(err, TurnError::NotLoggedIn { .. }), "{err}");
    assert!(model.message_requests().is_empty());
    claude.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_turns_are_typed() {
    let script = Script::new()
        .rule(
            Rule::when(Match::user_text_contains("loop forever")).reply(Reply::tool_use(
                "Bash",
                json!({"command": "echo again", "description": "Echo"}),
            )),
        )
        .rule(
            Rule::when(Match::user_text_contains("server down")).reply(Reply::error(
                500,
                "api_error",
                "the fake is down",
            )),
        )
        .rule(
            Rule::when(Match::user_text_contains("bad request")).reply(Reply::error(
                400,
                "invalid_request_error",
                "no such thing",
            )),
        )
        .rule(Rule::any().reply(Reply::tool_use(
            "Bash",
            json!({"command": "echo again", "description": "Echo"}),
        )));
    let model = FakeModel::start(script).await.unwrap();
    let (options, _env) = options(&model);
    let (claude, mut events) = Claude::start(options.max_turns(1)).await.unwrap();
    claude.send("bad request").unwrap();
    match events.turn().finish().await.unwrap_err() {
        TurnError::Api { status, result, .. } => {
            assert_eq!(status, Some(400));
            assert_eq!(result.is_error, Some(true));
        }
        other => panic!("{other}"),
    }
    // The test environment does not retry: a 500 fails the turn at its first request.
    let before = model.message_requests().len();
    claude.send("server down").unwrap();
    match events.turn().finish().await.unwrap_err() {
        TurnError::Api { status, .. } => assert_eq!(status, Some(500)),
        other => panic!("{other}"),
    }
    assert_eq!(
        model.message_requests().len(),
        before + 1,
        "the CLI retried"
    );
    claude.send("loop forever").unwrap();
    match events.turn().finish().await.unwrap_err() {
        TurnError::MaxTurns { result } => {
            assert_eq!(result.subtype, ResultSubtype::ERROR_MAX_TURNS)
        }
        other => panic!("{other}"),
    }
    claude.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_turn_text_comes_from_whole_messages_when_nothing_streams() {
    let script = Script::new()
        .rule(Rule::when(Match::has_tool_result(true)).reply(Reply::text("Second part.")))
        .rule(Rule::any().reply(Reply::message(vec![
            byre_testkit::Block::text("First part."),
            byre_testkit::Block::tool_use("Bash", json!({"command": "echo hi"})),
        ])));
    for partial in [true, false] {
        let model = FakeModel::start(script.clone()).await.unwrap();
        let (options, _env) = options(&model);
        let (claude, mut events) = Claude::start(options.partial_messages(partial))
            .await
            .unwrap();
        claude.send("go").unwrap();
        let mut pieces = String::new();
        let output = events
            .turn()
            .on_text(|piece| pieces.push_str(piece))
            .await
            .unwrap();
        assert_eq!(
            output.text, "First part.\n\nSecond part.",
            "partial: {partial}"
        );
        assert_eq!(pieces, output.text);
        assert!(output.cost_usd().is_some());
        // Two model requests: the one that called Bash, and the answer.
        assert_eq!(output.num_turns(), Some(2));
        assert!(output.duration().is_some());
        assert_eq!(output.session_id(), claude.session_id().as_deref());
        claude.close().await.unwrap();
    }
}

#[test]
fn the_review_bot_example_does_all_it_says() {
    // Built by `cargo test` already (examples are); `cargo run` then only runs it.
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = std::process::Command::new(cargo)
        .args(["run", "-q", "-p", "byre-session", "--example", "review_bot"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    // The permission handler was asked (for the copy; the rm never got that far).
    assert_eq!(
        stderr.matches("[permission asked: Bash]").count(),
        1,
        "{stderr}"
    );
    assert!(stdout.contains("The change sets n to 2"), "{stdout}");
    assert!(
        stdout.contains("verdict: approve=true (a one-line change)"),
        "{stdout}"
    );
    assert!(stdout.contains("Line one sets n."), "{stdout}");
    assert!(stdout.contains("[interrupted]"), "{stdout}");
    let last = stdout.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("cost $0.") && last.contains("· session "),
        "{last}"
    );
}

/// A stand-in CLI that answers `initialize` with `answer` and then reads until stdin closes.
fn stand_in(dir: &std::path::Path, answer: &str) -> std::path::PathBuf {
    let path = dir.join("claude-stand-in");
    let script = format!(
        "#!/bin/sh\nread line\necho '{{\"type\":\"control_response\",\"response\":{{\"subtype\":\"success\",\"request_id\":\"req_1\",\"response\":{answer}}}}}'\ncat >/dev/null\n"
    );
    std::fs::write(&path, script).unwrap();
    make_executable(&path);
    path
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fail_closed_hook_needs_a_cli_that_supports_on_failure() {
    let dir = tempfile::tempdir().unwrap();
    let guard = || {
        Hook::new(HookEvent::PRE_TOOL_USE)
            .matcher("Bash")
            .fail_closed()
    };
    let old = stand_in(dir.path(), "{}");
    let options = Options::new()
        .program(&old)
        .hook(guard(), |_, _| async { Ok(HookOutput::none()) });
    let err = Claude::start(options).await.unwrap_err();
    assert!(
        matches!(&err, Error::Usage(UsageError::OnFailureUnsupported { event }) if event == "PreToolUse"),
        "{err}"
    );
    // A hook that fails open works with it; one the CLI says it did not apply does not.
    let options = Options::new()
        .program(&old)
        .hook(HookEvent::PRE_TOOL_USE, |_, _| async {
            Ok(HookOutput::none())
        });
    let (claude, _events) = Claude::start(options).await.unwrap();
    claude.close().await.unwrap();
    let refusing = stand_in(
        dir.path(),
        r#"{"hooks_applied":false,"hook_on_failure_supported":true}"#,
    );
    let options = Options::new()
        .program(&refusing)
        .hook(guard(), |_, _| async { Ok(HookOutput::none()) });
    let err = Claude::start(options).await.unwrap_err();
    assert!(
        matches!(&err, Error::Usage(UsageError::HooksNotApplied)),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cli_older_than_the_supported_range_is_refused_with_both_versions() {
    let dir = tempfile::tempdir().unwrap();
    let old = stand_in(dir.path(), r#"{"claude_code_version":"2.0.14"}"#);
    let err = Claude::start(Options::new().program(&old))
        .await
        .unwrap_err();
    match &err {
        Error::UnsupportedCli { found, oldest } => {
            assert_eq!(found.to_string(), "2.0.14");
            assert_eq!(*oldest, byre_session::OLDEST_SUPPORTED_CLI);
        }
        other => panic!("{other}"),
    }
    let message = err.to_string();
    assert!(
        message.contains("2.0.14") && message.contains("2.1.328"),
        "{message}"
    );
    assert_eq!(err.fault(), byre_session::Fault::Launch);
    // Allowed on purpose, it starts.
    let options = Options::new().program(&old).any_cli_version();
    let (claude, _events) = Claude::start(options).await.unwrap();
    claude.close().await.unwrap();
    // A newer CLI than tested starts (with a warning), and so does one that names no
    // version.
    for answer in [r#"{"claude_code_version":"9.0.0"}"#, "{}"] {
        let cli = stand_in(dir.path(), answer);
        let (claude, _events) = Claude::start(Options::new().program(&cli)).await.unwrap();
        claude.close().await.unwrap();
    }
}

#[test]
fn the_supported_range_matches_the_tested_clis() {
    use byre_session::proto::CliVersion;
    use byre_session::{NEWEST_TESTED_CLI, OLDEST_SUPPORTED_CLI};
    let pinned = CliVersion::parse(byre_testkit::PINNED_CLI_VERSION).unwrap();
    assert_eq!(pinned.to_string(), NEWEST_TESTED_CLI.to_string());
    let oldest = byre_testkit::MATRIX_CLI_VERSIONS
        .iter()
        .map(|v| CliVersion::parse(v).unwrap())
        .min()
        .unwrap_or(pinned);
    assert_eq!(oldest.to_string(), OLDEST_SUPPORTED_CLI.to_string());
}

#[test]
fn the_sdk_options_table_names_only_methods_that_exist() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let table = std::fs::read_to_string(root.join("../docs/sdk-options.md")).unwrap();
    let mut sources = String::new();
    for dir in ["src", "src/driver"] {
        for entry in std::fs::read_dir(root.join(dir)).unwrap().flatten() {
            if entry.path().extension().is_some_and(|e| e == "rs") {
                sources.push_str(&std::fs::read_to_string(entry.path()).unwrap());
            }
        }
    }
    let mut named = 0;
    for (prefix, kind) in [("O::", "Options"), ("Claude::", "Claude")] {
        for piece in table.split(prefix).skip(1) {
            let name: String = piece
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                .collect();
            if name.is_empty() || name == "x" {
                continue;
            }
            named += 1;
            let defined = sources.contains(&format!("pub fn {name}("))
                || sources.contains(&format!("pub fn {name}<"))
                || sources.contains(&format!("pub async fn {name}("))
                || sources.contains(&format!("pub async fn {name}<"));
            assert!(
                defined,
                "docs/sdk-options.md names {kind}::{name}, which does not exist"
            );
        }
    }
    assert!(named > 80, "{named}");
}
