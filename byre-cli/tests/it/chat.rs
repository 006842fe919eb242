//! `byre chat` in a pseudo-terminal, as a person uses it: a prompt, Ctrl-C during a slow
//! stream, the next prompt working, `/model`, `/fork` and `/quit`, and the line history kept for
//! the next chat; a schema's structured output after each answer.

use std::io::{Read, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use byre_testkit::{Match, Reply, Rule, Script};
use portable_pty::{native_pty_system, Child, CommandBuilder, PtySize};

use crate::support::{byre_bin, claude, Offline};

/// How long one expected piece of output may take to appear.
const EXPECT_TIMEOUT: Duration = Duration::from_secs(90);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_interrupts_a_slow_stream_then_switches_model_and_forks() {
    let story = format!("Once upon a time {}", "the cows came home. ".repeat(40));
    let script = Script::new()
        // The probe the CLI sends to a new model.
        .rule(Rule::when(Match::stream(false)).reply(Reply::text("Hi")))
        // After an interrupt the next request also holds the interrupted prompt: this comes
        // first.
        .rule(
            Rule::when(Match::user_text_contains("quick question"))
                .reply(Reply::text("Quick answer.")),
        )
        .rule(
            Rule::when(Match::user_text_contains("slow story"))
                .reply(Reply::text(story).chunk_size(4).chunk_delay_ms(100)),
        );
    let offline = Offline::start(script).await;
    let mut chat = Terminal::spawn(&offline, &["chat"]);

    chat.expect("> ");
    chat.type_line("tell me a slow story");
    chat.expect("Once upon a time");
    chat.type_text("\x03");
    chat.expect("⏹ interrupting");
    chat.expect("── error: error_during_execution (aborted_streaming)");
    chat.expect("> ");
    chat.type_line("a quick question");
    chat.expect("Quick answer.");
    let closing = chat.expect_line("── done");
    let first_session = closing.rsplit_once("session ").unwrap().1.trim().to_owned();

    chat.type_line("/model haiku");
    chat.expect("model: claude-haiku");
    chat.type_line("another quick question");
    chat.expect("Quick answer.");
    chat.expect_line("── done");
    let last = offline.model.message_requests().pop().unwrap();
    assert!(
        last.model().unwrap().starts_with("claude-haiku"),
        "{last:?}"
    );

    chat.type_line("/fork");
    let forked = chat.expect_line("forked session ");
    assert!(forked.contains(&first_session), "{forked}");
    let fork_session = forked
        .rsplit_once("now in session ")
        .unwrap()
        .1
        .trim()
        .to_owned();
    assert_ne!(fork_session, first_session);
    chat.type_line("quick question in the fork");
    chat.expect("Quick answer.");
    let closing = chat.expect_line("── done");
    assert!(
        closing.ends_with(&format!("session {fork_session}")),
        "{closing}"
    );
    // The fork has the conversation up to the last answer, and the model chosen last.
    let last = offline.model.message_requests().pop().unwrap();
    let sent = serde_json::to_string(last.messages()).unwrap();
    assert!(sent.contains("another quick question"), "{sent}");
    assert!(
        last.model().unwrap().starts_with("claude-haiku"),
        "{last:?}"
    );

    chat.type_line("/quit");
    assert_eq!(chat.wait(), 0, "{}", chat.screen());

    // The line history is kept in a file under HOME; the next chat starts with it: two steps
    // up is the last question.
    let history = offline.env.home().join(".local/state/byre/chat_history");
    let kept = std::fs::read_to_string(&history).expect("the history file");
    for line in [
        "a quick question",
        "/model haiku",
        "quick question in the fork",
        "/quit",
    ] {
        assert!(kept.contains(line), "{line:?} is not in {kept:?}");
    }
    #[cfg(unix)]
    {
        // The prompts are the user's alone: the file and the folders made for it are private.
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&history), 0o600);
        assert_eq!(mode(history.parent().unwrap()), 0o700);
    }
    let mut chat = Terminal::spawn(&offline, &["chat"]);
    chat.expect("> ");
    chat.type_text("\x1b[A\x1b[A\r");
    chat.expect("Quick answer.");
    chat.expect_line("── done");
    chat.type_line("/quit");
    assert_eq!(chat.wait(), 0, "{}", chat.screen());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_with_a_schema_prints_each_answers_structured_output() {
    let script = Script::new()
        .rule(Rule::when(Match::has_tool_result(true)).reply(Reply::text("")))
        .rule(Rule::any().reply(Reply::message(vec![
            byre_testkit::Block::text("Counted."),
            byre_testkit::Block::tool_use("StructuredOutput", serde_json::json!({"files": 3})),
        ])));
    let offline = Offline::start(script).await;
    let schema =
        r#"{"type":"object","properties":{"files":{"type":"integer"}},"required":["files"]}"#;
    let mut chat = Terminal::spawn(&offline, &["chat", "--json-schema", schema]);
    chat.expect("> ");
    chat.type_line("count the files");
    chat.expect("Counted.");
    chat.expect_line(r#"{"files":3}"#);
    chat.expect_line("── done");
    chat.type_line("/quit");
    assert_eq!(chat.wait(), 0, "{}", chat.screen());
}

/// `byre` in a pseudo-terminal, with what it wrote collected by a reader thread.
struct Terminal {
    child: Box<dyn Child + Send + Sync>,
    writer: Box<dyn Write + Send>,
    output: Arc<Mutex<Vec<u8>>>,
    /// How far [`Terminal::expect`] has read.
    seen: usize,
}

impl Terminal {
    fn spawn(offline: &Offline, args: &[&str]) -> Terminal {
        let pair = native_pty_system()
            .openpty(PtySize {
                rows: 40,
                cols: 120,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("a pseudo-terminal");
        let mut command = CommandBuilder::new(byre_bin());
        command.args(args);
        command.arg("--claude");
        command.arg(claude());
        for name in offline.env.removed() {
            command.env_remove(name);
        }
        command.env_remove("BYRE_CLAUDE_BIN");
        for (name, value) in offline.env.vars() {
            command.env(name, value);
        }
        command.env("TERM", "xterm-256color");
        // The chat history goes under the scratch HOME.
        command.env_remove("XDG_STATE_HOME");
        command.cwd(offline.env.cwd());
        let child = pair.slave.spawn_command(command).expect("byre starts");
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().expect("a reader");
        let writer = pair.master.take_writer().expect("a writer");
        let output = Arc::new(Mutex::new(Vec::new()));
        let sink = output.clone();
        std::thread::spawn(move || {
            // Keeps the master open for as long as the child may write.
            let _master = pair.master;
            let mut buffer = [0u8; 4096];
            while let Ok(n) = reader.read(&mut buffer) {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().extend_from_slice(&buffer[..n]);
            }
        });
        Terminal {
            child,
            writer,
            output,
            seen: 0,
        }
    }

    /// Everything written so far, as text.
    fn screen(&self) -> String {
        String::from_utf8_lossy(&self.output.lock().unwrap()).into_owned()
    }

    /// Waits until `text` appears after what was already matched.
    fn expect(&mut self, text: &str) {
        let deadline = Instant::now() + EXPECT_TIMEOUT;
        loop {
            let screen = self.screen();
            if let Some(at) = screen.get(self.seen..).and_then(|rest| rest.find(text)) {
                self.seen += at + text.len();
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{text:?} did not appear; the terminal shows:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits for a whole line starting with `text` and returns it.
    fn expect_line(&mut self, text: &str) -> String {
        let deadline = Instant::now() + EXPECT_TIMEOUT;
        loop {
            let screen = self.screen();
            if let Some(at) = screen.get(self.seen..).and_then(|rest| rest.find(text)) {
                let start = self.seen + at;
                if let Some(n) = screen[start..].find(['\r', '\n']) {
                    self.seen = start + n;
                    return screen[start..start + n].to_owned();
                }
            }
            assert!(
                Instant::now() < deadline,
                "no line {text:?}; the terminal shows:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn type_text(&mut self, text: &str) {
        self.writer.write_all(text.as_bytes()).expect("typing");
        self.writer.flush().expect("typing");
    }

    fn type_line(&mut self, line: &str) {
        self.type_text(&format!("{line}\r"));
    }

    /// Waits for the exit code.
    fn wait(&mut self) -> u32 {
        let deadline = Instant::now() + EXPECT_TIMEOUT;
        loop {
            if let Some(status) = self.child.try_wait().expect("the child's status") {
                return status.exit_code();
            }
            assert!(
                Instant::now() < deadline,
                "byre did not exit:\n{}",
                self.screen()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
        }
    }
}
