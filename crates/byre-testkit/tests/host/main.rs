//! Tests of CLI provisioning, the offline environment and the scenario host that need no fake
//! API: the CLI is pointed at a loopback port that accepts no connection, so it can reach
//! nothing. If the CLI cannot be provisioned these tests fail with the reason.

use std::net::TcpListener;
use std::path::PathBuf;
use std::time::Duration;

use byre_proto::{
    CliMessage, CliRequest, ControlResponse, ControlResponseBody, HookOutput, HostRequest,
    InitializeRequest, McpStatusRequest, McpStatusResponse, PermissionResult, Unknown,
};
use byre_testkit::{
    claude_bin, cli_version, simple_mcp_server, ClaudeEnv, Host, HostError, HostOptions, McpTool,
    Responder, TranscriptDir, TranscriptKind, TranscriptLine, OFFLINE_API_KEY, PINNED_CLI_VERSION,
};
use serde_json::{json, Value};

mod transcript;

const T: Duration = Duration::from_secs(60);

/// The provisioned CLI, or a failure that says why.
fn bin() -> PathBuf {
    claude_bin().unwrap_or_else(|e| panic!("could not provision the Claude Code CLI: {e}"))
}

/// A loopback port that is bound but never accepts: the CLI can reach nothing through it.
struct DeadEnd {
    _listener: TcpListener,
    url: String,
}

fn dead_end() -> DeadEnd {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    let url = format!("http://{}", listener.local_addr().unwrap());
    DeadEnd {
        _listener: listener,
        url,
    }
}

fn transcript_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("transcripts")
        .join(format!("{name}.jsonl"))
}

/// Processes (not zombies) whose process group is `pgid`, read from `/proc`.
fn group_members(pgid: u32) -> Vec<u32> {
    let mut members = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return members;
    };
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses.
        let Some(after) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            continue;
        };
        let fields: Vec<&str> = after.split_whitespace().collect();
        if fields.len() > 2 && fields[0] != "Z" && fields[2] == pgid.to_string() {
            members.push(pid);
        }
    }
    members
}

/// Waits up to five seconds for the group to be empty.
async fn assert_group_gone(pgid: u32) {
    for _ in 0..100 {
        if group_members(pgid).is_empty() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("processes left in group {pgid}: {:?}", group_members(pgid));
}

#[test]
fn provisioning_gives_the_pinned_cli() {
    let bin = bin();
    assert!(bin.is_file(), "{} is not a file", bin.display());
    let version = cli_version(&bin).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(version, PINNED_CLI_VERSION);
    // A second call is answered from the same place.
    assert_eq!(claude_bin().unwrap(), bin);
}

#[tokio::test]
async fn env_sets_the_offline_variables_and_removes_inherited_ones() {
    let dead = dead_end();
    let env = ClaudeEnv::new(&dead.url).unwrap();
    assert!(env.home().is_dir());
    assert!(env.cwd().is_dir());
    assert_ne!(env.home(), env.cwd());
    assert_eq!(env.var("ANTHROPIC_BASE_URL"), Some(dead.url.as_str()));
    assert_eq!(env.var("ANTHROPIC_API_KEY"), Some(OFFLINE_API_KEY));
    assert_eq!(env.var("HOME"), env.home().to_str());
    for name in [
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
        "DISABLE_TELEMETRY",
        "DISABLE_AUTOUPDATER",
        "DISABLE_ERROR_REPORTING",
    ] {
        assert_eq!(env.var(name), Some("1"), "{name}");
    }
    let uid = std::process::Command::new("id").arg("-u").output().unwrap();
    let root = String::from_utf8_lossy(&uid.stdout).trim() == "0";
    assert_eq!(byre_testkit::running_as_root(), root);
    assert_eq!(env.var("IS_SANDBOX"), root.then_some("1"));

    // What a child really gets: inherited values are removed, ours are set, PATH is kept.
    let mut cmd = tokio::process::Command::new("env");
    cmd.env("CLAUDECODE", "1")
        .env("ANTHROPIC_AUTH_TOKEN", "real-token")
        .env("CLAUDE_CODE_OAUTH_TOKEN", "real-oauth")
        .env("ANTHROPIC_API_KEY", "real-key")
        .env("HTTPS_PROXY", "http://proxy.invalid:1")
        .env("https_proxy", "http://proxy.invalid:1");
    env.apply(&mut cmd);
    let out = cmd.output().await.expect("run env");
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let vars: Vec<(&str, &str)> = text.lines().filter_map(|l| l.split_once('=')).collect();
    let get = |name: &str| vars.iter().find(|(k, _)| *k == name).map(|(_, v)| *v);
    for gone in [
        "CLAUDECODE",
        "ANTHROPIC_AUTH_TOKEN",
        "CLAUDE_CODE_OAUTH_TOKEN",
        "HTTPS_PROXY",
        "https_proxy",
    ] {
        assert_eq!(get(gone), None, "{gone} reached the child");
    }
    assert_eq!(get("ANTHROPIC_API_KEY"), Some(OFFLINE_API_KEY));
    assert_eq!(get("ANTHROPIC_BASE_URL"), Some(dead.url.as_str()));
    assert_eq!(get("HOME"), env.home().to_str());
    assert!(get("PATH").is_some(), "PATH was not kept");

    // The child runs in the scratch directory.
    let mut pwd = tokio::process::Command::new("pwd");
    env.apply(&mut pwd);
    let out = pwd.output().await.unwrap();
    assert_eq!(
        String::from_utf8(out.stdout).unwrap().trim(),
        env.cwd().to_str().unwrap()
    );

    // Another working directory keeps the home; the directories go with the last user.
    let other = env.with_fresh_cwd().unwrap();
    assert_eq!(other.home(), env.home());
    assert_ne!(other.cwd(), env.cwd());
    let (home, cwd, other_cwd) = (
        env.home().to_path_buf(),
        env.cwd().to_path_buf(),
        other.cwd().to_path_buf(),
    );
    drop(env);
    assert!(home.is_dir(), "the home went away while still shared");
    assert!(!cwd.exists());
    drop(other);
    assert!(!home.exists());
    assert!(!other_cwd.exists());
}

#[tokio::test]
async fn malformed_first_line_exits_1() {
    let bin = bin();
    let dead = dead_end();
    let env = ClaudeEnv::new(&dead.url).unwrap();
    let mut host = Host::spawn(
        HostOptions::new(bin, &env).transcript(transcript_path("malformed_first_line")),
    )
    .await
    .unwrap();
    let pgid = host.pid().unwrap();
    host.note("a malformed first line");
    host.send_raw(br#"{"type":"user", this is not json"#)
        .await
        .unwrap();
    let exit = host.wait(T).await.unwrap();
    assert_eq!(exit.status.code(), Some(1), "stderr: {}", exit.stderr);
    assert!(
        exit.stderr.contains("Error parsing streaming input line"),
        "stderr: {}",
        exit.stderr
    );
    assert!(exit.messages.is_empty(), "{:?}", exit.messages);
    let raw = exit
        .transcript
        .iter()
        .find(|l| l.kind == TranscriptKind::Raw)
        .expect("the raw line is recorded");
    assert_eq!(raw.dir, TranscriptDir::Send);
    assert_eq!(raw.raw, r#"{"type":"user", this is not json"#);
    assert!(raw.msg().is_none());
    assert_eq!(raw.to_value()["raw"], raw.raw.as_str());
    assert!(
        raw.to_json().starts_with(r#"{"dir":"send","t":"#)
            && raw
                .to_json()
                .ends_with(r#","raw":"{\"type\":\"user\", this is not json"}"#),
        "{}",
        raw.to_json()
    );
    assert_group_gone(pgid).await;
}

#[tokio::test]
async fn control_requests_without_an_api() {
    let bin = bin();
    let dead = dead_end();
    let env = ClaudeEnv::new(&dead.url).unwrap();
    let mut host =
        Host::spawn(HostOptions::new(bin, &env).transcript(transcript_path("control_requests")))
            .await
            .unwrap();
    let pgid = host.pid().unwrap();

    let init = host
        .initialize(InitializeRequest::default(), T)
        .await
        .unwrap();
    assert_eq!(
        init.claude_code_version.as_deref(),
        Some(PINNED_CLI_VERSION)
    );

    let status: McpStatusResponse = host.call(McpStatusRequest::default(), T).await.unwrap();
    assert_eq!(status.mcp_servers.as_deref().map(<[_]>::len), Some(0));

    // Nothing else is coming: `next` times out, and the host stays usable.
    match host.next(Duration::from_millis(200)).await {
        Err(HostError::Timeout { .. }) => {}
        other => panic!("expected a timeout, got {other:?}"),
    }

    let bogus = HostRequest::Unknown(Unknown {
        fields: [("subtype".to_owned(), json!("bogus_subtype"))]
            .into_iter()
            .collect(),
        mismatch: None,
    });
    let answer = host.request(bogus, T).await.unwrap();
    match answer.response {
        ControlResponseBody::Error(error) => {
            assert_eq!(
                error.error_code.as_ref().map(|c| c.as_str()),
                Some("unsupported_request")
            );
            assert!(error.error.unwrap_or_default().contains("bogus_subtype"));
        }
        other => panic!("expected an error, got {other:?}"),
    }

    host.close_stdin();
    let exit = host.wait(T).await.unwrap();
    assert!(exit.status.success(), "{:?}: {}", exit.status, exit.stderr);
    assert!(exit.messages.is_empty(), "{:?}", exit.messages);

    // The transcript: argv note, then three requests and three answers, in order.
    let lines: Vec<&TranscriptLine> = exit
        .transcript
        .iter()
        .filter(|l| l.dir != TranscriptDir::Note)
        .collect();
    let msgs: Vec<Value> = lines.iter().map(|l| l.msg().unwrap()).collect();
    let summary: Vec<String> = lines
        .iter()
        .zip(&msgs)
        .map(|(l, msg)| format!("{} {}", l.dir, msg["type"].as_str().unwrap()))
        .collect();
    assert_eq!(
        summary,
        [
            "send control_request",
            "recv control_response",
            "send control_request",
            "recv control_response",
            "send control_request",
            "recv control_response",
        ]
    );
    assert_eq!(msgs[0]["request_id"], "req_1");
    assert_eq!(msgs[5]["response"]["request_id"], "req_3");
    let times: Vec<f64> = exit.transcript.iter().map(|l| l.t).collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "{times:?}");
    assert!(exit.transcript[0].note().unwrap().starts_with("argv: "));

    // The CLI's own key order is kept: in the answer `subtype` comes before `request_id`
    // (sorted keys would put it last).
    let answer = &lines[1].raw;
    assert!(
        answer.starts_with(
            r#"{"type":"control_response","response":{"subtype":"success","request_id":"req_1","#
        ),
        "{answer}"
    );
    // The file holds each line's exact text, after `dir` and `t`.
    let file = std::fs::read_to_string(transcript_path("control_requests")).unwrap();
    let file_lines: Vec<&str> = file.lines().collect();
    assert_eq!(file_lines.len(), exit.transcript.len());
    for (text, line) in file_lines.iter().zip(&exit.transcript) {
        assert_eq!(*text, line.to_json());
        let parsed: Value = serde_json::from_str(text).unwrap();
        assert_eq!(parsed, line.to_value());
        if line.kind == TranscriptKind::Msg {
            let prefix = format!(r#"{{"dir":"{}","t":"#, line.dir);
            assert!(text.starts_with(&prefix), "{text}");
            assert!(
                text.ends_with(&format!(r#","msg":{}}}"#, line.raw)),
                "{text}"
            );
        }
    }
    assert_group_gone(pgid).await;
}

#[tokio::test]
async fn sdk_mcp_server_is_served_during_initialize() {
    let bin = bin();
    let dead = dead_end();
    let env = ClaudeEnv::new(&dead.url).unwrap();
    let lookup = McpTool::new(
        "lookup",
        "Looks a key up.",
        json!({"type": "object", "properties": {"key": {"type": "string"}}}),
        |args| Ok(format!("value of {}", args["key"])),
    );
    let options = HostOptions::new(bin, &env)
        .args([
            "--mcp-config",
            r#"{"mcpServers":{"byre":{"type":"sdk","name":"byre"}}}"#,
        ])
        .responder(Responder::new().mcp_server("byre", simple_mcp_server("byre", vec![lookup])))
        .transcript(transcript_path("sdk_mcp_server"));
    let mut host = Host::spawn(options).await.unwrap();
    let pgid = host.pid().unwrap();

    host.initialize(InitializeRequest::default(), T)
        .await
        .unwrap();
    // The CLI's MCP requests came before the answer; they are queued, already answered.
    let mut methods = Vec::new();
    while let Some(CliMessage::ControlRequest(request)) =
        host.next(Duration::from_millis(500)).await.ok().flatten()
    {
        if let CliRequest::McpMessage(mcp) = &request.request {
            assert_eq!(mcp.server_name, "byre");
            methods.push(mcp.message.method.clone().unwrap_or_default());
        }
    }
    assert_eq!(methods.first().map(String::as_str), Some("initialize"));

    let status: McpStatusResponse = host.call(McpStatusRequest::default(), T).await.unwrap();
    let servers = status.mcp_servers.unwrap_or_default();
    let byre = servers
        .iter()
        .find(|s| s.name == "byre")
        .expect("byre is listed");
    assert_eq!(
        serde_json::to_value(byre).unwrap()["status"],
        "connected",
        "{byre:?}"
    );

    host.close_stdin();
    let exit = host.wait(T).await.unwrap();
    assert!(exit.status.success(), "{:?}: {}", exit.status, exit.stderr);
    assert_group_gone(pgid).await;
}

#[tokio::test]
async fn dropping_the_host_kills_the_process_group() {
    let bin = bin();
    let dead = dead_end();
    let env = ClaudeEnv::new(&dead.url).unwrap();
    let mut host = Host::spawn(HostOptions::new(bin, &env)).await.unwrap();
    let pgid = host.pid().unwrap();
    host.initialize(InitializeRequest::default(), T)
        .await
        .unwrap();
    assert!(!group_members(pgid).is_empty(), "the CLI should be running");
    drop(host);
    assert_group_gone(pgid).await;
}

#[tokio::test]
async fn requests_to_an_exited_cli_fail_with_its_stderr() {
    let bin = bin();
    let dead = dead_end();
    let env = ClaudeEnv::new(&dead.url).unwrap();
    let mut host = Host::spawn(HostOptions::new(bin, &env)).await.unwrap();
    let pgid = host.pid().unwrap();
    host.send_raw(b"not json at all").await.unwrap();
    match host.call(McpStatusRequest::default(), T).await {
        Err(HostError::Exited {
            status,
            stderr_tail,
        }) => {
            assert!(status.contains('1'), "{status}");
            assert!(
                stderr_tail.contains("Error parsing streaming input line"),
                "{stderr_tail}"
            );
        }
        other => panic!("expected Exited, got {other:?}"),
    }
    assert_group_gone(pgid).await;
}

/// The answer to one CLI request line.
fn answer(responder: &Responder, line: Value) -> Value {
    let message = CliMessage::from_slice(line.to_string().as_bytes()).unwrap();
    let CliMessage::ControlRequest(request) = message else {
        panic!("not a control request: {line}");
    };
    let response: ControlResponse = responder.answer(&request);
    serde_json::to_value(&response).unwrap()["response"].clone()
}

#[test]
fn responder_answers_by_callback_tool_and_server() {
    let responder = Responder::new()
        .hook("hook_0", |_| HookOutput::block("keep going"))
        .can_use_tool(|ask| PermissionResult::deny(format!("no {}", ask.tool_name)))
        .mcp_server(
            "byre",
            simple_mcp_server(
                "byre",
                vec![McpTool::new(
                    "fail",
                    "Fails.",
                    json!({"type": "object"}),
                    |_| Err("it broke".into()),
                )],
            ),
        );
    let request =
        |body: Value| json!({"type": "control_request", "request_id": "r1", "request": body});

    let hook = answer(
        &responder,
        request(json!({"subtype": "hook_callback", "callback_id": "hook_0",
            "input": {"hook_event_name": "Stop", "session_id": "s"}})),
    );
    assert_eq!(hook["subtype"], "success");
    assert_eq!(hook["request_id"], "r1");
    assert_eq!(
        hook["response"],
        json!({"decision": "block", "reason": "keep going"})
    );

    let unknown_hook = answer(
        &responder,
        request(json!({"subtype": "hook_callback", "callback_id": "hook_9",
            "input": {"hook_event_name": "Stop"}})),
    );
    assert_eq!(unknown_hook["subtype"], "error");

    let ask = answer(
        &responder,
        request(json!({"subtype": "can_use_tool", "tool_name": "Bash", "input": {}})),
    );
    assert_eq!(
        ask["response"],
        json!({"behavior": "deny", "message": "no Bash"})
    );

    let mcp = |server: &str, message: Value| {
        answer(
            &responder,
            request(json!({"subtype": "mcp_message", "server_name": server, "message": message})),
        )
    };
    let init = mcp(
        "byre",
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25"}}),
    );
    assert_eq!(
        init["response"]["mcp_response"]["result"]["protocolVersion"],
        "2025-11-25"
    );
    let ack = mcp(
        "byre",
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
    assert_eq!(
        ack["response"],
        json!({"mcp_response": {"jsonrpc": "2.0", "result": {}}})
    );
    let call = mcp(
        "byre",
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "fail", "arguments": {}}}),
    );
    assert_eq!(call["response"]["mcp_response"]["id"], 2);
    assert_eq!(call["response"]["mcp_response"]["result"]["isError"], true);
    assert_eq!(
        call["response"]["mcp_response"]["result"]["content"][0]["text"],
        "it broke"
    );
    let nobody = mcp(
        "other",
        json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list"}),
    );
    assert_eq!(nobody["subtype"], "success");
    assert_eq!(nobody["response"]["mcp_response"]["error"]["code"], -32601);
    assert_eq!(nobody["response"]["mcp_response"]["id"], 5);

    let odd = answer(&responder, request(json!({"subtype": "brand_new_thing"})));
    assert_eq!(odd["subtype"], "error");
    assert_eq!(odd["error_code"], "unsupported_request");
}
