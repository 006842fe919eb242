//! Tests of turn tracking, replaying the recorded transcripts (and a few made-up lines for
//! what the recordings do not show, such as `session_state_changed`).

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use byre_proto::{AnyMessage, CliMessage, HostMessage, ResultSubtype, TerminalReason};
use byre_session::{TurnEvent, TurnId, TurnOrigin, TurnTracker};
use byre_testkit::TranscriptReader;

use crate::support::{corpus_dir, corpus_root, files_under};

/// One step of a replayed CLI process.
#[derive(Debug)]
enum Step {
    /// The host wrote a `user` line, with this uuid if it had one.
    SentUser(Option<String>),
    /// The CLI wrote this line.
    Recv(Box<CliMessage>),
}

/// One CLI process of a transcript: its `argv` note and its steps.
#[derive(Debug)]
struct Process {
    argv: String,
    steps: Vec<Step>,
}

fn transcript(name: &str) -> PathBuf {
    corpus_dir().join(name)
}

fn corpus_files() -> Vec<PathBuf> {
    files_under(&corpus_dir())
}

/// Reads a transcript as its processes: a note starting with `argv:` begins a new one. Other
/// notes and `raw` lines (deliberately broken input) are skipped; each message is decoded from
/// its recorded bytes.
fn processes(path: &Path) -> Vec<Process> {
    let mut lines =
        TranscriptReader::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut out: Vec<Process> = Vec::new();
    while let Some(line) = lines.next() {
        let at = format!("{}:{}", path.display(), lines.line_number());
        let line = line.unwrap_or_else(|e| panic!("{at}: {e}"));
        if let Some(argv) = line.note().and_then(|n| n.strip_prefix("argv:")) {
            out.push(Process {
                argv: argv.trim().to_owned(),
                steps: Vec::new(),
            });
            continue;
        }
        let Some(message) = line.decode() else {
            continue;
        };
        if out.is_empty() {
            out.push(Process {
                argv: String::new(),
                steps: Vec::new(),
            });
        }
        let steps = &mut out.last_mut().expect("a process").steps;
        match message.unwrap_or_else(|e| panic!("{at}: {e}")) {
            AnyMessage::Send(HostMessage::User(user)) => steps.push(Step::SentUser(user.uuid)),
            AnyMessage::Recv(message) => steps.push(Step::Recv(Box::new(message))),
            AnyMessage::Send(_) => {}
        }
    }
    out
}

/// What happened while one process was replayed.
#[derive(Debug, Default)]
struct Replay {
    /// The events, each with the number of the step that produced it.
    events: Vec<(usize, TurnEvent)>,
    results: usize,
    /// `may_close_stdin(false)` right after each `result`.
    closable_after_results: Vec<bool>,
    /// `turn_running()` before each `result`.
    running_before_results: Vec<bool>,
}

impl Replay {
    fn ended(&self) -> Vec<(TurnId, &TurnOrigin, &[String], &ResultSubtype)> {
        self.events
            .iter()
            .filter_map(|(_, e)| match e {
                TurnEvent::TurnEnded {
                    turn,
                    origin,
                    user_message_uuids,
                    outcome,
                } => Some((
                    *turn,
                    origin,
                    user_message_uuids.as_slice(),
                    &outcome.subtype,
                )),
                _ => None,
            })
            .collect()
    }

    fn started(&self) -> Vec<(TurnId, &TurnOrigin)> {
        self.events
            .iter()
            .filter_map(|(_, e)| match e {
                TurnEvent::TurnStarted { turn, origin, .. } => Some((*turn, origin)),
                _ => None,
            })
            .collect()
    }

    fn session_ids(&self) -> Vec<(&str, Option<&str>)> {
        self.events
            .iter()
            .filter_map(|(_, e)| match e {
                TurnEvent::SessionId {
                    session_id,
                    previous,
                } => Some((session_id.as_str(), previous.as_deref())),
                _ => None,
            })
            .collect()
    }
}

fn replay(tracker: &mut TurnTracker, process: &Process) -> Replay {
    let mut out = Replay::default();
    for (n, step) in process.steps.iter().enumerate() {
        match step {
            Step::SentUser(uuid) => tracker.sent_user(uuid.as_deref()),
            Step::Recv(message) => {
                let is_result = matches!(**message, CliMessage::Result(_));
                if is_result {
                    out.results += 1;
                    out.running_before_results.push(tracker.turn_running());
                }
                out.events
                    .extend(tracker.observe(message).into_iter().map(|e| (n, e)));
                if is_result {
                    out.closable_after_results
                        .push(tracker.may_close_stdin(false));
                }
            }
        }
    }
    out
}

fn replay_file(name: &str) -> Vec<Replay> {
    processes(&transcript(name))
        .iter()
        .map(|process| replay(&mut TurnTracker::new(), process))
        .collect()
}

#[test]
fn the_corpus_is_found() {
    assert!(corpus_files().len() >= 20, "found {:?}", corpus_files());
}

#[test]
fn every_result_ends_exactly_one_turn() {
    for path in corpus_files() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        for (p, process) in processes(&path).iter().enumerate() {
            let mut tracker = TurnTracker::new();
            let replay = replay(&mut tracker, process);
            let at = format!("{name} process {}", p + 1);
            assert!(replay.results > 0, "{at}: no result");
            assert_eq!(
                replay.ended().len(),
                replay.results,
                "{at}: turns vs results"
            );
            assert_eq!(
                replay.started().len(),
                replay.results,
                "{at}: starts vs results"
            );
            // Turns are numbered in order, each start before its end, one turn at a time.
            let mut open: Option<TurnId> = None;
            let mut next = 1;
            for (_, event) in &replay.events {
                match event {
                    TurnEvent::TurnStarted { turn, .. } => {
                        assert_eq!(open, None, "{at}: {turn} started inside another");
                        assert_eq!(turn.get(), next, "{at}");
                        open = Some(*turn);
                        next += 1;
                    }
                    TurnEvent::TurnMerged { turn, .. } => assert_eq!(open, Some(*turn), "{at}"),
                    TurnEvent::TurnEnded { turn, .. } => {
                        assert_eq!(open.take(), Some(*turn), "{at}: {turn} ended unopened");
                    }
                    _ => {}
                }
            }
            // At the end of every recording nothing runs or waits.
            assert!(!tracker.turn_running(), "{at}");
            assert_eq!(tracker.queued_user_messages(), 0, "{at}");
            assert!(tracker.may_close_stdin(false), "{at}");
            assert!(
                tracker.may_close_stdin(true),
                "{at}: no state reports, so derived"
            );
            assert!(tracker.is_idle(), "{at}");
            // The session id is captured once per process.
            let ids = replay.session_ids();
            assert_eq!(ids.len(), 1, "{at}: {ids:?}");
            assert_eq!(ids[0].1, None, "{at}");
            assert_eq!(tracker.session_id(), Some(ids[0].0), "{at}");
        }
    }
}

#[test]
fn queued_messages_merge_into_one_turn() {
    let path = transcript("queued_with_uuids.jsonl");
    let procs = processes(&path);
    let sent: Vec<String> = procs[0]
        .steps
        .iter()
        .filter_map(|s| match s {
            Step::SentUser(uuid) => Some(uuid.clone().expect("every message has a uuid")),
            Step::Recv(_) => None,
        })
        .collect();
    assert_eq!(sent.len(), 3);

    let replays = replay_file("queued_with_uuids.jsonl");
    let ended = replays[0].ended();
    assert_eq!(ended.len(), 2, "3 inputs, 2 turns");
    assert_eq!(ended[0].2, &sent[..1]);
    assert_eq!(
        ended[1].2,
        &sent[1..],
        "the second turn took both queued messages"
    );
    assert!(ended.iter().all(|e| *e.1 == TurnOrigin::Host));

    // The second turn started at the first `started` and grew at the second.
    let merged: Vec<&TurnEvent> = replays[0]
        .events
        .iter()
        .map(|(_, e)| e)
        .filter(|e| matches!(e, TurnEvent::TurnMerged { .. }))
        .collect();
    assert_eq!(
        merged,
        [&TurnEvent::TurnMerged {
            turn: ended[1].0,
            user_message_uuids: sent[1..].to_vec(),
        }]
    );
}

#[test]
fn background_tasks_start_notification_turns() {
    for (name, run_id) in [
        ("bash_background.jsonl", "0mx61knt9-ba8e9162"),
        ("subagent_background.jsonl", "0mx61l4b9-cb652f24"),
    ] {
        let replays = replay_file(name);
        let replay = &replays[0];
        let expected = TurnOrigin::TaskNotification {
            run_id: Some(run_id.to_owned()),
        };
        // Known as such when the turn starts, not only from its result.
        let started = replay.started();
        assert_eq!(started.len(), 2, "{name}");
        assert_eq!(*started[0].1, TurnOrigin::Host, "{name}");
        assert_eq!(*started[1].1, expected, "{name}");
        let ended = replay.ended();
        assert_eq!(*ended[1].1, expected, "{name}");
        // Between the first result and the notification turn stdin must stay open.
        assert_eq!(replay.closable_after_results, [false, true], "{name}");
    }
}

#[test]
fn an_interrupted_turn_ends_in_error() {
    let replays = replay_file("interrupt_during_bash.jsonl");
    let outcomes: Vec<_> = replays[0]
        .events
        .iter()
        .filter_map(|(_, e)| match e {
            TurnEvent::TurnEnded { outcome, .. } => Some(outcome.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(outcomes.len(), 2);
    assert_eq!(outcomes[0].subtype, ResultSubtype::ERROR_DURING_EXECUTION);
    assert!(outcomes[0].is_error);
    assert_eq!(
        outcomes[0].terminal_reason,
        Some(TerminalReason::ABORTED_TOOLS)
    );
    // The session stays usable.
    assert_eq!(outcomes[1].subtype, ResultSubtype::SUCCESS);
    assert!(!outcomes[1].is_error);
}

#[test]
fn a_start_up_failure_is_a_turn_of_its_own() {
    let replays = replay_file("resume_unknown_id.jsonl");
    let replay = &replays[0];
    assert_eq!(replay.running_before_results, [false]);
    let ended = replay.ended();
    assert_eq!(replay.started(), [(ended[0].0, &TurnOrigin::Other)]);
    assert_eq!(*ended[0].3, ResultSubtype::ERROR_DURING_EXECUTION);
}

#[test]
fn resume_keeps_the_id_and_fork_reports_a_new_one() {
    let path = transcript("resume_and_fork.jsonl");
    let procs = processes(&path);
    assert_eq!(procs.len(), 3);
    let fork_id = procs[2]
        .argv
        .split("--session-id=")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("the fork names its session id");

    // One tracker per process, as a session has: each reports its id once.
    let ids: Vec<String> = procs
        .iter()
        .map(|p| {
            let mut tracker = TurnTracker::new();
            let replay = replay(&mut tracker, p);
            assert_eq!(replay.session_ids().len(), 1);
            tracker.session_id().expect("an id").to_owned()
        })
        .collect();
    assert_eq!(ids[0], ids[1], "resume keeps the id");
    assert_ne!(ids[2], ids[0]);
    assert_eq!(ids[2], fork_id);

    // Fed to one tracker, the resume changes nothing and the fork is reported as a change.
    let mut tracker = TurnTracker::new();
    let reported: Vec<(String, Option<String>)> = procs
        .iter()
        .flat_map(|p| replay(&mut tracker, p).events)
        .filter_map(|(_, e)| match e {
            TurnEvent::SessionId {
                session_id,
                previous,
            } => Some((session_id, previous)),
            _ => None,
        })
        .collect();
    assert_eq!(
        reported,
        [
            (ids[0].clone(), None),
            (ids[2].clone(), Some(ids[0].clone()))
        ]
    );
}

#[test]
fn turn_traces_match_snapshots() {
    let root = corpus_root().canonicalize().expect("the corpus exists");
    insta::glob!("../../../testdata/transcripts", "**/*.jsonl", |path| {
        let rel = path
            .strip_prefix(&root)
            .expect("a transcript under the corpus root");
        let suffix = rel.to_string_lossy().replace(['/', '\\'], "__");
        insta::with_settings!({ snapshot_suffix => suffix }, {
            insta::assert_snapshot!(render_trace(path));
        });
    });
}

/// Renders the host's `user` lines and the turn events of every process, one per line, with
/// uuids, session ids and run ids replaced by short aliases in order of appearance.
fn render_trace(path: &Path) -> String {
    let mut aliases = Aliases::default();
    let mut out = String::new();
    for (p, process) in processes(path).iter().enumerate() {
        writeln!(out, "# process {}", p + 1).unwrap();
        let mut tracker = TurnTracker::new();
        for step in &process.steps {
            match step {
                Step::SentUser(uuid) => {
                    tracker.sent_user(uuid.as_deref());
                    match uuid {
                        Some(uuid) => writeln!(out, "> user {}", aliases.get('u', uuid)),
                        None => writeln!(out, "> user"),
                    }
                    .unwrap();
                }
                Step::Recv(message) => {
                    for event in tracker.observe(message) {
                        writeln!(out, "{}", render_event(&event, &mut aliases)).unwrap();
                    }
                    if matches!(**message, CliMessage::Result(_)) {
                        let close = tracker.may_close_stdin(false);
                        writeln!(out, "  may close stdin: {close}").unwrap();
                    }
                }
            }
        }
        writeln!(
            out,
            "= running {}, idle {}, may close stdin {}",
            tracker.turn_running(),
            tracker.is_idle(),
            tracker.may_close_stdin(false)
        )
        .unwrap();
    }
    out
}

fn render_event(event: &TurnEvent, aliases: &mut Aliases) -> String {
    match event {
        TurnEvent::SessionId {
            session_id,
            previous,
        } => {
            let mut s = format!("session {}", aliases.get('s', session_id));
            if let Some(previous) = previous {
                write!(s, " (was {})", aliases.get('s', previous)).unwrap();
            }
            s
        }
        TurnEvent::TurnStarted {
            turn,
            user_message_uuids,
            origin,
        } => format!(
            "t{} started by {}{}",
            turn.get(),
            render_origin(origin, aliases),
            render_uuids(user_message_uuids, aliases)
        ),
        TurnEvent::TurnMerged {
            turn,
            user_message_uuids,
        } => format!(
            "t{} merged{}",
            turn.get(),
            render_uuids(user_message_uuids, aliases)
        ),
        TurnEvent::TurnEnded {
            turn,
            origin,
            user_message_uuids,
            outcome,
        } => {
            let mut s = format!("t{} ended {}", turn.get(), outcome.subtype);
            if let Some(reason) = &outcome.terminal_reason {
                write!(s, "/{reason}").unwrap();
            }
            if outcome.is_error {
                s.push_str(" is_error");
            }
            write!(
                s,
                " by {}{}",
                render_origin(origin, aliases),
                render_uuids(user_message_uuids, aliases)
            )
            .unwrap();
            s
        }
        TurnEvent::RunIdle => "run idle".to_owned(),
        other => format!("{other:?}"),
    }
}

fn render_origin(origin: &TurnOrigin, aliases: &mut Aliases) -> String {
    match origin {
        TurnOrigin::Host => "host".to_owned(),
        TurnOrigin::TaskNotification { run_id: Some(run) } => {
            format!("task-notification {}", aliases.get('r', run))
        }
        TurnOrigin::TaskNotification { run_id: None } => "task-notification".to_owned(),
        TurnOrigin::Other => "other".to_owned(),
        other => format!("{other:?}"),
    }
}

fn render_uuids(uuids: &[String], aliases: &mut Aliases) -> String {
    if uuids.is_empty() {
        return String::new();
    }
    let names: Vec<String> = uuids.iter().map(|u| aliases.get('u', u)).collect();
    format!(" [{}]", names.join(", "))
}

/// Short, stable names for ids: `s1`, `u1`, `r1`, ... in order of first appearance.
#[derive(Default)]
struct Aliases {
    names: HashMap<(char, String), String>,
    counts: HashMap<char, usize>,
}

impl Aliases {
    fn get(&mut self, kind: char, id: &str) -> String {
        let counts = &mut self.counts;
        self.names
            .entry((kind, id.to_owned()))
            .or_insert_with(|| {
                let n = counts.entry(kind).or_default();
                *n += 1;
                format!("{kind}{n}")
            })
            .clone()
    }
}

// Made-up lines, for what the recordings do not show.

fn cli(json: &str) -> CliMessage {
    CliMessage::from_slice(json.as_bytes()).expect("a valid line")
}

fn init(session: &str) -> CliMessage {
    cli(&format!(
        r#"{{"type":"system","subtype":"init","session_id":"{session}","tools":[]}}"#
    ))
}

fn result(session: &str) -> CliMessage {
    cli(&format!(
        r#"{{"type":"result","subtype":"success","is_error":false,"session_id":"{session}"}}"#
    ))
}

fn state(state: &str) -> CliMessage {
    cli(&format!(
        r#"{{"type":"system","subtype":"session_state_changed","state":"{state}","sdk_host_only":true,"session_id":"s"}}"#
    ))
}

#[test]
fn reported_state_gates_closing_with_handlers() {
    let mut tracker = TurnTracker::new();
    tracker.sent_user(None);
    assert!(!tracker.may_close_stdin(false));
    assert!(tracker.observe(&state("running")).is_empty());
    let events = tracker.observe(&init("s"));
    assert!(matches!(events[1], TurnEvent::TurnStarted { .. }));
    let _ = tracker.observe(&result("s"));
    // The turn is over, but the CLI has not said the run is.
    assert!(tracker.may_close_stdin(false));
    assert!(!tracker.may_close_stdin(true));
    assert!(!tracker.is_idle());
    assert_eq!(tracker.observe(&state("idle")), [TurnEvent::RunIdle]);
    assert!(tracker.may_close_stdin(true));
    assert!(tracker.is_idle());
    // A repeated `idle` is not a new end.
    assert!(tracker.observe(&state("idle")).is_empty());

    // A stale `idle` does not count for the next run.
    tracker.sent_user(None);
    assert!(!tracker.is_idle());
    let _ = tracker.observe(&init("s"));
    let _ = tracker.observe(&result("s"));
    assert!(!tracker.is_idle());
    assert!(!tracker.may_close_stdin(true));
    assert_eq!(tracker.observe(&state("idle")), [TurnEvent::RunIdle]);

    // `requires_action` (a permission prompt) is not idle.
    let _ = tracker.observe(&state("requires_action"));
    assert!(!tracker.may_close_stdin(true));
}

#[test]
fn a_result_names_the_run_when_the_start_guessed_wrong() {
    let mut tracker = TurnTracker::new();
    let bg = |id: &str, run: &str| {
        format!(
            r#"{{"type":"system","subtype":"background_tasks_changed","tasks":[{{"task_id":"{id}","run_id":"{run}"}}]}}"#
        )
    };
    let _ = tracker.observe(&cli(&bg("a", "run-a")));
    let _ = tracker.observe(&cli(
        r#"{"type":"system","subtype":"task_notification","task_id":"a","run_id":"run-a","status":"completed"}"#,
    ));
    let _ = tracker.observe(&cli(&bg("b", "run-b")));
    let _ = tracker.observe(&cli(
        r#"{"type":"system","subtype":"task_notification","task_id":"b","run_id":"run-b","status":"completed"}"#,
    ));
    let _ = tracker.observe(&cli(
        r#"{"type":"system","subtype":"background_tasks_changed","tasks":[]}"#,
    ));
    assert!(tracker.background_work(), "two notification turns are owed");
    assert!(!tracker.may_close_stdin(false));

    let events = tracker.observe(&init("s"));
    let guessed = TurnOrigin::TaskNotification {
        run_id: Some("run-a".to_owned()),
    };
    assert!(events.contains(&TurnEvent::TurnStarted {
        turn: tracker.current_turn().unwrap(),
        user_message_uuids: vec![],
        origin: guessed,
    }));
    // The CLI says this turn was for run-b: run-a is still owed.
    let events = tracker.observe(&cli(
        r#"{"type":"result","subtype":"success","session_id":"s","origin":{"kind":"task-notification","runId":"run-b"}}"#,
    ));
    let TurnEvent::TurnEnded { origin, .. } = &events[0] else {
        panic!("{events:?}");
    };
    assert_eq!(
        *origin,
        TurnOrigin::TaskNotification {
            run_id: Some("run-b".to_owned())
        }
    );
    assert!(tracker.background_work());
    let events = tracker.observe(&init("s"));
    assert!(matches!(
        &events[0],
        TurnEvent::TurnStarted { origin: TurnOrigin::TaskNotification { run_id: Some(r) }, .. } if r == "run-a"
    ));
    let _ = tracker.observe(&result("s"));
    assert!(!tracker.background_work());
    assert!(tracker.may_close_stdin(false));
}

#[test]
fn lifecycle_after_the_result_starts_nothing() {
    let mut tracker = TurnTracker::new();
    tracker.sent_user(Some("u1"));
    let lifecycle = |uuid: &str, state: &str| {
        cli(&format!(
            r#"{{"type":"command_lifecycle","command_uuid":"{uuid}","state":"{state}","session_id":"s"}}"#
        ))
    };
    let _ = tracker.observe(&lifecycle("u1", "queued"));
    let events = tracker.observe(&lifecycle("u1", "started"));
    assert_eq!(
        events,
        [TurnEvent::TurnStarted {
            turn: tracker.current_turn().unwrap(),
            user_message_uuids: vec!["u1".to_owned()],
            origin: TurnOrigin::Host,
        }]
    );
    // The turn's own init does not start another one.
    assert_eq!(tracker.observe(&init("s")).len(), 1, "only the session id");
    let _ = tracker.observe(&result("s"));
    assert!(tracker.observe(&lifecycle("u1", "completed")).is_empty());
    assert!(!tracker.turn_running());

    // A queued message the CLI dropped leaves the queue.
    tracker.sent_user(Some("u2"));
    assert!(!tracker.may_close_stdin(false));
    assert!(tracker.observe(&lifecycle("u2", "cancelled")).is_empty());
    assert!(tracker.may_close_stdin(false));
}
