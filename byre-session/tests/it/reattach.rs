//! `reinitialize` and re-attaching to a running CLI, against the real CLI: the permission
//! prompts the CLI still waits on reach the handler once, and a second host that attaches to
//! the CLI through a spawner of its own answers the prompt the first host left.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use byre_session::proto::{CliMessage, ControlResponseBody};
use byre_session::transport::{
    BoxFuture, ChildHandle, CliOutput, CliStdin, LaunchError, Local, Spawn, SpawnRequest, Spawned,
};
use byre_session::{Claude, Event};
use byre_testkit::FakeModel;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::sync::{watch, Notify};

use crate::support::*;

/// The ids of the permission prompts a `control_response` line lists as pending.
fn pending_in(event: &Event) -> Vec<String> {
    let Event::Message(CliMessage::ControlResponse(response)) = event else {
        return Vec::new();
    };
    let ControlResponseBody::Success(ok) = &response.response else {
        return Vec::new();
    };
    ok.pending_permission_requests
        .iter()
        .flatten()
        .filter_map(|r| r["request_id"].as_str().map(str::to_owned))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reinitialize_lists_the_waiting_prompt_and_the_handler_is_asked_once() {
    let model = FakeModel::start(touch_script()).await.unwrap();
    let (options, env) = options(&model);
    let asked = Arc::new(AtomicUsize::new(0));
    let release = Arc::new(Notify::new());
    let (count, gate) = (asked.clone(), release.clone());
    let options = options.can_use_tool(move |request| {
        count.fetch_add(1, Ordering::SeqCst);
        let gate = gate.clone();
        async move {
            gate.notified().await;
            Ok(request.allow())
        }
    });
    let (claude, mut events) = Claude::start(options).await.unwrap();
    claude.send("make a file").unwrap();
    let prompt = loop {
        if let Event::Request { id, .. } = next_event(&mut events).await {
            break id;
        }
    };
    let answer = claude.reinitialize().await.unwrap();
    assert!(answer.pid.is_some());
    // The CLI's answer lists the prompt; it is in flight, so the handler is not asked again.
    let pending = loop {
        let event = next_event(&mut events).await;
        let pending = pending_in(&event);
        if !pending.is_empty() {
            break pending;
        }
    };
    assert_eq!(pending, [prompt.as_str().to_owned()]);
    release.notify_one();
    let (_, result) = until_result(&mut events).await;
    assert_eq!(result.result.as_deref(), Some("Done."));
    assert_eq!(asked.load(Ordering::SeqCst), 1);
    assert!(env.cwd().join("made.txt").exists());
    claude.close().await.unwrap();
}

/// The running CLI a [`Relay`] keeps between hosts.
struct Live {
    /// The CLI's stdin, until the owning host's input ends (dropping it closes the pipe).
    stdin: Arc<tokio::sync::Mutex<Option<CliStdin>>>,
    /// Where the CLI's stdout lines go: the attached host, if any.
    host: Arc<tokio::sync::Mutex<Option<tokio::io::DuplexStream>>>,
    child: Arc<Mutex<Option<Box<dyn ChildHandle>>>>,
}

/// A spawner that starts the CLI once and lets hosts attach to it and detach from it, as a
/// daemon that outlives its clients would: the first spawn starts the CLI, each later one
/// attaches to it. A detaching host's end of input does not reach the CLI; the last host
/// (`final_host`) owns it, and its end of input and its kill do.
#[derive(Default)]
struct Relay {
    live: Mutex<Option<Arc<Live>>>,
    spawns: AtomicUsize,
}

impl std::fmt::Debug for Relay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Relay").finish_non_exhaustive()
    }
}

/// The host's view of the CLI's life: a detaching host sees it "exit" when it detaches.
#[derive(Debug)]
struct Attachment {
    detached: watch::Receiver<bool>,
    owner: bool,
    child: Arc<Mutex<Option<Box<dyn ChildHandle>>>>,
    pid: Option<u32>,
}

impl ChildHandle for Attachment {
    fn id(&self) -> Option<u32> {
        self.pid
    }
    fn try_wait(&mut self) -> std::io::Result<Option<std::process::ExitStatus>> {
        if self.owner {
            return self.child.lock().unwrap().as_mut().unwrap().try_wait();
        }
        Ok((*self.detached.borrow()).then(success))
    }
    fn wait(&mut self) -> BoxFuture<'_, std::io::Result<std::process::ExitStatus>> {
        Box::pin(async move {
            if self.owner {
                loop {
                    if let Some(status) = self.try_wait()? {
                        return Ok(status);
                    }
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
            }
            let _ = self.detached.wait_for(|d| *d).await;
            Ok(success())
        })
    }
    fn terminate(&mut self) {
        if self.owner {
            self.child.lock().unwrap().as_mut().unwrap().terminate();
        }
    }
    fn kill(&mut self) {
        if self.owner {
            self.child.lock().unwrap().as_mut().unwrap().kill();
        }
    }
}

fn success() -> std::process::ExitStatus {
    std::os::unix::process::ExitStatusExt::from_raw(0)
}

impl Spawn for Relay {
    fn spawn<'a>(
        &'a self,
        request: SpawnRequest<'a>,
    ) -> BoxFuture<'a, Result<Spawned, LaunchError>> {
        Box::pin(async move {
            let n = self.spawns.fetch_add(1, Ordering::SeqCst);
            let existing = self.live.lock().unwrap().clone();
            let (live, argv) = match existing {
                Some(live) => (live, vec!["relay: attach".into()]),
                None => {
                    let spawned = Local.spawn(request).await?;
                    let live = Arc::new(Live {
                        stdin: Arc::new(tokio::sync::Mutex::new(Some(spawned.stdin))),
                        host: Arc::new(tokio::sync::Mutex::new(None)),
                        child: Arc::new(Mutex::new(Some(spawned.child))),
                    });
                    pump_stdout(spawned.stdout, live.host.clone());
                    if let Some(mut stderr) = spawned.stderr {
                        tokio::spawn(async move {
                            let mut sink = Vec::new();
                            let _ = stderr.read_to_end(&mut sink).await;
                        });
                    }
                    *self.live.lock().unwrap() = Some(live.clone());
                    (live, spawned.argv)
                }
            };
            let owner = n > 0;
            let (host_in, relay_in) = tokio::io::duplex(1 << 16);
            let (relay_out, host_out) = tokio::io::duplex(1 << 16);
            *live.host.lock().await = Some(relay_out);
            let (detach_tx, detached) = watch::channel(false);
            pump_stdin(relay_in, live.clone(), owner, detach_tx);
            let pid = live.child.lock().unwrap().as_ref().unwrap().id();
            Ok(Spawned {
                stdin: Box::new(host_in),
                stdout: Box::new(host_out) as CliOutput,
                stderr: None,
                child: Box::new(Attachment {
                    detached,
                    owner,
                    child: live.child.clone(),
                    pid,
                }),
                argv,
            })
        })
    }
}

/// Copies the CLI's stdout, line by line, to the attached host; lines while no host is
/// attached are dropped (a daemon's buffer evicting frames).
fn pump_stdout(stdout: CliOutput, host: Arc<tokio::sync::Mutex<Option<tokio::io::DuplexStream>>>) {
    tokio::spawn(async move {
        let mut lines = BufReader::new(stdout);
        let mut line = Vec::new();
        loop {
            line.clear();
            if lines.read_until(b'\n', &mut line).await.unwrap_or(0) == 0 {
                *host.lock().await = None;
                return;
            }
            let mut host = host.lock().await;
            if let Some(out) = host.as_mut() {
                if out.write_all(&line).await.is_err() {
                    *host = None;
                }
            }
        }
    });
}

/// Copies a host's input to the CLI. At its end a detaching host is cut off (its stdout
/// ends and its CLI "exits"); the owner's end of input is the CLI's.
fn pump_stdin(
    mut input: tokio::io::DuplexStream,
    live: Arc<Live>,
    owner: bool,
    detached: watch::Sender<bool>,
) {
    tokio::spawn(async move {
        let mut buffer = vec![0; 1 << 16];
        loop {
            let n = input.read(&mut buffer).await.unwrap_or(0);
            if n == 0 {
                break;
            }
            let mut stdin = live.stdin.lock().await;
            let Some(stdin) = stdin.as_mut() else { break };
            if stdin.write_all(&buffer[..n]).await.is_err() {
                break;
            }
        }
        if owner {
            live.stdin.lock().await.take();
        } else {
            *live.host.lock().await = None;
        }
        let _ = detached.send(true);
    });
}

/// A spawner handle the test keeps while each `Claude` gets one too.
#[derive(Debug, Clone)]
struct Shared(Arc<Relay>);

impl Spawn for Shared {
    fn spawn<'a>(
        &'a self,
        request: SpawnRequest<'a>,
    ) -> BoxFuture<'a, Result<Spawned, LaunchError>> {
        self.0.spawn(request)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_that_attaches_to_a_running_cli_answers_the_prompt_the_last_one_left() {
    let model = FakeModel::start(touch_script()).await.unwrap();
    let (options, env) = options(&model);
    let relay = Shared(Arc::new(Relay::default()));

    // The first host asks, and goes away before its handler answers.
    let first_asked = Arc::new(Notify::new());
    let asked = first_asked.clone();
    let first = options
        .clone()
        .spawn(relay.clone())
        .can_use_tool(move |_request| {
            asked.notify_one();
            std::future::pending()
        });
    let (claude, _events) = Claude::start(first).await.unwrap();
    let cli_pid = claude.initialize_response().unwrap().pid.unwrap() as u32;
    claude.send("make a file").unwrap();
    tokio::time::timeout(EVENT_STEP, first_asked.notified())
        .await
        .expect("the first host is asked");
    claude.close().await.unwrap();
    assert!(
        std::fs::metadata(format!("/proc/{cli_pid}")).is_ok(),
        "the CLI outlives a detaching host"
    );
    assert!(!env.cwd().join("made.txt").exists());

    // The second host attaches: the initialize answer hands it the waiting prompt.
    let second_asked = Arc::new(AtomicUsize::new(0));
    let count = second_asked.clone();
    let second = options.spawn(relay.clone()).can_use_tool(move |request| {
        count.fetch_add(1, Ordering::SeqCst);
        async move { Ok(request.allow()) }
    });
    let (claude, mut events) = Claude::start(second).await.unwrap();
    assert_eq!(
        claude.initialize_response().unwrap().pid.map(|p| p as u32),
        Some(cli_pid),
        "the same CLI"
    );
    let (_, result) = until_result(&mut events).await;
    assert_eq!(result.result.as_deref(), Some("Done."));
    assert_eq!(second_asked.load(Ordering::SeqCst), 1);
    assert!(env.cwd().join("made.txt").exists(), "the allowed Bash ran");
    assert_eq!(relay.0.spawns.load(Ordering::SeqCst), 2);
    claude.close().await.unwrap();
    for _ in 0..200 {
        if std::fs::metadata(format!("/proc/{cli_pid}/stat")).is_err() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("the CLI outlived the owning host's close");
}
