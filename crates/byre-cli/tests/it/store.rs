//! `byre run --store`: a session mirrored to a store on one host (its own `HOME` and working
//! directory) and resumed, or continued, from the store on another, and listed from it by
//! `byre sessions --store`; a directory store and the S3-compatible test server; a URL byre
//! cannot open.

use byre_testkit::{ClaudeEnv, Match, Reply, Rule, S3Server, Script};

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
