//! `byre run` against CLIs that misbehave on purpose (byre-testkit's `byre-hostile`): what it
//! says on stderr and how it exits.

use std::time::{Duration, Instant};

use crate::support::{byre_in, output, Offline};

/// `byre run --claude byre-hostile ARGS...` with the hostile flags `hostile`.
async fn run_hostile(hostile: &str, args: &[&str]) -> (crate::support::Out, Duration) {
    let offline = Offline::start(byre_testkit::Script::new()).await;
    let bin = byre_testkit::hostile_bin().expect("byre-hostile builds");
    let mut all = vec!["run", "--claude", bin.to_str().expect("a UTF-8 path")];
    all.extend_from_slice(args);
    let mut command = byre_in(&offline.env, &all);
    command.env("BYRE_HOSTILE_ARGS", hostile);
    let started = Instant::now();
    let out = output(command, None).await;
    (out, started.elapsed())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_initialize_timeout_says_why_with_the_stderr_tail() {
    let (out, elapsed) = run_hostile("--mode hang-init", &["--request-timeout", "1", "hi"]).await;
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(elapsed < Duration::from_secs(10), "{elapsed:?}");
    assert!(
        out.stderr.contains("did not answer initialize within 1.0s"),
        "{out:?}"
    );
    assert!(out.stderr.contains("--request-timeout"), "{out:?}");
    assert!(out.stderr.contains("not answering initialize"), "{out:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mid_turn_exit_is_not_called_a_failed_start() {
    let (out, _) = run_hostile("--mode crash", &["hi"]).await;
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(out.stderr.contains("in the middle of the turn"), "{out:?}");
    assert!(out.stderr.contains("crashing mid-turn"), "{out:?}");
    assert!(!out.stderr.contains("could not start"), "{out:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_result_with_a_lone_surrogate_ends_the_run() {
    // `\ud83d` without its low half: valid JSON, as `JSON.stringify` writes a cut string.
    let (out, elapsed) = run_hostile(r"--mode answer --result cut\ud83d", &["hi"]).await;
    assert!(out.status.success(), "{out:?}");
    assert!(elapsed < Duration::from_secs(10), "{elapsed:?}");
    assert!(!out.stderr.contains("bad line"), "{out:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retried_stream_leaves_only_the_final_answer_on_stdout() {
    // The real CLI: the fake model's first stream breaks after two deltas; the CLI ends that
    // message with `abandoned_blocks` and asks again.
    use byre_testkit::{MessageReply, Reply, Rule, Script};
    let answer = "The whole answer, streamed in one piece after the retry.";
    let broken = MessageReply {
        blocks: vec![byre_testkit::Block::text("A first attempt that breaks off")],
        chunk_size: 6,
        cut_after_deltas: Some(3),
        chunk_delay_ms: 50,
        ..MessageReply::default()
    };
    let script = Script::new()
        .rule(Rule::any().times(1).reply(Reply::Message(broken)))
        .rule(Rule::any().reply(Reply::text(answer)));
    let offline = crate::support::Offline::start(script).await;
    let out = output(offline.run(&["hi"]), None).await;
    assert!(out.status.success(), "{out:?}");
    assert_eq!(out.stdout, format!("{answer}\n"), "{out:?}");
    assert!(out.stderr.contains("broke off after 12 bytes"), "{out:?}");
    assert!(out.stderr.contains("A first atte"), "{out:?}");
    assert_eq!(offline.model.message_requests().len(), 2, "the CLI retried");
}
