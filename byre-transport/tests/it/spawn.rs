//! Spawners: the command lines `Wrapper` builds, and that byre's shutdown guarantees hold
//! through a wrapper (stand-in wrappers in `testdata/wrappers`, the stand-in CLI), a daemon's
//! included.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use byre_transport::{shell_quote, CliProcess, Launch, ProcessOptions, Stopped, Wrapper};
use tokio::io::AsyncBufReadExt;
use tokio::io::AsyncWriteExt;

fn standin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_byre-standin"))
}

fn wrapper(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/wrappers")
        .join(name)
}

fn quick() -> ProcessOptions {
    ProcessOptions {
        exit_grace: Duration::from_millis(300),
        term_grace: Duration::from_millis(300),
        ..ProcessOptions::default()
    }
}

fn strings(argv: &[OsString]) -> Vec<String> {
    argv.iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect()
}

/// A launch of the stand-in with a secret in its environment.
fn launch_with_secret() -> Launch {
    let mut launch = Launch::new();
    launch.program = Some(standin());
    launch.cwd = Some(std::env::temp_dir());
    launch
        .env
        .push(("BYRE_TEST_TOKEN".into(), "s3cret value".into()));
    launch
}

#[test]
fn a_prefix_wrapper_puts_its_arguments_before_the_cli() {
    let launch = launch_with_secret();
    let argv = Wrapper::new("sudo")
        .args(["-u", "agent"])
        .argv(&launch, vec!["--print".into()]);
    let standin = standin().to_string_lossy().into_owned();
    assert_eq!(strings(&argv), ["sudo", "-u", "agent", &standin, "--print"]);
    // A named CLI wins over the launch's program.
    let argv = Wrapper::new("nice")
        .cli("/opt/claude")
        .argv(&launch, vec![]);
    assert_eq!(strings(&argv), ["nice", "/opt/claude"]);
}

#[test]
fn docker_exec_passes_variables_by_name_and_the_directory_with_w() {
    let launch = launch_with_secret();
    let docker = Wrapper::docker_exec("box")
        .arg("--user=agent")
        .cli("/usr/local/bin/claude");
    // By default the CLI runs under the remote watchdog, given the grace in fifths of a second.
    let watched = strings(&docker.argv(&launch, vec!["--verbose".into()]));
    let tail = &watched[watched.len() - 8..];
    assert_eq!(&tail[..3], ["box", "sh", "-c"], "{watched:?}");
    assert_eq!(
        &tail[4..],
        ["byre-watchdog", "25", "/usr/local/bin/claude", "--verbose"]
    );
    let argv = strings(
        &docker
            .remote_grace(None)
            .argv(&launch, vec!["--verbose".into()]),
    );
    let dir = std::env::temp_dir().to_string_lossy().into_owned();
    assert_eq!(&argv[..5], ["docker", "exec", "-i", "-w", &dir]);
    let tail = &argv[argv.len() - 4..];
    assert_eq!(
        tail,
        ["--user=agent", "box", "/usr/local/bin/claude", "--verbose"]
    );
    let names: Vec<&str> = argv
        .windows(2)
        .filter(|w| w[0] == "-e")
        .map(|w| w[1].as_str())
        .collect();
    assert!(names.contains(&"BYRE_TEST_TOKEN"), "{argv:?}");
    assert!(names.contains(&"CLAUDE_CODE_ENTRYPOINT"), "{argv:?}");
    assert!(!argv.iter().any(|a| a.contains("s3cret")), "{argv:?}");
}

#[test]
fn ssh_sends_variables_by_name_and_quotes_the_remote_command() {
    let launch = launch_with_secret();
    let ssh = Wrapper::ssh("ci@builder").cli("claude");
    let watched = strings(&ssh.argv(&launch, vec!["--verbose".into()]));
    let remote = watched.last().unwrap();
    assert!(remote.contains("exec sh -c '"), "{remote}");
    assert!(
        remote.ends_with("byre-watchdog 25 claude --verbose"),
        "{remote}"
    );
    let argv = strings(&ssh.remote_grace(None).argv(
        &launch,
        vec![
            "--append-system-prompt".into(),
            "It's \"quoted\" $HOME".into(),
        ],
    ));
    assert_eq!(&argv[..2], ["ssh", "-T"]);
    assert!(
        argv.contains(&"SendEnv=BYRE_TEST_TOKEN".to_string()),
        "{argv:?}"
    );
    assert!(!argv.iter().any(|a| a.contains("s3cret")), "{argv:?}");
    let n = argv.len();
    assert_eq!(&argv[n - 3..n - 1], ["ci@builder", "--"]);
    let dir = shell_quote(std::env::temp_dir().as_os_str());
    assert_eq!(
        argv[n - 1],
        format!(r#"cd {dir} && exec claude --append-system-prompt 'It'\''s "quoted" $HOME'"#)
    );
}

#[test]
fn shell_quoting_leaves_plain_words_alone() {
    assert_eq!(shell_quote("--max-turns".as_ref()), "--max-turns");
    assert_eq!(shell_quote("".as_ref()), "''");
    assert_eq!(shell_quote("a b".as_ref()), "'a b'");
    assert_eq!(shell_quote("Bash(git *)".as_ref()), "'Bash(git *)'");
}

/// The pids of `pid`'s children.
fn children(pid: u32) -> Vec<u32> {
    std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect()
}

async fn gone(pid: u32) -> bool {
    byre_testkit::process_gone(pid, Duration::from_millis(2000)).await
}

/// Starts the stand-in with `args` through the `parent` wrapper; the wrapper's pid, the
/// stand-in's and its grandchild's.
async fn through_parent(args: &[&str]) -> (CliProcess, u32, u32) {
    let mut launch = Launch::new();
    launch.program = Some(standin());
    let spawner = Wrapper::new(wrapper("parent"));
    let args: Vec<OsString> = args.iter().map(Into::into).collect();
    let request = byre_transport::SpawnRequest::new(&launch).with_args(args);
    let spawned = byre_transport::Spawn::spawn(&spawner, request)
        .await
        .unwrap();
    let process = CliProcess::from_spawned(spawned, quick());
    let wrapper_pid = process.pid();
    let mut grandchild = None;
    for _ in 0..200 {
        grandchild = process
            .stderr()
            .text()
            .lines()
            .find_map(|l| l.strip_prefix("grandchild ")?.trim().parse().ok());
        if grandchild.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let cli = children(wrapper_pid);
    assert_eq!(cli.len(), 1, "the wrapper runs the stand-in as its child");
    (
        process,
        wrapper_pid,
        grandchild.expect("the grandchild's pid on stderr"),
    )
}

#[tokio::test]
async fn through_a_wrapper_shutdown_leaves_nothing_behind() {
    let (process, wrapper_pid, grandchild) = through_parent(&["--grandchild"]).await;
    let cli = children(wrapper_pid)[0];
    let exit = process.shutdown().await.unwrap();
    assert_eq!(
        exit.stopped,
        Stopped::Exited,
        "the CLI ends at the end of its input"
    );
    for pid in [wrapper_pid, cli, grandchild] {
        assert!(gone(pid).await, "{pid} is still running");
    }
}

#[tokio::test]
async fn through_a_wrapper_a_cli_that_ignores_everything_is_killed() {
    let (process, wrapper_pid, grandchild) =
        through_parent(&["--grandchild", "--ignore-eof", "--ignore-term"]).await;
    let cli = children(wrapper_pid)[0];
    let exit = process.shutdown().await.unwrap();
    // The shell wrapper dies at SIGTERM; its group, the CLI in it, at the kill that follows.
    assert_ne!(exit.stopped, Stopped::Exited);
    for pid in [wrapper_pid, cli, grandchild] {
        assert!(gone(pid).await, "{pid} is still running");
    }
}

#[tokio::test]
async fn dropping_a_wrapped_process_leaves_nothing_behind() {
    let (process, wrapper_pid, grandchild) =
        through_parent(&["--grandchild", "--ignore-eof", "--ignore-term"]).await;
    let cli = children(wrapper_pid)[0];
    drop(process);
    for pid in [wrapper_pid, cli, grandchild] {
        assert!(gone(pid).await, "{pid} survived the drop");
    }
}

#[tokio::test]
async fn fake_docker_and_ssh_run_the_stand_in_with_the_named_variables_only() {
    for spawner in [
        Wrapper::docker_exec("box").program(wrapper("fake-docker")),
        Wrapper::ssh("host").program(wrapper("fake-ssh")),
    ] {
        let mut launch = launch_with_secret();
        launch.program = Some(PathBuf::from("/bin/sh"));
        let script = "printf '%s|%s|%s\\n' \"$BYRE_TEST_TOKEN\" \"$CLAUDE_CODE_ENTRYPOINT\" \"$1\"";
        let args = vec![
            "-c".into(),
            script.into(),
            "sh".into(),
            "it's a \"test\"".into(),
        ];
        let request = byre_transport::SpawnRequest::new(&launch).with_args(args);
        let spawned = byre_transport::Spawn::spawn(&spawner, request)
            .await
            .unwrap();
        let mut process = CliProcess::from_spawned(spawned, quick());
        let mut stdin = process.take_stdin().unwrap();
        stdin.shutdown().await.unwrap();
        let mut stdout = tokio::io::BufReader::new(process.take_stdout().unwrap());
        let mut line = String::new();
        stdout.read_line(&mut line).await.unwrap();
        let exit = process.shutdown().await.unwrap();
        assert!(exit.status.success(), "{spawner:?}: {}", exit.stderr_tail);
        assert_eq!(
            line.trim_end(),
            "s3cret value|sdk-byre|it's a \"test\"",
            "{spawner:?}"
        );
    }
}

/// A daemon the CLI started in a session of its own, through a wrapper that passes its
/// environment on: it carries the wrapper's tag, and shutdown ends it.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn through_a_wrapper_shutdown_ends_a_daemon_that_left_the_group() {
    let (process, wrapper_pid, _) =
        through_parent(&["--grandchild", "--daemon", "exec sleep 300"]).await;
    let tag = byre_testkit::environment_var(wrapper_pid, byre_transport::PROCESS_TAG_VAR)
        .expect("the wrapper carries a tag");
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let daemon = loop {
        let daemon = process
            .stderr()
            .text()
            .lines()
            .find_map(|l| l.strip_prefix("daemon ")?.trim().parse::<u32>().ok())
            .filter(|&pid| byre_testkit::session_id(pid) == Some(pid));
        if let Some(daemon) = daemon {
            break daemon;
        }
        assert!(std::time::Instant::now() < deadline, "no daemon");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(
        byre_testkit::environment_var(daemon, byre_transport::PROCESS_TAG_VAR).as_ref(),
        Some(&tag)
    );
    process.shutdown().await.unwrap();
    let within = Duration::from_secs(10);
    assert!(
        byre_testkit::process_gone(daemon, within).await,
        "the daemon {daemon} was left running"
    );
    let deadline = std::time::Instant::now() + within;
    loop {
        let left = byre_testkit::processes_with(byre_transport::PROCESS_TAG_VAR, &tag);
        if left.is_empty() {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "left: {left:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn the_debug_of_a_started_cli_shows_no_argument() {
    use byre_transport::{Local, Spawn, SpawnRequest};
    let launch = launch_with_secret();
    let mut request = SpawnRequest::new(&launch);
    request.args = vec![
        "--mcp-config".into(),
        r#"{"env":{"TOKEN":"s3cret value"}}"#.into(),
    ];
    let spawned = Local.spawn(request).await.expect("the stand-in starts");
    let shown = format!("{spawned:?}");
    assert!(!shown.contains("s3cret"), "{shown}");
    assert!(shown.contains("arguments: 2"), "{shown}");
    drop(spawned);
}

/// A CLI that keeps running after its input ends (a `sleep` that never reads it), started
/// through the docker and ssh stand-ins, which run it in a session of their own as a
/// container or another host would: once byre has stopped the local client, the remote
/// watchdog ends it after its grace; without the watchdog it would run on.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_remote_cli_is_ended_by_its_watchdog_when_its_input_ends() {
    for watchdog in [true, false] {
        for spawner in [
            Wrapper::docker_exec("box").program(wrapper("fake-docker")),
            Wrapper::ssh("host").program(wrapper("fake-ssh")),
        ] {
            let grace = watchdog.then_some(Duration::from_millis(600));
            let spawner = spawner.remote_grace(grace);
            let mut launch = Launch::new();
            launch.program = Some(PathBuf::from("/bin/sh"));
            let args = vec!["-c".into(), "echo \"pid $$\"; exec sleep 300".into()];
            let request = byre_transport::SpawnRequest::new(&launch).with_args(args);
            let spawned = byre_transport::Spawn::spawn(&spawner, request)
                .await
                .unwrap();
            let mut process = CliProcess::from_spawned(spawned, quick());
            let mut stdout = tokio::io::BufReader::new(process.take_stdout().unwrap());
            let mut line = String::new();
            stdout.read_line(&mut line).await.unwrap();
            let pid: u32 = line.trim().strip_prefix("pid ").unwrap().parse().unwrap();
            process.shutdown().await.unwrap();
            let wait = Duration::from_secs(if watchdog { 8 } else { 3 });
            let ended = byre_testkit::process_gone(pid, wait).await;
            if watchdog {
                assert!(ended, "{spawner:?}: the remote CLI {pid} is still running");
            } else {
                assert!(!ended, "{spawner:?}: without a watchdog it runs on");
                nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(pid as i32),
                    nix::sys::signal::Signal::SIGKILL,
                )
                .unwrap();
            }
        }
    }
}
