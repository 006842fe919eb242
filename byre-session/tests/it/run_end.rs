//! The end of a run, by the CLI's word, against the real CLI: after a prompt that starts a
//! background task (a Bash, a subagent), the run is over only after the turn the CLI starts
//! by itself to report the task. For a background Bash the CLI reports `idle` at once after
//! the prompt's result, task still running; for a background subagent it stays `running`.

use byre_session::proto::CliMessage;
use byre_session::{Claude, Event, TurnEvent, TurnOrigin};
use byre_testkit::{FakeModel, Script};

use crate::support::*;

/// Runs `prompt` against scenario `name` until [`TurnEvent::RunIdle`]; returns every event.
async fn until_run_idle(name: &str, prompt: &str) -> Vec<Event> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/scenarios")
        .join(format!("{name}.json"));
    let model = FakeModel::start(Script::from_file(&path).unwrap())
        .await
        .unwrap();
    let (options, _env) = options(&model);
    let (claude, mut events) = Claude::start(options).await.unwrap();
    claude.send(prompt).unwrap();
    let mut seen = Vec::new();
    loop {
        let event = next_event(&mut events).await;
        let done = matches!(event, Event::Turn(TurnEvent::RunIdle));
        seen.push(event);
        if done {
            break;
        }
    }
    claude.close().await.unwrap();
    seen
}

/// Checks that the run ended once, after two results (the prompt's, then the task
/// notification's); with `idle_early`, the CLI said `idle` before the second.
fn ends_after_the_notification_turn(seen: &[Event], answer: &str, idle_early: bool) {
    let results: Vec<usize> =
        positions(seen, |e| matches!(e, Event::Message(CliMessage::Result(_))));
    assert_eq!(results.len(), 2, "{seen:?}");
    let idle_reports = positions(seen, |e| {
        matches!(e, Event::Message(CliMessage::System(byre_session::proto::SystemMessage::SessionStateChanged(s)))
            if s.state == byre_session::proto::SessionState::IDLE)
    });
    assert_eq!(
        idle_reports.first().is_some_and(|&i| i < results[1]),
        idle_early,
        "idle reports {idle_reports:?}, results {results:?}"
    );
    let ended = positions(seen, |e| matches!(e, Event::Turn(TurnEvent::RunIdle)));
    assert_eq!(ended, [seen.len() - 1]);
    assert!(ended[0] > results[1]);
    let notified = seen.iter().any(|e| {
        matches!(
            e,
            Event::Turn(TurnEvent::TurnStarted {
                origin: TurnOrigin::TaskNotification { .. },
                ..
            })
        )
    });
    assert!(notified, "{seen:?}");
    let Event::Message(CliMessage::Result(last)) = &seen[results[1]] else {
        unreachable!()
    };
    assert_eq!(last.result.as_deref(), Some(answer));
}

fn positions(seen: &[Event], f: impl Fn(&Event) -> bool) -> Vec<usize> {
    seen.iter()
        .enumerate()
        .filter(|(_, e)| f(e))
        .map(|(i, _)| i)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_bash_ends_the_run_after_its_notification_turn() {
    let seen = until_run_idle("bash_background", "please start the background job").await;
    ends_after_the_notification_turn(&seen, "The background job finished.", true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_subagent_ends_the_run_after_its_notification_turn() {
    let seen = until_run_idle("subagent_background", "please spawn a background agent").await;
    ends_after_the_notification_turn(&seen, "The background agent reported DONE-BG.", false);
}
