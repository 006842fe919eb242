//! Tests of the request table: every path of both sides, then random interleavings checked
//! against a model.

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use byre_session::{DuplicateRequestId, Incoming, Outgoing, RequestId, RequestTable};
use proptest::prelude::*;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[test]
fn ids_follow_the_recorded_shape() {
    let base = Instant::now();
    let mut out = Outgoing::new();
    let a = out.register("initialize", (), base, None);
    let b = out.register("interrupt", (), base, None);
    assert_eq!(a.as_str(), "req_1");
    assert_eq!(b.to_string(), "req_2");
    assert_eq!(out.len(), 2);
    // Ids are never reused, even once their request is gone.
    assert!(out.complete(&a).is_some());
    let c = out.register("mcp_status", (), base, None);
    assert_eq!(c.as_str(), "req_3");
}

#[test]
fn complete_gives_back_what_was_registered() {
    let base = Instant::now();
    let mut out = Outgoing::new();
    let id = out.register("set_model", "reply-to-a", base, Some(ms(500)));
    assert!(out.contains("req_1"));
    assert_eq!(out.get(&id).map(|p| p.subtype.as_str()), Some("set_model"));

    let pending = out.complete("req_1").expect("pending");
    assert_eq!(pending.subtype, "set_model");
    assert_eq!(pending.data, "reply-to-a");
    assert_eq!(pending.sent_at, base);
    assert_eq!(pending.deadline, Some(base + ms(500)));
    assert!(out.is_empty());
    // Completing also forgets the deadline.
    assert_eq!(out.next_deadline(), None);
    assert!(out.expired(base + ms(10_000)).is_empty());
}

#[test]
fn unknown_and_repeated_answers_are_none() {
    let base = Instant::now();
    let mut out = Outgoing::new();
    let id = out.register("interrupt", 7, base, None);
    assert!(out.complete("req_99").is_none());
    assert!(out.complete("some-uuid").is_none());
    assert_eq!(out.complete(&id).map(|p| p.data), Some(7));
    // A second answer to the same id is stray.
    assert!(out.complete(&id).is_none());
    assert!(out.is_empty());
}

#[test]
fn expiry_uses_virtual_time() {
    let base = Instant::now();
    let mut out = Outgoing::new();
    let slow = out.register("get_context_usage", "slow", base, Some(ms(300)));
    let fast = out.register("interrupt", "fast", base + ms(50), Some(ms(100)));
    let never = out.register("initialize", "never", base, None);

    assert_eq!(out.next_deadline(), Some(base + ms(150)));
    assert!(out.expired(base + ms(149)).is_empty());

    // A deadline equal to `now` has passed.
    let gone = out.expired(base + ms(150));
    assert_eq!(gone.len(), 1);
    assert_eq!(gone[0].0, fast);
    assert_eq!(gone[0].1.data, "fast");
    assert_eq!(out.next_deadline(), Some(base + ms(300)));

    let gone = out.expired(base + ms(10_000));
    assert_eq!(gone.iter().map(|(id, _)| id).collect::<Vec<_>>(), [&slow]);
    assert_eq!(out.next_deadline(), None);
    assert!(out.contains(&never));
    // A late answer to an expired request is unknown.
    assert!(out.complete(&slow).is_none());
}

#[test]
fn expired_come_earliest_first_and_next_deadline_is_the_minimum() {
    let base = Instant::now();
    let mut out = Outgoing::new();
    let timeouts = [400, 100, 300, 100, 200];
    let ids: Vec<RequestId> = timeouts
        .iter()
        .map(|t| out.register("x", *t, base, Some(ms(*t))))
        .collect();
    assert_eq!(out.next_deadline(), Some(base + ms(100)));
    // Cancelling the earliest moves the next deadline to the next earliest.
    assert!(out.cancel(&ids[1]).is_some());
    assert_eq!(out.next_deadline(), Some(base + ms(100)));
    assert!(out.cancel(&ids[3]).is_some());
    assert_eq!(out.next_deadline(), Some(base + ms(200)));

    let gone = out.expired(base + ms(1_000));
    let order: Vec<u64> = gone.iter().map(|(_, p)| p.data).collect();
    assert_eq!(order, [200, 300, 400]);
}

#[test]
fn cancel_removes_a_request_once() {
    let base = Instant::now();
    let mut out = Outgoing::new();
    let id = out.register("interrupt", (), base, Some(ms(10)));
    assert_eq!(
        out.cancel(&id).map(|p| p.subtype),
        Some("interrupt".to_owned())
    );
    assert!(out.cancel(&id).is_none());
    assert!(out.complete(&id).is_none());
    assert!(out.expired(base + ms(20)).is_empty());
}

#[test]
fn fail_all_drains_in_registration_order() {
    let base = Instant::now();
    let mut out = Outgoing::new();
    for n in 0..20 {
        let timeout = (n % 3 == 0).then(|| ms(1_000 - n));
        let _ = out.register(format!("s{n}"), n, base, timeout);
    }
    let _ = out.complete("req_5");
    let all = out.fail_all();
    let data: Vec<u64> = all.iter().map(|(_, p)| p.data).collect();
    let expected: Vec<u64> = (0..20).filter(|n| *n != 4).collect();
    assert_eq!(data, expected);
    assert!(out.is_empty());
    assert_eq!(out.next_deadline(), None);
    assert!(out.fail_all().is_empty());
}

#[test]
fn a_huge_timeout_means_no_deadline() {
    let base = Instant::now();
    let mut out = Outgoing::new();
    let id = out.register("x", (), base, Some(Duration::MAX));
    assert_eq!(out.get(&id).and_then(|p| p.deadline), None);
    assert_eq!(out.next_deadline(), None);
}

#[test]
fn incoming_requests_are_answered_once() {
    let mut inc = Incoming::new();
    inc.start("uuid-a", "can_use_tool", 1).expect("new id");
    inc.start("uuid-b", "hook_callback", 2).expect("new id");
    assert_eq!(inc.len(), 2);
    let listed: Vec<(&str, &str, i32)> = inc
        .in_flight()
        .map(|(id, r)| (id.as_str(), r.subtype.as_str(), r.data))
        .collect();
    assert_eq!(
        listed,
        [
            ("uuid-a", "can_use_tool", 1),
            ("uuid-b", "hook_callback", 2)
        ]
    );

    assert_eq!(inc.finish("uuid-a"), Some(1));
    // Exactly one answer per request.
    assert_eq!(inc.finish("uuid-a"), None);
    assert_eq!(inc.finish("never-sent"), None);
    assert_eq!(inc.get("uuid-b").map(|r| r.data), Some(2));
    assert_eq!(inc.len(), 1);
}

#[test]
fn a_duplicate_incoming_id_is_refused() {
    let mut inc = Incoming::new();
    inc.start("uuid-a", "can_use_tool", "first")
        .expect("new id");
    let err = inc
        .start("uuid-a", "hook_callback", "second")
        .expect_err("the id is in flight");
    assert_eq!(
        err,
        DuplicateRequestId {
            id: RequestId::from("uuid-a"),
            data: "second",
        }
    );
    assert!(err.to_string().contains("uuid-a"));
    // The first request is untouched.
    assert_eq!(
        inc.get("uuid-a").map(|r| r.subtype.as_str()),
        Some("can_use_tool")
    );
    assert_eq!(inc.finish("uuid-a"), Some("first"));
    // Once answered, the id may be used again.
    inc.start("uuid-a", "mcp_message", "third")
        .expect("free again");
    assert_eq!(inc.finish("uuid-a"), Some("third"));
}

#[test]
fn a_cancelled_incoming_request_gets_no_answer() {
    let mut inc = Incoming::new();
    inc.start(RequestId::new("uuid-a"), "can_use_tool", ())
        .expect("new id");
    assert_eq!(inc.cancel("uuid-a"), Some(()));
    assert_eq!(inc.finish("uuid-a"), None);
    assert_eq!(inc.cancel("uuid-a"), None);
    assert!(inc.is_empty());
}

#[test]
fn drain_empties_the_incoming_side_in_arrival_order() {
    let mut inc = Incoming::new();
    for n in 0..5 {
        inc.start(format!("id-{n}"), "hook_callback", n)
            .expect("new id");
    }
    let _ = inc.finish("id-2");
    let drained: Vec<i32> = inc.drain().into_iter().map(|(_, r)| r.data).collect();
    assert_eq!(drained, [0, 1, 3, 4]);
    assert!(inc.is_empty());
}

#[test]
fn the_table_holds_both_sides() {
    let base = Instant::now();
    let mut table: RequestTable<&str, u8> = RequestTable::default();
    assert!(table.is_empty());
    let id = table
        .outgoing
        .register("initialize", "init", base, Some(ms(60_000)));
    table
        .incoming
        .start("mcp-1", "mcp_message", 0)
        .expect("new id");
    assert!(!table.is_empty());
    // The CLI's ids and the host's live apart: the same string on the other side is unknown.
    assert!(table.incoming.finish(id.as_str()).is_none());
    assert!(table.outgoing.complete("mcp-1").is_none());
    assert_eq!(table.outgoing.complete(&id).map(|p| p.data), Some("init"));
    assert_eq!(table.incoming.finish("mcp-1"), Some(0));
    assert!(table.is_empty());
}

/// One step of a random run.
#[derive(Debug, Clone)]
enum Op {
    Register {
        timeout_ms: Option<u64>,
    },
    /// Answer the n-th registered request (it may be gone already).
    Complete(usize),
    /// Answer an id the host never used.
    CompleteUnknown,
    Cancel(usize),
    Advance(u64),
    FailAll,
    Start(u8),
    Finish(u8),
    CancelIncoming(u8),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => prop::option::of(0u64..500).prop_map(|timeout_ms| Op::Register { timeout_ms }),
        2 => (0usize..40).prop_map(Op::Complete),
        1 => Just(Op::CompleteUnknown),
        1 => (0usize..40).prop_map(Op::Cancel),
        2 => (0u64..200).prop_map(Op::Advance),
        1 => Just(Op::FailAll),
        2 => (0u8..6).prop_map(Op::Start),
        2 => (0u8..6).prop_map(Op::Finish),
        1 => (0u8..6).prop_map(Op::CancelIncoming),
    ]
}

/// Applies `ops` to a table and to a plain model, checking the invariants after each step.
fn check_run(ops: &[Op]) -> Result<(), TestCaseError> {
    let base = Instant::now();
    let mut now = base;
    let mut table: RequestTable<usize, u32> = RequestTable::new();
    // Outgoing model: for every registered request, its id, deadline and how often it left.
    let mut registered: Vec<(RequestId, Option<Instant>)> = Vec::new();
    let mut left: Vec<u32> = Vec::new();
    // Incoming model: the id in flight with its start number, and answers per start.
    let mut in_flight: BTreeMap<u8, u32> = BTreeMap::new();
    let mut starts = 0u32;
    let mut answers: HashMap<u32, u32> = HashMap::new();

    for op in ops {
        match op {
            Op::Register { timeout_ms } => {
                let n = registered.len();
                let timeout = timeout_ms.map(Duration::from_millis);
                let id = table.outgoing.register("x", n, now, timeout);
                prop_assert_eq!(id.as_str(), format!("req_{}", n + 1));
                registered.push((id, timeout.map(|t| now + t)));
                left.push(0);
            }
            Op::Complete(i) | Op::Cancel(i) => {
                if registered.is_empty() {
                    continue;
                }
                let n = i % registered.len();
                let id = registered[n].0.clone();
                let got = match op {
                    Op::Complete(_) => table.outgoing.complete(&id),
                    _ => table.outgoing.cancel(&id),
                };
                prop_assert_eq!(got.is_some(), left[n] == 0);
                if let Some(pending) = got {
                    prop_assert_eq!(pending.data, n);
                    leave(&mut left, n)?;
                }
            }
            Op::CompleteUnknown => {
                prop_assert!(table.outgoing.complete("req_0").is_none());
                prop_assert!(table.outgoing.complete("not-ours").is_none());
            }
            Op::Advance(step) => {
                now += Duration::from_millis(*step);
                let gone = table.outgoing.expired(now);
                let mut previous = None;
                for (id, pending) in &gone {
                    let n = pending.data;
                    prop_assert_eq!(id, &registered[n].0);
                    let deadline = pending
                        .deadline
                        .expect("only requests with a deadline expire");
                    prop_assert!(deadline <= now);
                    prop_assert!(previous <= Some(deadline), "earliest deadline first");
                    previous = Some(deadline);
                    leave(&mut left, n)?;
                }
                // Nothing that is due stays.
                for (n, (_, deadline)) in registered.iter().enumerate() {
                    if left[n] == 0 {
                        prop_assert!(deadline.is_none_or(|d| d > now));
                    }
                }
            }
            Op::FailAll => {
                let all = table.outgoing.fail_all();
                let order: Vec<usize> = all.iter().map(|(_, p)| p.data).collect();
                let mut sorted = order.clone();
                sorted.sort_unstable();
                prop_assert_eq!(&order, &sorted, "registration order");
                for n in order {
                    leave(&mut left, n)?;
                }
            }
            Op::Start(k) => {
                let id = format!("cli-{k}");
                let result = table.incoming.start(id.as_str(), "hook_callback", starts);
                if in_flight.contains_key(k) {
                    let err = result.expect_err("duplicate id in flight");
                    prop_assert_eq!(err.data, starts);
                } else {
                    prop_assert!(result.is_ok());
                    in_flight.insert(*k, starts);
                }
                starts += 1;
            }
            Op::Finish(k) | Op::CancelIncoming(k) => {
                let id = format!("cli-{k}");
                let got = match op {
                    Op::Finish(_) => table.incoming.finish(id.as_str()),
                    _ => table.incoming.cancel(id.as_str()),
                };
                prop_assert_eq!(got, in_flight.remove(k));
                if let (Op::Finish(_), Some(start)) = (op, got) {
                    let count = answers.entry(start).or_default();
                    *count += 1;
                    prop_assert_eq!(*count, 1, "one answer per request");
                }
            }
        }

        // Invariants after every step.
        let pending: Vec<usize> = (0..registered.len()).filter(|n| left[*n] == 0).collect();
        prop_assert_eq!(table.outgoing.len(), pending.len());
        prop_assert_eq!(table.outgoing.is_empty(), pending.is_empty());
        let min_deadline = pending.iter().filter_map(|n| registered[*n].1).min();
        prop_assert_eq!(table.outgoing.next_deadline(), min_deadline);
        let listed: Vec<String> = table
            .incoming
            .in_flight()
            .map(|(id, _)| id.to_string())
            .collect();
        prop_assert_eq!(listed.len(), in_flight.len());
        for k in in_flight.keys() {
            let id = format!("cli-{k}");
            prop_assert!(listed.contains(&id), "{} is in flight", id);
        }
    }

    // In the end every registered request leaves exactly once.
    for (_, pending) in table.outgoing.fail_all() {
        leave(&mut left, pending.data)?;
    }
    prop_assert!(left.iter().all(|count| *count == 1));
    Ok(())
}

/// Counts that request `n` left the table; it must leave only once.
fn leave(left: &mut [u32], n: usize) -> Result<(), TestCaseError> {
    left[n] += 1;
    prop_assert_eq!(left[n], 1, "request {} left the table twice", n);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn random_interleavings_keep_the_invariants(ops in prop::collection::vec(op(), 0..120)) {
        check_run(&ops)?;
    }
}
