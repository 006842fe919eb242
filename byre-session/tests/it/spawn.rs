//! Custom spawn against the real CLI: a wrapper that runs it as a child, `docker exec` and
//! `ssh` (stand-ins in `testdata/wrappers` that run the command here as the real ones would
//! remotely), and a spawner of the test's own; each runs a turn, keeps secrets off the
//! command line and leaves no process behind.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use byre_session::proto::CliMessage;
use byre_session::proto::SystemMessage;
use byre_session::transport::Delivery;
use byre_session::{Claude, Event, Options};
use byre_testkit::{FakeModel, Reply, Rule, Script};
use byre_transport::{BoxFuture, LaunchError, Local, Spawn, SpawnRequest, Spawned, Wrapper};

use crate::support::*;

const SECRET: &str = "s3cret-spawn-9931";

fn wrapper(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/wrappers")
        .join(name)
}

async fn gone(pid: u32) -> bool {
    byre_testkit::process_gone(pid, Duration::from_millis(5000)).await
}

/// What one turn through `adjust`ed options showed.
struct Ran {
    /// The transcript's launch note (the command line that started the CLI).
    argv: String,
    /// The CLI's own pid, its command line and environment.
    cli_pid: u32,
    cli_argv: String,
    cli_environ: String,
    /// The `system/init` line's working directory.
    cwd: Option<String>,
    /// The first model request's system prompt.
    system: String,
    env: byre_testkit::ClaudeEnv,
}

async fn run(adjust: impl FnOnce(Options) -> Options) -> Ran {
    let model = FakeModel::start(Script::new().rule(Rule::any().reply(Reply::text("Done."))))
        .await
        .unwrap();
    let (options, env) = options(&model);
    let transcript = env.home().join("spawn.jsonl");
    let options = adjust(
        options
            .env("BYRE_SPAWN_TOKEN", SECRET)
            .transcript(&transcript)
            .transcript_launch(true),
    );
    let (claude, mut events) = Claude::start(options).await.unwrap();
    let cli_pid = claude.initialize_response().unwrap().pid.unwrap() as u32;
    let read = |what: &str| {
        let bytes = std::fs::read(format!("/proc/{cli_pid}/{what}")).unwrap_or_default();
        String::from_utf8_lossy(&bytes).replace('\0', " ")
    };
    let (cli_argv, cli_environ) = (read("cmdline"), read("environ"));
    claude.send("hello").unwrap();
    let (seen, result) = until_result(&mut events).await;
    assert_eq!(result.result.as_deref(), Some("Done."));
    claude.close().await.unwrap();
    let cwd = seen.into_iter().find_map(|e| match e {
        Event::Message(CliMessage::System(SystemMessage::Init(init))) => init.cwd,
        _ => None,
    });
    let argv = std::fs::read_to_string(&transcript)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find_map(|l| {
            l["note"]
                .as_str()?
                .strip_prefix("argv: ")
                .map(str::to_owned)
        })
        .expect("the launch note");
    Ran {
        argv,
        cli_pid,
        cli_argv,
        cli_environ,
        cwd,
        system: model.message_requests()[0].body["system"].to_string(),
        env,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn through_a_wrapper_the_cli_runs_as_its_child_and_nothing_is_left() {
    let parent = wrapper("parent");
    let ran = run(|o| o.spawn(Wrapper::new(&parent))).await;
    assert!(
        ran.argv.contains(&*parent.to_string_lossy()),
        "the launch note names the wrapper: {}",
        ran.argv
    );
    assert!(!ran.argv.contains(SECRET), "{}", ran.argv);
    assert!(
        ran.cli_environ.contains(SECRET),
        "the CLI got its variables"
    );
    assert_eq!(ran.cwd.as_deref(), Some(&*ran.env.cwd().to_string_lossy()));
    assert!(gone(ran.cli_pid).await, "the CLI outlived close");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn through_docker_exec_variables_go_by_name_and_the_directory_with_w() {
    let ran = run(|o| o.spawn(Wrapper::docker_exec("box").program(wrapper("fake-docker")))).await;
    assert!(
        ran.argv.contains(r#""-e","BYRE_SPAWN_TOKEN""#),
        "{}",
        ran.argv
    );
    assert!(
        ran.argv.contains(r#""-e","ANTHROPIC_API_KEY""#),
        "{}",
        ran.argv
    );
    assert!(!ran.argv.contains(SECRET), "{}", ran.argv);
    assert!(!ran.cli_argv.contains(SECRET), "{}", ran.cli_argv);
    // The stand-in clears the environment, as a container has its own: what the CLI has
    // came by name, and it was enough to run a turn.
    assert!(ran.cli_environ.contains(SECRET));
    assert_eq!(ran.cwd.as_deref(), Some(&*ran.env.cwd().to_string_lossy()));
    assert!(gone(ran.cli_pid).await, "the CLI outlived close");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn through_ssh_every_argument_survives_the_remote_shell() {
    let prompt = r#"It's "quoted", $HOME stays `literal` & so does \n."#;
    let ran = run(|o| {
        o.spawn(Wrapper::ssh("ci@builder").program(wrapper("fake-ssh")))
            .delivery(Delivery::Argv)
            .append_system_prompt(prompt)
    })
    .await;
    let quoted = serde_json::to_string(prompt).unwrap();
    let quoted = &quoted[1..quoted.len() - 1];
    assert!(ran.system.contains(quoted), "{}", ran.system);
    assert!(
        ran.argv.contains("SendEnv=BYRE_SPAWN_TOKEN"),
        "{}",
        ran.argv
    );
    assert!(!ran.argv.contains(SECRET), "{}", ran.argv);
    assert!(ran.cli_environ.contains(SECRET));
    assert_eq!(ran.cwd.as_deref(), Some(&*ran.env.cwd().to_string_lossy()));
    assert!(gone(ran.cli_pid).await, "the CLI outlived close");
}

/// A spawner of a program's own: counts its spawns and starts the CLI locally.
#[derive(Debug, Default)]
struct Counting(Arc<AtomicUsize>);

impl Spawn for Counting {
    fn spawn<'a>(
        &'a self,
        request: SpawnRequest<'a>,
    ) -> BoxFuture<'a, Result<Spawned, LaunchError>> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Local.spawn(request)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spawner_of_ones_own_starts_the_session() {
    let count = Arc::new(AtomicUsize::new(0));
    let ran = run(|o| o.spawn(Counting(count.clone()))).await;
    assert_eq!(count.load(Ordering::SeqCst), 1);
    assert!(gone(ran.cli_pid).await);
}

#[test]
fn the_wrapper_example_runs_the_cli_under_nice() {
    // Built by `cargo test` already (examples are); `cargo run` then only runs it.
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = std::process::Command::new(cargo)
        .args(["run", "-q", "-p", "byre-session", "--example", "wrapper"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert_eq!(stdout.trim(), "I run at niceness 10.", "{stderr}");
}
