//! The bounded queue between the driver task and the [`Events`](super::Events) stream, and the
//! byte budget of the lines whose events have not reached the consumer yet.
//!
//! A channel that wakes the other side for every event costs a thread switch per event at
//! full speed. This queue moves events in batches instead: the driver pushes every event it
//! has while there is room, and wakes the consumer once (when the queue is empty and they all
//! fit, by swapping the core's queue with it: no event is moved); the consumer takes the whole
//! queue at once (a swap of two `VecDeque`s under the lock) and then pops from its own batch
//! without locking, waking the driver only if it was waiting for room. At most `capacity`
//! events wait in the queue and at most `capacity` more in the consumer's batch, so memory
//! stays bounded and a consumer that stops reading stops the driver.
//!
//! Counting events bounds their number, not their size: a line may be 64 MiB. So every line
//! read is also taken from a [`Budget`] of [`PIPELINE_BYTES`], and the event it became carries
//! its size (its weight) through the core and this queue; the consumer gives the weight back
//! as it asks for the event after it (so the event it is handling still counts). The reading
//! task reads only while the budget has room, so the lines between the CLI's pipe and the
//! consumer, the one being handled included, hold at most [`PIPELINE_BYTES`] plus one line.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use tokio::sync::Notify;

/// The reading task reads no further while this many bytes of lines are read and their events
/// not yet taken by the consumer.
pub(super) const PIPELINE_BYTES: usize = 8 << 20;

/// A reading task stopped by a full budget reads again once the bytes in flight are below
/// this.
pub(super) const RESUME_BYTES: usize = PIPELINE_BYTES / 2;

/// The bytes of lines read whose events the consumer has not taken yet.
#[derive(Debug, Default)]
pub(super) struct Budget {
    in_flight: AtomicUsize,
    freed: Notify,
}

impl Budget {
    /// Waits until there is room for more lines: at once while less than [`PIPELINE_BYTES`]
    /// are in flight; once that is reached, until the consumer has brought it down to
    /// [`RESUME_BYTES`], so that a full pipeline wakes the reading task once, not at every
    /// event the consumer takes.
    pub(super) async fn room(&self) {
        if self.in_flight.load(Ordering::Acquire) < PIPELINE_BYTES {
            return;
        }
        loop {
            let freed = self.freed.notified();
            if self.in_flight.load(Ordering::Acquire) < RESUME_BYTES {
                return;
            }
            freed.await;
        }
    }

    /// Takes `bytes` (of lines just read).
    pub(super) fn take(&self, bytes: usize) {
        self.in_flight.fetch_add(bytes, Ordering::AcqRel);
    }

    /// Gives `bytes` back (their events were taken, or dropped); wakes the reading task when
    /// this brings the bytes in flight below [`RESUME_BYTES`].
    pub(super) fn give_back(&self, bytes: usize) {
        if bytes > 0 {
            let before = self.in_flight.fetch_sub(bytes, Ordering::AcqRel);
            if before >= RESUME_BYTES && before - bytes < RESUME_BYTES {
                self.freed.notify_one();
            }
        }
    }

    /// The bytes taken and not given back.
    #[cfg(test)]
    pub(super) fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::Acquire)
    }
}

/// The shared state.
#[derive(Debug)]
struct State<T> {
    /// Events, and their weights (the first weight for the first event, a missing weight
    /// counting as 0): kept apart so that a whole batch moves by a swap.
    items: VecDeque<T>,
    weights: VecDeque<usize>,
    capacity: usize,
    /// The consumer, waiting for items.
    consumer: Option<Waker>,
    /// The producer, waiting for room.
    producer: Option<Waker>,
    producer_alive: bool,
    consumer_alive: bool,
}

#[derive(Debug)]
struct Shared<T> {
    state: Mutex<State<T>>,
    budget: Arc<Budget>,
}

impl<T> Shared<T> {
    fn lock(&self) -> MutexGuard<'_, State<T>> {
        // A panic while the lock is held leaves the queue consistent (every step is a
        // single push, pop or swap), so a poisoned lock is still usable.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A bounded queue of at least one item of room, whose consumer gives the items' weights back
/// to `budget`; `(producer, consumer)`.
pub(super) fn queue<T>(capacity: usize, budget: Arc<Budget>) -> (Producer<T>, Consumer<T>) {
    let capacity = capacity.max(1);
    let shared = Arc::new(Shared {
        state: Mutex::new(State {
            items: VecDeque::new(),
            weights: VecDeque::new(),
            capacity,
            consumer: None,
            producer: None,
            producer_alive: true,
            consumer_alive: true,
        }),
        budget,
    });
    (
        Producer {
            shared: shared.clone(),
            weights: VecDeque::new(),
        },
        Consumer {
            shared,
            batch: VecDeque::new(),
            weights: VecDeque::new(),
            handed: 0,
        },
    )
}

/// The consumer has gone: nobody will take the items.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct NoConsumer;

/// The driver's end. The items waiting to go in live elsewhere (the core's event queue, which
/// only grows at the back and shrinks at the front by these methods); their weights live here,
/// the first weight for the first item, a missing weight counting as 0.
#[derive(Debug)]
pub(super) struct Producer<T> {
    shared: Arc<Shared<T>>,
    weights: VecDeque<usize>,
}

impl<T> Producer<T> {
    /// Adds `bytes` to the weight of the last of the `waiting` items, or gives them back to the
    /// budget when no item waits (the line became no event).
    pub(super) fn weigh(&mut self, waiting: usize, bytes: usize) {
        if waiting == 0 {
            self.shared.budget.give_back(bytes);
            return;
        }
        self.weights.resize(self.weights.len().max(waiting), 0);
        self.weights[waiting - 1] += bytes;
    }

    /// Drops every item of `pending`, giving their weights back.
    pub(super) fn discard(&mut self, pending: &mut VecDeque<T>) {
        pending.clear();
        self.shared.budget.give_back(self.weights.drain(..).sum());
    }

    /// Moves items from the front of `pending` into the queue while it has room, waking the
    /// consumer if any were moved. `Ready(Ok)` once `pending` is empty; `Pending` (with this
    /// task woken when room appears) while items remain; `Ready(Err)` when the consumer has
    /// gone (`pending` is then left as it was).
    pub(super) fn poll_push(
        &mut self,
        pending: &mut VecDeque<T>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), NoConsumer>> {
        self.push(pending, Some(cx.waker()), false)
    }

    /// [`Producer::poll_push`] without waiting: moves what fits now.
    pub(super) fn push_now(&mut self, pending: &mut VecDeque<T>) -> Result<(), NoConsumer> {
        match self.push(pending, None, false) {
            Poll::Ready(Err(e)) => Err(e),
            _ => Ok(()),
        }
    }

    /// Moves every item of `pending` into the queue, over its capacity if need be, and wakes
    /// the consumer. For the last events of a session that is being closed: the driver does not
    /// wait for a consumer that may never read again, and nothing is dropped (what is moved
    /// was already held in memory). With the consumer gone, `pending` is dropped.
    pub(super) fn push_all(&mut self, pending: &mut VecDeque<T>) {
        if let Poll::Ready(Err(NoConsumer)) = self.push(pending, None, true) {
            self.discard(pending);
        }
    }

    fn push(
        &mut self,
        pending: &mut VecDeque<T>,
        waker: Option<&Waker>,
        all: bool,
    ) -> Poll<Result<(), NoConsumer>> {
        let wake = {
            let mut guard = self.shared.lock();
            let state = &mut *guard;
            if !state.consumer_alive {
                return Poll::Ready(Err(NoConsumer));
            }
            let room = match all {
                true => pending.len(),
                false => state.capacity.saturating_sub(state.items.len()),
            };
            let moved = room.min(pending.len());
            if moved == pending.len() && state.items.is_empty() {
                // The whole batch goes, and the queue is empty (the consumer keeps up): the
                // two queues swap their storage, and no event is moved.
                std::mem::swap(&mut state.items, pending);
                std::mem::swap(&mut state.weights, &mut self.weights);
            } else {
                state.weights.resize(state.items.len(), 0);
                state.items.extend(pending.drain(..moved));
                let weights = &mut self.weights;
                state
                    .weights
                    .extend((0..moved).map(|_| weights.pop_front().unwrap_or(0)));
            }
            if let (false, Some(waker)) = (pending.is_empty(), waker) {
                state.producer = Some(waker.clone());
            }
            if moved > 0 {
                state.consumer.take()
            } else {
                None
            }
        };
        if let Some(consumer) = wake {
            consumer.wake();
        }
        if pending.is_empty() {
            Poll::Ready(Ok(()))
        } else {
            Poll::Pending
        }
    }

    /// Ends the stream: the consumer gets what is queued, then `None`, as when the producer is
    /// dropped.
    pub(super) fn close(&self) {
        let consumer = {
            let mut state = self.shared.lock();
            state.producer_alive = false;
            state.consumer.take()
        };
        if let Some(consumer) = consumer {
            consumer.wake();
        }
    }

    /// Whether [`Producer::close`] was called.
    pub(super) fn is_closed(&self) -> bool {
        !self.shared.lock().producer_alive
    }
}

impl<T> Drop for Producer<T> {
    fn drop(&mut self) {
        self.close();
    }
}

/// The [`Events`](super::Events) stream's end.
#[derive(Debug)]
pub(super) struct Consumer<T> {
    shared: Arc<Shared<T>>,
    /// Items taken from the queue and not yet handed out, and their weights (as in the
    /// queue).
    batch: VecDeque<T>,
    weights: VecDeque<usize>,
    /// The weight of the item handed out last: the consumer holds it until it asks for the
    /// next one (or goes), so a message being handled still counts against the budget.
    handed: usize,
}

impl<T> Consumer<T> {
    /// The next item; `Ready(None)` once the producer has gone and everything was taken.
    pub(super) fn poll_next(&mut self, cx: &mut Context<'_>) -> Poll<Option<T>> {
        // Asking for the next item means the consumer is done with the last one.
        self.shared
            .budget
            .give_back(std::mem::take(&mut self.handed));
        if let Some(item) = self.pop() {
            return Poll::Ready(Some(item));
        }
        let producer = {
            let mut state = self.shared.lock();
            if state.items.is_empty() {
                if !state.producer_alive {
                    return Poll::Ready(None);
                }
                state.consumer = Some(cx.waker().clone());
                return Poll::Pending;
            }
            // The emptied batch (with its allocation) becomes the queue's storage.
            std::mem::swap(&mut state.items, &mut self.batch);
            std::mem::swap(&mut state.weights, &mut self.weights);
            state.weights.clear();
            state.producer.take()
        };
        if let Some(producer) = producer {
            producer.wake();
        }
        Poll::Ready(self.pop())
    }

    /// The next item of the batch; its weight is given back at the next poll.
    fn pop(&mut self) -> Option<T> {
        let item = self.batch.pop_front()?;
        self.handed = self.weights.pop_front().unwrap_or(0);
        Some(item)
    }
}

impl<T> Drop for Consumer<T> {
    fn drop(&mut self) {
        let (producer, weight) = {
            let mut state = self.shared.lock();
            state.consumer_alive = false;
            state.items.clear();
            let weight: usize = state.weights.drain(..).sum();
            (state.producer.take(), weight)
        };
        self.batch.clear();
        let weight =
            weight + self.weights.drain(..).sum::<usize>() + std::mem::take(&mut self.handed);
        self.shared.budget.give_back(weight);
        if let Some(producer) = producer {
            producer.wake();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::future::Future;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::Wake;

    use super::*;

    /// A waker that counts its wakes.
    #[derive(Default)]
    struct Count(AtomicUsize);

    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn counter() -> (Arc<Count>, Waker) {
        let count = Arc::new(Count::default());
        (count.clone(), Waker::from(count))
    }

    #[test]
    fn items_pass_in_order_and_the_queue_stays_bounded() {
        let (mut producer, mut consumer) = queue::<u32>(3, Arc::default());
        let (producer_wakes, producer_waker) = counter();
        let (consumer_wakes, consumer_waker) = counter();
        let mut pending: VecDeque<u32> = (0..10).collect();
        let mut pcx = Context::from_waker(&producer_waker);
        let mut ccx = Context::from_waker(&consumer_waker);

        // The consumer waits first.
        assert_eq!(consumer.poll_next(&mut ccx), Poll::Pending);
        // Three fit; the producer waits for room and the consumer is woken once.
        assert!(producer.poll_push(&mut pending, &mut pcx).is_pending());
        assert_eq!(pending.len(), 7);
        assert_eq!(consumer_wakes.0.load(Ordering::SeqCst), 1);
        // The consumer takes the whole queue at once and wakes the producer.
        assert_eq!(consumer.poll_next(&mut ccx), Poll::Ready(Some(0)));
        assert_eq!(producer_wakes.0.load(Ordering::SeqCst), 1);
        // Its batch and the queue together hold at most twice the capacity.
        assert!(producer.poll_push(&mut pending, &mut pcx).is_pending());
        assert_eq!(pending.len(), 4);
        let mut seen = vec![0];
        while seen.len() < 10 {
            match consumer.poll_next(&mut ccx) {
                Poll::Ready(Some(n)) => seen.push(n),
                Poll::Ready(None) => panic!("the producer is alive"),
                Poll::Pending => {
                    assert!(!pending.is_empty(), "items are waiting");
                    let _ = producer.poll_push(&mut pending, &mut pcx);
                }
            }
        }
        assert_eq!(seen, (0..10).collect::<Vec<_>>());
        assert!(pending.is_empty());
        drop(producer);
        assert_eq!(consumer.poll_next(&mut ccx), Poll::Ready(None));
    }

    #[test]
    fn items_left_when_the_producer_goes_are_still_delivered() {
        let (mut producer, mut consumer) = queue::<u32>(8, Arc::default());
        let mut pending: VecDeque<u32> = (0..5).collect();
        assert_eq!(producer.push_now(&mut pending), Ok(()));
        drop(producer);
        let (_, waker) = counter();
        let mut cx = Context::from_waker(&waker);
        let mut seen = Vec::new();
        while let Poll::Ready(Some(n)) = consumer.poll_next(&mut cx) {
            seen.push(n);
        }
        assert_eq!(seen, vec![0, 1, 2, 3, 4]);
    }

    #[test]
    fn the_last_events_go_in_over_the_capacity() {
        let (mut producer, mut consumer) = queue::<u32>(2, Arc::default());
        let mut pending: VecDeque<u32> = (0..5).collect();
        producer.push_all(&mut pending);
        assert!(pending.is_empty());
        producer.close();
        let (_, waker) = counter();
        let mut cx = Context::from_waker(&waker);
        let mut seen = Vec::new();
        while let Poll::Ready(Some(n)) = consumer.poll_next(&mut cx) {
            seen.push(n);
        }
        assert_eq!(seen, vec![0, 1, 2, 3, 4]);
    }

    #[test]
    fn closing_ends_the_stream_after_what_is_queued() {
        let (mut producer, mut consumer) = queue::<u32>(8, Arc::default());
        let mut pending: VecDeque<u32> = (0..2).collect();
        assert_eq!(producer.push_now(&mut pending), Ok(()));
        assert!(!producer.is_closed());
        producer.close();
        assert!(producer.is_closed());
        let (_, waker) = counter();
        let mut cx = Context::from_waker(&waker);
        assert_eq!(consumer.poll_next(&mut cx), Poll::Ready(Some(0)));
        assert_eq!(consumer.poll_next(&mut cx), Poll::Ready(Some(1)));
        assert_eq!(consumer.poll_next(&mut cx), Poll::Ready(None));
    }

    #[test]
    fn weights_go_back_to_the_budget_as_the_consumer_takes_the_items() {
        let budget = Arc::new(Budget::default());
        let (mut producer, mut consumer) = queue::<u32>(8, budget.clone());
        let mut pending = VecDeque::new();
        // Two lines of 100 and 50 bytes: the first became two events, the second one.
        budget.take(150);
        pending.extend([0, 1]);
        producer.weigh(pending.len(), 100);
        pending.push_back(2);
        producer.weigh(pending.len(), 50);
        // A line that became no event is given back at once.
        budget.take(7);
        producer.weigh(0, 7);
        assert_eq!(budget.in_flight(), 150);
        assert_eq!(producer.push_now(&mut pending), Ok(()));
        let (_, waker) = counter();
        let mut cx = Context::from_waker(&waker);
        assert_eq!(consumer.poll_next(&mut cx), Poll::Ready(Some(0)));
        assert_eq!(
            budget.in_flight(),
            150,
            "the first line's weight is on its last event"
        );
        assert_eq!(consumer.poll_next(&mut cx), Poll::Ready(Some(1)));
        assert_eq!(
            budget.in_flight(),
            150,
            "the consumer holds the event it was handed until it asks for the next"
        );
        assert_eq!(consumer.poll_next(&mut cx), Poll::Ready(Some(2)));
        assert_eq!(budget.in_flight(), 50);
        // A consumer that goes gives back what it never took, and what it held.
        drop(consumer);
        assert_eq!(budget.in_flight(), 0);
        // Items discarded by the producer are given back too.
        budget.take(9);
        pending.push_back(3);
        producer.weigh(pending.len(), 9);
        producer.discard(&mut pending);
        assert!(pending.is_empty());
        assert_eq!(budget.in_flight(), 0);
    }

    #[test]
    fn weights_follow_their_items_whether_a_batch_is_swapped_in_split_or_appended() {
        let budget = Arc::new(Budget::default());
        let (mut producer, mut consumer) = queue::<u32>(2, budget.clone());
        let (_, waker) = counter();
        let mut cx = Context::from_waker(&waker);
        // Item 1's line became two events (1 and 2): its weight is on item 2.
        let weights = [10, 0, 30, 40, 50, 60];
        let mut pending = VecDeque::new();
        let added = std::cell::Cell::new(0);
        let add = |producer: &mut Producer<u32>, pending: &mut VecDeque<u32>, n: u32| {
            pending.push_back(n);
            budget.take(weights[n as usize]);
            producer.weigh(pending.len(), weights[n as usize]);
            added.set(n as usize + 1);
        };
        let handed_out = |consumer: &mut Consumer<u32>, cx: &mut Context<'_>, n: u32| {
            assert_eq!(consumer.poll_next(cx), Poll::Ready(Some(n)));
            // The item handed out still counts; those before it were given back.
            let held: usize = weights[n as usize..added.get()].iter().sum();
            assert_eq!(budget.in_flight(), held, "after item {n} was handed out");
        };
        // Swapped in: the queue is empty and both fit.
        add(&mut producer, &mut pending, 0);
        add(&mut producer, &mut pending, 1);
        assert_eq!(producer.push_now(&mut pending), Ok(()));
        assert!(pending.is_empty());
        handed_out(&mut consumer, &mut cx, 0);
        add(&mut producer, &mut pending, 2);
        assert_eq!(producer.push_now(&mut pending), Ok(()));
        // Split and appended: one of three joins the item waiting in the queue.
        for n in 3..6 {
            add(&mut producer, &mut pending, n);
        }
        assert_eq!(producer.push_now(&mut pending), Ok(()));
        assert_eq!(pending, [4, 5]);
        for n in 1..4 {
            handed_out(&mut consumer, &mut cx, n);
        }
        // Swapped in again once the consumer has emptied the queue.
        assert_eq!(producer.push_now(&mut pending), Ok(()));
        assert!(pending.is_empty());
        handed_out(&mut consumer, &mut cx, 4);
        handed_out(&mut consumer, &mut cx, 5);
        drop(consumer);
        assert_eq!(budget.in_flight(), 0);
    }

    #[test]
    fn a_full_budget_makes_room_once_it_is_down_to_the_resume_mark() {
        let budget = Budget::default();
        let (wakes, waker) = counter();
        let mut cx = Context::from_waker(&waker);
        budget.take(PIPELINE_BYTES - 1);
        let mut room = std::pin::pin!(budget.room());
        assert!(room.as_mut().poll(&mut cx).is_ready(), "below the mark");
        budget.take(1);
        let mut room = std::pin::pin!(budget.room());
        assert!(room.as_mut().poll(&mut cx).is_pending(), "full");
        // Events taken above the resume mark wake nobody.
        budget.give_back(PIPELINE_BYTES - RESUME_BYTES);
        assert_eq!(wakes.0.load(Ordering::SeqCst), 0);
        assert!(room.as_mut().poll(&mut cx).is_pending());
        // The one that brings it below the mark does, once.
        budget.give_back(1);
        budget.give_back(1);
        assert_eq!(wakes.0.load(Ordering::SeqCst), 1);
        assert!(room.as_mut().poll(&mut cx).is_ready());
    }

    #[test]
    fn a_consumer_that_goes_releases_a_waiting_producer() {
        let (mut producer, consumer) = queue::<u32>(1, Arc::default());
        let (wakes, waker) = counter();
        let mut cx = Context::from_waker(&waker);
        let mut pending: VecDeque<u32> = (0..3).collect();
        assert!(producer.poll_push(&mut pending, &mut cx).is_pending());
        drop(consumer);
        assert_eq!(wakes.0.load(Ordering::SeqCst), 1);
        assert_eq!(
            producer.poll_push(&mut pending, &mut cx),
            Poll::Ready(Err(NoConsumer))
        );
        assert_eq!(pending.len(), 2, "nothing more is taken");
    }
}
