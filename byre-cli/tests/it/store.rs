//! `byre run --store`: a session mirrored to a store on one host (its own `HOME` and working
//! directory) and resumed, or continued, from the store on another, and listed from it by
//! `byre sessions --store`; a directory store and the S3-compatible test server; a URL byre
//! cannot open, a bucket that does not exist; two hosts resuming one stored session at once.

use byre_testkit::{ClaudeEnv, Match, Reply, Rule, S3Server, Script};
use byre_transport::store::{DirStore, LeaseHolder, ObjectSessionStore, SessionKey, SessionStore};

use crate::support::*;

/// Answers by question number, so a request shows which earlier exchanges it carries.
fn numbered() -> Script {
    Script::new()
        .rule(Rule::when(Match::user_text_contains("second")).reply(Reply::text("Answer two.")))
        .rule(Rule::any().reply(Reply::text("Answer one: heron.")))
}

/// The text of the last request the model was sent.
fn last_request(offline: &Offline) -> String {
    let last = offline.model.message_requests().pop().expect("a request");
    serde_json::to_string(last.messages()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_in_a_directory_store_continues_on_another_host() {
    let offline = Offline::start(numbered()).await;
    let store_dir = tempfile_dir();
    let url = format!("file://{}", store_dir.path().display());
    let first = output(
        offline.run(&["--store", &url, "--store-project", "repo", "first question"]),
        None,
    )
    .await;
    assert!(first.status.success(), "{first:?}");
    let session = first.session();
    let stored = store_dir
        .path()
        .join("repo")
        .join(format!("{session}.jsonl"));
    assert!(stored.is_file(), "the store holds {}", stored.display());

    // Host B: another HOME and directory, nothing of host A's but the store.
    let host_b = ClaudeEnv::new(&offline.model.base_url()).unwrap();
    let second = output(
        run_in(
            &host_b,
            &[
                "--store",
                &url,
                "--store-project",
                "repo",
                "--continue",
                "second question",
            ],
        ),
        None,
    )
    .await;
    assert!(second.status.success(), "{second:?}");
    assert_eq!(second.stdout, "Answer two.\n");
    assert_eq!(
        second.session(),
        session,
        "the continue resumed host A's session"
    );
    let sent = last_request(&offline);
    assert!(
        sent.contains("first question") && sent.contains("heron"),
        "{sent}"
    );
    // Host B's turn went to the store too.
    let text = std::fs::read_to_string(&stored).unwrap();
    assert!(text.contains("Answer two."), "{text}");

    // Listed from the store on a third host, with what a picker shows.
    let host_c = ClaudeEnv::new(&offline.model.base_url()).unwrap();
    let listed = output(
        byre_in(
            &host_c,
            &["sessions", "--store", &url, "--store-project", "repo"],
        ),
        None,
    )
    .await;
    assert!(listed.status.success(), "{listed:?}");
    let lines: Vec<&str> = listed.stdout.lines().collect();
    assert_eq!(lines.len(), 1, "{}", listed.stdout);
    assert!(lines[0].starts_with(&session), "{}", lines[0]);
    assert!(lines[0].ends_with("second question"), "{}", lines[0]);
    // And shown from it as a conversation.
    let shown = output(
        byre_in(
            &host_c,
            &["show", &session, "--store", &url, "--store-project", "repo"],
        ),
        None,
    )
    .await;
    assert!(shown.status.success(), "{shown:?}");
    let text = &shown.stdout;
    let order: Vec<Option<usize>> = ["you: first question", "heron", "you: second question"]
        .iter()
        .map(|needle| text.find(needle))
        .collect();
    assert!(order.iter().all(Option::is_some), "{text}");
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{text}");
    assert!(text.contains("Answer two."), "{text}");
    let missing = output(
        byre_in(
            &host_c,
            &[
                "show",
                "6f1d2c3b-0000-4000-8000-000000000999",
                "--store",
                &url,
            ],
        ),
        None,
    )
    .await;
    assert!(!missing.status.success());
    assert!(missing.stderr.contains("no session"), "{}", missing.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_in_s3_resumes_on_another_host() {
    let server = tokio::task::spawn_blocking(S3Server::start)
        .await
        .unwrap()
        .expect("the S3-compatible test server starts");
    server.create_bucket("byre-sessions").unwrap();
    let mut offline = Offline::start(numbered()).await;
    let mut host_b = ClaudeEnv::new(&offline.model.base_url()).unwrap();
    for (name, value) in server.env() {
        offline.env.set_var(name.clone(), value.clone());
        host_b.set_var(name, value);
    }
    let url = "s3://byre-sessions/ci";
    let first = output(offline.run(&["--store", url, "first question"]), None).await;
    assert!(first.status.success(), "{first:?}");
    let session = first.session();

    // Host B checks the repository out elsewhere: the project key joins them.
    let second = output(
        run_in(
            &host_b,
            &["--store", url, "--resume", &session, "second question"],
        ),
        None,
    )
    .await;
    // Without --store-project the stored session is under host A's directory name.
    assert!(!second.status.success(), "{second:?}");
    assert!(second.stderr.contains(&session), "{second:?}");

    let project = project_name(offline.env.cwd());
    let third = output(
        run_in(
            &host_b,
            &[
                "--store",
                url,
                "--store-project",
                &project,
                "--resume",
                &session,
                "second question",
            ],
        ),
        None,
    )
    .await;
    assert!(third.status.success(), "{third:?}");
    assert_eq!(third.stdout, "Answer two.\n");
    let sent = last_request(&offline);
    assert!(
        sent.contains("first question") && sent.contains("heron"),
        "{sent}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_url_byre_cannot_open_is_refused_before_the_cli_starts() {
    let offline = Offline::start(numbered()).await;
    let out = output(
        offline.run(&["--store", "file://relative/dir", "hello"]),
        None,
    )
    .await;
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(out.stderr.contains("--store"), "{out:?}");
    assert!(out.stderr.contains("absolute path"), "{out:?}");
    assert!(offline.model.message_requests().is_empty());
}

/// The CLI's name for a working directory's project (`/tmp/x` → `-tmp-x`).
fn project_name(cwd: &std::path::Path) -> String {
    let cwd = std::fs::canonicalize(cwd).unwrap();
    byre_transport::project_dir_name(&cwd)
}

/// A scratch directory, removed when dropped.
fn tempfile_dir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

/// Answers "hold" prompts by running a command that takes a few seconds (the session stays
/// busy, its lease held), the rest as [`numbered`] does.
fn holding() -> Script {
    Script::new()
        .rule(Rule::when(Match::has_tool_result(true)).reply(Reply::text("Held.")))
        .rule(
            Rule::when(Match::user_text_contains("hold")).reply(Reply::tool_use(
                "Bash",
                serde_json::json!({"command": "echo held && sleep 4"}),
            )),
        )
        .rule(Rule::when(Match::user_text_contains("second")).reply(Reply::text("Answer two.")))
        .rule(Rule::any().reply(Reply::text("Answer one: heron.")))
}

/// Waits until the stored session's lease is held (not released) by a run; gives the
/// holder's name.
async fn wait_for_holder(store: &dyn SessionStore, key: &SessionKey) -> String {
    let deadline = std::time::Instant::now() + RUN_TIMEOUT;
    loop {
        if let Some(found) = store.read_lease(key).await.expect("the lease reads") {
            let holder: LeaseHolder = serde_json::from_slice(&found.bytes).unwrap();
            if !holder.released {
                return holder.holder;
            }
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the lease is never taken"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// Two hosts resume one stored session at once, each order in turn: the one that starts
/// first runs, the other is refused at once with a message naming the holder; once the first
/// has ended, the other resumes (or, with `--store-wait`, waits for it), and the stored
/// session is one conversation.
async fn two_resumes_at_once(url: &str, store: &dyn SessionStore, env: &[(String, String)]) {
    let mut offline = Offline::start(holding()).await;
    let mut host_b = ClaudeEnv::new(&offline.model.base_url()).unwrap();
    for (name, value) in env {
        offline.env.set_var(name.clone(), value.clone());
        host_b.set_var(name.clone(), value.clone());
    }
    let args = |prompt: &'static str, session: &str| {
        let mut args = vec!["--store", url, "--store-project", "repo", "--resume"];
        args.push(session);
        args.push(prompt);
        args.into_iter().map(str::to_owned).collect::<Vec<_>>()
    };
    let first = output(
        offline.run(&["--store", url, "--store-project", "repo", "first question"]),
        None,
    )
    .await;
    assert!(first.status.success(), "{first:?}");
    let session = first.session();
    let key = SessionKey::main("repo", session.as_str());
    let hosts = [&offline.env, &host_b];
    for (round, (holder_host, other_host)) in [(0, 1), (1, 0)].into_iter().enumerate() {
        let held = args("hold on", &session);
        let held: Vec<&str> = held.iter().map(String::as_str).collect();
        let holder = run_in(hosts[holder_host], &held);
        let holding = tokio::spawn(output(holder, None));
        let name = wait_for_holder(store, &key).await;

        let second = args("second question", &session);
        let second: Vec<&str> = second.iter().map(String::as_str).collect();
        let started = std::time::Instant::now();
        let refused = output(run_in(hosts[other_host], &second), None).await;
        assert!(!refused.status.success(), "round {round}: {refused:?}");
        assert!(
            refused.stderr.contains("is in use by") && refused.stderr.contains(&name),
            "round {round}: the message names the holder: {refused:?}"
        );
        assert!(
            started.elapsed() < std::time::Duration::from_secs(10),
            "refused at once, not after the holder's turn"
        );
        let run = if round == 0 {
            // Once the holder has ended, the other resumes.
            let held = holding.await.unwrap();
            assert!(held.status.success(), "{held:?}");
            assert_eq!(held.stdout, "Held.\n");
            output(run_in(hosts[other_host], &second), None).await
        } else {
            // Or it waits for the holder to end.
            let mut waiting = vec!["--store-wait", "100"];
            waiting.extend_from_slice(&second);
            let run = output(run_in(hosts[other_host], &waiting), None).await;
            let held = holding.await.unwrap();
            assert!(held.status.success(), "{held:?}");
            run
        };
        assert!(run.status.success(), "round {round}: {run:?}");
        assert_eq!(run.stdout, "Answer two.\n");
        assert_eq!(run.session(), session);
    }
    // One conversation: each entry's parent is the entry before it in the store.
    let entries = store.load(&key).await.unwrap().unwrap();
    let mut seen = std::collections::HashSet::new();
    for entry in &entries {
        if let Some(parent) = entry.get("parentUuid").and_then(|p| p.as_str()) {
            assert!(
                seen.contains(parent),
                "an entry's parent is stored before it"
            );
        }
        if let Some(uuid) = entry.get("uuid").and_then(|u| u.as_str()) {
            seen.insert(uuid.to_owned());
        }
    }
    let prompts: Vec<&str> = entries
        .iter()
        .filter(|e| e["type"] == "user")
        .filter_map(|e| e["message"]["content"].as_str())
        .collect();
    assert_eq!(
        prompts,
        [
            "first question",
            "hold on",
            "second question",
            "hold on",
            "second question"
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_resumes_of_a_session_in_a_directory_store_run_one_at_a_time() {
    let store_dir = tempfile_dir();
    let url = format!("file://{}", store_dir.path().display());
    let store = DirStore::new(store_dir.path());
    two_resumes_at_once(&url, &store, &[]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_resumes_of_a_session_in_s3_run_one_at_a_time() {
    let server = tokio::task::spawn_blocking(S3Server::start)
        .await
        .unwrap()
        .expect("the S3-compatible test server starts");
    server.create_bucket("byre-leases").unwrap();
    let url = "s3://byre-leases/ci";
    let store = ObjectSessionStore::from_url_with(url, server.env()).unwrap();
    two_resumes_at_once(url, &store, &server.env()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_bucket_fails_the_start_with_a_message() {
    let server = tokio::task::spawn_blocking(S3Server::start)
        .await
        .unwrap()
        .expect("the S3-compatible test server starts");
    let mut offline = Offline::start(numbered()).await;
    for (name, value) in server.env() {
        offline.env.set_var(name, value);
    }
    let started = std::time::Instant::now();
    let run = output(
        offline.run(&["--store", "s3://no-such-bucket/x", "first question"]),
        None,
    )
    .await;
    assert!(!run.status.success(), "{run:?}");
    assert!(run.stderr.contains("store"), "{run:?}");
    assert!(
        run.stderr.to_lowercase().contains("bucket"),
        "the message says what is wrong: {run:?}"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
    assert!(
        offline.model.message_requests().is_empty(),
        "the CLI never asked the model"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_that_refuses_connections_fails_the_start_within_seconds() {
    let server = tokio::task::spawn_blocking(S3Server::start)
        .await
        .unwrap()
        .expect("the S3-compatible test server starts");
    // A loopback port nothing listens on.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let mut offline = Offline::start(numbered()).await;
    for (name, value) in server.env() {
        offline.env.set_var(name, value);
    }
    offline
        .env
        .set_var("AWS_ENDPOINT", format!("http://127.0.0.1:{port}"));
    let started = std::time::Instant::now();
    let run = output(
        offline.run(&["--store", "s3://sessions/x", "first question"]),
        None,
    )
    .await;
    let took = started.elapsed();
    assert!(!run.status.success(), "{run:?}");
    assert!(run.stderr.contains("store"), "{run:?}");
    assert!(
        took < std::time::Duration::from_secs(12),
        "reported in seconds, not minutes: {took:?}"
    );
    assert!(offline.model.message_requests().is_empty());
}

/// The scratch configs (`byre-resume-*`) in `tmp`.
fn scratch_configs(tmp: &std::path::Path) -> Vec<String> {
    std::fs::read_dir(tmp)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|name| name.starts_with(byre_transport::store::SCRATCH_PREFIX))
        .collect()
}

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_killed_during_a_store_resume_leaves_no_scratch_config_behind() {
    use byre_testkit::{Block, MessageReply};
    use tokio::io::AsyncReadExt;
    // The resumed turn streams its answer slowly: byre is in the middle of it when killed.
    let slow = MessageReply {
        blocks: vec![Block::text("word ".repeat(300))],
        chunk_size: 5,
        chunk_delay_ms: 100,
        ..MessageReply::default()
    };
    let script = Script::new()
        .rule(Rule::when(Match::user_text_contains("second")).reply(Reply::Message(slow)))
        .rule(Rule::any().reply(Reply::text("Answer one: heron.")));
    let offline = Offline::start(script).await;
    let store_dir = tempfile_dir();
    let url = format!("file://{}", store_dir.path().display());
    let first = output(
        offline.run(&["--store", &url, "--store-project", "repo", "first question"]),
        None,
    )
    .await;
    assert!(first.status.success(), "{first:?}");
    let session = first.session();

    let tmp = tempfile_dir();
    let mut command = offline.run(&[
        "--store",
        &url,
        "--store-project",
        "repo",
        "--resume",
        &session,
        "second question",
    ]);
    command
        .env("TMPDIR", tmp.path())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    let mut byre = command.spawn().expect("byre starts");
    // The answer streams: the CLI runs on the scratch config.
    let mut stdout = byre.stdout.take().unwrap();
    let mut first_bytes = [0; 10];
    tokio::time::timeout(RUN_TIMEOUT, stdout.read_exact(&mut first_bytes))
        .await
        .expect("the answer starts in time")
        .expect("the answer streams");
    assert_eq!(
        scratch_configs(tmp.path()).len(),
        1,
        "a scratch config while it runs"
    );
    byre.start_kill().expect("byre takes SIGKILL");
    byre.wait().await.unwrap();
    // Its watchdog removes it (after its SIGTERM to the CLI's group).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !scratch_configs(tmp.path()).is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "left behind: {:?}",
            scratch_configs(tmp.path())
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}
