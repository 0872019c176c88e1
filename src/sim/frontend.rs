//! The API server's admission path (HTTP parse, chat-template render, tokenization, the
//! multimodal processor) as a queue: up to `concurrency` requests are in service at once and
//! share the server's CPU equally (processor sharing, the way an asyncio event loop
//! interleaves request handlers); the rest wait FIFO. `concurrency = 1` is a serial FIFO
//! server.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

/// A job's virtual finish key: attained-service level at which it completes.
#[derive(Debug, Clone, Copy)]
struct Key(f64, u64);

impl PartialEq for Key {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Key {}
impl PartialOrd for Key {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Key {
    // Reversed: BinaryHeap pops the smallest finish level first.
    fn cmp(&self, o: &Self) -> Ordering {
        o.0.total_cmp(&self.0).then(o.1.cmp(&self.1))
    }
}

/// The admission queue, generic over the job payload.
#[derive(Debug, Clone)]
pub struct Frontend<T> {
    concurrency: usize,
    time: f64,
    /// Service attained by every job in service since the start (virtual time).
    level: f64,
    in_service: BinaryHeap<Key>,
    slab: Vec<Option<T>>,
    free: Vec<usize>,
    waiting: VecDeque<(f64, usize)>,
    incoming: VecDeque<(f64, f64, T)>,
    seq: u64,
}

impl<T> Frontend<T> {
    /// A frontend serving `concurrency` requests at once (at least 1).
    pub fn new(concurrency: usize) -> Frontend<T> {
        Frontend {
            concurrency: concurrency.max(1),
            time: 0.0,
            level: 0.0,
            in_service: BinaryHeap::new(),
            slab: Vec::new(),
            free: Vec::new(),
            waiting: VecDeque::new(),
            incoming: VecDeque::new(),
            seq: 0,
        }
    }

    /// A job of `work` CPU-seconds entering at `at` (entries must come in time order).
    pub fn push(&mut self, at: f64, work: f64, job: T) {
        self.incoming.push_back((at, work, job));
    }

    /// Jobs entered, in service or waiting, not yet done.
    pub fn len(&self) -> usize {
        self.in_service.len() + self.waiting.len() + self.incoming.len()
    }

    /// Whether no job is entered, in service or waiting.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Drops the first job `matches` picks, wherever it is (entering, waiting or in
    /// service): the others share the CPU without it from the frontend's current time (a
    /// client that went away costs no more admission work). Returns whether one was found.
    pub fn remove(&mut self, mut matches: impl FnMut(&T) -> bool) -> bool {
        if let Some(i) = self.incoming.iter().position(|e| matches(&e.2)) {
            self.incoming.remove(i);
            return true;
        }
        let Some(idx) = self
            .slab
            .iter()
            .position(|j| j.as_ref().is_some_and(&mut matches))
        else {
            return false;
        };
        self.slab[idx] = None;
        self.free.push(idx);
        self.waiting.retain(|&(_, i)| i != idx);
        self.in_service.retain(|k| Self::idx(k) != idx);
        self.fill();
        true
    }

    fn fill(&mut self) {
        while self.in_service.len() < self.concurrency {
            let Some((work, idx)) = self.waiting.pop_front() else {
                break;
            };
            self.seq += 1;
            self.in_service.push(Key(
                self.level + work,
                self.seq.wrapping_mul(1 << 32) | idx as u64,
            ));
        }
    }

    fn idx(key: &Key) -> usize {
        (key.1 & 0xFFFF_FFFF) as usize
    }

    fn pass(&mut self, until: f64) {
        let n = self.in_service.len();
        if n > 0 {
            self.level += (until - self.time) / n as f64;
        }
        self.time = self.time.max(until);
    }

    /// Runs the server until time `t`, handing out every job that completes by then with
    /// its completion time, in completion order.
    pub fn advance_to(&mut self, t: f64, mut done: impl FnMut(f64, T)) {
        loop {
            let entry = self.incoming.front().map(|e| e.0);
            let finish = self
                .in_service
                .peek()
                .map(|k| self.time + (k.0 - self.level).max(0.0) * self.in_service.len() as f64);
            let next_entry = entry.filter(|&e| e <= t);
            let next_finish = finish.filter(|&f| f <= t);
            match (next_entry, next_finish) {
                (Some(e), f) if f.is_none_or(|f| e < f) => {
                    self.pass(e);
                    if let Some((_, work, job)) = self.incoming.pop_front() {
                        let idx = match self.free.pop() {
                            Some(i) => {
                                self.slab[i] = Some(job);
                                i
                            }
                            None => {
                                self.slab.push(Some(job));
                                self.slab.len() - 1
                            }
                        };
                        self.waiting.push_back((work, idx));
                        self.fill();
                    }
                }
                (_, Some(f)) => {
                    if let Some(k) = self.in_service.pop() {
                        self.level = k.0.max(self.level);
                        self.time = self.time.max(f);
                        let i = Self::idx(&k);
                        if let Some(job) = self.slab.get_mut(i).and_then(Option::take) {
                            self.free.push(i);
                            done(self.time, job);
                        }
                        self.fill();
                    }
                }
                _ => {
                    self.pass(t);
                    return;
                }
            }
        }
    }
}

impl<T: Clone> Frontend<T> {
    /// When the next job would complete if nothing else entered.
    pub fn next_completion(&self) -> Option<f64> {
        let mut f = self.clone();
        let mut first = None;
        let horizon = f64::MAX / 4.0;
        f.advance_until_one(horizon, &mut first);
        first
    }

    fn advance_until_one(&mut self, t: f64, first: &mut Option<f64>) {
        // Advance in growing windows until the first completion.
        let mut step = 1e-3;
        let mut until = self.time;
        while first.is_none() && until < t {
            until = (until + step).min(t);
            self.advance_to(until, |at, _| {
                if first.is_none() {
                    *first = Some(at);
                }
            });
            if self.is_empty() {
                break;
            }
            step *= 2.0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serial_is_fifo_and_shared_finishes_together() {
        let mut f = Frontend::new(1);
        for i in 0..4 {
            f.push(0.0, 1.0, i);
        }
        let mut out = Vec::new();
        f.advance_to(10.0, |t, j| out.push((t, j)));
        assert_eq!(out, vec![(1.0, 0), (2.0, 1), (3.0, 2), (4.0, 3)]);

        let mut f = Frontend::new(4);
        for i in 0..4 {
            f.push(0.0, 1.0, i);
        }
        let mut out = Vec::new();
        f.advance_to(10.0, |t, j| out.push((t, j)));
        assert!(out.iter().all(|(t, _)| (t - 4.0).abs() < 1e-9), "{out:?}");
    }

    #[test]
    fn removed_jobs_leave_at_once_and_free_their_share() {
        // Two jobs of 1 s sharing the CPU, a third waiting: removing one in service at
        // t = 0.5 lets the third in at once (it would have waited until 2 s and finished
        // at 3 s); it shares with the survivor, which finishes at 2 s, and ends at 2.25 s.
        let mut f = Frontend::new(2);
        f.push(0.0, 1.0, 1u32);
        f.push(0.0, 1.0, 2u32);
        f.push(0.0, 1.0, 3u32);
        f.push(0.1, 1.0, 4u32);
        let mut done = Vec::new();
        f.advance_to(0.05, |t, j| done.push((t, j)));
        assert!(f.remove(|&j| j == 4), "still entering");
        f.advance_to(0.5, |t, j| done.push((t, j)));
        assert!(f.remove(|&j| j == 2), "in service");
        assert!(!f.remove(|&j| j == 2));
        f.advance_to(10.0, |t, j| done.push((t, j)));
        let ids: Vec<u32> = done.iter().map(|d| d.1).collect();
        assert_eq!(ids, [1, 3]);
        assert!((done[0].0 - 2.0).abs() < 1e-9, "{done:?}");
        assert!((done[1].0 - 2.25).abs() < 1e-9, "{done:?}");
        assert_eq!(f.len(), 0);
    }

    #[test]
    fn late_entries_slow_the_jobs_in_service() {
        let mut f = Frontend::new(8);
        f.push(0.0, 1.0, 'a');
        f.push(0.5, 1.0, 'b');
        assert!((f.next_completion().unwrap() - 1.5).abs() < 1e-9);
        let mut out = Vec::new();
        f.advance_to(10.0, |t, j| out.push((t, j)));
        // a alone for 0.5 s, then both at half speed: a done at 1.5, b at 2.0.
        assert_eq!(out.len(), 2);
        assert!((out[0].0 - 1.5).abs() < 1e-9 && out[0].1 == 'a');
        assert!((out[1].0 - 2.0).abs() < 1e-9 && out[1].1 == 'b');
    }
}
