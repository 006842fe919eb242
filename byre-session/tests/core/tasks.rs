//! `tasks`: the task tree built from the recorded transcripts (background Bash, subagents in
//! the foreground and background, an interrupted Bash), plus nesting, heartbeats and the
//! corner cases the recordings do not hold.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

use byre_proto::{CliMessage, SystemMessage, TaskStatus, TaskType};
use byre_session::{MessageRole, Task, TaskEvent, TaskTree};
use serde_json::{json, Value};

use crate::support::*;

#[test]
fn a_background_bash_task_starts_then_completes() {
    let (tree, events) = run("bash_background.jsonl");
    let sets: Vec<usize> = events
        .iter()
        .filter_map(|e| match e {
            TaskEvent::BackgroundSetChanged { running, .. } => Some(running.len()),
            _ => None,
        })
        .collect();
    assert_eq!(sets, [1, 0], "the background set goes from 1 task to none");

    let started: Vec<_> = events
        .iter()
        .filter(|e| matches!(e, TaskEvent::Started { .. }))
        .collect();
    let [TaskEvent::Started {
        task_id,
        tool_use_id,
        task_type,
        is_backgrounded: true,
        parent_task_id: None,
    }] = started.as_slice()
    else {
        panic!("{started:?}")
    };
    assert_eq!(task_type.as_ref(), Some(&TaskType::LOCAL_BASH));
    assert_eq!(tool_use_id.as_deref(), Some("toolu_bash_bg"));

    assert!(events.contains(&TaskEvent::Updated {
        task_id: task_id.clone(),
        old_status: TaskStatus::RUNNING,
        new_status: TaskStatus::COMPLETED,
    }));
    let finished = finished_of(&events, task_id);
    assert_eq!(finished.0, TaskStatus::COMPLETED);
    assert!(finished.1.unwrap().contains("completed (exit code 0)"));

    let task = tree.get(task_id).unwrap();
    assert!(!task.is_running());
    assert!(!task.in_background_set);
    assert!(task.output_file.as_deref().unwrap().ends_with(".output"));
    assert!(task.end_time.is_some());
    assert_eq!(
        tree.by_tool_use_id("toolu_bash_bg").unwrap().task_id,
        *task_id
    );
    assert!(!tree.any_running_background());
    assert_eq!(tree.running().count(), 0);
}

#[test]
fn the_background_set_says_a_task_runs_while_it_runs() {
    let mut tree = TaskTree::new();
    let mut seen = Vec::new();
    for line in recv_messages(&corpus_dir().join("bash_background.jsonl")) {
        let events = tree.observe(&line);
        if !events.is_empty() {
            seen.push((
                events,
                tree.any_running_background(),
                tree.running().count(),
            ));
        }
    }
    // The set is announced before task_started: the background is busy from that line on.
    let states: Vec<(bool, usize)> = seen.iter().map(|(_, bg, n)| (*bg, *n)).collect();
    assert_eq!(
        states,
        [
            (true, 0),  // background_tasks_changed [task]
            (true, 1),  // task_started
            (false, 0), // task_updated completed
            (false, 0), // task_notification
            (false, 0), // background_tasks_changed []
        ]
    );
    assert_eq!(tree.forget_finished(), 1);
    assert!(tree.is_empty());
}

#[test]
fn subagents_count_their_own_lines_and_finish_with_a_summary() {
    for (file, tool, report, assistant, user) in [
        (
            "subagent_foreground.jsonl",
            "toolu_agent_fg",
            "DONE-FG",
            1,
            2,
        ),
        ("s08a_subagent_foreground.jsonl", "", "", 0, 0),
        (
            "subagent_background.jsonl",
            "toolu_agent_bg",
            "DONE-BG",
            2,
            1,
        ),
    ] {
        let lines = recv_messages(&corpus_dir().join(file));
        let (tree, events) = run(file);
        let agents: Vec<&Task> = tree
            .tasks()
            .filter(|t| t.task_type == Some(TaskType::LOCAL_AGENT))
            .collect();
        let [agent] = agents.as_slice() else {
            panic!("{file}: {agents:?}")
        };
        let agent_tool = agent.tool_use_id.as_deref().unwrap();
        if !tool.is_empty() {
            assert_eq!(agent_tool, tool, "{file}");
        }
        assert_eq!(agent.spawn_depth, Some(1), "{file}");
        assert_eq!(
            agent.subagent_type.as_deref(),
            Some("general-purpose"),
            "{file}"
        );
        assert!(agent.prompt.is_some(), "{file}");

        // Every line with the Agent call as parent is counted on the task, and only those.
        let nested = |kind: &str| {
            lines
                .iter()
                .filter(|l| match l {
                    CliMessage::Assistant(m) => kind == "a" && m.parent_tool_use_id.is_some(),
                    CliMessage::User(m) => kind == "u" && m.parent_tool_use_id.is_some(),
                    _ => false,
                })
                .count() as u64
        };
        assert_eq!(agent.messages.assistant, nested("a"), "{file}");
        assert_eq!(agent.messages.user, nested("u"), "{file}");
        if !tool.is_empty() {
            assert_eq!(
                (agent.messages.assistant, agent.messages.user),
                (assistant, user)
            );
        }
        // owner_of keeps the subagent's lines apart from the parent's.
        for line in &lines {
            let owner = tree.owner_of(line).map(|t| t.task_id.as_str());
            match line {
                CliMessage::Assistant(m) if m.parent_tool_use_id.is_some() => {
                    assert_eq!(owner, Some(agent.task_id.as_str()), "{file}")
                }
                CliMessage::Assistant(_) | CliMessage::User(_) | CliMessage::Result(_)
                    if line.parent_tool_use_id().is_none() =>
                {
                    assert_eq!(owner, None, "{file}")
                }
                _ => {}
            }
        }

        let progress: Vec<_> = events
            .iter()
            .filter_map(|e| match e {
                TaskEvent::Progress {
                    last_tool_name,
                    usage,
                    ..
                } => Some((last_tool_name.as_deref(), usage.as_ref()?.tool_uses)),
                _ => None,
            })
            .collect();
        assert_eq!(progress, [(Some("Bash"), Some(1))], "{file}");
        assert_eq!(agent.last_tool_name.as_deref(), Some("Bash"));
        assert_eq!(agent.activity.as_deref(), Some("Running echo"), "{file}");
        assert_ne!(agent.activity, agent.description, "{file}");

        let (status, summary) = finished_of(&events, &agent.task_id);
        assert_eq!(status, TaskStatus::COMPLETED, "{file}");
        assert!(summary.unwrap().contains(report), "{file}");
        assert!(
            agent.usage.as_ref().unwrap().total_tokens.is_some(),
            "{file}"
        );
        assert!(!agent.is_running(), "{file}");
        assert!(!tree.any_running_background(), "{file}");
        assert_eq!(tree.roots().count(), 1, "{file}");
        assert_eq!(tree.children(&agent.task_id).count(), 0, "{file}");
    }
}

#[test]
fn an_interrupted_foreground_bash_task_is_stopped() {
    for file in ["interrupt_during_bash.jsonl", "s05_interrupt.jsonl"] {
        let (tree, events) = run(file);
        let [task] = tree.tasks().collect::<Vec<_>>()[..] else {
            panic!("{file}: one task expected")
        };
        assert_eq!(task.task_type, Some(TaskType::LOCAL_BASH), "{file}");
        assert!(!task.is_backgrounded, "{file}");
        assert_eq!(task.output_file.as_deref(), Some(""), "{file}");
        // No task_updated is sent for a foreground Bash: the notification ends it.
        assert!(
            !events
                .iter()
                .any(|e| matches!(e, TaskEvent::Updated { .. })),
            "{file}"
        );
        assert_eq!(
            finished_of(&events, &task.task_id).0,
            TaskStatus::STOPPED,
            "{file}"
        );
        assert_eq!(task.status, TaskStatus::STOPPED);
        assert!(!task.is_running(), "{file}");
        assert!(!tree.any_running_background(), "{file}");
    }
}

#[test]
fn heartbeats_map_to_the_task_of_their_tool_call() {
    // No recorded transcript holds a heartbeat (they come every 30 s): these lines are shaped
    // as observed in scenario s10.
    let mut tree = TaskTree::new();
    let mut events = Vec::new();
    for line in recv_messages(&corpus_dir().join("interrupt_during_bash.jsonl")) {
        events.extend(tree.observe(&line));
        if matches!(line, CliMessage::System(SystemMessage::TaskStarted(_))) {
            events.extend(tree.observe(&heartbeat("toolu_slow_bash", 1, 30)));
            events.extend(tree.observe(&heartbeat("toolu_slow_bash", 2, 60)));
        }
    }
    let task_id = tree.tasks().next().unwrap().task_id.clone();
    let beats: Vec<_> = events
        .iter()
        .filter(|e| matches!(e, TaskEvent::Heartbeat { .. }))
        .collect();
    assert_eq!(
        beats,
        [
            &TaskEvent::Heartbeat {
                tool_use_id: "toolu_slow_bash".into(),
                task_id: Some(task_id.clone()),
                tool_name: Some("Bash".into()),
                elapsed: Some(30.0),
            },
            &TaskEvent::Heartbeat {
                tool_use_id: "toolu_slow_bash".into(),
                task_id: Some(task_id.clone()),
                tool_name: Some("Bash".into()),
                elapsed: Some(60.0),
            },
        ]
    );
    let task = tree.get(&task_id).unwrap();
    assert_eq!((task.heartbeats, task.last_elapsed), (2, Some(60.0)));
    // A heartbeat is not a subagent line, though it carries a parent_tool_use_id.
    assert_eq!(task.messages.total(), 0);

    // A tool call without a task: a plain heartbeat.
    let events = tree.observe(&heartbeat("toolu_quick", 1, 30));
    assert_eq!(
        events,
        [TaskEvent::Heartbeat {
            tool_use_id: "toolu_quick".into(),
            task_id: None,
            tool_name: Some("Bash".into()),
            elapsed: Some(30.0),
        }]
    );
    assert_eq!(
        tree.owner_of(&heartbeat("toolu_slow_bash", 3, 90))
            .unwrap()
            .task_id,
        task_id
    );
}

#[test]
fn a_task_started_inside_a_subagent_is_its_child() {
    let mut tree = TaskTree::new();
    let events = feed(
        &mut tree,
        &[
            task_started(
                "agent",
                "toolu_A",
                "local_agent",
                json!({"is_backgrounded": true}),
            ),
            nested_user("toolu_A"),
            nested_tool_call("toolu_A", "toolu_B"),
            // The subagent's Bash call becomes a task: found through the nested tool call.
            task_started("bash", "toolu_B", "local_bash", json!({})),
            // A task whose line names its parent call outright.
            task_started(
                "bash2",
                "toolu_C",
                "local_bash",
                json!({"parent_tool_use_id": "toolu_A"}),
            ),
            // And one that names its parent task.
            task_started(
                "bash3",
                "toolu_D",
                "local_bash",
                json!({"parent_task_id": "bash"}),
            ),
        ],
    );
    let parents: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            TaskEvent::Started {
                task_id,
                parent_task_id,
                ..
            } => Some((task_id.as_str(), parent_task_id.as_deref())),
            _ => None,
        })
        .collect();
    assert_eq!(
        parents,
        [
            ("agent", None),
            ("bash", Some("agent")),
            ("bash2", Some("agent")),
            ("bash3", Some("bash"))
        ]
    );
    let ids = |it: Box<dyn Iterator<Item = &Task> + '_>| {
        it.map(|t| t.task_id.clone()).collect::<Vec<_>>()
    };
    assert_eq!(ids(Box::new(tree.roots())), ["agent"]);
    assert_eq!(ids(Box::new(tree.children("agent"))), ["bash", "bash2"]);
    assert_eq!(ids(Box::new(tree.children("bash"))), ["bash3"]);
    assert_eq!(
        tree.get("bash").unwrap().parent_tool_use_id.as_deref(),
        Some("toolu_A")
    );
    // The nested lines count on the subagent, not on its child.
    assert_eq!(tree.get("agent").unwrap().messages.assistant, 1);
    assert_eq!(tree.get("agent").unwrap().messages.user, 1);
    assert_eq!(tree.get("bash").unwrap().messages.total(), 0);

    // The subagent ends while its grandchild still runs: the chain is kept.
    feed(
        &mut tree,
        &[
            notification("agent", "completed"),
            notification("bash", "completed"),
        ],
    );
    feed(&mut tree, &[notification("bash2", "completed")]);
    assert_eq!(
        tree.forget_finished(),
        1,
        "only bash2 has no running descendant"
    );
    assert_eq!(ids(Box::new(tree.tasks())), ["agent", "bash", "bash3"]);
    feed(&mut tree, &[notification("bash3", "failed")]);
    assert_eq!(tree.forget_finished(), 3);
    assert!(tree.is_empty());
}

#[test]
fn subagent_lines_before_the_task_starts_are_counted_when_it_does() {
    let mut tree = TaskTree::new();
    let events = feed(
        &mut tree,
        &[nested_user("toolu_A"), nested_tool_call("toolu_A", "x")],
    );
    assert_eq!(
        events[0],
        TaskEvent::SubagentMessage {
            parent_tool_use_id: "toolu_A".into(),
            task_id: None,
            role: MessageRole::User,
        }
    );
    feed(
        &mut tree,
        &[task_started("agent", "toolu_A", "local_agent", json!({}))],
    );
    let counts = tree.get("agent").unwrap().messages;
    assert_eq!((counts.assistant, counts.user), (1, 1));
}

#[test]
fn a_terminal_status_from_task_updated_ends_the_task() {
    let mut tree = TaskTree::new();
    feed(
        &mut tree,
        &[task_started(
            "t",
            "toolu_T",
            "local_bash",
            json!({"is_backgrounded": true}),
        )],
    );
    assert!(tree.any_running_background());
    let events = feed(&mut tree, &[updated("t", "killed")]);
    assert_eq!(
        events,
        [TaskEvent::Updated {
            task_id: "t".into(),
            old_status: TaskStatus::RUNNING,
            new_status: TaskStatus::KILLED,
        }]
    );
    assert!(!tree.get("t").unwrap().is_running());
    assert!(!tree.any_running_background());
    // A notification may still follow: one Finished per run, however many notifications.
    let events = feed(
        &mut tree,
        &[notification("t", "stopped"), notification("t", "stopped")],
    );
    assert_eq!(events.len(), 1, "{events:?}");
    // A new run of the same task runs again and finishes again.
    let events = feed(
        &mut tree,
        &[
            task_started("t", "toolu_T", "local_bash", json!({"run_id": "r2"})),
            notification("t", "completed"),
        ],
    );
    assert!(
        matches!(events[1], TaskEvent::Finished { .. }),
        "{events:?}"
    );
    assert_eq!(tree.get("t").unwrap().run_id.as_deref(), Some("r2"));
}

#[test]
fn the_background_set_replaces_the_last_one() {
    let mut tree = TaskTree::new();
    let events = feed(
        &mut tree,
        &[
            background(&["x", "y"]),
            task_started(
                "x",
                "toolu_X",
                "local_bash",
                json!({"is_backgrounded": true}),
            ),
            task_started(
                "y",
                "toolu_Y",
                "local_agent",
                json!({"is_backgrounded": true}),
            ),
            background(&["y", "z"]),
        ],
    );
    assert_eq!(
        events.last().unwrap(),
        &TaskEvent::BackgroundSetChanged {
            running: vec!["y".into(), "z".into()],
            added: vec!["z".into()],
            removed: vec!["x".into()],
        }
    );
    // x left the set without any other word: it no longer runs, its status is unchanged.
    let x = tree.get("x").unwrap();
    assert!(!x.is_running() && !x.in_background_set);
    assert_eq!(x.status, TaskStatus::RUNNING);
    assert!(tree.get("y").unwrap().in_background_set);
    assert_eq!(tree.background_set().len(), 2);
    assert!(tree.any_running_background());
    feed(&mut tree, &[background(&[])]);
    assert!(!tree.any_running_background());
    assert_eq!(tree.running().count(), 0);
}

#[test]
fn lines_about_an_unseen_task_build_it() {
    let mut tree = TaskTree::new();
    let events = feed(&mut tree, &[notification("late", "failed")]);
    assert_eq!(
        events,
        [TaskEvent::Finished {
            task_id: "late".into(),
            status: TaskStatus::FAILED,
            summary: Some("done".into()),
        }]
    );
    let task = tree.get("late").unwrap();
    assert!(!task.seen_start && !task.is_running());
    assert_eq!(tree.by_tool_use_id("toolu_late").unwrap().task_id, "late");
}

#[test]
fn task_traces_render_to_snapshots() {
    let root = corpus_dir().canonicalize().expect("the corpus exists");
    insta::glob!(
        "../../../testdata/transcripts/cli-2.1.328",
        "*.jsonl",
        |path| {
            let trace = render_trace(path);
            if trace.is_empty() {
                return;
            }
            let rel = path
                .strip_prefix(&root)
                .expect("a transcript under the corpus");
            insta::with_settings!({ snapshot_suffix => rel.to_string_lossy().into_owned() }, {
                insta::assert_snapshot!(trace);
            });
        }
    );
}

/// The task events of a transcript, one per line, with ids aliased (`task1`, `tool1`) so a
/// re-recording does not churn the snapshot, and the tree at the end. Empty when the
/// transcript says nothing about tasks.
fn render_trace(path: &Path) -> String {
    let mut tree = TaskTree::new();
    let mut ids = Aliases::default();
    let mut out = String::new();
    for line in recv_messages(path) {
        for event in tree.observe(&line) {
            let s = match event {
                TaskEvent::Started {
                    task_id,
                    tool_use_id,
                    task_type,
                    is_backgrounded,
                    parent_task_id,
                } => format!(
                    "started {} by {} {} background={is_backgrounded} parent={}",
                    ids.task(&task_id),
                    ids.tool_opt(tool_use_id.as_deref()),
                    task_type.map(|t| t.to_string()).unwrap_or_default(),
                    parent_task_id.map(|p| ids.task(&p)).unwrap_or("-".into()),
                ),
                TaskEvent::Progress {
                    task_id,
                    usage,
                    last_tool_name,
                    description,
                } => format!(
                    "progress {} last_tool={} tool_uses={} doing={:?}",
                    ids.task(&task_id),
                    last_tool_name.unwrap_or_default(),
                    usage.and_then(|u| u.tool_uses).unwrap_or_default(),
                    description.unwrap_or_default(),
                ),
                TaskEvent::Updated {
                    task_id,
                    old_status,
                    new_status,
                } => format!(
                    "updated {} {old_status} -> {new_status}",
                    ids.task(&task_id)
                ),
                TaskEvent::Finished {
                    task_id,
                    status,
                    summary,
                } => format!(
                    "finished {} {status} summary={:?}",
                    ids.task(&task_id),
                    summary.unwrap_or_default()
                ),
                TaskEvent::BackgroundSetChanged {
                    running,
                    added,
                    removed,
                } => format!(
                    "background running=[{}] added=[{}] removed=[{}]",
                    ids.tasks(&running),
                    ids.tasks(&added),
                    ids.tasks(&removed)
                ),
                TaskEvent::Heartbeat {
                    tool_use_id,
                    task_id,
                    tool_name,
                    elapsed,
                } => format!(
                    "heartbeat {} task={} {} {elapsed:?}",
                    ids.tool(&tool_use_id),
                    task_id.map(|t| ids.task(&t)).unwrap_or("-".into()),
                    tool_name.unwrap_or_default()
                ),
                TaskEvent::SubagentMessage {
                    parent_tool_use_id,
                    task_id,
                    role,
                } => format!(
                    "subagent {role:?} under {} task={}",
                    ids.tool(&parent_tool_use_id),
                    task_id.map(|t| ids.task(&t)).unwrap_or("-".into()),
                ),
                other => format!("{other:?}"),
            };
            writeln!(out, "{s}").unwrap();
        }
    }
    if out.is_empty() {
        return out;
    }
    writeln!(out, "-- at the end").unwrap();
    for task in tree.tasks() {
        writeln!(
            out,
            "{} {} status={} running={} messages={}a/{}u heartbeats={} background={}",
            ids.task(&task.task_id),
            task.task_type
                .as_ref()
                .map(|t| t.to_string())
                .unwrap_or_default(),
            task.status,
            task.is_running(),
            task.messages.assistant,
            task.messages.user,
            task.heartbeats,
            task.is_backgrounded,
        )
        .unwrap();
    }
    writeln!(
        out,
        "any_running_background={}",
        tree.any_running_background()
    )
    .unwrap();
    out
}

/// Stable names for ids, in the order they first appear.
#[derive(Default)]
struct Aliases(HashMap<String, String>);

impl Aliases {
    fn alias(&mut self, prefix: &str, id: &str) -> String {
        let n = self.0.keys().filter(|k| k.starts_with(prefix)).count() + 1;
        self.0
            .entry(format!("{prefix}{id}"))
            .or_insert_with(|| format!("{prefix}{n}"))
            .clone()
    }
    fn task(&mut self, id: &str) -> String {
        self.alias("task", id)
    }
    fn tool(&mut self, id: &str) -> String {
        self.alias("tool", id)
    }
    fn tool_opt(&mut self, id: Option<&str>) -> String {
        id.map(|id| self.tool(id)).unwrap_or("-".into())
    }
    fn tasks(&mut self, ids: &[String]) -> String {
        ids.iter()
            .map(|id| self.task(id))
            .collect::<Vec<_>>()
            .join(",")
    }
}

fn finished_of(events: &[TaskEvent], task: &str) -> (TaskStatus, Option<String>) {
    let found: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            TaskEvent::Finished {
                task_id,
                status,
                summary,
            } if task_id == task => Some((status.clone(), summary.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(found.len(), 1, "one Finished for {task}: {events:?}");
    found.into_iter().next().unwrap()
}

/// Feeds a whole transcript.
fn run(file: &str) -> (TaskTree, Vec<TaskEvent>) {
    let mut tree = TaskTree::new();
    let events = recv_messages(&corpus_dir().join(file))
        .iter()
        .flat_map(|l| tree.observe(l))
        .collect();
    (tree, events)
}

fn feed(tree: &mut TaskTree, lines: &[CliMessage]) -> Vec<TaskEvent> {
    lines.iter().flat_map(|l| tree.observe(l)).collect()
}

fn message(value: Value) -> CliMessage {
    CliMessage::from_slice(&serde_json::to_vec(&value).unwrap()).unwrap()
}

fn heartbeat(tool: &str, n: u32, elapsed: u32) -> CliMessage {
    message(
        json!({"type": "tool_progress", "tool_use_id": format!("{tool}-heartbeat-{n}"),
        "tool_name": "Bash", "parent_tool_use_id": tool, "elapsed_time_seconds": elapsed,
        "heartbeat": true, "session_id": "s", "uuid": "u"}),
    )
}

fn task_started(task: &str, tool: &str, kind: &str, more: Value) -> CliMessage {
    let mut line = json!({"type": "system", "subtype": "task_started", "task_id": task,
        "run_id": "r1", "tool_use_id": tool, "description": "d", "is_backgrounded": false,
        "task_type": kind, "uuid": "u", "session_id": "s"});
    for (k, v) in more.as_object().unwrap() {
        line[k] = v.clone();
    }
    message(line)
}

fn updated(task: &str, status: &str) -> CliMessage {
    message(
        json!({"type": "system", "subtype": "task_updated", "task_id": task,
        "patch": {"status": status, "end_time": 1}, "uuid": "u", "session_id": "s"}),
    )
}

fn notification(task: &str, status: &str) -> CliMessage {
    message(
        json!({"type": "system", "subtype": "task_notification", "task_id": task,
        "tool_use_id": format!("toolu_{task}"), "status": status, "output_file": "",
        "summary": "done", "uuid": "u", "session_id": "s"}),
    )
}

fn background(tasks: &[&str]) -> CliMessage {
    let tasks: Vec<Value> = tasks
        .iter()
        .map(|t| json!({"task_id": t, "task_type": "local_bash", "description": "d"}))
        .collect();
    message(
        json!({"type": "system", "subtype": "background_tasks_changed", "tasks": tasks,
        "uuid": "u", "session_id": "s"}),
    )
}

fn nested_user(parent: &str) -> CliMessage {
    message(
        json!({"type": "user", "message": {"role": "user", "content": "prompt"},
        "parent_tool_use_id": parent, "session_id": "s", "uuid": "u"}),
    )
}

fn nested_tool_call(parent: &str, tool: &str) -> CliMessage {
    message(
        json!({"type": "assistant", "message": {"id": "msg_sub", "type": "message",
        "role": "assistant", "model": "m", "content": [{"type": "tool_use", "id": tool,
        "name": "Bash", "input": {"command": "echo"}}], "stop_reason": null},
        "parent_tool_use_id": parent, "session_id": "s", "uuid": "u"}),
    )
}
