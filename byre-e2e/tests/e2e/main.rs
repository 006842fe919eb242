//! The e2e suite: every scenario against the real CLI, offline. A CLI that cannot be
//! provisioned fails the suite with the reason; nothing is skipped.

mod control;
mod conversation;

use byre_proto::CliMessage;
use byre_testkit::{TranscriptDir, TranscriptKind};

/// Runs the scenario called `name` and fails the test with its message. Every message the
/// CLI wrote must decode fully typed, with no field byre does not model, on the pinned CLI;
/// on another version what is not modelled is reported (`byre_testkit::check_modelled`).
async fn check(name: &str) -> Vec<byre_e2e::Recording> {
    let ctx = byre_e2e::Ctx::new().unwrap_or_else(|e| panic!("cannot provision the CLI: {e}"));
    let scenario = byre_e2e::scenarios::find(name).unwrap_or_else(|| panic!("no scenario {name}"));
    let recordings = match byre_e2e::run(&scenario, ctx).await {
        Ok(recordings) => recordings,
        Err(failure) => panic!("scenario {name} failed: {failure}"),
    };
    for recording in &recordings {
        for line in &recording.lines {
            if line.dir != TranscriptDir::Recv || line.kind != TranscriptKind::Msg {
                continue;
            }
            let message = CliMessage::from_slice(line.raw.as_bytes())
                .unwrap_or_else(|e| panic!("{name}: {e}: {}", line.raw));
            byre_testkit::check_modelled(format!("scenario {name}: {}", line.raw), &message);
        }
    }
    recordings
}
