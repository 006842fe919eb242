//! Session files read without the CLI: bad lines counted and skipped, unknown kinds kept, side
//! chains and history before a compaction left out of the conversation, titles and tags
//! listed, and non-session files ignored.

use byre_transport::{session_info, SessionHistory, SessionLog};
use serde_json::{json, Value};

fn line(value: Value) -> String {
    format!("{value}\n")
}

fn entry(kind: &str, uuid: &str, parent: Option<&str>, text: &str) -> Value {
    json!({
        "type": kind, "uuid": uuid, "parentUuid": parent, "isSidechain": false,
        "sessionId": "0b7c5e4e-6a3e-4d8c-9a51-2f1d3c4b5a69", "timestamp": "2026-12-03T10:00:00.000Z",
        "cwd": "/work/p", "gitBranch": "main",
        "message": {"role": kind, "content": text},
    })
}

#[test]
fn a_hand_written_session_reads_as_its_conversation() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("projects/-work-p");
    std::fs::create_dir_all(&project).unwrap();
    let path = project.join("0b7c5e4e-6a3e-4d8c-9a51-2f1d3c4b5a69.jsonl");
    let mut side = entry("user", "s1", Some("a1"), "subagent work");
    side["isSidechain"] = json!(true);
    let mut boundary = entry("system", "b1", None, "");
    boundary["subtype"] = json!("compact_boundary");
    boundary["logicalParentUuid"] = json!("a1");
    let mut summary = entry("user", "c1", Some("b1"), "Summary of the earlier talk.");
    summary["isCompactSummary"] = json!(true);
    let text = [
        line(entry("user", "u1", None, "an old question")),
        line(entry("assistant", "a1", Some("u1"), "an old answer")),
        line(side),
        "not json at all\n".to_owned(),
        line(json!({"type": "from-a-newer-cli", "payload": 1})),
        line(boundary),
        line(summary),
        line(entry("user", "u2", Some("c1"), "a new question")),
        line(entry("assistant", "a2", Some("u2"), "a new answer")),
        line(json!({"type": "custom-title", "customTitle": "My session", "sessionId": "x"})),
        line(json!({"type": "tag", "tag": "ci", "sessionId": "x"})),
        line(json!({"type": "last-prompt", "lastPrompt": "a new question", "leafUuid": "a2"})),
    ]
    .concat();
    std::fs::write(&path, text).unwrap();
    std::fs::write(project.join("notes.jsonl"), "{}\n").unwrap();
    std::fs::write(
        project.join("1b7c5e4e-6a3e-4d8c-9a51-2f1d3c4b5a69.jsonl"),
        "",
    )
    .unwrap();

    let log = SessionLog::read(&path).unwrap();
    assert_eq!(log.bad_lines, [4]);
    assert_eq!(log.entries.len(), 11);
    assert_eq!(log.entries[3].kind, "from-a-newer-cli");
    assert_eq!(log.entries[3].extra.get("payload"), Some(&json!(1)));
    let texts: Vec<String> = log.conversation().iter().filter_map(|e| e.text()).collect();
    assert_eq!(
        texts,
        [
            "Summary of the earlier talk.",
            "a new question",
            "a new answer"
        ]
    );

    let info = session_info(&path).unwrap().unwrap();
    assert_eq!(info.title.as_deref(), Some("My session"));
    assert_eq!(info.tag.as_deref(), Some("ci"));
    assert_eq!(info.first_prompt.as_deref(), Some("an old question"));
    assert_eq!(info.label(), Some("My session"));
    assert_eq!(info.git_branch.as_deref(), Some("main"));
    // The empty file and the file that is not named as a session are not sessions.
    let history = SessionHistory::new(dir.path());
    let listed = history.list(std::path::Path::new("/work/p"), 0, None);
    assert_eq!(listed.len(), 1, "{listed:#?}");
    assert!(history.find("../etc/passwd").is_none());
}

/// Runs git in `dir`, failing the test when it fails.
fn git(dir: &std::path::Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

#[test]
fn a_repository_lists_the_sessions_of_its_worktrees_together() {
    let scratch = tempfile::tempdir().unwrap();
    // Canonical paths: git prints the worktrees' real paths.
    let root = scratch.path().canonicalize().unwrap();
    let main = root.join("repo");
    let tree = root.join("repo-feature");
    std::fs::create_dir_all(&main).unwrap();
    git(&main, &["init", "-q", "-b", "main"]);
    git(&main, &["commit", "-q", "--allow-empty", "-m", "first"]);
    git(
        &main,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "feature",
            tree.to_str().unwrap(),
        ],
    );
    assert_eq!(
        byre_transport::worktrees(&main),
        [main.clone(), tree.clone()]
    );
    assert_eq!(
        byre_transport::worktrees(&tree),
        [main.clone(), tree.clone()]
    );

    let config = root.join("config");
    let ids = [
        "11111111-1111-4111-8111-111111111111",
        "22222222-2222-4222-8222-222222222222",
    ];
    for (cwd, id) in [(&main, ids[0]), (&tree, ids[1])] {
        let project = config
            .join("projects")
            .join(byre_transport::project_dir_name(cwd));
        std::fs::create_dir_all(&project).unwrap();
        let mut first = entry("user", "u1", None, &format!("asked in {}", cwd.display()));
        first["sessionId"] = json!(id);
        std::fs::write(project.join(format!("{id}.jsonl")), line(first)).unwrap();
    }
    let history = SessionHistory::new(&config);
    let ids_of = |listed: Vec<byre_transport::SessionInfo>| {
        let mut ids: Vec<String> = listed.into_iter().map(|s| s.session_id).collect();
        ids.sort();
        ids
    };
    // From either worktree, both sessions; alone, each its own.
    assert_eq!(ids_of(history.list(&main, 0, None)), ids);
    assert_eq!(ids_of(history.list(&tree, 0, None)), ids);
    assert_eq!(ids_of(history.list_project(&main, 0, None)), [ids[0]]);
    assert_eq!(ids_of(history.list_project(&tree, 0, None)), [ids[1]]);
    // Outside a repository there are no worktrees.
    let plain = root.join("plain");
    std::fs::create_dir_all(&plain).unwrap();
    assert!(byre_transport::worktrees(&plain).is_empty());
}

#[test]
fn a_picker_can_leave_out_programmatic_sessions_and_sees_archived_ones_marked() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("projects/-work-p");
    std::fs::create_dir_all(&project).unwrap();
    let id = |n: u8| format!("0b7c5e4e-6a3e-4d8c-9a51-2f1d3c4b5a6{n}");
    let mut sessions = Vec::new();
    for (n, mark) in [
        (1, json!({"entrypoint": "cli"})),
        (2, json!({"entrypoint": "sdk-ts"})),
        (3, json!({"entrypoint": "cli", "nestedSession": true})),
        (
            4,
            json!({"entrypoint": "cli", "sessionKind": "daemon-worker"}),
        ),
        (5, json!({})),
    ] {
        let mut first = entry("user", "u1", None, &format!("question {n}"));
        for (k, v) in mark.as_object().unwrap() {
            first[k] = v.clone();
        }
        let path = project.join(format!("{}.jsonl", id(n)));
        std::fs::write(&path, line(first)).unwrap();
        sessions.push(path);
    }
    let history = SessionHistory::new(dir.path());
    let all: Vec<String> = history
        .list_all(0, None)
        .into_iter()
        .map(|i| i.session_id)
        .collect();
    assert_eq!(all.len(), 5);
    let mut people: Vec<String> = history
        .clone()
        .without_programmatic()
        .list_all(0, None)
        .into_iter()
        .map(|i| i.session_id)
        .collect();
    people.sort();
    assert_eq!(people, [id(1), id(5)]);
    assert!(session_info(&sessions[1]).unwrap().unwrap().programmatic);

    // Archived: still listed, marked; a prompt typed later unarchives it.
    assert_eq!(session_info(&sessions[0]).unwrap().unwrap().archived, None);
    history.archive(&id(1)).unwrap();
    let info = session_info(&sessions[0]).unwrap().unwrap();
    assert_eq!(info.archived, Some(true));
    assert!(history
        .list_all(0, None)
        .iter()
        .any(|i| i.archived == Some(true)));
    let mark = project.join(id(1)).join("archived.json");
    let text = std::fs::read_to_string(&mark).unwrap();
    assert!(text.contains("\"archived\":true"), "{text}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&mark).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    history.unarchive(&id(1)).unwrap();
    assert_eq!(
        session_info(&sessions[0]).unwrap().unwrap().archived,
        Some(false)
    );
    history.archive(&id(1)).unwrap();
    let mut later = entry("user", "u2", Some("u1"), "one more question");
    later["timestamp"] = json!("2999-01-01T00:00:00.000Z");
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&sessions[0])
        .unwrap();
    std::io::Write::write_all(&mut file, line(later).as_bytes()).unwrap();
    assert_eq!(
        session_info(&sessions[0]).unwrap().unwrap().archived,
        Some(false)
    );
    assert!(history
        .archive("0b7c5e4e-6a3e-4d8c-9a51-2f1d3c4b5a00")
        .is_err());
}
