//! Clear errors: the CLI not found, bypassPermissions refused as root, not logged in, an
//! unknown session to resume, and bad usage.

use byre_testkit::{running_as_root, Reply, Rule, Script};

use crate::support::{claude, output, Offline};

fn hello() -> Script {
    Script::new().rule(Rule::any().reply(Reply::text("Hello.")))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_cli_names_the_install_command() {
    let offline = Offline::start(hello()).await;
    let out = output(
        offline.command(&["run", "--claude", "/nonexistent/claude", "hello"]),
        None,
    )
    .await;
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        out.stderr.starts_with("byre: the claude CLI was not found"),
        "{out:?}"
    );
    assert!(out.stderr.contains("/nonexistent/claude"), "{out:?}");
    assert!(
        out.stderr
            .contains("npm install -g @anthropic-ai/claude-code"),
        "{out:?}"
    );

    // Nothing on PATH, nothing in HOME, no BYRE_CLAUDE_BIN.
    let empty = offline.env.home().join("empty-bin");
    std::fs::create_dir_all(&empty).unwrap();
    let mut command = offline.command(&["run", "hello"]);
    command.env("PATH", &empty);
    let out = output(command, None).await;
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(out.stderr.contains("empty-bin/claude"), "{out:?}");
    assert!(
        out.stderr
            .contains("npm install -g @anthropic-ai/claude-code"),
        "{out:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bypass_permissions_as_root_says_what_to_do() {
    let offline = Offline::start(hello()).await;
    let mut command = offline.run(&["hello"]);
    command.env_remove("IS_SANDBOX");
    let out = output(command, None).await;
    if running_as_root() {
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        assert!(
            out.stderr
                .contains("refuses the bypassPermissions mode (byre's default) when run as root"),
            "{out:?}"
        );
        assert!(out.stderr.contains("IS_SANDBOX=1"), "{out:?}");
        assert!(out.stderr.contains("--permission-mode default"), "{out:?}");
    } else {
        assert!(
            out.status.success(),
            "not root: the default mode runs: {out:?}"
        );
    }
    // Another permission mode runs as root too.
    let mut command = offline.run(&["--permission-mode", "default", "hello"]);
    command.env_remove("IS_SANDBOX");
    let out = output(command, None).await;
    assert!(out.status.success(), "{out:?}");
    assert_eq!(out.stdout, "Hello.\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_credentials_say_not_logged_in() {
    let offline = Offline::start(hello()).await;
    let mut command = offline.run(&["hello"]);
    command.env_remove("ANTHROPIC_API_KEY");
    let out = output(command, None).await;
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    // The CLI's own words on stdout, byre's advice on stderr.
    assert!(out.stdout.contains("Not logged in"), "{out:?}");
    assert!(
        out.stderr.contains("byre: the CLI is not logged in"),
        "{out:?}"
    );
    assert!(out.stderr.contains("ANTHROPIC_API_KEY"), "{out:?}");
    assert!(
        offline.model.message_requests().is_empty(),
        "no request reached the model"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_session_to_resume_is_named() {
    let offline = Offline::start(hello()).await;
    let id = "0dd00000-1111-4222-8333-444455556666";
    let out = output(offline.run(&["--resume", id, "hello"]), None).await;
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        out.stderr
            .starts_with(&format!("byre: no session {id} to resume")),
        "{out:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_usage_is_refused_before_anything_starts() {
    let offline = Offline::start(hello()).await;
    let claude = claude();
    let claude = claude.to_str().unwrap();
    let out = output(
        offline.command(&["run", "--claude", claude, "--fork-at", "abc", "hello"]),
        None,
    )
    .await;
    assert_eq!(
        out.status.code(),
        Some(2),
        "--fork-at needs --resume: {out:?}"
    );
    assert!(out.stderr.contains("--resume"), "{out:?}");

    let out = output(
        offline.command(&["run", "--claude", claude, "-"]),
        Some("  \n"),
    )
    .await;
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(out.stderr.contains("the prompt is empty"), "{out:?}");

    let out = output(
        offline.command(&["run", "--claude", claude, "--cwd", "/nonexistent/dir", "hi"]),
        None,
    )
    .await;
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        out.stderr
            .contains("--cwd /nonexistent/dir: no such directory"),
        "{out:?}"
    );

    let out = output(
        offline.command(&["run", "--claude", claude, "--output", "xml", "hi"]),
        None,
    )
    .await;
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(offline.model.message_requests().is_empty());
}
