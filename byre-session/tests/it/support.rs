//! Helpers shared by the driver's tests: options for the real CLI offline, and waiting for
//! events and results.

use std::time::Duration;

use byre_proto::{CliMessage, ResultMessage};
use byre_session::{Claude, Event, Events, Options};
use byre_testkit::{ClaudeEnv, FakeModel};
use futures::StreamExt;

/// Options that run the pinned CLI offline against `model`, with the env's scratch HOME.
pub(crate) fn options(model: &FakeModel) -> (Options, ClaudeEnv) {
    let env = ClaudeEnv::new(&model.base_url()).unwrap();
    let options = env
        .options()
        .unwrap_or_else(|e| panic!("cannot provision the CLI: {e}"));
    (options, env)
}

/// How long any one event may take to arrive in the tests against the real CLI.
pub(crate) const EVENT_STEP: Duration = Duration::from_secs(60);

/// The next event, within [`EVENT_STEP`].
pub(crate) async fn next_event(events: &mut Events) -> Event {
    tokio::time::timeout(EVENT_STEP, events.next())
        .await
        .expect("an event in time")
        .expect("events go on")
}

/// The events up to and including the next `result`, and that result.
pub(crate) async fn until_result(events: &mut Events) -> (Vec<Event>, ResultMessage) {
    let mut seen = Vec::new();
    loop {
        let event = next_event(events).await;
        if let Event::Message(CliMessage::Result(result)) = &event {
            let result = (**result).clone();
            seen.push(event);
            return (seen, result);
        }
        seen.push(event);
    }
}

/// Sends `prompt` and returns the turn's result.
pub(crate) async fn turn(claude: &Claude, events: &mut Events, prompt: &str) -> ResultMessage {
    claude.send(prompt).expect("the prompt is sent");
    until_result(events).await.1
}

/// A model that runs `touch made.txt` with Bash, then says "Done." after the tool's result.
pub(crate) fn touch_script() -> byre_testkit::Script {
    use byre_testkit::{Match, Reply, Rule, Script};
    use serde_json::json;
    Script::new()
        .rule(Rule::when(Match::has_tool_result(true)).reply(Reply::text("Done.")))
        .rule(Rule::any().reply(Reply::tool_use(
            "Bash",
            json!({"command": "touch made.txt", "description": "Create made.txt"}),
        )))
}
