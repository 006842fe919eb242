//! Control scenarios.

use crate::check;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn control_requests() {
    let recordings = check("control_requests").await;
    assert_eq!(recordings.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interrupt_during_bash() {
    let recordings = check("interrupt_during_bash").await;
    assert_eq!(recordings.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interrupt_during_stream() {
    let recordings = check("interrupt_during_stream").await;
    assert_eq!(recordings.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interrupt_idle() {
    let recordings = check("interrupt_idle").await;
    assert_eq!(recordings.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sdk_mcp_always_load() {
    let recordings = check("sdk_mcp_always_load").await;
    assert_eq!(recordings.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sdk_mcp_deferred() {
    let recordings = check("sdk_mcp_deferred").await;
    assert_eq!(recordings.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn can_use_tool() {
    let recordings = check("can_use_tool").await;
    assert_eq!(recordings.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_and_fork() {
    let recordings = check("resume_and_fork").await;
    assert_eq!(recordings.len(), 3, "one recording per process: A, B, C");
    let sessions: Vec<String> = recordings
        .iter()
        .map(|r| {
            r.received()
                .iter()
                .find_map(|m| m["session_id"].as_str().map(str::to_owned))
                .expect("a line with a session_id")
        })
        .collect();
    assert_eq!(sessions[0], sessions[1], "B resumes A's session");
    assert_ne!(sessions[0], sessions[2], "C is a fork with its own id");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_unknown_id() {
    let recordings = check("resume_unknown_id").await;
    assert_eq!(recordings.len(), 1);
}
