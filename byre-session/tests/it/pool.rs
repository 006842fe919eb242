//! The session pool against the real CLI: sessions handed out started and initialized, the
//! pool starting more in their place, a CLI that died while waiting replaced, numbered
//! transcripts, and no CLI left running once the pool and its sessions are closed.

use std::path::Path;
use std::time::Duration;

use byre_session::{Claude, Events, Pool};
use byre_testkit::{FakeModel, Match, Reply, Rule, Script};

use crate::support::{options, turn};

const STEP: Duration = Duration::from_secs(60);

fn script() -> Script {
    Script::new().rule(Rule::when(Match::user_text_contains("hello")).reply(Reply::text("Hi.")))
}

/// The pids of the CLIs this test process started that work in `cwd` (each test's scratch
/// folder): children of this process, whatever their binary is called.
fn clis_in(cwd: &Path) -> Vec<u32> {
    let me = std::process::id().to_string();
    let mut pids: Vec<u32> = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
            let parent = status
                .lines()
                .find_map(|l| l.strip_prefix("PPid:"))
                .map(str::trim);
            let dir = std::fs::read_link(format!("/proc/{pid}/cwd")).ok();
            parent == Some(me.as_str()) && dir.as_deref() == Some(cwd)
        })
        .collect();
    pids.sort_unstable();
    pids
}

async fn until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + STEP;
    while !done() {
        assert!(tokio::time::Instant::now() < deadline, "{what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Sends "hello" and returns the session id once the turn's result has come.
async fn hello(claude: &Claude, events: &mut Events) -> String {
    let result = turn(claude, events, "hello").await;
    assert_eq!(result.result.as_deref(), Some("Hi."), "{result:?}");
    claude.session_id().expect("the session id is known")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pool_hands_out_started_sessions_and_starts_more() {
    let model = FakeModel::start(script()).await.unwrap();
    let (mut options, env) = options(&model);
    let cwd = env.cwd().canonicalize().unwrap();
    let transcripts = env.home().join("transcripts");
    std::fs::create_dir_all(&transcripts).unwrap();
    options = options.transcript(transcripts.join("run.jsonl"));
    let pool = Pool::new(options, 2).unwrap();
    until("two sessions wait", || pool.waiting() == 2).await;
    assert_eq!(clis_in(&cwd).len(), 2);

    // Taken ready: initialized already, and working.
    let (a, mut a_events) = pool.take().await.unwrap();
    let (b, mut b_events) = pool.take().await.unwrap();
    assert!(a.initialize_response().is_some() && b.initialize_response().is_some());
    let a_id = hello(&a, &mut a_events).await;
    let b_id = hello(&b, &mut b_events).await;
    assert_ne!(a_id, b_id, "each session is its own");
    // Each session writes its own transcript.
    for n in 1..=2 {
        let path = transcripts.join(format!("run.{n}.jsonl"));
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("\"initialize\""), "{}", path.display());
    }
    assert!(!transcripts.join("run.jsonl").exists());

    // Two more started in their place: four CLIs in all.
    until("the pool refills", || pool.waiting() == 2).await;
    assert_eq!(clis_in(&cwd).len(), 4);

    // Closing the pool ends the waiting ones; the taken ones are the taker's.
    pool.close().await;
    until("the waiting CLIs exit", || clis_in(&cwd).len() == 2).await;
    assert_eq!(hello(&a, &mut a_events).await, a_id);
    a.close().await.unwrap();
    b.close().await.unwrap();
    until("no CLI is left", || clis_in(&cwd).is_empty()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cli_that_dies_while_waiting_is_replaced() {
    let model = FakeModel::start(script()).await.unwrap();
    let (options, env) = options(&model);
    let cwd = env.cwd().canonicalize().unwrap();
    let pool = Pool::new(options, 1).unwrap();
    until("one session waits", || pool.waiting() == 1).await;
    let pids = clis_in(&cwd);
    assert_eq!(pids.len(), 1);
    // This test's own CLI, killed as a crash would.
    let killed = std::process::Command::new("kill")
        .args(["-KILL", &pids[0].to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    // The pool sees it go and starts another in its place.
    until("another CLI starts", || {
        let now = clis_in(&cwd);
        now.len() == 1 && now[0] != pids[0]
    })
    .await;
    until("it waits", || pool.waiting() == 1).await;
    let (claude, mut events) = pool.take().await.unwrap();
    assert!(!claude.has_ended());
    hello(&claude, &mut events).await;
    claude.close().await.unwrap();
    drop(pool);
    until("no CLI is left", || clis_in(&cwd).is_empty()).await;
}

#[tokio::test]
async fn a_pool_refuses_options_that_fix_the_session_id() {
    let options = byre_session::Options::new().resume("0d1e8e5c-2b4e-4f7e-9a43-1c1f5d2b7e10");
    assert!(Pool::new(options, 2).is_err());
    let mut options = byre_session::Options::new();
    options = options.session_id(byre_session::new_session_id());
    assert!(Pool::new(options, 2).is_err());
    let mut options = byre_session::Options::new();
    options = options.continue_conversation();
    assert!(Pool::new(options, 2).is_err());
}
