//! The process: stderr draining, shutdown, no orphans (not even a daemon in a session of its
//! own), early exits; with the stand-in CLI and the real one.

use std::path::PathBuf;
use std::time::Duration;

use byre_transport::{
    decode_frame, decode_line, CliProcess, Frame, Launch, LaunchError, LineFrame, NdjsonCodec,
    ProcessOptions, Stopped, PROCESS_TAG_VAR,
};
use futures::StreamExt;
use tokio::io::AsyncWriteExt;
use tokio_util::codec::FramedRead;

fn standin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_byre-standin"))
}

fn quick() -> ProcessOptions {
    ProcessOptions {
        exit_grace: Duration::from_millis(300),
        term_grace: Duration::from_millis(300),
        ..ProcessOptions::default()
    }
}

fn spawn(args: &[&str], options: ProcessOptions) -> CliProcess {
    let args = args.iter().map(Into::into).collect();
    CliProcess::spawn_args(&standin(), args, &Launch::new(), options).expect("the stand-in starts")
}

fn alive(pid: u32) -> bool {
    byre_testkit::process_alive(pid)
}

async fn gone(pid: u32) -> bool {
    byre_testkit::process_gone(pid, Duration::from_millis(1000)).await
}

/// Reads the grandchild's pid from the stand-in's stderr.
async fn grandchild(process: &CliProcess) -> u32 {
    for _ in 0..100 {
        if let Some(pid) = process
            .stderr()
            .text()
            .lines()
            .find_map(|l| l.strip_prefix("grandchild ")?.trim().parse().ok())
        {
            return pid;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("no grandchild pid on stderr: {:?}", process.stderr().text());
}

#[tokio::test]
async fn closing_stdin_ends_it_gracefully() {
    let process = spawn(&[], quick());
    let pid = process.pid();
    let exit = process.shutdown().await.unwrap();
    assert_eq!(exit.stopped, Stopped::Exited);
    assert!(exit.status.success());
    assert!(gone(pid).await);
}

#[tokio::test]
async fn sigterm_follows_when_stdin_eof_is_ignored() {
    let process = spawn(&["--ignore-eof"], quick());
    let exit = process.shutdown().await.unwrap();
    assert_eq!(exit.stopped, Stopped::Terminated);
}

#[tokio::test]
async fn sigkill_follows_when_sigterm_is_ignored() {
    let process = spawn(&["--ignore-eof", "--ignore-term"], quick());
    let pid = process.pid();
    let exit = process.shutdown().await.unwrap();
    assert_eq!(exit.stopped, Stopped::Killed);
    assert!(gone(pid).await);
}

#[tokio::test]
async fn shutdown_leaves_no_grandchild() {
    let process = spawn(&["--grandchild"], quick());
    let leader = process.pid();
    let grandchild = grandchild(&process).await;
    assert!(alive(grandchild));
    process.shutdown().await.unwrap();
    assert!(gone(leader).await, "the CLI is still running");
    assert!(
        gone(grandchild).await,
        "the grandchild {grandchild} was orphaned"
    );
}

#[tokio::test]
async fn dropping_the_handle_leaves_no_process() {
    let process = spawn(&["--grandchild", "--ignore-eof", "--ignore-term"], quick());
    let leader = process.pid();
    let grandchild = grandchild(&process).await;
    drop(process);
    assert!(gone(leader).await, "the CLI survived the drop");
    assert!(gone(grandchild).await, "the grandchild survived the drop");
}

#[tokio::test]
async fn stderr_is_drained_and_bounded_with_a_line_callback() {
    let lines = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = lines.clone();
    let options = ProcessOptions {
        stderr_capacity: 4096,
        on_stderr_line: Some(std::sync::Arc::new(move |line: &str| {
            assert_eq!(line.len(), 99);
            counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        })),
        ..quick()
    };
    // 8 MB of stderr would fill the pipe many times over if it were not read.
    let mut process = spawn(&["--stderr-bytes", "8000000"], options);
    drop(process.take_stdin());
    let status = tokio::time::timeout(Duration::from_secs(30), process.wait())
        .await
        .expect("the stand-in is not blocked on stderr")
        .unwrap();
    assert!(status.success());
    let exit = process.shutdown().await.unwrap();
    assert_eq!(lines.load(std::sync::atomic::Ordering::Relaxed), 80_000);
    assert!(exit.stderr_tail.len() <= 4096);
    assert!(exit.stderr_tail.ends_with('\n'));
}

#[tokio::test]
async fn stderr_without_newlines_reaches_the_callback_in_bounded_pieces() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    let (pieces, bytes) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let (p, b) = (pieces.clone(), bytes.clone());
    let options = ProcessOptions {
        stderr_capacity: 4096,
        on_stderr_line: Some(Arc::new(move |line: &str| {
            assert!(
                line.len() <= byre_transport::STDERR_LINE_LIMIT,
                "{}",
                line.len()
            );
            p.fetch_add(1, Ordering::Relaxed);
            b.fetch_add(line.len(), Ordering::Relaxed);
        })),
        ..quick()
    };
    // 8 MB of `\r`-separated progress text and not one newline.
    let mut process = spawn(&["--stderr-bytes", "8000000", "--stderr-cr"], options);
    drop(process.take_stdin());
    let status = tokio::time::timeout(Duration::from_secs(30), process.wait())
        .await
        .expect("the stand-in is not blocked on stderr")
        .unwrap();
    assert!(status.success());
    let exit = process.shutdown().await.unwrap();
    let pieces = pieces.load(Ordering::Relaxed);
    assert!(
        pieces >= 8_000_000 / byre_transport::STDERR_LINE_LIMIT,
        "{pieces}"
    );
    // Every byte arrived (a piece's last `\r` is trimmed, as a line's newline is).
    assert!(bytes.load(Ordering::Relaxed) + pieces >= 8_000_000);
    assert!(exit.stderr_tail.len() <= 4096);
}

#[tokio::test]
async fn an_early_exit_refusing_bypass_as_root_is_typed_with_its_stderr() {
    let mut process = spawn(
        &[
            "--exit-early",
            "1",
            "--message",
            "--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons",
        ],
        quick(),
    );
    let mut stdout = FramedRead::new(process.take_stdout().unwrap(), NdjsonCodec::new());
    assert!(stdout.next().await.is_none(), "no line before the exit");
    let err = process.exited_early().await;
    let LaunchError::RootBypass {
        status,
        stderr_tail,
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!(status.code(), Some(1));
    assert!(stderr_tail.contains("root/sudo"));
    assert!(err.to_string().contains("IS_SANDBOX=1"), "{err}");
}

/// A stream with a non-JSON line, a 100 MB line and normal lines, through a real pipe: two bad
/// lines, every other message, and a read buffer that stays bounded.
#[tokio::test]
async fn a_huge_line_and_a_bad_line_through_a_pipe() {
    let dir = std::env::temp_dir().join(format!("byre-transport-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("stream.jsonl");
    let keep = br#"{"type":"keep_alive"}"#;
    let mut data = Vec::new();
    data.extend_from_slice(keep);
    data.extend_from_slice(b"\nthis is not json\n");
    data.extend_from_slice(br#"{"type":"assistant","pad":""#);
    data.resize(data.len() + 100 * 1024 * 1024, b'x');
    data.extend_from_slice(b"\"}\n");
    for _ in 0..1000 {
        data.extend_from_slice(keep);
        data.push(b'\n');
    }
    std::fs::write(&path, &data).unwrap();
    drop(data);

    let mut process = spawn(&["--stdout-file", path.to_str().unwrap()], quick());
    drop(process.take_stdin());
    let max = 1024 * 1024;
    let mut frames = FramedRead::new(
        process.take_stdout().unwrap(),
        NdjsonCodec::with_max_line(max),
    );
    let (mut messages, mut bad, mut peak) = (0, Vec::new(), 0);
    while let Some(frame) = frames.next().await {
        peak = peak.max(frames.read_buffer().capacity());
        match decode_frame(frame.unwrap()) {
            Frame::Message { .. } => messages += 1,
            Frame::BadLine(b) => bad.push(b),
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(messages, 1001);
    assert_eq!(bad.len(), 2, "{bad:?}");
    assert_eq!(bad[1].len, 100 * 1024 * 1024 + 29);
    assert!(
        matches!(bad[0].reason, byre_transport::BadLineReason::Decode(_)),
        "{bad:?}"
    );
    assert!(
        matches!(bad[1].reason, byre_transport::BadLineReason::TooLong { max: m } if m == max),
        "{bad:?}"
    );
    assert!(
        bad[1].head.starts_with(r#"{"type":"assistant","pad":"xxx"#) && bad[1].head.len() == 80,
        "{bad:?}"
    );
    assert!(peak <= 4 * max, "the read buffer grew to {peak} bytes");
    process.shutdown().await.unwrap();
}

/// The real CLI: its argv is accepted (it reads stdin and exits on EOF), and as root without
/// `IS_SANDBOX=1` the bypassPermissions refusal is reported with its hint.
#[tokio::test]
async fn the_real_cli_accepts_the_argv_and_reports_the_root_refusal() {
    let bin =
        byre_testkit::claude_bin().unwrap_or_else(|e| panic!("cannot provision the CLI: {e}"));
    // A loopback port that never answers: the CLI must not reach anything.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let env = byre_testkit::ClaudeEnv::new(&base).unwrap();
    let mut launch = Launch {
        cwd: Some(env.cwd().to_path_buf()),
        permission_mode: Some("bypassPermissions".into()),
        ..Launch::new()
    };
    for (name, value) in env.vars() {
        launch.env.push((name.into(), value.into()));
    }
    launch
        .env_remove
        .extend(env.removed().iter().map(Into::into));

    // Accepted: initialize answers, EOF ends it with status 0. The real CLI takes its time to
    // exit on a loaded machine: give it a generous grace before SIGTERM.
    let patient = ProcessOptions {
        exit_grace: Duration::from_secs(20),
        ..quick()
    };
    let mut process = CliProcess::spawn(&bin, &launch, patient).unwrap();
    let mut stdin = process.take_stdin().unwrap();
    // The settings go in initialize (the launcher's default delivery).
    let mut init = byre_proto::InitializeRequest::default();
    launch.fill_initialize(&mut init).unwrap();
    let request = serde_json::json!({"type": "control_request", "request_id": "r1",
        "request": serde_json::to_value(byre_proto::HostRequest::Initialize(init)).unwrap()});
    stdin
        .write_all(format!("{request}\n").as_bytes())
        .await
        .unwrap();
    let mut frames = FramedRead::new(process.take_stdout().unwrap(), NdjsonCodec::new());
    let first = tokio::time::timeout(Duration::from_secs(30), frames.next())
        .await
        .unwrap();
    assert!(
        matches!(
            first,
            Some(Ok(LineFrame::Line(ref line)))
                if matches!(decode_line(line), Frame::Message { message: byre_proto::CliMessage::ControlResponse(_), .. })
        ),
        "{first:?}; stderr: {}",
        process.stderr().text()
    );
    drop(stdin);
    let info = process.shutdown().await.unwrap();
    assert_eq!(
        info.stopped,
        Stopped::Exited,
        "stderr: {}",
        info.stderr_tail
    );

    if byre_testkit::running_as_root() {
        launch.env.retain(|(name, _)| name != "IS_SANDBOX");
        launch.env_remove.push("IS_SANDBOX".into());
        let mut process = CliProcess::spawn(&bin, &launch, quick()).unwrap();
        // It reads the initialize request first (`--await-initialize`), then refuses.
        let mut stdin = process.take_stdin().unwrap();
        stdin
            .write_all(format!("{request}\n").as_bytes())
            .await
            .unwrap();
        let mut frames = FramedRead::new(process.take_stdout().unwrap(), NdjsonCodec::new());
        assert!(frames.next().await.is_none());
        let err = process.exited_early().await;
        assert!(
            matches!(&err, LaunchError::RootBypass { .. })
                && err.to_string().contains("IS_SANDBOX"),
            "{err}"
        );
    }
}

/// The size of the pipe behind the stdout of `process`, opened again through `/proc`.
#[cfg(target_os = "linux")]
fn pipe_size(process: &CliProcess) -> i32 {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::OpenOptionsExt;
    let pipe = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits())
        .open(format!("/proc/{}/fd/1", process.pid()))
        .expect("the stdout pipe opens");
    nix::fcntl::fcntl(pipe.as_raw_fd(), nix::fcntl::FcntlArg::F_GETPIPE_SZ).expect("a pipe")
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn the_stdout_pipe_is_widened_as_asked() {
    let max: i32 = std::fs::read_to_string("/proc/sys/fs/pipe-max-size")
        .expect("Linux says its largest pipe")
        .trim()
        .parse()
        .expect("a number");
    let sized = |size| ProcessOptions {
        stdout_pipe_size: size,
        ..quick()
    };

    let default = spawn(&[], quick());
    assert_eq!(pipe_size(&default), (256 * 1024).min(max));

    let wide = spawn(&[], sized(Some(1 << 20)));
    assert_eq!(pipe_size(&wide), (1 << 20).min(max));

    // `None` leaves the system's default (16 pages).
    let untouched = spawn(&[], sized(None));
    assert_eq!(pipe_size(&untouched), 64 * 1024);

    for process in [default, wide, untouched] {
        process.shutdown().await.expect("it stops");
    }
}

/// Grace periods that a loaded machine does not outrun: the stand-in ends as told.
#[cfg(target_os = "linux")]
fn patient() -> ProcessOptions {
    ProcessOptions {
        exit_grace: Duration::from_secs(20),
        term_grace: Duration::from_secs(20),
        ..ProcessOptions::default()
    }
}

/// Waits for `pid` to be gone, with room for a loaded machine; whether it went.
#[cfg(target_os = "linux")]
async fn ended(pid: u32) -> bool {
    byre_testkit::process_gone(pid, Duration::from_secs(10)).await
}

/// The daemon the stand-in started (`--daemon`), once it runs in a session of its own, and the
/// tag of the stand-in's environment.
#[cfg(target_os = "linux")]
async fn daemon(process: &CliProcess) -> (u32, String) {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let pid = process
            .stderr()
            .text()
            .lines()
            .find_map(|l| l.strip_prefix("daemon ")?.trim().parse::<u32>().ok());
        // setsid(1) may not have called setsid(2) yet.
        if let Some(pid) = pid.filter(|&pid| byre_testkit::session_id(pid) == Some(pid)) {
            let tag = byre_testkit::environment_var(process.pid(), PROCESS_TAG_VAR)
                .expect("the CLI carries a tag");
            return (pid, tag);
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no daemon in its own session: {:?}",
            process.stderr().text()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The living descendants of `pid` whose command line holds `text`, once there are `n`.
#[cfg(target_os = "linux")]
async fn running_under(pid: u32, text: &str, n: usize) -> Vec<u32> {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let found: Vec<u32> = byre_testkit::descendants(pid)
            .into_iter()
            .filter(|(_, cmd)| cmd.contains(text))
            .map(|(pid, _)| pid)
            .collect();
        if found.len() >= n {
            return found;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{text:?} under {pid}: {:?}",
            byre_testkit::descendants(pid)
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Waits for every process carrying `tag` to be gone; panics with those left.
#[cfg(target_os = "linux")]
async fn no_process_with(tag: &str) {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let left = byre_testkit::processes_with(PROCESS_TAG_VAR, tag);
        if left.is_empty() {
            return;
        }
        let cmdline = |pid| std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        assert!(
            std::time::Instant::now() < deadline,
            "left with the tag: {:?}",
            left.iter()
                .map(|&pid| (
                    pid,
                    String::from_utf8_lossy(&cmdline(pid)).replace('\0', " ")
                ))
                .collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn shutdown_ends_a_daemon_that_left_the_group() {
    let process = spawn(&["--daemon", "exec sleep 300"], patient());
    let (daemon, tag) = daemon(&process).await;
    let exit = process.shutdown().await.unwrap();
    assert_eq!(exit.stopped, Stopped::Exited);
    assert!(ended(daemon).await, "the daemon {daemon} was left running");
    no_process_with(&tag).await;
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn terminate_ends_a_daemon_and_its_children_that_ignore_sigterm() {
    let process = spawn(
        &[
            "--ignore-eof",
            "--daemon",
            "trap '' TERM; sleep 300 & sleep 301 & wait",
        ],
        patient(),
    );
    let (daemon, tag) = daemon(&process).await;
    let children = running_under(daemon, "sleep 30", 2).await;
    let exit = process.terminate().await.unwrap();
    assert_eq!(exit.stopped, Stopped::Terminated);
    for pid in children.into_iter().chain([daemon]) {
        assert!(ended(pid).await, "{pid} was left running");
    }
    no_process_with(&tag).await;
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn dropping_the_handle_ends_a_daemon() {
    let process = spawn(&["--ignore-eof", "--daemon", "exec sleep 300"], quick());
    let (daemon, tag) = daemon(&process).await;
    drop(process);
    assert!(ended(daemon).await, "the daemon {daemon} survived the drop");
    no_process_with(&tag).await;
}

/// A process in the daemon's group that dropped the tag goes with the group the daemon leads.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn the_group_a_daemon_leads_goes_too() {
    let script = format!("env -u {PROCESS_TAG_VAR} sleep 300 & exec sleep 301");
    let process = spawn(&["--daemon", &script], quick());
    let (daemon, tag) = daemon(&process).await;
    let untagged = running_under(daemon, "sleep 300", 1).await[0];
    // Let `env` run sleep (the tag goes at its exec).
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while byre_testkit::environment_var(untagged, PROCESS_TAG_VAR).is_some() {
        assert!(std::time::Instant::now() < deadline, "env never ran sleep");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    process.shutdown().await.unwrap();
    assert!(ended(daemon).await, "the daemon {daemon} was left running");
    assert!(
        ended(untagged).await,
        "{untagged} in the daemon's group was left"
    );
    no_process_with(&tag).await;
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn each_cli_has_a_tag_of_its_own_unless_turned_off() {
    let (a, b) = (spawn(&[], quick()), spawn(&[], quick()));
    // Its environment is read once it runs the stand-in: until its exec, a child has this
    // process's.
    async fn tag(p: &CliProcess) -> Option<String> {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        let cmdline = format!("/proc/{}/cmdline", p.pid());
        while !std::fs::read_to_string(&cmdline).is_ok_and(|c| c.contains("standin")) {
            assert!(
                std::time::Instant::now() < deadline,
                "the stand-in never ran"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        byre_testkit::environment_var(p.pid(), PROCESS_TAG_VAR)
    }
    let (tag_a, tag_b) = (tag(&a).await.unwrap(), tag(&b).await.unwrap());
    assert_ne!(tag_a, tag_b);
    assert!(tag_a.len() >= 32, "{tag_a}");
    assert!(!format!("{a:?}").contains(&tag_a), "{a:?}");
    let untagged = ProcessOptions {
        tag_descendants: false,
        ..quick()
    };
    let c = spawn(&[], untagged);
    assert_eq!(tag(&c).await, None);
    for process in [a, b, c] {
        process.shutdown().await.unwrap();
    }
}

/// A host killed with SIGKILL: its watchdog ends the CLI's group, SIGKILL included for a CLI
/// and a grandchild that ignore SIGTERM, and the daemon the CLI started in a session of its own.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn the_watchdog_of_a_killed_host_ends_everything_the_cli_started() {
    use tokio::io::AsyncBufReadExt;
    let mut host = tokio::process::Command::new(standin())
        .args(["--host", "--ignore-eof", "--ignore-term", "--grandchild"])
        .args(["--daemon", "trap '' TERM; exec sleep 300"])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the host starts");
    let mut lines = tokio::io::BufReader::new(host.stderr.take().unwrap()).lines();
    let (mut cli, mut grandchild, mut daemon) = (None, None, None);
    let pid = |line: &str, prefix: &str| line.strip_prefix(prefix)?.trim().parse::<u32>().ok();
    while cli.is_none() || grandchild.is_none() || daemon.is_none() {
        let line = host_line(&mut lines).await;
        cli = cli.or(pid(&line, "cli "));
        grandchild = grandchild.or(pid(&line, "grandchild "));
        daemon = daemon.or(pid(&line, "daemon "));
    }
    let (cli, grandchild, daemon) = (cli.unwrap(), grandchild.unwrap(), daemon.unwrap());
    let tag = byre_testkit::environment_var(cli, PROCESS_TAG_VAR).expect("the CLI's tag");
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while byre_testkit::session_id(daemon) != Some(daemon) {
        assert!(
            std::time::Instant::now() < deadline,
            "no daemon in its own session"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    host.start_kill().expect("the host takes SIGKILL");
    host.wait().await.expect("the host ends");
    // The watchdog waits two seconds between SIGTERM and SIGKILL.
    let within = Duration::from_secs(15);
    for (what, pid) in [("CLI", cli), ("grandchild", grandchild), ("daemon", daemon)] {
        assert!(
            byre_testkit::process_gone(pid, within).await,
            "the {what} {pid} outlived its host"
        );
    }
    no_process_with(&tag).await;
}

/// A host killed with SIGKILL: its watchdog removes the folders it was given (a scratch config
/// holding a copy of the sign-in), which the host had no chance to remove.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn the_watchdog_of_a_killed_host_removes_its_scratch_folders() {
    use tokio::io::AsyncBufReadExt;
    let base = tempfile::tempdir().unwrap();
    let scratch = base.path().join("byre-resume-test");
    std::fs::create_dir_all(scratch.join("projects/-p")).unwrap();
    std::fs::write(scratch.join(".credentials.json"), "{}").unwrap();
    let mut host = tokio::process::Command::new(standin())
        .args(["--host", "--ignore-eof"])
        .env("BYRE_STANDIN_WATCHDOG_REMOVES", &scratch)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the host starts");
    let mut lines = tokio::io::BufReader::new(host.stderr.take().unwrap()).lines();
    loop {
        let line = host_line(&mut lines).await;
        if line.starts_with("cli ") {
            break;
        }
    }
    // Alive, the host keeps it.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(scratch.is_dir());
    host.start_kill().expect("the host takes SIGKILL");
    host.wait().await.expect("the host ends");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while scratch.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the scratch folder outlived its host"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(base.path().is_dir(), "only the folder given is removed");
}

/// A host with several CLIs has one watchdog, whatever their number; a CLI the host stopped is
/// forgotten by it, and the ones still running end when the host is killed with SIGKILL.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn one_watchdog_ends_every_cli_of_a_killed_host() {
    use tokio::io::AsyncBufReadExt;
    let mut host = tokio::process::Command::new(standin())
        .args(["--host", "--ignore-eof", "--ignore-term"])
        .env("BYRE_STANDIN_HOST_CLIS", "4")
        .env("BYRE_STANDIN_HOST_STOPS", "1")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the host starts");
    let host_pid = host.id().unwrap();
    let mut lines = tokio::io::BufReader::new(host.stderr.take().unwrap()).lines();
    let (mut clis, mut stopped) = (Vec::new(), Vec::new());
    loop {
        let line = host_line(&mut lines).await;
        if let Some(pid) = line.strip_prefix("cli ") {
            clis.push(pid.trim().parse::<u32>().unwrap());
        } else if let Some(pid) = line.strip_prefix("stopped ") {
            stopped.push(pid.trim().parse::<u32>().unwrap());
        } else if line == "ready" {
            break;
        }
    }
    assert_eq!((clis.len(), stopped.len()), (4, 1));
    let children = byre_testkit::descendants(host_pid);
    let watchdogs: Vec<_> = children
        .iter()
        .filter(|(_, cmd)| cmd.contains("byre-watchdog"))
        .collect();
    assert_eq!(
        watchdogs.len(),
        1,
        "one watchdog for the host: {children:?}"
    );
    let watchdog = watchdogs[0].0;
    // In a process group of its own: not the host's, not a CLI's.
    assert_eq!(group_of(watchdog), Some(watchdog));
    host.start_kill().expect("the host takes SIGKILL");
    host.wait().await.expect("the host ends");
    for pid in clis.iter().filter(|pid| !stopped.contains(pid)) {
        assert!(
            byre_testkit::process_gone(*pid, Duration::from_secs(15)).await,
            "the CLI {pid} outlived its host"
        );
    }
    assert!(
        byre_testkit::process_gone(watchdog, Duration::from_secs(15)).await,
        "the watchdog ends once it has ended the CLIs"
    );
}

/// The process group of `pid` (the fifth field of its stat line).
#[cfg(target_os = "linux")]
fn group_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    rest.split_whitespace().nth(2)?.parse().ok()
}

/// The next line a `--host` stand-in writes on stderr (within 20 s).
#[cfg(target_os = "linux")]
async fn host_line(
    lines: &mut tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStderr>>,
) -> String {
    tokio::time::timeout(Duration::from_secs(20), lines.next_line())
        .await
        .expect("the host says what runs")
        .unwrap()
        .expect("the host runs on")
}
