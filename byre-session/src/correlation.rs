//! The request table: which control requests are waiting for an answer, in both directions.

use std::borrow::Borrow;
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::hash::Hash;
use std::time::{Duration, Instant};

/// The id of a control request (`request_id`): `req_N` for the host's, a UUID for the CLI's.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RequestId(String);

impl RequestId {
    /// Wraps any string as a request id.
    pub fn new(id: impl Into<String>) -> Self {
        RequestId(id.into())
    }

    /// The id as sent on the wire.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The id as an owned string.
    pub fn into_string(self) -> String {
        self.0
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<String> for RequestId {
    fn from(id: String) -> Self {
        RequestId(id)
    }
}

impl From<&str> for RequestId {
    fn from(id: &str) -> Self {
        RequestId(id.to_owned())
    }
}

impl From<RequestId> for String {
    fn from(id: RequestId) -> Self {
        id.0
    }
}

impl Borrow<str> for RequestId {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for RequestId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

/// Both sides of the control channel: the host's requests and the CLI's.
///
/// `O` is the data kept with each host request, `I` the data kept with each CLI request.
///
/// The control channel of the stream-json protocol carries requests both ways. Each side sends
/// `control_request` lines with a `request_id` and the other side answers each one exactly
/// once with a `control_response` naming the same id (or the sender withdraws it with
/// `control_cancel_request`). A [`RequestTable`] remembers what is in flight:
///
/// - its [`outgoing`](RequestTable::outgoing) side ([`Outgoing`]) holds the requests *the host*
///   sent to the CLI (`initialize`, `interrupt`, `set_model`, ...). It allocates their ids
///   (`req_1`, `req_2`, ... the shape the recorded host used), remembers the subtype, the
///   caller's data (typically whatever will deliver the answer) and an optional deadline, and
///   gives them back when the answer arrives, when they time out, when the caller cancels them,
///   or all at once when the CLI goes away;
/// - its [`incoming`](RequestTable::incoming) side ([`Incoming`]) holds the requests *the CLI*
///   sent to the host (`can_use_tool`, `hook_callback`, `mcp_message`, ...) until the host has
///   answered them. It makes sure each one is answered at most once, and that a request the
///   CLI withdrew is not answered at all.
///
/// Both sides are generic over the data the caller keeps with a request, so the driver can
/// keep its oneshot senders (or a handler's cancellation token) here while the sans-IO session
/// keeps only ids.
///
/// The table never does IO and never reads the clock. It does not build or send any line:
/// the caller writes the `control_request` with the id [`Outgoing::register`] returns, and
/// writes the answer after [`Incoming::finish`] says it may. Time comes in as `Instant`s: the
/// caller passes `now` to [`Outgoing::register`] and [`Outgoing::expired`], and arms its
/// timer for [`Outgoing::next_deadline`].
///
/// Nothing here panics on what the peer sends. An answer to an unknown id (late, after a
/// timeout, or stray) makes [`Outgoing::complete`] return `None`; a CLI request that reuses an
/// id still in flight makes [`Incoming::start`] return a [`DuplicateRequestId`]. What to do
/// about either is the caller's decision.
#[derive(Debug)]
pub struct RequestTable<O, I> {
    /// Requests the host sent to the CLI, waiting for a `control_response`.
    pub outgoing: Outgoing<O>,
    /// Requests the CLI sent to the host, waiting for the host's answer.
    pub incoming: Incoming<I>,
}

impl<O, I> RequestTable<O, I> {
    /// An empty table; the first host request will be `req_1`.
    pub fn new() -> Self {
        RequestTable {
            outgoing: Outgoing::new(),
            incoming: Incoming::new(),
        }
    }

    /// Whether no request is in flight in either direction.
    pub fn is_empty(&self) -> bool {
        self.outgoing.is_empty() && self.incoming.is_empty()
    }
}

impl<O, I> Default for RequestTable<O, I> {
    fn default() -> Self {
        Self::new()
    }
}

/// A host request waiting for its answer, as [`Outgoing`] gives it back.
#[derive(Debug, Clone, PartialEq)]
pub struct Pending<O> {
    /// The request's `subtype` (`initialize`, `interrupt`, ...).
    pub subtype: String,
    /// What the caller registered with it.
    pub data: O,
    /// When it was registered.
    pub sent_at: Instant,
    /// When it times out, if it does.
    pub deadline: Option<Instant>,
    /// Registration order, to give requests back in the order they were sent.
    seq: u64,
}

/// The host's side: requests sent to the CLI and not answered yet.
///
/// Every request [`register`](Self::register)ed leaves the table exactly once: through
/// [`complete`](Self::complete) (the answer came), [`cancel`](Self::cancel) (the caller gave
/// up), [`expired`](Self::expired) (its deadline passed) or [`fail_all`](Self::fail_all) (the
/// CLI is gone).
#[derive(Debug)]
pub struct Outgoing<O> {
    /// The number in the next id.
    next_id: u64,
    pending: HashMap<RequestId, Pending<O>>,
    /// Pending requests that have a deadline, ordered by deadline, then registration order.
    deadlines: BTreeMap<(Instant, u64), RequestId>,
}

impl<O> Outgoing<O> {
    /// No request in flight; the first id will be `req_1`.
    pub fn new() -> Self {
        Outgoing {
            next_id: 1,
            pending: HashMap::new(),
            deadlines: BTreeMap::new(),
        }
    }

    /// Remembers a new request and returns the id to send it with.
    ///
    /// `timeout`, counted from `now`, sets its deadline; `None` waits for ever (a timeout too
    /// large for `Instant` counts as none). Ids are `req_1`, `req_2`, ... and never reused.
    #[must_use = "the request must be sent with this id"]
    pub fn register(
        &mut self,
        subtype: impl Into<String>,
        data: O,
        now: Instant,
        timeout: Option<Duration>,
    ) -> RequestId {
        let seq = self.next_id;
        self.next_id += 1;
        let id = RequestId(format!("{ID_PREFIX}{seq}"));
        let deadline = timeout.and_then(|t| now.checked_add(t));
        if let Some(deadline) = deadline {
            self.deadlines.insert((deadline, seq), id.clone());
        }
        let pending = Pending {
            subtype: subtype.into(),
            data,
            sent_at: now,
            deadline,
            seq,
        };
        self.pending.insert(id.clone(), pending);
        id
    }

    /// Takes out the request a `control_response` answers.
    ///
    /// `None` when no such request is pending: an answer that came after its request timed out
    /// or was cancelled, a second answer, or one to an id the host never used. The caller
    /// reports it; it is not a reason to stop.
    #[must_use]
    pub fn complete<Q>(&mut self, id: &Q) -> Option<Pending<O>>
    where
        RequestId: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.take(id)
    }

    /// Takes out a request the caller no longer waits for (its receiver was dropped, or it
    /// sends `control_cancel_request`). A later answer to it will be unknown.
    pub fn cancel<Q>(&mut self, id: &Q) -> Option<Pending<O>>
    where
        RequestId: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.take(id)
    }

    /// Takes out every request whose deadline is at or before `now`, earliest deadline first.
    #[must_use]
    pub fn expired(&mut self, now: Instant) -> Vec<(RequestId, Pending<O>)> {
        let mut out = Vec::new();
        while let Some(entry) = self.deadlines.first_entry() {
            if entry.key().0 > now {
                break;
            }
            let id = entry.remove();
            if let Some(pending) = self.pending.remove(&id) {
                out.push((id, pending));
            }
        }
        out
    }

    /// The earliest deadline of the pending requests, if any has one: when to call
    /// [`expired`](Self::expired) next.
    #[must_use]
    pub fn next_deadline(&self) -> Option<Instant> {
        self.deadlines.keys().next().map(|(deadline, _)| *deadline)
    }

    /// Takes out every pending request, in the order they were registered (the CLI exited or
    /// its stdout closed, so no answer will come).
    #[must_use]
    pub fn fail_all(&mut self) -> Vec<(RequestId, Pending<O>)> {
        self.deadlines.clear();
        let mut all: Vec<_> = self.pending.drain().collect();
        all.sort_by_key(|(_, pending)| pending.seq);
        all
    }

    /// The request with this id, if it is pending.
    pub fn get<Q>(&self, id: &Q) -> Option<&Pending<O>>
    where
        RequestId: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.pending.get(id)
    }

    /// Whether a request with this id is pending.
    pub fn contains<Q>(&self, id: &Q) -> bool
    where
        RequestId: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.pending.contains_key(id)
    }

    /// How many requests are pending.
    pub fn len(&self) -> usize {
        self.pending.len()
    }

    /// Whether no request is pending.
    pub fn is_empty(&self) -> bool {
        self.pending.is_empty()
    }

    fn take<Q>(&mut self, id: &Q) -> Option<Pending<O>>
    where
        RequestId: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let pending = self.pending.remove(id)?;
        if let Some(deadline) = pending.deadline {
            self.deadlines.remove(&(deadline, pending.seq));
        }
        Some(pending)
    }
}

impl<O> Default for Outgoing<O> {
    fn default() -> Self {
        Self::new()
    }
}

/// A CLI request the host has not answered yet.
#[derive(Debug, Clone, PartialEq)]
pub struct Received<I> {
    /// The request's `subtype` (`can_use_tool`, `hook_callback`, ...).
    pub subtype: String,
    /// What the caller keeps with it.
    pub data: I,
}

/// The CLI's side: requests the CLI sent and the host has not answered.
///
/// A request enters with [`start`](Self::start) and leaves once, with [`finish`](Self::finish)
/// (the host answers it now) or [`cancel`](Self::cancel) (the CLI withdrew it with
/// `control_cancel_request`; no answer must be written). After either, `finish` returns `None`
/// for that id, so a request is never answered twice.
///
/// The CLI has few requests in flight at once (a permission prompt, a hook, an MCP call, a few
/// of each when tools run in parallel), so they are kept in a vector, in arrival order.
#[derive(Debug)]
pub struct Incoming<I> {
    in_flight: Vec<(RequestId, Received<I>)>,
}

impl<I> Incoming<I> {
    /// No request in flight.
    pub fn new() -> Self {
        Incoming {
            in_flight: Vec::new(),
        }
    }

    /// Records a request the CLI sent.
    ///
    /// The CLI must not reuse an id while its request is in flight: if it does, the table is
    /// left as it was and the error gives the new request's data back. An id may be used again
    /// once its request is finished or cancelled.
    pub fn start(
        &mut self,
        id: impl Into<RequestId>,
        subtype: impl Into<String>,
        data: I,
    ) -> Result<(), DuplicateRequestId<I>> {
        let id = id.into();
        if self.position(id.as_str()).is_some() {
            return Err(DuplicateRequestId { id, data });
        }
        let subtype = subtype.into();
        self.in_flight.push((id, Received { subtype, data }));
        Ok(())
    }

    /// Takes out the request the host is about to answer.
    ///
    /// `None` means do not write an answer: the id is unknown, already answered, or the CLI
    /// cancelled it.
    #[must_use = "write the answer only when this returns Some"]
    pub fn finish<Q>(&mut self, id: &Q) -> Option<I>
    where
        RequestId: Borrow<Q>,
        Q: Eq + ?Sized,
    {
        self.remove(id)
    }

    /// Takes out a request the CLI withdrew (`control_cancel_request`), so that the host's
    /// handler can be stopped and no answer is written. `None` when it is not in flight.
    pub fn cancel<Q>(&mut self, id: &Q) -> Option<I>
    where
        RequestId: Borrow<Q>,
        Q: Eq + ?Sized,
    {
        self.remove(id)
    }

    /// The request with this id, if it is in flight.
    pub fn get<Q>(&self, id: &Q) -> Option<&Received<I>>
    where
        RequestId: Borrow<Q>,
        Q: Eq + ?Sized,
    {
        self.position(id).map(|at| &self.in_flight[at].1)
    }

    /// Every request in flight, in arrival order.
    pub fn in_flight(&self) -> impl Iterator<Item = (&RequestId, &Received<I>)> + '_ {
        self.in_flight.iter().map(|(id, received)| (id, received))
    }

    /// Takes out every request in flight, in arrival order (the CLI is gone: nobody is left
    /// to answer).
    #[must_use]
    pub fn drain(&mut self) -> Vec<(RequestId, Received<I>)> {
        std::mem::take(&mut self.in_flight)
    }

    /// How many requests are in flight.
    pub fn len(&self) -> usize {
        self.in_flight.len()
    }

    /// Whether no request is in flight.
    pub fn is_empty(&self) -> bool {
        self.in_flight.is_empty()
    }

    fn position<Q>(&self, id: &Q) -> Option<usize>
    where
        RequestId: Borrow<Q>,
        Q: Eq + ?Sized,
    {
        self.in_flight
            .iter()
            .position(|(known, _)| known.borrow() == id)
    }

    fn remove<Q>(&mut self, id: &Q) -> Option<I>
    where
        RequestId: Borrow<Q>,
        Q: Eq + ?Sized,
    {
        let at = self.position(id)?;
        Some(self.in_flight.remove(at).1.data)
    }
}

impl<I> Default for Incoming<I> {
    fn default() -> Self {
        Self::new()
    }
}

/// The CLI sent a request with the id of one still in flight (a protocol violation).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("the CLI reused request id {id} while a request with it was in flight")]
pub struct DuplicateRequestId<I> {
    /// The reused id.
    pub id: RequestId,
    /// The data passed with the rejected request, given back.
    pub data: I,
}

/// The prefix of the ids the host allocates.
const ID_PREFIX: &str = "req_";
