//! The e2e suite: every scenario against the real CLI, offline. A CLI that cannot be
//! provisioned fails the suite with the reason; nothing is skipped.

mod control;
mod conversation;

/// Runs the scenario called `name` and fails the test with its message.
async fn check(name: &str) -> Vec<byre_e2e::Recording> {
    let ctx = byre_e2e::Ctx::new().unwrap_or_else(|e| panic!("cannot provision the CLI: {e}"));
    let scenario = byre_e2e::scenarios::find(name).unwrap_or_else(|| panic!("no scenario {name}"));
    match byre_e2e::run(&scenario, ctx).await {
        Ok(recordings) => recordings,
        Err(failure) => panic!("scenario {name} failed: {failure}"),
    }
}
