//! Conversation scenarios.

use crate::check;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_two_turns() {
    let recordings = check("text_two_turns").await;
    assert_eq!(recordings.len(), 1);
}
