//! `byre sessions` and `byre show` over sessions the real CLI wrote: one line per session,
//! newest first, and a session printed as a conversation.

use byre_testkit::{Block, Match, Reply, Rule, Script};
use serde_json::json;

use crate::support::{output, Offline};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_lists_them_newest_first_and_show_prints_one() {
    let script = Script::new()
        .rule(Rule::when(Match::has_tool_result(true)).reply(Reply::text("It printed hi.")))
        .rule(
            Rule::when(Match::user_text_contains("run echo")).reply(Reply::message(vec![
                Block::text("Running it."),
                Block::tool_use(
                    "Bash",
                    json!({"command": "echo hi", "description": "Say hi"}),
                ),
            ])),
        )
        .rule(Rule::any().reply(Reply::text("Hello.")));
    let offline = Offline::start(script).await;
    let first = output(offline.run(&["say hello"]), None).await;
    assert!(first.status.success(), "{first:?}");
    let second = output(offline.run(&["please run echo"]), None).await;
    assert!(second.status.success(), "{second:?}");
    let (first_id, second_id) = (first.session(), second.session());

    let listed = output(offline.command(&["sessions"]), None).await;
    assert!(listed.status.success(), "{listed:?}");
    let lines: Vec<&str> = listed.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{listed:?}");
    assert!(lines[0].starts_with(&second_id), "newest first: {listed:?}");
    assert!(lines[0].ends_with("please run echo"), "{listed:?}");
    assert!(lines[1].starts_with(&first_id) && lines[1].ends_with("say hello"));
    let limited = output(
        offline.command(&["sessions", "--all", "--limit", "1"]),
        None,
    )
    .await;
    assert_eq!(limited.stdout.lines().count(), 1, "{limited:?}");
    // byre started both (the CLI wrote entrypoint sdk-byre): a program's, not the user's own.
    let people = output(offline.command(&["sessions", "--hide-programmatic"]), None).await;
    assert!(people.status.success(), "{people:?}");
    assert_eq!(people.stdout.lines().count(), 0, "{people:?}");

    let shown = output(offline.command(&["show", &second_id]), None).await;
    assert!(shown.status.success(), "{shown:?}");
    let text = shown.stdout;
    for expected in [
        "you: please run echo",
        "claude: Running it.",
        "▸ Bash echo hi",
        "✓ Bash · hi",
        "claude: It printed hi.",
    ] {
        assert!(text.contains(expected), "{expected:?} in {text}");
    }
    let order: Vec<usize> = ["you: please", "▸ Bash", "✓ Bash", "claude: It printed"]
        .iter()
        .map(|s| text.find(s).unwrap())
        .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{text}");
    let missing = output(
        offline.command(&["show", "00000000-0000-4000-8000-000000000000"]),
        None,
    )
    .await;
    assert!(!missing.status.success());
    assert!(missing.stderr.contains("no session"), "{missing:?}");
}
