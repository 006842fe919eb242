//! The bounded queue between the driver task and the [`Events`](super::Events) stream.
//!
//! A channel that wakes the other side for every event costs a thread switch per event at
//! full speed. This queue moves events in batches instead: the driver pushes every event it
//! has while there is room, and wakes the consumer once; the consumer takes the whole queue at
//! once (a swap of two `VecDeque`s under the lock) and then pops from its own batch without
//! locking, waking the driver only if it was waiting for room. At most `capacity` events wait
//! in the queue and at most `capacity` more in the consumer's batch, so memory stays bounded
//! and a consumer that stops reading stops the driver.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

/// The shared state.
#[derive(Debug)]
struct State<T> {
    items: VecDeque<T>,
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
}

impl<T> Shared<T> {
    fn lock(&self) -> MutexGuard<'_, State<T>> {
        // A panic while the lock is held leaves the queue consistent (every step is a
        // single push, pop or swap), so a poisoned lock is still usable.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A bounded queue of at least one item of room; `(producer, consumer)`.
pub(super) fn queue<T>(capacity: usize) -> (Producer<T>, Consumer<T>) {
    let capacity = capacity.max(1);
    let shared = Arc::new(Shared {
        state: Mutex::new(State {
            items: VecDeque::new(),
            capacity,
            consumer: None,
            producer: None,
            producer_alive: true,
            consumer_alive: true,
        }),
    });
    (
        Producer {
            shared: shared.clone(),
        },
        Consumer {
            shared,
            batch: VecDeque::new(),
        },
    )
}

/// The consumer has gone: nobody will take the items.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct NoConsumer;

/// The driver's end.
#[derive(Debug)]
pub(super) struct Producer<T> {
    shared: Arc<Shared<T>>,
}

impl<T> Producer<T> {
    /// Moves items from the front of `pending` into the queue while it has room, waking the
    /// consumer if any were moved. `Ready(Ok)` once `pending` is empty; `Pending` (with this
    /// task woken when room appears) while items remain; `Ready(Err)` when the consumer has
    /// gone (`pending` is then left as it was).
    pub(super) fn poll_push(
        &self,
        pending: &mut VecDeque<T>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), NoConsumer>> {
        self.push(pending, Some(cx.waker()))
    }

    /// [`Producer::poll_push`] without waiting: moves what fits now.
    pub(super) fn push_now(&self, pending: &mut VecDeque<T>) -> Result<(), NoConsumer> {
        match self.push(pending, None) {
            Poll::Ready(Err(e)) => Err(e),
            _ => Ok(()),
        }
    }

    fn push(
        &self,
        pending: &mut VecDeque<T>,
        waker: Option<&Waker>,
    ) -> Poll<Result<(), NoConsumer>> {
        let wake = {
            let mut state = self.shared.lock();
            if !state.consumer_alive {
                return Poll::Ready(Err(NoConsumer));
            }
            let room = state.capacity.saturating_sub(state.items.len());
            let moved = room.min(pending.len());
            state.items.extend(pending.drain(..moved));
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
}

impl<T> Producer<T> {
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

    /// Moves every item of `pending` into the queue, over its capacity if need be, and wakes
    /// the consumer. For the last events of a session that is being closed: the driver does not
    /// wait for a consumer that may never read again, and nothing is dropped (what is moved
    /// was already held in memory).
    pub(super) fn push_all(&self, pending: &mut VecDeque<T>) {
        let consumer = {
            let mut state = self.shared.lock();
            if !state.consumer_alive {
                pending.clear();
                return;
            }
            state.items.extend(pending.drain(..));
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
    /// Items taken from the queue and not yet handed out.
    batch: VecDeque<T>,
}

impl<T> Consumer<T> {
    /// The next item; `Ready(None)` once the producer has gone and everything was taken.
    pub(super) fn poll_next(&mut self, cx: &mut Context<'_>) -> Poll<Option<T>> {
        if let Some(item) = self.batch.pop_front() {
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
            state.producer.take()
        };
        if let Some(producer) = producer {
            producer.wake();
        }
        Poll::Ready(self.batch.pop_front())
    }
}

impl<T> Drop for Consumer<T> {
    fn drop(&mut self) {
        let producer = {
            let mut state = self.shared.lock();
            state.consumer_alive = false;
            state.items.clear();
            state.producer.take()
        };
        if let Some(producer) = producer {
            producer.wake();
        }
    }
}

#[cfg(test)]
mod tests {
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
        let (producer, mut consumer) = queue::<u32>(3);
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
        let (producer, mut consumer) = queue::<u32>(8);
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
        let (producer, mut consumer) = queue::<u32>(2);
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
        let (producer, mut consumer) = queue::<u32>(8);
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
    fn a_consumer_that_goes_releases_a_waiting_producer() {
        let (producer, consumer) = queue::<u32>(1);
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
