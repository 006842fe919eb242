//! File descriptors one session holds in the host's process, counted in `/proc/self/fd` in a
//! process of its own (the test runs itself again, alone, so no other test's files count).

use std::time::Duration;

use byre_session::{Claude, Options};

/// Set in the process that counts.
const CHILD: &str = "BYRE_FD_COUNT_CHILD";

/// The sessions started at once.
const SESSIONS: usize = 8;

/// The descriptors open in this process, each with what it points at.
fn open_fds() -> Vec<String> {
    let mut fds: Vec<String> = std::fs::read_dir("/proc/self/fd")
        .expect("/proc/self/fd")
        .filter_map(|e| e.ok())
        .filter_map(|e| std::fs::read_link(e.path()).ok())
        .map(|target| target.display().to_string())
        .collect();
    fds.sort();
    fds
}

fn hostile() -> Options {
    let mut options = Options::new();
    options = options.program(byre_testkit::hostile_bin().expect("byre-hostile builds"));
    options = options.exit_grace(Duration::from_secs(2));
    options
}

#[test]
fn fds_per_session() {
    if std::env::var_os(CHILD).is_none() {
        let me = std::env::current_exe().unwrap();
        let out = std::process::Command::new(me)
            .args([
                "--exact",
                "fds::fds_per_session",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD, "1")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        println!("{text}{}", String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success(), "{text}");
        assert!(text.contains("1 passed"), "{text}");
        return;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        // A first session opens what a process opens once (the runtime's reactor and signal
        // pipe, the orphan reaper's).
        let (first, _first_events) = Claude::start(hostile()).await.unwrap();
        let before = open_fds();
        let mut sessions = Vec::new();
        for _ in 0..SESSIONS {
            sessions.push(Claude::start(hostile()).await.unwrap());
        }
        let after = open_fds();
        let added = after.len() - before.len();
        let count = |fds: &[String], kind: &str| fds.iter().filter(|f| f.contains(kind)).count();
        let pidfds = count(&after, "pidfd") - count(&before, "pidfd");
        let pipes = count(&after, "pipe:") - count(&before, "pipe:");
        println!("{added} descriptors for {SESSIONS} sessions: {pidfds} pidfds, {pipes} pipes");
        // Each: the CLI's stdin, stdout and stderr, the CLI's pidfd (the host's one watchdog,
        // started with the first session, is not the session's).
        assert_eq!(pidfds, SESSIONS, "one pidfd a session: {after:#?}");
        assert_eq!(pipes, 3 * SESSIONS, "three pipes a session: {after:#?}");
        assert_eq!(added, FDS_PER_SESSION * SESSIONS, "{after:#?}");
        for (claude, _) in &sessions {
            claude.close().await.unwrap();
        }
        drop(sessions);
        // Every one of them is given back once the sessions have ended.
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while open_fds().len() > before.len() && std::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let left = open_fds();
        assert!(left.len() <= before.len(), "{before:#?} then {left:#?}");
        first.close().await.unwrap();
    });
}

/// The descriptors one session holds, as docs/many-agents.md says.
const FDS_PER_SESSION: usize = 4;
