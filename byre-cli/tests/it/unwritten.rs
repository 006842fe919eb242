//! What `byre run` did not write: a transcript on a full device and a store that fails (a
//! bucket removed from the S3-compatible test server while the session runs, a store that
//! never answers a write) are told on
//! stderr, with what waits for the store while the close drains it, and the run exits 74;
//! a failed write of the structured output exits as a failed stdout write does.

use std::process::Stdio;
use std::time::{Duration, Instant};

use byre_testkit::{Reply, Rule, S3Server, Script};
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::support::*;

/// The status of a run whose answer was fine but whose data was not all written.
const NOT_WRITTEN: i32 = 74;

fn answers() -> Script {
    Script::new().rule(Rule::any().reply(Reply::text("Answer one: heron.")))
}

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transcript_on_a_full_device_makes_the_run_say_so_and_exit_74() {
    let offline = Offline::start(answers()).await;
    let out = output(
        offline.run(&["--transcript", "/dev/full", "first question"]),
        None,
    )
    .await;
    assert_eq!(out.status.code(), Some(NOT_WRITTEN), "{out:?}");
    assert_eq!(out.stdout, "Answer one: heron.\n", "the answer is whole");
    assert!(
        out.stderr
            .contains("byre: warning: the transcript /dev/full could not be written"),
        "{}",
        out.stderr
    );
    let told = out
        .stderr
        .lines()
        .find(|l| l.starts_with("byre: not everything was written: "))
        .unwrap_or_else(|| panic!("{}", out.stderr));
    let lines: u64 = told["byre: not everything was written: ".len()..]
        .split(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("a count of lines: {told}"));
    assert!(lines > 0, "{told}");
    assert!(
        told.contains("lines not written to the transcript /dev/full"),
        "{told}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bucket_gone_while_the_session_runs_makes_the_run_say_how_many_entries_were_not_stored() {
    use byre_testkit::{Block, MessageReply};
    use tokio::io::AsyncReadExt;
    let server = tokio::task::spawn_blocking(S3Server::start)
        .await
        .unwrap()
        .expect("the S3-compatible test server starts");
    server.create_bucket("going").unwrap();
    // The answer streams slowly: the bucket goes while it does (a bucket that is missing at
    // the start fails the start instead: tests/it/store.rs).
    let slow = MessageReply {
        blocks: vec![Block::text("word ".repeat(40))],
        chunk_size: 5,
        chunk_delay_ms: 50,
        ..MessageReply::default()
    };
    let offline = {
        let mut offline =
            Offline::start(Script::new().rule(Rule::any().reply(Reply::Message(slow)))).await;
        for (name, value) in server.env() {
            offline.env.set_var(name, value);
        }
        offline
    };
    let started = Instant::now();
    let mut command = offline.run(&["--store", "s3://going/ci", "first question"]);
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().expect("byre starts");
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0; 5];
    tokio::time::timeout(RUN_TIMEOUT, stdout.read_exact(&mut first))
        .await
        .expect("the answer starts in time")
        .expect("the answer streams");
    // Nothing is stored before the turn's end: the bucket is empty, and can go.
    tokio::task::spawn_blocking(move || {
        server.delete_bucket("going").unwrap();
        server
    })
    .await
    .unwrap();
    let mut rest = Vec::new();
    stdout.read_to_end(&mut rest).await.unwrap();
    let out = tokio::time::timeout(RUN_TIMEOUT, child.wait_with_output())
        .await
        .expect("byre ends in time")
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(NOT_WRITTEN), "{stderr}");
    let answer = format!(
        "{}{}",
        String::from_utf8_lossy(&first),
        String::from_utf8_lossy(&rest)
    );
    assert_eq!(answer.trim_end(), "word ".repeat(40).trim_end());
    let told = stderr
        .lines()
        .find(|l| l.starts_with("byre: not everything was written: "))
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(told.contains("session entries not stored"), "{told}");
    assert!(
        told.contains("the CLI's own session files have them"),
        "{told}"
    );
    // Three attempts per batch, and no more than the store's own timeouts.
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_close_that_waits_for_the_store_says_what_still_waits() {
    // A store endpoint that answers listings (the check before the start: an empty bucket)
    // and never answers a write.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let endpoint = format!("http://{}", silent.local_addr().unwrap());
    let held = tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((socket, _)) = silent.accept().await {
            open.push(tokio::spawn(listings_only(socket)));
        }
    });
    let mut offline = Offline::start(answers()).await;
    for (name, value) in [
        ("AWS_ENDPOINT", endpoint.as_str()),
        ("AWS_ALLOW_HTTP", "true"),
        ("AWS_REGION", "us-east-1"),
        ("AWS_ACCESS_KEY_ID", "testing"),
        ("AWS_SECRET_ACCESS_KEY", "testing"),
    ] {
        offline.env.set_var(name, value);
    }
    let mut command = offline.run(&["--store", "s3://silent/ci", "first question"]);
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().expect("byre starts");
    let mut stderr = BufReader::new(child.stderr.take().unwrap()).lines();
    let waiting = tokio::time::timeout(RUN_TIMEOUT, async {
        while let Some(line) = stderr.next_line().await.unwrap() {
            if line.starts_with("byre: waiting for the session store: ") {
                return line;
            }
        }
        panic!("stderr ended without a word of the store");
    })
    .await
    .expect("the wait is told in time");
    assert!(waiting.contains("entries still to store ("), "{waiting}");
    // At most once a second: the next line comes no sooner.
    let at = Instant::now();
    let next = tokio::time::timeout(Duration::from_secs(5), stderr.next_line())
        .await
        .expect("it is told again")
        .unwrap()
        .unwrap();
    assert!(
        next.starts_with("byre: waiting for the session store: "),
        "{next}"
    );
    assert!(
        at.elapsed() >= Duration::from_millis(800),
        "{:?}",
        at.elapsed()
    );
    child.kill().await.unwrap();
    held.abort();
}

/// Runs `byre run ARGS...` with its stdout on a full device.
#[cfg(target_os = "linux")]
async fn run_on_full_stdout(offline: &Offline, args: &[&str]) -> (Option<i32>, String) {
    let mut command = offline.run(args);
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    command
        .stdin(Stdio::null())
        .stdout(Stdio::from(full))
        .stderr(Stdio::piped());
    let child = command.spawn().expect("byre starts");
    let out = tokio::time::timeout(RUN_TIMEOUT, child.wait_with_output())
        .await
        .expect("byre ends in time")
        .expect("byre's output");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_output_on_a_full_stdout_exits_as_a_closed_stdout_does() {
    use byre_testkit::{Block, Match};
    let script = Script::new()
        .rule(Rule::when(Match::has_tool_result(true)).reply(Reply::text("")))
        .rule(Rule::any().reply(Reply::message(vec![
            Block::text("Counting the files."),
            Block::tool_use("StructuredOutput", serde_json::json!({"files": 3})),
        ])));
    let offline = Offline::start(script).await;
    for args in [
        &["count the files"][..],
        &["--output", "json", "count the files"],
        &["--output", "stats", "count the files"],
        &["--json-schema", r#"{"type":"object"}"#, "count the files"],
    ] {
        let (code, stderr) = run_on_full_stdout(&offline, args).await;
        assert_eq!(code, Some(141), "{args:?}: {stderr}");
        assert!(
            stderr.contains("cannot write to stdout") && stderr.contains("No space left"),
            "{args:?}: {stderr}"
        );
    }
}

/// Answers each GET on `socket` with an empty bucket listing; holds the connection, never
/// answering, at anything else.
async fn listings_only(socket: tokio::net::TcpStream) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut socket = socket;
    let mut head = Vec::new();
    let mut buf = [0; 4096];
    loop {
        let Ok(n) = socket.read(&mut buf).await else {
            return;
        };
        if n == 0 {
            return;
        }
        head.extend_from_slice(&buf[..n]);
        let Some(end) = head.windows(4).position(|w| w == b"\r\n\r\n") else {
            continue;
        };
        if !head.starts_with(b"GET ") {
            // A write: never answered.
            std::future::pending::<()>().await;
        }
        head.drain(..end + 4);
        let body = "<?xml version=\"1.0\" encoding=\"UTF-8\"?><ListBucketResult \
            xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Name>silent</Name><Prefix>\
            </Prefix><KeyCount>0</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>false\
            </IsTruncated></ListBucketResult>";
        let answer = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/xml\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        if socket.write_all(answer.as_bytes()).await.is_err() {
            return;
        }
    }
}
