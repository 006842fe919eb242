//! Helpers shared by the tests: the recorded transcripts and their messages, options for the
//! real CLI offline, and waiting for events and results.

use std::path::{Path, PathBuf};

use std::time::Duration;

use byre_proto::{CliMessage, ResultMessage};
use byre_session::driver::{Claude, Events, Options};
use byre_session::session::Event;
use byre_testkit::{read_transcript, ClaudeEnv, FakeModel, TranscriptLine};
use futures::StreamExt;

/// The folder of the transcripts recorded with CLI 2.1.328, which the tests of particular
/// recordings read.
pub(crate) fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/transcripts/cli-2.1.328")
}

/// Every transcript of every CLI version (`cli-<version>/*.jsonl`), sorted.
pub(crate) fn transcripts() -> Vec<PathBuf> {
    let root = corpus_dir().join("..");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&root)
        .expect("the transcripts folder")
        .map(|e| e.expect("a directory entry").path())
        .filter(|dir| dir.is_dir())
        .flat_map(|dir| std::fs::read_dir(dir).expect("a version folder"))
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    assert!(files.len() >= 50, "found {} transcripts", files.len());
    files
}

/// The messages the CLI wrote in a transcript, each decoded from its recorded bytes.
pub(crate) fn recv_messages(path: &Path) -> Vec<CliMessage> {
    read_transcript(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .iter()
        .filter_map(TranscriptLine::decode_recv)
        .map(|message| message.expect("a recorded line decodes"))
        .collect()
}

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
