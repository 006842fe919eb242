//! Terminal control sequences from the CLI never reach the terminal raw: `byre run`, `replay`,
//! `show` and `sessions` print them visible (`␛`, `␇`, `␈`, `\u{9b}`), while `--output json`
//! keeps them exactly.

use byre_testkit::{Block, Match, Reply, Rule, Script};
use serde_json::{json, Value};

use crate::support::{byre_in, output, Offline, Out};

/// The bytes a terminal would obey: ESC, BEL, backspace, and C1's CSI (U+009B).
fn assert_clean(what: &str, out: &Out) {
    for (stream, text) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        for raw in ['\x1b', '\x07', '\x08', '\u{9b}'] {
            assert!(
                !text.contains(raw),
                "{what}: {raw:?} reached {stream} raw: {out:?}"
            );
        }
    }
}

/// `byre run --claude byre-hostile ARGS...` with the hostile flags `hostile`.
async fn run_hostile(offline: &Offline, hostile: &str, args: &[&str]) -> Out {
    let bin = byre_testkit::hostile_bin().expect("byre-hostile builds");
    let mut all = vec!["run", "--claude", bin.to_str().expect("a UTF-8 path")];
    all.extend_from_slice(args);
    let mut command = byre_in(&offline.env, &all);
    command.env("BYRE_HOSTILE_ARGS", hostile);
    output(command, None).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_and_replay_show_a_stand_in_s_control_sequences_visible() {
    let offline = Offline::start(Script::new()).await;
    let transcript = offline.env.home().join("controls.jsonl");
    let out = run_hostile(
        &offline,
        "--mode controls",
        &["--transcript", transcript.to_str().unwrap(), "hi"],
    )
    .await;
    assert!(out.status.success(), "{out:?}");
    assert_clean("run", &out);
    assert!(
        out.stdout
            .contains("an answer ␛[2J␛]0;answer title␇ ␛]52;c;ZXZpbA==␇ back␈␈ \\u{9b}31m\n"),
        "{out:?}"
    );
    for shown in [
        "▸ Tool␛[31m cat ␛]0;input title␇",
        "✓ Tool␛[31m ",
        " · ␛]52;c;cmVzdWx0␇␛[2Jresult␈\n",
        "• note ␛]0;t␇",
        // The bad line's start is quoted escaped.
        "bad line title",
    ] {
        assert!(out.stderr.contains(shown), "{shown:?} in {out:?}");
    }

    let replayed = output(
        offline.command(&["replay", transcript.to_str().unwrap()]),
        None,
    )
    .await;
    assert!(replayed.status.success(), "{replayed:?}");
    assert_clean("replay", &replayed);
    for shown in [
        "claude: an answer ␛[2J␛]0;answer title␇ ␛]52;c;ZXZpbA==␇",
        "▸ Tool␛[31m cat ␛]0;input title␇",
        "✓ Tool␛[31m · ␛]52;c;cmVzdWx0␇",
    ] {
        assert!(replayed.stdout.contains(shown), "{shown:?} in {replayed:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_error_quoting_the_cli_s_stderr_shows_its_controls_visible() {
    let offline = Offline::start(Script::new()).await;
    let out = run_hostile(&offline, "--mode controls --exit", &["hi"]).await;
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_clean("an error", &out);
    assert!(
        out.stderr.contains("stderr ␛]0;stderr title␇␛[2J␈"),
        "the error quotes stderr: {out:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_output_keeps_control_characters_exactly() {
    let offline = Offline::start(Script::new()).await;
    let out = run_hostile(&offline, "--mode controls", &["--output", "json", "hi"]).await;
    assert!(out.status.success(), "{out:?}");
    let printed: Vec<Value> = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("every line is JSON"))
        .collect();
    let answer = printed
        .iter()
        .find(|m| m["type"] == "assistant")
        .expect("the assistant message");
    assert_eq!(
        answer["message"]["content"][0]["text"],
        "an answer \x1b[2J\x1b]0;answer title\x07 \x1b]52;c;ZXZpbA==\x07 back\x08\x08 \u{9b}31m\n"
    );
    assert_eq!(answer["message"]["content"][1]["name"], "Tool\x1b[31m");
    let result = printed
        .iter()
        .find(|m| m["type"] == "user")
        .expect("the tool result");
    assert_eq!(
        result["message"]["content"][0]["content"],
        "\x1b]52;c;cmVzdWx0\x07\x1b[2Jresult\x08"
    );
    // The line that is not JSON is a warning on stderr, shown escaped there.
    assert!(!out.stderr.contains('\x1b'), "{out:?}");
    assert!(out.stderr.contains("bad line title"), "{out:?}");
}

/// What `cat evil.txt` prints: clear the screen, set the window title, write the clipboard
/// (OSC 52), and rub out the line with backspaces.
const EVIL: &str = "\x1b[2J\x1b[H\x1b]0;owned\x07\x1b]52;c;ZXZpbA==\x07harmless\x08\x08\x08\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_the_real_cli_cats_reaches_no_terminal_raw() {
    let script = Script::new()
        .rule(
            Rule::when(Match::has_tool_result(true).and(Match::tool_result_contains("harmless")))
                .reply(Reply::text("It said \x1b]0;answer\x07 harmless\x08.")),
        )
        .rule(
            Rule::when(Match::user_text_contains("read evil")).reply(Reply::message(vec![
                Block::text("Reading it.\x07"),
                Block::tool_use(
                    "Bash",
                    json!({"command": "cat evil.txt", "description": "Read it"}),
                ),
            ])),
        )
        .rule(Rule::any().reply(Reply::text("Hello.")));
    let offline = Offline::start(script).await;
    std::fs::write(offline.env.cwd().join("evil.txt"), EVIL).expect("evil.txt is written");
    let transcript = offline.env.home().join("evil.jsonl");
    let out = output(
        offline.run(&[
            "--transcript",
            transcript.to_str().unwrap(),
            "please read evil.txt \x1b]0;prompt\x07",
        ]),
        None,
    )
    .await;
    assert!(out.status.success(), "{out:?}");
    assert_clean("run", &out);
    assert!(out.stderr.contains("▸ Bash cat evil.txt"), "{out:?}");
    assert!(
        out.stderr
            .contains("· ␛[2J␛[H␛]0;owned␇␛]52;c;ZXZpbA==␇harmless␈␈␈"),
        "the preview shows what the file holds: {out:?}"
    );
    assert!(
        out.stdout.contains("It said ␛]0;answer␇ harmless␈."),
        "{out:?}"
    );
    let session = out.session();

    let replayed = output(
        offline.command(&["replay", transcript.to_str().unwrap()]),
        None,
    )
    .await;
    assert!(replayed.status.success(), "{replayed:?}");
    assert_clean("replay", &replayed);
    assert!(replayed.stdout.contains("␛]52;c;ZXZpbA==␇"), "{replayed:?}");

    let shown = output(offline.command(&["show", &session]), None).await;
    assert!(shown.status.success(), "{shown:?}");
    assert_clean("show", &shown);
    assert!(
        shown
            .stdout
            .contains("you: please read evil.txt ␛]0;prompt␇"),
        "{shown:?}"
    );
    assert!(shown.stdout.contains("␛]52;c;ZXZpbA==␇"), "{shown:?}");

    let listed = output(offline.command(&["sessions"]), None).await;
    assert!(listed.status.success(), "{listed:?}");
    assert_clean("sessions", &listed);
    assert!(
        listed.stdout.contains("please read evil.txt ␛]0;prompt␇"),
        "{listed:?}"
    );

    // `--output json` keeps what the file holds, byte for byte.
    let json = output(
        offline.run(&["--output", "json", "please read evil.txt"]),
        None,
    )
    .await;
    assert!(json.status.success(), "{json:?}");
    let results: Vec<String> = json
        .stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("every line is JSON"))
        .filter(|m| m["type"] == "user")
        .filter_map(|m| serde_json::to_string(&m["message"]["content"]).ok())
        .collect();
    let evil_json = serde_json::to_string(EVIL.trim_end()).unwrap();
    assert!(
        results
            .iter()
            .any(|r| r.contains(&evil_json[1..evil_json.len() - 1])),
        "the tool result holds the file exactly: {results:?}"
    );
}
