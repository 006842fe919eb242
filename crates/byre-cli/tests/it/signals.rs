//! `byre run` stopped by a signal (SIGTERM, SIGHUP) or killed (SIGKILL) in the middle of a
//! turn whose tool is running: the CLI and every process it started are gone soon after. A
//! signal while byre closes a CLI that does not exit stops it at once, without the exit grace.

use std::process::Stdio;
use std::time::{Duration, Instant};

use byre_testkit::{descendants, process_alive, Block, Match, Reply, Rule, Script};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::json;

use crate::support::{byre_in, Offline};

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_during_close_stops_the_cli_without_the_exit_grace() {
    // The stand-in answers, then does not exit when its stdin ends: byre's close would wait
    // out the CLI's exit grace (5 s) before SIGTERM.
    let offline = Offline::start(Script::new()).await;
    let bin = byre_testkit::hostile_bin().expect("byre-hostile builds");
    let transcript = offline.env.home().join("linger.jsonl");
    let mut byre = byre_in(
        &offline.env,
        &[
            "run",
            "--claude",
            bin.to_str().expect("a UTF-8 path"),
            "--transcript",
            transcript.to_str().expect("a UTF-8 path"),
            "hi",
        ],
    );
    byre.env("BYRE_HOSTILE_ARGS", "--mode linger")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let child = byre.spawn().expect("byre starts");
    let pid = child.id().expect("a pid");
    // The close is under way once the transcript says stdin is closed.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let text = std::fs::read_to_string(&transcript).unwrap_or_default();
        if text.contains(r#""note":"stdin closed""#) {
            break;
        }
        assert!(Instant::now() < deadline, "the close never began: {text}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let under = descendants(pid);
    assert!(
        under.iter().any(|(_, cmd)| cmd.contains("byre-hostile")),
        "{under:?}"
    );
    let signalled = Instant::now();
    kill(Pid::from_raw(pid as i32), Signal::SIGTERM).expect("byre takes the signal");
    let out = tokio::time::timeout(Duration::from_secs(30), child.wait_with_output())
        .await
        .expect("byre exits")
        .expect("its output");
    let elapsed = signalled.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(143), "{stderr}");
    let text = std::fs::read_to_string(&transcript).unwrap();
    assert!(text.contains("terminated during the exit grace"), "{text}");
    assert!(
        elapsed < Duration::from_secs(4),
        "ended {elapsed:?} after SIGTERM: the exit grace is 5 s"
    );
    loop {
        let left: Vec<_> = under.iter().filter(|(p, _)| process_alive(*p)).collect();
        if left.is_empty() {
            break;
        }
        assert!(
            signalled.elapsed() < Duration::from_secs(10),
            "left running {:?} after SIGTERM: {left:?}",
            signalled.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
