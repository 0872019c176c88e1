//! The hand-off between the engine thread and the HTTP tasks: each stream's bounded item
//! queue, and the [`Gate`] that decides when a stream's task is woken to write.
//!
//! Why a gate: on a busy server a decode step hands one chunk to every open stream. Were
//! all their tasks woken at once, the runtime's queues would hold hundreds of them, and a
//! request whose first token comes out of the next step would wait behind them all (its
//! TTFT would hold the time the server takes to write a whole step). Instead, at most
//! `window` streams are woken and waiting to run; the others wait in the gate's queue, in
//! order, and each task that runs wakes the next one (so the runtime never idles waiting
//! for the engine thread). A stream's first token skips the queue: it waits behind at most
//! one window of writes.
//!
//! A woken task that cannot run (its client stopped reading and the socket is full) would
//! hold its place for ever: a stream woken longer than [`STALE`] ago no longer counts, and
//! the engine thread pumps the queue at least that often while it is not empty, so no
//! stream waits on another's client.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use super::engine_loop::Item;

/// A woken stream whose task has not run for this long no longer holds a place in the
/// window.
pub(super) const STALE: Duration = Duration::from_millis(1);

/// Where a stream is between the engine thread and its task.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Sched {
    /// Its task has run since the last item came (or no item came yet).
    Idle,
    /// It has items and waits in the gate's queue.
    Queued,
    /// Its task was woken at this instant and has not run since.
    Woken(Instant),
}

#[derive(Debug)]
struct State {
    items: VecDeque<Item>,
    capacity: usize,
    waker: Option<Waker>,
    sched: Sched,
    receiver_gone: bool,
    sender_gone: bool,
}

#[derive(Debug)]
struct Stream {
    state: Mutex<State>,
}

impl Stream {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock leaves plain data behind: go on with it.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[derive(Debug, Default)]
struct Queue {
    queued: VecDeque<Arc<Stream>>,
    woken: Vec<(Instant, Arc<Stream>)>,
}

/// Decides when streams' tasks are woken. Shared by the engine thread and the HTTP tasks.
#[derive(Debug)]
pub(super) struct Gate {
    /// Most woken streams waiting to run; 0: wake every stream at once.
    window: usize,
    queue: Mutex<Queue>,
}

impl Gate {
    pub(super) fn new(window: usize) -> Arc<Gate> {
        Arc::new(Gate {
            window,
            queue: Mutex::new(Queue::default()),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether streams wait in the queue (the engine thread then pumps at least every
    /// [`STALE`]).
    pub(super) fn has_queued(&self) -> bool {
        !self.lock().queued.is_empty()
    }

    /// Wake queued streams while fewer than `window` woken ones wait to run.
    pub(super) fn pump(&self, now: Instant) {
        let mut wake = Vec::new();
        {
            let mut q = self.lock();
            q.woken.retain(|(at, stream)| {
                now.saturating_duration_since(*at) < STALE
                    && stream.lock().sched == Sched::Woken(*at)
            });
            while q.woken.len() < self.window {
                let Some(stream) = q.queued.pop_front() else {
                    break;
                };
                let mut s = stream.lock();
                if s.sched != Sched::Queued {
                    continue; // its task ran meanwhile and took the items
                }
                s.sched = Sched::Woken(now);
                wake.extend(s.waker.take());
                drop(s);
                q.woken.push((now, stream));
            }
        }
        wake.into_iter().for_each(Waker::wake);
    }
}

/// A stream's queue, engine thread → HTTP task, holding at most `capacity` items.
pub(super) fn channel(gate: &Arc<Gate>, capacity: usize) -> (ItemTx, ItemRx) {
    let stream = Arc::new(Stream {
        state: Mutex::new(State {
            items: VecDeque::new(),
            capacity: capacity.max(1),
            waker: None,
            sched: Sched::Idle,
            receiver_gone: false,
            sender_gone: false,
        }),
    });
    (
        ItemTx {
            stream: Arc::clone(&stream),
            gate: Arc::clone(gate),
        },
        ItemRx {
            stream,
            gate: Arc::clone(gate),
        },
    )
}

/// Why [`ItemTx::send`] did not take an item (the item comes back).
#[derive(Debug)]
pub(super) enum SendError {
    /// The queue holds `capacity` items: try again later.
    Full(Item),
    /// The HTTP task is gone (the client disconnected).
    Closed,
}

/// The engine thread's end of a stream's queue.
#[derive(Debug)]
pub(super) struct ItemTx {
    stream: Arc<Stream>,
    gate: Arc<Gate>,
}

impl ItemTx {
    /// Queue `item`; its task is woken now if `first` (a first token) or the gate has room,
    /// else when its turn comes.
    pub(super) fn send(&self, item: Item, first: bool) -> Result<(), SendError> {
        let now = Instant::now();
        let mut s = self.stream.lock();
        if s.receiver_gone {
            return Err(SendError::Closed);
        }
        if s.items.len() >= s.capacity {
            return Err(SendError::Full(item));
        }
        s.items.push_back(item);
        if s.sched != Sched::Idle && !(first && s.sched == Sched::Queued) {
            return Ok(()); // woken already, or queued behind others
        }
        if self.gate.window == 0 {
            s.sched = Sched::Woken(now);
            let waker = s.waker.take();
            drop(s);
            waker.into_iter().for_each(Waker::wake);
            return Ok(());
        }
        s.sched = Sched::Queued;
        drop(s);
        {
            let mut q = self.gate.lock();
            if first {
                q.queued.push_front(Arc::clone(&self.stream));
            } else {
                q.queued.push_back(Arc::clone(&self.stream));
            }
        }
        self.gate.pump(now);
        Ok(())
    }
}

impl ItemTx {
    /// End the stream with an error (the engine failed); a stream that cannot take it is
    /// gone or full, and ends when its task sees the sender gone.
    pub(super) fn fail(&self, message: String) {
        let item = Item {
            tokens: 0,
            end: Some(super::engine_loop::End::Failed {
                kind: crate::record::ErrorKind::Other,
                message,
            }),
        };
        let _ = self.send(item, true);
    }
}

impl Drop for ItemTx {
    fn drop(&mut self) {
        let mut s = self.stream.lock();
        s.sender_gone = true;
        if s.items.is_empty() {
            // Nothing left to hand over: let the task see the end now.
            let waker = s.waker.take();
            drop(s);
            waker.into_iter().for_each(Waker::wake);
        }
    }
}

/// The HTTP task's end of a stream's queue.
#[derive(Debug)]
pub(super) struct ItemRx {
    stream: Arc<Stream>,
    gate: Arc<Gate>,
}

impl ItemRx {
    /// The task runs: take an item if one is there (`None`: the engine thread is done with
    /// this stream).
    pub(super) fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<Item>> {
        let mut s = self.stream.lock();
        let was_woken = matches!(s.sched, Sched::Woken(_));
        s.sched = Sched::Idle;
        let polled = match s.items.pop_front() {
            Some(item) => Poll::Ready(Some(item)),
            None if s.sender_gone => Poll::Ready(None),
            None => {
                if !s.waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                    s.waker = Some(cx.waker().clone());
                }
                Poll::Pending
            }
        };
        drop(s);
        if was_woken {
            // This task's place in the window is free: wake the next stream in line.
            self.gate.pump(Instant::now());
        }
        polled
    }

    pub(super) async fn recv(&mut self) -> Option<Item> {
        std::future::poll_fn(|cx| self.poll_recv(cx)).await
    }
}

impl Drop for ItemRx {
    fn drop(&mut self) {
        let mut s = self.stream.lock();
        s.receiver_gone = true;
        s.items.clear();
        let was_woken = matches!(s.sched, Sched::Woken(_));
        s.sched = Sched::Idle;
        drop(s);
        if was_woken {
            self.gate.pump(Instant::now());
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::Wake;

    use super::*;

    fn item() -> Item {
        Item {
            tokens: 1,
            end: None,
        }
    }

    /// A waker that counts its wakes.
    #[derive(Default)]
    struct Count(AtomicUsize);

    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// A stream whose task has polled once (so its waker is registered).
    fn stream(gate: &Arc<Gate>) -> (ItemTx, ItemRx, Arc<Count>) {
        let (tx, mut rx) = channel(gate, 4);
        let count = Arc::new(Count::default());
        let waker = Waker::from(Arc::clone(&count));
        assert!(rx.poll_recv(&mut Context::from_waker(&waker)).is_pending());
        (tx, rx, count)
    }

    fn run(rx: &mut ItemRx, count: &Arc<Count>) -> usize {
        let waker = Waker::from(Arc::clone(count));
        let mut n = 0;
        while let Poll::Ready(Some(_)) = rx.poll_recv(&mut Context::from_waker(&waker)) {
            n += 1;
        }
        n
    }

    fn wakes(count: &Count) -> usize {
        count.0.load(Ordering::SeqCst)
    }

    #[test]
    fn at_most_a_window_of_tasks_is_woken_and_each_run_wakes_the_next() {
        let gate = Gate::new(2);
        let mut streams: Vec<_> = (0..4).map(|_| stream(&gate)).collect();
        for (tx, _, _) in &streams {
            tx.send(item(), false).unwrap();
        }
        let woken: Vec<usize> = streams.iter().map(|(_, _, c)| wakes(c)).collect();
        assert_eq!(woken, [1, 1, 0, 0], "two woken, two queued in order");
        let (_, rx, count) = &mut streams[0];
        assert_eq!(run(rx, count), 1);
        let woken: Vec<usize> = streams.iter().map(|(_, _, c)| wakes(c)).collect();
        assert_eq!(woken, [1, 1, 1, 0], "the run woke the next in line");
    }

    #[test]
    fn a_first_token_goes_to_the_front_of_the_line() {
        let gate = Gate::new(1);
        let mut streams: Vec<_> = (0..4).map(|_| stream(&gate)).collect();
        for (tx, _, _) in &streams[..3] {
            tx.send(item(), false).unwrap();
        }
        streams[3].0.send(item(), true).unwrap();
        let woken: Vec<usize> = streams.iter().map(|(_, _, c)| wakes(c)).collect();
        assert_eq!(woken, [1, 0, 0, 0], "the window of one is taken");
        let (_, rx, count) = &mut streams[0];
        run(rx, count);
        let woken: Vec<usize> = streams.iter().map(|(_, _, c)| wakes(c)).collect();
        assert_eq!(
            woken,
            [1, 0, 0, 1],
            "the first token went before two earlier streams"
        );
        // A queued stream's first token moves it up too.
        streams[2].0.send(item(), true).unwrap();
        let (_, rx, count) = &mut streams[3];
        run(rx, count);
        let woken: Vec<usize> = streams.iter().map(|(_, _, c)| wakes(c)).collect();
        assert_eq!(woken, [1, 0, 1, 1]);
    }

    #[test]
    fn a_stalled_task_stops_holding_its_place() {
        let gate = Gate::new(1);
        let (a, _ra, _ca) = stream(&gate);
        let (b, _rb, cb) = stream(&gate);
        let then = Instant::now();
        a.send(item(), false).unwrap();
        b.send(item(), false).unwrap();
        assert_eq!(wakes(&cb), 0);
        assert!(gate.has_queued());
        gate.pump(then + Duration::from_micros(10));
        assert_eq!(wakes(&cb), 0, "a's task may still run");
        gate.pump(Instant::now() + STALE);
        assert_eq!(wakes(&cb), 1, "a's task did not run for STALE: b goes");
        assert!(!gate.has_queued());
    }

    #[test]
    fn full_closed_and_ended_streams() {
        let gate = Gate::new(2);
        let (tx, mut rx, count) = stream(&gate);
        for _ in 0..4 {
            tx.send(item(), false).unwrap();
        }
        assert!(matches!(tx.send(item(), false), Err(SendError::Full(_))));
        assert_eq!(run(&mut rx, &count), 4);
        drop(tx);
        let waker = Waker::from(Arc::clone(&count));
        assert!(matches!(
            rx.poll_recv(&mut Context::from_waker(&waker)),
            Poll::Ready(None)
        ));
        let (tx, rx, _) = stream(&gate);
        drop(rx);
        assert!(matches!(tx.send(item(), false), Err(SendError::Closed)));
    }

    #[test]
    fn a_task_gone_while_woken_frees_its_place() {
        let gate = Gate::new(1);
        let (a, ra, _) = stream(&gate);
        let (b, _rb, cb) = stream(&gate);
        a.send(item(), false).unwrap();
        b.send(item(), false).unwrap();
        assert_eq!(wakes(&cb), 0);
        drop(ra);
        assert_eq!(wakes(&cb), 1);
    }

    #[test]
    fn no_window_wakes_every_stream_at_once() {
        let gate = Gate::new(0);
        let streams: Vec<_> = (0..3).map(|_| stream(&gate)).collect();
        for (tx, _, _) in &streams {
            tx.send(item(), false).unwrap();
        }
        assert!(streams.iter().all(|(_, _, c)| wakes(c) == 1));
        assert!(!gate.has_queued());
    }
}
