//! `byre run` stopped by a signal (SIGTERM, SIGHUP) or killed (SIGKILL) in the middle of a
//! turn whose tool is running: the CLI and every process it started are gone soon after, a
//! daemon in a session of its own included, as it is when the run finishes. A signal while
//! byre closes a CLI that does not exit stops it at once, without the exit grace.

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

/// How `byre run` ends in [`daemon_left_by`]: the turn finishes, or a signal stops it.
#[derive(Clone, Copy, Debug)]
enum End {
    Finished,
    Signal(Signal),
}

/// Starts `byre run` on a turn whose first Bash call starts a daemon in a session of its own
/// (`setsid`, out of the CLI's process group; it ignores SIGTERM when `stubborn`) and ends, so
/// the daemon is no longer the tool's descendant; a second call waits, unless `end` lets the
/// turn finish. Then ends byre as `end` says, and checks that the daemon and every process
/// carrying the CLI's tag are gone within `within` of byre's end.
async fn daemon_left_by(end: End, marker: &str, stubborn: bool, within: Duration) {
    let trap = if stubborn { "trap \"\" TERM; " } else { "" };
    // The daemon writes its pid and tag before the call ends.
    let daemon = format!(
        "setsid sh -c '{trap}echo $$ $BYRE_PROCESS_TAG > daemon.pid; exec sleep 1{marker}' \
         > /dev/null 2>&1 < /dev/null & while [ ! -s daemon.pid ]; do :; done; echo started"
    );
    let bash = |command: String| {
        Reply::message(vec![Block::tool_use(
            "Bash",
            json!({"command": command, "description": "Run"}),
        )])
    };
    let mut script = Script::new();
    if let End::Signal(_) = end {
        script = script.rule(
            Rule::when(Match::tool_result_contains("started"))
                .reply(bash(format!("echo waiting && sleep {marker}"))),
        );
    }
    let script = script
        .rule(Rule::when(Match::has_tool_result(true)).reply(Reply::text("Done.")))
        .rule(Rule::any().reply(bash(daemon)));
    let offline = Offline::start(script).await;
    let pid_file = offline.env.cwd().join("daemon.pid");
    let mut byre = offline.run(&["--permission-mode", "bypassPermissions", "serve please"]);
    byre.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let child = byre.spawn().expect("byre starts");
    let pid = child.id().expect("a pid");
    let deadline = Instant::now() + Duration::from_secs(60);
    let out = match end {
        End::Finished => tokio::time::timeout(Duration::from_secs(120), child.wait_with_output())
            .await
            .expect("byre exits")
            .expect("its output"),
        End::Signal(signal) => {
            // The daemon runs, and the second call waits.
            loop {
                let waiting = descendants(pid)
                    .iter()
                    .any(|(_, cmd)| cmd.ends_with(&format!("sleep {marker}")));
                if waiting && std::fs::read_to_string(&pid_file).is_ok_and(|t| t.ends_with('\n')) {
                    break;
                }
                assert!(Instant::now() < deadline, "the tool never ran");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            kill(Pid::from_raw(pid as i32), signal).expect("byre takes the signal");
            tokio::time::timeout(Duration::from_secs(30), child.wait_with_output())
                .await
                .expect("byre exits")
                .expect("its output")
        }
    };
    let ended = Instant::now();
    let stderr = String::from_utf8_lossy(&out.stderr);
    match end {
        End::Finished => assert!(out.status.success(), "{stderr}"),
        End::Signal(Signal::SIGKILL) => {}
        End::Signal(signal) => assert_eq!(out.status.code(), Some(128 + signal as i32), "{stderr}"),
    }
    let written = std::fs::read_to_string(&pid_file).expect("the daemon wrote its pid");
    let (daemon, tag) = written
        .trim()
        .split_once(' ')
        .unwrap_or((written.trim(), ""));
    let daemon: u32 = daemon.parse().expect("a pid");
    assert!(!tag.is_empty(), "the daemon carries no tag: {written:?}");
    loop {
        let mut left = byre_testkit::processes_with(byre_transport::PROCESS_TAG_VAR, tag);
        if process_alive(daemon) && !left.contains(&daemon) {
            left.push(daemon);
        }
        if left.is_empty() {
            break;
        }
        assert!(
            ended.elapsed() < within,
            "left running {:?} after byre ended ({end:?}): {left:?}",
            ended.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_daemon_a_tool_started_ends_with_the_run() {
    daemon_left_by(End::Finished, "321", false, Duration::from_secs(10)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_ends_a_daemon_a_tool_started() {
    daemon_left_by(
        End::Signal(Signal::SIGTERM),
        "322",
        false,
        Duration::from_secs(10),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_of_byre_still_ends_a_daemon_that_ignores_sigterm() {
    // The watchdog: SIGTERM, two seconds, SIGKILL.
    daemon_left_by(
        End::Signal(Signal::SIGKILL),
        "323",
        true,
        Duration::from_secs(15),
    )
    .await;
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
