//! What the CLI's environment holds: a store's credentials are held back unless
//! `--pass-store-credentials` asks for them (the real CLI's `printenv` against the
//! S3-compatible test server), and `--clear-env` passes on only the allowed variables (a
//! stand-in that reports its environment).

use byre_testkit::{Block, Match, Reply, Rule, S3Server, Script};
use serde_json::{json, Value};

use crate::support::{byre_in, output, Offline};

/// The store's secret key in these tests.
const STORE_SECRET: &str = "store-secret-byre-6712";

/// The variable names `byre-hostile --mode env` reported in its result.
fn reported_names(stdout: &str) -> Vec<String> {
    let result = stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("every line is JSON"))
        .find(|m| m["type"] == "result")
        .expect("a result");
    let names = result["result"].as_str().expect("the names");
    names.split(' ').map(str::to_owned).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cleared_environment_holds_only_the_allowed_variables() {
    let mut offline = Offline::start(Script::new()).await;
    offline.env.set_var("BYRE_KEEP_ME", "1");
    offline.env.set_var("BYRE_DROP_ME", "1");
    offline.env.set_var("AWS_SECRET_ACCESS_KEY", STORE_SECRET);
    offline.env.set_var("GITHUB_TOKEN", "not-for-the-cli");
    let bin = byre_testkit::hostile_bin().expect("byre-hostile builds");
    let allow = "BYRE_KEEP_ME,BYRE_HOSTILE_ARGS";
    let args = [
        "run",
        "--claude",
        bin.to_str().unwrap(),
        "--clear-env",
        "--env-allow",
        allow,
        "--output",
        "json",
        "hi",
    ];
    let mut command = byre_in(&offline.env, &args);
    command.env("BYRE_HOSTILE_ARGS", "--mode env");
    let out = output(command, None).await;
    assert!(out.status.success(), "{out:?}");
    let names = reported_names(&out.stdout);
    for kept in ["BYRE_KEEP_ME", "PATH", "HOME", "ANTHROPIC_BASE_URL"] {
        assert!(names.iter().any(|n| n == kept), "{kept} kept: {names:?}");
    }
    let mut allowed: Vec<&str> = byre_transport::DEFAULT_ENV_ALLOW.to_vec();
    allowed.extend(["BYRE_KEEP_ME", "BYRE_HOSTILE_ARGS", "BYRE_PROCESS_TAG"]);
    for name in &names {
        assert!(
            byre_transport::env_allowed(&allowed, name.as_ref()),
            "{name} is not allowed: {names:?}"
        );
    }

    // Without the flag, everything is inherited.
    let mut command = byre_in(
        &offline.env,
        &args[..3]
            .iter()
            .chain(&args[6..])
            .copied()
            .collect::<Vec<_>>(),
    );
    command.env("BYRE_HOSTILE_ARGS", "--mode env");
    let out = output(command, None).await;
    assert!(out.status.success(), "{out:?}");
    let names = reported_names(&out.stdout);
    for inherited in ["BYRE_DROP_ME", "AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN"] {
        assert!(
            names.iter().any(|n| n == inherited),
            "{inherited}: {names:?}"
        );
    }
}

/// Runs `printenv` through the real CLI's Bash tool in a session stored on the S3-compatible
/// test server, with `extra` flags; returns what the tool printed, as the model got it, and
/// the transcript.
async fn printenv_with_a_store(extra: &[&str]) -> (String, String) {
    let server = tokio::task::spawn_blocking(S3Server::start)
        .await
        .unwrap()
        .expect("the S3-compatible test server starts");
    server.create_bucket("byre-env").unwrap();
    let script = Script::new()
        .rule(Rule::when(Match::has_tool_result(true)).reply(Reply::text("Printed.")))
        .rule(Rule::any().reply(Reply::message(vec![Block::tool_use(
            "Bash",
            json!({"command": "printenv", "description": "Show the environment"}),
        )])));
    let mut offline = Offline::start(script).await;
    for (name, value) in server.env() {
        offline.env.set_var(name, value);
    }
    offline.env.set_var("AWS_SECRET_ACCESS_KEY", STORE_SECRET);
    let transcript = offline.env.home().join("env.jsonl");
    let mut args = vec![
        "--store",
        "s3://byre-env/ci",
        "--transcript",
        transcript.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    args.push("print the environment");
    let out = output(offline.run(&args), None).await;
    assert!(out.status.success(), "{out:?}");
    let requests = offline.model.message_requests();
    let last = requests.last().expect("a request");
    let sent = serde_json::to_string(last.messages()).unwrap();
    assert!(sent.contains("ANTHROPIC_BASE_URL"), "printenv ran: {sent}");
    let transcript = std::fs::read_to_string(&transcript).unwrap();
    (sent, transcript)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_s_credentials_do_not_reach_the_cli_unless_asked() {
    let (printed, transcript) = printenv_with_a_store(&[]).await;
    assert!(!printed.contains(STORE_SECRET), "{printed}");
    assert!(!printed.contains("AWS_SECRET_ACCESS_KEY"), "{printed}");
    assert!(!printed.contains("AWS_ENDPOINT"), "{printed}");
    assert!(!transcript.contains(STORE_SECRET), "{transcript}");

    // Asked for, they are passed on; the transcript still redacts the key.
    let (printed, transcript) = printenv_with_a_store(&["--pass-store-credentials"]).await;
    assert!(printed.contains(STORE_SECRET), "{printed}");
    assert!(
        transcript.contains("AWS_SECRET_ACCESS_KEY=[redacted]"),
        "{transcript}"
    );
    assert!(!transcript.contains(STORE_SECRET), "{transcript}");
}
