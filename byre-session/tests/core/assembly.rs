//! `assembly`: the blocks assembled from `stream_event` deltas equal the CLI's own `assistant`
//! lines in every recorded transcript; interrupts, bad tool input and interleaved streams.

use std::collections::{BTreeMap, HashMap, HashSet};

use byre_proto::{CliMessage, ContentBlock, StopReason, StreamEventMessage};
use byre_session::{AbandonCause, Assembler, AssemblyError, AssemblyEvent, BlockCheck, BlockKind};
use proptest::prelude::*;
use serde_json::{json, Value};

use crate::support::*;

#[test]
fn assembled_blocks_equal_the_assistant_lines_of_every_transcript() {
    let mut matched = 0;
    let mut truncated = Vec::new();
    for path in transcripts() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let mut asm = Assembler::new();
        let mut streamed: HashSet<String> = HashSet::new();
        // Per message: the blocks of its `assistant` lines, and the blocks assembled, in order.
        let mut expected: HashMap<String, Vec<ContentBlock>> = HashMap::new();
        let mut assembled: HashMap<String, BTreeMap<u64, ContentBlock>> = HashMap::new();
        for line in recv_messages(&path) {
            if let CliMessage::Assistant(a) = &line {
                let id = a.message.id.clone().expect("assistant lines carry an id");
                if streamed.contains(&id) {
                    // The line comes before the block's `content_block_stop`: check it live.
                    for (check, block) in asm.check_against(a).iter().zip(&a.message.content) {
                        match check {
                            BlockCheck::Matches { .. } => matched += 1,
                            BlockCheck::Differs { assembled, .. }
                                if assembled
                                    .as_ref()
                                    .as_ref()
                                    .is_ok_and(|b| same_modulo_truncation(b, block)) =>
                            {
                                truncated.push(name.clone())
                            }
                            other => panic!("{name}: {id}: {other:?}"),
                        }
                    }
                    expected
                        .entry(id)
                        .or_default()
                        .extend(a.message.content.clone());
                } else {
                    let checks = asm.check_against(a);
                    assert!(
                        checks.iter().all(|c| *c == BlockCheck::NotStreamed),
                        "{name}"
                    );
                }
            }
            for event in asm.observe_cli(&line) {
                match event {
                    AssemblyEvent::MessageStarted { id, .. } => {
                        streamed.insert(id);
                    }
                    AssemblyEvent::BlockFinished {
                        message_id,
                        index,
                        block,
                    } => {
                        let blocks = assembled.entry(message_id).or_default();
                        assert!(
                            blocks.insert(index, *block).is_none(),
                            "{name}: index twice"
                        );
                    }
                    AssemblyEvent::BlockFailed { error, .. } => panic!("{name}: {error}"),
                    AssemblyEvent::Problem(problem) => panic!("{name}: {problem}"),
                    _ => {}
                }
            }
        }
        assert!(asm.is_idle(), "{name}: still in flight at the end");
        for (id, lines) in &expected {
            let blocks: Vec<&ContentBlock> = assembled[id].values().collect();
            assert_eq!(blocks.len(), lines.len(), "{name}: {id}: block count");
            for (got, want) in blocks.into_iter().zip(lines) {
                assert!(
                    same_modulo_truncation(got, want),
                    "{name}: {id}: {got:?} != {want:?}"
                );
            }
        }
    }
    // Every transcript streams its top-level messages: 73 blocks in all.
    assert!(matched >= 60, "only {matched} blocks checked");
    // The one transcript whose long strings were cut is checked by length and head.
    assert_eq!(truncated, ["s12_long_line.jsonl"]);
}

#[test]
fn the_interrupted_stream_finishes_with_its_blocks_abandoned() {
    for file in ["interrupt_during_stream.jsonl", "s05_interrupt.jsonl"] {
        let mut asm = Assembler::new();
        let mut finished = Vec::new();
        for line in recv_messages(&corpus_dir().join(file)) {
            for event in asm.observe_cli(&line) {
                if let AssemblyEvent::MessageFinished {
                    stop_reason,
                    abandoned,
                    ..
                } = event
                {
                    finished.push((stop_reason, abandoned));
                }
            }
        }
        assert!(asm.is_idle());
        let interrupted: Vec<_> = finished.iter().filter(|(_, a)| a.is_some()).collect();
        assert_eq!(interrupted.len(), 1, "{file}: {finished:?}");
        let (stop_reason, abandoned) = interrupted[0];
        let abandoned = abandoned.as_ref().unwrap();
        assert_eq!(
            *stop_reason, None,
            "{file}: the interrupted message has no stop reason"
        );
        assert_eq!(abandoned.cause, AbandonCause::Interrupted);
        assert_eq!(abandoned.from_block_index, Some(0));
        // The interrupt came before the first block: nothing had arrived.
        assert!(abandoned.blocks.is_empty(), "{file}: {abandoned:?}");
        // The session went on: the last message ended normally.
        let (last_reason, last_abandoned) = finished.last().unwrap();
        assert_eq!(last_reason.as_ref(), Some(&StopReason::END_TURN));
        assert!(last_abandoned.is_none());
    }
}

#[test]
fn an_interrupt_inside_a_block_reports_what_had_arrived() {
    let mut asm = Assembler::new();
    feed(
        &mut asm,
        &[
            start("m1", None),
            text_start("m1", 0),
            text_delta("m1", 0, "half a sen"),
        ],
    );
    assert_eq!(asm.text_so_far("m1", 0), Some("half a sen"));
    let stop = line(json!({
        "type": "stream_event", "event": {"type": "message_stop"}, "parent_tool_use_id": null,
        "api_message_id": "m1", "abandoned_blocks": {"api_message_id": "m1", "from_block_index": 0}
    }));
    let events = asm.observe(&stop);
    let [AssemblyEvent::MessageFinished {
        abandoned: Some(abandoned),
        ..
    }] = events.as_slice()
    else {
        panic!("{events:?}")
    };
    assert_eq!(abandoned.cause, AbandonCause::Interrupted);
    assert_eq!(abandoned.blocks.len(), 1);
    assert_eq!(abandoned.blocks[0].kind, BlockKind::Text);
    assert_eq!(abandoned.blocks[0].text, "half a sen");
    assert!(asm.is_idle());
    assert_eq!(
        asm.text_so_far("m1", 0),
        None,
        "a finished message is forgotten"
    );
}

#[test]
fn malformed_tool_input_gives_an_error_event_not_a_panic() {
    let mut asm = Assembler::new();
    let mut lines = vec![start("m1", None), tool_start("m1", 0, "toolu_1", "Bash")];
    lines.push(json_delta("m1", 0, "{\"command\":\"ec"));
    lines.push(json_delta("m1", 0, "ho hi\",}"));
    feed(&mut asm, &lines);
    assert_eq!(asm.text_so_far("m1", 0), Some("{\"command\":\"echo hi\",}"));
    let events = asm.observe(&stop_block("m1", 0));
    let [AssemblyEvent::BlockFailed {
        index: 0,
        error:
            AssemblyError::InvalidToolInput {
                tool_use_id,
                partial_json,
                ..
            },
        ..
    }] = events.as_slice()
    else {
        panic!("{events:?}")
    };
    assert_eq!(tool_use_id, "toolu_1");
    assert_eq!(partial_json, "{\"command\":\"echo hi\",}");
    // The message still ends normally.
    let events = feed(&mut asm, &[message_delta("m1", "tool_use"), stop("m1")]);
    assert!(matches!(
        events.as_slice(),
        [AssemblyEvent::MessageFinished {
            abandoned: None,
            ..
        }]
    ));
    assert!(asm.is_idle());
}

#[test]
fn a_tool_call_without_input_pieces_keeps_the_empty_input() {
    let mut asm = Assembler::new();
    feed(
        &mut asm,
        &[
            start("m1", None),
            tool_start("m1", 0, "toolu_1", "ListAgents"),
        ],
    );
    let events = asm.observe(&stop_block("m1", 0));
    let [AssemblyEvent::BlockFinished { block, .. }] = events.as_slice() else {
        panic!("{events:?}")
    };
    let ContentBlock::ToolUse(tool) = &**block else {
        panic!("{block:?}")
    };
    assert_eq!(tool.input, json!({}));
    assert_eq!(tool.name, "ListAgents");
}

#[test]
fn thinking_signature_and_citations_are_assembled() {
    let mut asm = Assembler::new();
    let events = feed(
        &mut asm,
        &[
            start("m1", None),
            block_start(
                "m1",
                0,
                json!({"type": "thinking", "thinking": "", "signature": ""}),
            ),
            delta(
                "m1",
                0,
                json!({"type": "thinking_delta", "thinking": "Let me "}),
            ),
            delta(
                "m1",
                0,
                json!({"type": "thinking_delta", "thinking": "think."}),
            ),
            delta(
                "m1",
                0,
                json!({"type": "signature_delta", "signature": "sig"}),
            ),
            stop_block("m1", 0),
            text_start("m1", 1),
            text_delta("m1", 1, "Cited."),
            delta(
                "m1",
                1,
                json!({"type": "citations_delta", "citation": {"cited_text": "x"}}),
            ),
            stop_block("m1", 1),
        ],
    );
    let blocks: Vec<&ContentBlock> = events
        .iter()
        .filter_map(|e| match e {
            AssemblyEvent::BlockFinished { block, .. } => Some(&**block),
            _ => None,
        })
        .collect();
    let [ContentBlock::Thinking(thinking), ContentBlock::Text(text)] = blocks.as_slice() else {
        panic!("{blocks:?}")
    };
    assert_eq!(thinking.thinking, "Let me think.");
    assert_eq!(thinking.signature.as_deref(), Some("sig"));
    assert_eq!(text.text, "Cited.");
    assert_eq!(text.citations, Some(vec![json!({"cited_text": "x"})]));
    // The raw deltas stay available, with their text.
    let pieces: Vec<&str> = events.iter().filter_map(AssemblyEvent::piece).collect();
    assert_eq!(pieces, ["Let me ", "think.", "sig", "Cited."]);
}

#[test]
fn interleaved_messages_are_kept_apart() {
    // A subagent's message (with `parent_tool_use_id`) interleaved with its parent's, some of
    // the lines without `api_message_id` (they follow the last message on their stream).
    let mut asm = Assembler::new();
    let sub = Some("toolu_agent");
    let lines = [
        start("parent", None),
        start("child", sub),
        text_start("parent", 0),
        text_start("child", 0),
        without_id(text_delta("parent", 0, "Hello ")),
        without_id(text_delta_in("child", 0, "Sub ", sub)),
        text_delta("parent", 0, "world"),
        text_delta("child", 0, "agent"),
        stop_block("child", 0),
        stop_block("parent", 0),
        stop("child"),
        without_id(message_delta("parent", "end_turn")),
        stop("parent"),
    ];
    let events = feed(&mut asm, &lines);
    let finished: HashMap<&str, &ContentBlock> = events
        .iter()
        .filter_map(|e| match e {
            AssemblyEvent::BlockFinished {
                message_id, block, ..
            } => Some((message_id.as_str(), &**block)),
            _ => None,
        })
        .collect();
    assert_eq!(text_of(finished["parent"]), "Hello world");
    assert_eq!(text_of(finished["child"]), "Sub agent");
    let parents: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            AssemblyEvent::MessageFinished {
                id,
                parent_tool_use_id,
                stop_reason,
                ..
            } => Some((
                id.as_str(),
                parent_tool_use_id.as_deref(),
                stop_reason.clone(),
            )),
            _ => None,
        })
        .collect();
    assert_eq!(
        parents,
        [
            ("child", sub, None),
            ("parent", None, Some(StopReason::END_TURN))
        ]
    );
    assert!(!events
        .iter()
        .any(|e| matches!(e, AssemblyEvent::Problem(_))));
    assert!(asm.is_idle());
}

#[test]
fn odd_lines_are_reported_as_problems() {
    let mut asm = Assembler::new();
    let events = feed(
        &mut asm,
        &[
            stop("nobody"),
            without_id(text_delta("x", 0, "orphan")),
            start("m1", None),
            start("m1", None),
            text_delta("m1", 3, "no such block"),
            tool_start("m1", 0, "toolu_1", "Bash"),
            tool_start("m1", 0, "toolu_1", "Bash"),
            text_delta("m1", 0, "text into a tool call"),
            stop_block("m1", 7),
        ],
    );
    let problems: Vec<&AssemblyError> = events
        .iter()
        .filter_map(|e| match e {
            AssemblyEvent::Problem(p) => Some(p),
            _ => None,
        })
        .collect();
    assert!(matches!(
        problems[0],
        AssemblyError::UnknownMessage {
            event: "message_stop",
            ..
        }
    ));
    assert!(matches!(
        problems[1],
        AssemblyError::NoMessage {
            event: "content_block_delta"
        }
    ));
    assert!(matches!(
        problems[2],
        AssemblyError::DuplicateMessage { .. }
    ));
    assert!(matches!(
        problems[3],
        AssemblyError::UnknownBlock { index: 3, .. }
    ));
    assert!(matches!(
        problems[4],
        AssemblyError::DuplicateBlock { index: 0, .. }
    ));
    assert!(matches!(problems[5], AssemblyError::DeltaMismatch { .. }));
    assert!(matches!(
        problems[6],
        AssemblyError::UnknownBlock { index: 7, .. }
    ));
    assert_eq!(problems.len(), 7);
    // The mismatched delta changed nothing.
    assert_eq!(asm.text_so_far("m1", 0), Some(""));
}

#[test]
fn a_result_gives_up_the_top_level_messages_still_in_flight() {
    let mut asm = Assembler::new();
    feed(
        &mut asm,
        &[
            start("top", None),
            start("sub", Some("toolu_agent")),
            text_start("top", 0),
            text_delta("top", 0, "cut"),
        ],
    );
    let result = CliMessage::from_slice(br#"{"type":"result","subtype":"success"}"#).unwrap();
    let events = asm.observe_cli(&result);
    let [AssemblyEvent::MessageFinished {
        id,
        abandoned: Some(abandoned),
        ..
    }] = events.as_slice()
    else {
        panic!("{events:?}")
    };
    assert_eq!(id, "top");
    assert_eq!(abandoned.cause, AbandonCause::TurnEnded);
    assert_eq!(abandoned.blocks[0].text, "cut");
    assert_eq!(asm.in_flight().collect::<Vec<_>>(), ["sub"]);
    let events = asm.abandon_all();
    assert!(matches!(
        events.as_slice(),
        [AssemblyEvent::MessageFinished { abandoned: Some(a), .. }] if a.cause == AbandonCause::GivenUp
    ));
    assert!(asm.is_idle());
}

#[test]
fn a_stream_error_is_reported() {
    let mut asm = Assembler::new();
    feed(&mut asm, &[start("m1", None)]);
    let error = line(json!({"type": "stream_event", "api_message_id": "m1",
        "event": {"type": "error", "error": {"type": "overloaded_error"}}}));
    let events = asm.observe(&error);
    assert_eq!(
        events,
        [AssemblyEvent::StreamError {
            message_id: Some("m1".into()),
            error: json!({"type": "overloaded_error"})
        }]
    );
}

proptest! {
    #[test]
    fn text_split_anywhere_assembles_to_the_original(
        text in "\\PC{0,200}",
        cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..12),
    ) {
        let pieces = split(&text, &cuts);
        let mut asm = Assembler::new();
        feed(&mut asm, &[start("m1", None), text_start("m1", 0)]);
        let mut so_far = String::new();
        for piece in &pieces {
            feed(&mut asm, &[text_delta("m1", 0, piece)]);
            so_far.push_str(piece);
            prop_assert_eq!(asm.text_so_far("m1", 0), Some(so_far.as_str()));
        }
        let events = asm.observe(&stop_block("m1", 0));
        let [AssemblyEvent::BlockFinished { block, .. }] = events.as_slice() else {
            panic!("{events:?}")
        };
        prop_assert_eq!(text_of(block), text.as_str());
    }

    #[test]
    fn tool_input_split_anywhere_assembles_to_the_original(
        input in json_object(),
        cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..12),
    ) {
        let text = serde_json::to_string(&input).unwrap();
        let mut asm = Assembler::new();
        let mut lines = vec![start("m1", None), tool_start("m1", 0, "toolu_p", "Tool")];
        lines.extend(split(&text, &cuts).iter().map(|p| json_delta("m1", 0, p)));
        feed(&mut asm, &lines);
        let events = asm.observe(&stop_block("m1", 0));
        let [AssemblyEvent::BlockFinished { block, .. }] = events.as_slice() else {
            panic!("{events:?}")
        };
        let ContentBlock::ToolUse(tool) = &**block else {
            panic!("{block:?}")
        };
        prop_assert_eq!(&tool.input, &input);
        prop_assert_eq!(tool.id.as_str(), "toolu_p");
    }
}

/// Arbitrary JSON objects, nested a little.
fn json_object() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        (-1e9f64..1e9).prop_map(Value::from),
        "\\PC{0,20}".prop_map(Value::from),
    ];
    let value = leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            proptest::collection::btree_map("\\PC{0,8}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    });
    proptest::collection::btree_map("[a-z_]{1,10}", value, 0..5)
        .prop_map(|m| Value::Object(m.into_iter().collect()))
}

/// `text` cut at the given places (moved to character boundaries).
fn split(text: &str, cuts: &[prop::sample::Index]) -> Vec<String> {
    let mut at: Vec<usize> = cuts
        .iter()
        .map(|i| {
            let mut at = i.index(text.len() + 1);
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            at
        })
        .collect();
    at.push(0);
    at.push(text.len());
    at.sort_unstable();
    at.windows(2).map(|w| text[w[0]..w[1]].to_owned()).collect()
}

/// Whether two blocks are equal, allowing for transcripts whose long strings were cut: a
/// string `"<head>...<truncated, N chars total>"` stands for any string of N characters with
/// that head, and an assembled text made of such cut pieces must add up to the same N.
fn same_modulo_truncation(got: &ContentBlock, want: &ContentBlock) -> bool {
    if got == want {
        return true;
    }
    let (ContentBlock::Text(got), ContentBlock::Text(want)) = (got, want) else {
        return false;
    };
    let Some(total) = truncated_totals(&want.text).first().copied() else {
        return false;
    };
    let head = &want.text[..want.text.find("...<truncated").unwrap()];
    got.text.starts_with(head) && truncated_totals(&got.text).iter().sum::<usize>() == total
}

/// The `N` of every `...<truncated, N chars total>` marker in `s`.
fn truncated_totals(s: &str) -> Vec<usize> {
    s.split("...<truncated, ")
        .skip(1)
        .filter_map(|rest| rest.split(' ').next()?.parse().ok())
        .collect()
}

fn text_of(block: &ContentBlock) -> &str {
    match block {
        ContentBlock::Text(t) => &t.text,
        other => panic!("not text: {other:?}"),
    }
}

fn feed(asm: &mut Assembler, lines: &[StreamEventMessage]) -> Vec<AssemblyEvent> {
    lines.iter().flat_map(|l| asm.observe(l)).collect()
}

fn line(value: Value) -> StreamEventMessage {
    match CliMessage::from_slice(&serde_json::to_vec(&value).unwrap()).unwrap() {
        CliMessage::StreamEvent(m) => *m,
        other => panic!("not a stream event: {other:?}"),
    }
}

fn event_line(id: &str, parent: Option<&str>, event: Value) -> StreamEventMessage {
    line(
        json!({"type": "stream_event", "event": event, "session_id": "s",
        "parent_tool_use_id": parent, "uuid": "u", "api_message_id": id}),
    )
}

fn without_id(mut line: StreamEventMessage) -> StreamEventMessage {
    line.api_message_id = None;
    line
}

fn start(id: &str, parent: Option<&str>) -> StreamEventMessage {
    event_line(
        id,
        parent,
        json!({"type": "message_start", "message": {"id": id, "type": "message",
            "role": "assistant", "model": "m", "content": [], "stop_reason": null,
            "usage": {"input_tokens": 1, "output_tokens": 1}}}),
    )
}

fn block_start(id: &str, index: u64, block: Value) -> StreamEventMessage {
    event_line(
        id,
        None,
        json!({"type": "content_block_start", "index": index, "content_block": block}),
    )
}

fn text_start(id: &str, index: u64) -> StreamEventMessage {
    block_start(id, index, json!({"type": "text", "text": ""}))
}

fn tool_start(id: &str, index: u64, tool: &str, name: &str) -> StreamEventMessage {
    block_start(
        id,
        index,
        json!({"type": "tool_use", "id": tool, "name": name, "input": {}}),
    )
}

fn delta(id: &str, index: u64, delta: Value) -> StreamEventMessage {
    event_line(
        id,
        None,
        json!({"type": "content_block_delta", "index": index, "delta": delta}),
    )
}

fn text_delta(id: &str, index: u64, text: &str) -> StreamEventMessage {
    delta(id, index, json!({"type": "text_delta", "text": text}))
}

fn text_delta_in(id: &str, index: u64, text: &str, parent: Option<&str>) -> StreamEventMessage {
    let mut line = text_delta(id, index, text);
    line.parent_tool_use_id = parent.map(str::to_owned);
    line
}

fn json_delta(id: &str, index: u64, piece: &str) -> StreamEventMessage {
    delta(
        id,
        index,
        json!({"type": "input_json_delta", "partial_json": piece}),
    )
}

fn stop_block(id: &str, index: u64) -> StreamEventMessage {
    event_line(
        id,
        None,
        json!({"type": "content_block_stop", "index": index}),
    )
}

fn message_delta(id: &str, stop_reason: &str) -> StreamEventMessage {
    event_line(
        id,
        None,
        json!({"type": "message_delta", "delta": {"stop_reason": stop_reason,
            "stop_sequence": null}, "usage": {"output_tokens": 10}}),
    )
}

fn stop(id: &str) -> StreamEventMessage {
    event_line(id, None, json!({"type": "message_stop"}))
}
