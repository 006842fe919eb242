//! `byre run` stopped by a signal (SIGTERM, SIGHUP) or killed (SIGKILL) in the middle of a
//! turn whose tool is running: the CLI and every process it started are gone soon after.

use std::process::Stdio;
use std::time::{Duration, Instant};

use byre_testkit::{descendants, process_alive, Block, Match, Reply, Rule, Script};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::json;

use crate::support::Offline;

/// Starts `byre run` on a turn whose Bash tool sleeps (`marker` in its command), waits until
/// that command runs, sends `signal` to byre, and checks that byre exits with `status` (none
/// for SIGKILL) and that every process under it is gone within `within`.
async fn stopped_by(signal: Signal, marker: &str, status: Option<i32>, within: Duration) {
    let command = format!("echo started && sleep {marker}");
    let script = Script::new()
        .rule(Rule::when(Match::has_tool_result(true)).reply(Reply::text("Done.")))
        .rule(Rule::any().reply(Reply::message(vec![Block::tool_use(
            "Bash",
            json!({"command": command, "description": "Wait"}),
        )])));
    let offline = Offline::start(script).await;
    let mut byre = offline.run(&["--permission-mode", "bypassPermissions", "wait please"]);
    byre.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let child = byre.spawn().expect("byre starts");
    let pid = child.id().expect("a pid");
    let deadline = Instant::now() + Duration::from_secs(60);
    let under = loop {
        let under = descendants(pid);
        if under
            .iter()
            .any(|(_, cmd)| cmd.contains(marker) && !cmd.contains("-c "))
        {
            break under;
        }
        assert!(Instant::now() < deadline, "the tool never ran: {under:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let signalled = Instant::now();
    kill(Pid::from_raw(pid as i32), signal).expect("byre takes the signal");
    let out = tokio::time::timeout(Duration::from_secs(30), child.wait_with_output())
        .await
        .expect("byre exits")
        .expect("its output");
    let stderr = String::from_utf8_lossy(&out.stderr);
    if let Some(code) = status {
        assert_eq!(out.status.code(), Some(code), "{stderr}");
        assert!(stderr.contains("stopping the CLI"), "{stderr}");
    }
    loop {
        let left: Vec<_> = under.iter().filter(|(p, _)| process_alive(*p)).collect();
        if left.is_empty() {
            break;
        }
        assert!(
            signalled.elapsed() < within,
            "left running {:?} after {signal}: {left:?}",
            signalled.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_stops_the_cli_and_its_tools() {
    stopped_by(Signal::SIGTERM, "311", Some(143), Duration::from_secs(6)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sighup_stops_the_cli_and_its_tools() {
    stopped_by(Signal::SIGHUP, "312", Some(129), Duration::from_secs(6)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_of_byre_still_ends_the_cli_and_its_tools() {
    stopped_by(Signal::SIGKILL, "313", None, Duration::from_secs(6)).await;
}
