//! The order of a session's requests: where each request sits ([`TurnPlan`]) and what must
//! end before it is sent — the previous turn of its agent; for a sub-agent's first turn, the
//! main agent's turn it was forked at; for the main agent's turn after a fork, the last turn
//! of every sub-agent forked there (the parent waits for its sub-agents' results). The
//! driver asks [`Sessions`] what an ended request releases and when a session is over.
//!
//! A plan lists each session's requests in the order they can be sent: a sub-agent's turns
//! come after the turn they were forked at and before the main agent's next turn.
//!
//! ```
//! use std::time::Duration;
//! use servebench::driver::TurnPlan;
//! let think = Duration::from_secs(1);
//! // Turn 1 forks two sub-agents of one turn each; turn 2 waits for both.
//! let plan = [
//!     TurnPlan::main(0, 1, Duration::ZERO),
//!     TurnPlan::sub_agent(0, 1, 1, 1, think),
//!     TurnPlan::sub_agent(0, 2, 1, 1, think),
//!     TurnPlan::main(0, 2, think),
//! ];
//! assert_eq!(plan[1].forked_at, 1);
//! ```

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::time::Duration;

/// Where a request sits in a session, and how long the user (or the tool) takes before it
/// is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TurnPlan {
    /// Session (conversation) id, 0-based, unique within the plan.
    pub conversation: u64,
    /// 1-based turn number within its agent. Turn `k > 1` is sent after turn `k − 1` of
    /// the same agent ended, plus [`TurnPlan::think_time`].
    pub turn: u32,
    /// Wait between what this turn waits for ending and its send.
    pub think_time: Duration,
    /// 0: the session's main agent; `k ≥ 1`: its `k`-th sub-agent.
    pub agent: u32,
    /// For a sub-agent: the main agent's turn it was forked at — its first turn is sent
    /// after that turn ended, and the main agent's next turn waits for it to finish. 0 for
    /// the main agent.
    pub forked_at: u32,
}

impl TurnPlan {
    /// Turn `turn` of the main agent of session `conversation`.
    pub fn main(conversation: u64, turn: u32, think_time: Duration) -> TurnPlan {
        TurnPlan {
            conversation,
            turn,
            think_time,
            agent: 0,
            forked_at: 0,
        }
    }

    /// Turn `turn` of sub-agent `agent` (≥ 1) of session `conversation`, forked after the
    /// main agent's turn `forked_at`.
    pub fn sub_agent(
        conversation: u64,
        agent: u32,
        turn: u32,
        forked_at: u32,
        think_time: Duration,
    ) -> TurnPlan {
        TurnPlan {
            conversation,
            turn,
            think_time,
            agent,
            forked_at,
        }
    }
}

/// The run's sessions while it goes on: what each request waits for, the requests
/// released so far with their send times, the sessions under way.
#[derive(Debug)]
pub(crate) struct Sessions {
    /// Think time of each request (zero without turns).
    think: Vec<Duration>,
    /// The requests each one releases when it ends.
    next: Vec<Vec<usize>>,
    /// How many requests each one still waits for.
    waiting: Vec<u32>,
    /// The latest end among what each request waited for.
    ready_at: Vec<Duration>,
    /// Each request's session, as an index into `left`.
    session: Vec<usize>,
    /// Requests of each session not yet ended.
    left: Vec<usize>,
    /// Whether the run has sessions (else `in_use` counts requests).
    has_turns: bool,
    /// Later turns released: (send time, id).
    pub(crate) follow: BinaryHeap<Reverse<(Duration, usize)>>,
    /// When each request is (or was) due.
    pub(crate) scheduled: Vec<Duration>,
    /// Sessions started and not yet finished.
    pub(crate) active: usize,
}

impl Sessions {
    /// The first `n` requests' order; an error says which request breaks the rules of the
    /// module docs.
    pub(crate) fn new(n: usize, turns: Option<&[TurnPlan]>) -> Result<Sessions, String> {
        let mut s = Sessions {
            think: vec![Duration::ZERO; n],
            next: vec![Vec::new(); n],
            waiting: vec![0; n],
            ready_at: vec![Duration::ZERO; n],
            session: (0..n).collect(),
            left: vec![1; n],
            has_turns: turns.is_some(),
            follow: BinaryHeap::new(),
            scheduled: Vec::new(),
            active: 0,
        };
        let Some(turns) = turns else {
            return Ok(s);
        };
        if turns.len() < n {
            return Err(format!("{} turn entries for {n} requests", turns.len()));
        }
        s.left.clear();
        let mut sessions: HashMap<u64, usize> = HashMap::new();
        // (session, agent) → (its latest request, that request's turn).
        let mut last: HashMap<(u64, u32), (usize, u32)> = HashMap::new();
        // (session, agent ≥ 1) → the main agent's turn it was forked at, while not joined.
        let mut forks: HashMap<(u64, u32), u32> = HashMap::new();
        let mut joined: std::collections::HashSet<(u64, u32)> = Default::default();
        for (i, t) in turns.iter().take(n).enumerate() {
            let at = |what: String| format!("request {i} (session {}): {what}", t.conversation);
            let next_index = sessions.len();
            let sess = *sessions.entry(t.conversation).or_insert(next_index);
            if sess == s.left.len() {
                s.left.push(0);
            }
            s.left[sess] += 1;
            s.session[i] = sess;
            s.think[i] = t.think_time;
            let key = (t.conversation, t.agent);
            let prev = last.get(&key).copied();
            let want = prev.map_or(1, |(_, turn)| turn.saturating_add(1));
            if t.turn != want {
                return Err(at(format!(
                    "agent {} turn {} follows turn {} (turns must come in order, starting at 1)",
                    t.agent,
                    t.turn,
                    want - 1
                )));
            }
            if joined.contains(&key) {
                return Err(at(format!(
                    "sub-agent {} has a turn after the main agent went on without it",
                    t.agent
                )));
            }
            let mut deps: Vec<usize> = prev.map(|(p, _)| p).into_iter().collect();
            if t.agent == 0 {
                // The turn after a fork waits for every sub-agent forked there.
                for ((conv, agent), forked_at) in &forks {
                    if *conv == t.conversation && forked_at.saturating_add(1) == t.turn {
                        if let Some((p, _)) = last.get(&(*conv, *agent)) {
                            deps.push(*p);
                        }
                        joined.insert((*conv, *agent));
                    }
                }
                deps.sort_unstable();
            } else if t.turn == 1 {
                match last.get(&(t.conversation, 0)) {
                    Some(&(p, turn)) if turn == t.forked_at => deps.push(p),
                    _ => {
                        return Err(at(format!(
                            "sub-agent {} is forked at turn {}, which is not the main agent's \
                             latest turn before it",
                            t.agent, t.forked_at
                        )))
                    }
                }
                forks.insert(key, t.forked_at);
            }
            for &d in &deps {
                s.next[d].push(i);
            }
            s.waiting[i] = deps.len() as u32;
            last.insert(key, (i, t.turn));
        }
        Ok(s)
    }

    /// Whether request `i` waits for nothing (a session's first turn, or any request of a
    /// run without sessions): it arrives by the run's schedule.
    pub(crate) fn is_root(&self, i: usize) -> bool {
        self.waiting.get(i) == Some(&0)
    }

    /// What the concurrency cap counts: sessions under way in a run with sessions, else
    /// the `open` requests in flight.
    pub(crate) fn in_use(&self, open: usize) -> usize {
        if self.has_turns {
            self.active
        } else {
            open
        }
    }

    /// Releases what the requests in `ended` (emptied) lead to — each request whose last
    /// awaited request ended goes out at that end plus its think time — and ends the
    /// sessions all of whose requests ended.
    pub(crate) fn release_ended(&mut self, ended: &mut Vec<(usize, Duration)>) {
        for (id, at) in ended.drain(..) {
            if let Some(sess) = self.session.get(id).copied() {
                if let Some(left) = self.left.get_mut(sess) {
                    *left = left.saturating_sub(1);
                    if *left == 0 {
                        self.active = self.active.saturating_sub(1);
                    }
                }
            }
            let Some(next) = self.next.get(id) else {
                continue;
            };
            for &d in next {
                self.ready_at[d] = self.ready_at[d].max(at);
                self.waiting[d] = self.waiting[d].saturating_sub(1);
                if self.waiting[d] == 0 {
                    let when = self.ready_at[d].saturating_add(self.think[d]);
                    if let Some(s) = self.scheduled.get_mut(d) {
                        *s = when;
                    }
                    self.follow.push(Reverse((when, d)));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const Z: Duration = Duration::ZERO;

    #[test]
    fn a_fork_releases_its_sub_agents_and_the_join_waits_for_all() {
        let plan = [
            TurnPlan::main(0, 1, Z),
            TurnPlan::sub_agent(0, 1, 1, 1, Z),
            TurnPlan::sub_agent(0, 2, 1, 1, Z),
            TurnPlan::sub_agent(0, 2, 2, 1, Duration::from_secs(1)),
            TurnPlan::main(0, 2, Duration::from_secs(2)),
        ];
        let mut s = Sessions::new(5, Some(&plan)).unwrap();
        s.scheduled = vec![Z; 5];
        s.active = 1;
        assert!(s.is_root(0) && !(1..5).any(|i| s.is_root(i)));
        let sec = Duration::from_secs;
        s.release_ended(&mut vec![(0, sec(10))]);
        let mut out: Vec<_> = s.follow.drain().map(|Reverse(x)| x).collect();
        out.sort();
        assert_eq!(out, [(sec(10), 1), (sec(10), 2)]);
        s.release_ended(&mut vec![(2, sec(11)), (1, sec(15))]);
        // Sub-agent 2's second turn: 11 + 1 s; the join still waits for it.
        assert_eq!(s.follow.pop(), Some(Reverse((sec(12), 3))));
        assert!(s.follow.is_empty());
        s.release_ended(&mut vec![(3, sec(13))]);
        // The join: the latest end (15 s) plus its think time.
        assert_eq!(s.follow.pop(), Some(Reverse((sec(17), 4))));
        assert_eq!(s.active, 1);
        s.release_ended(&mut vec![(4, sec(20))]);
        assert_eq!(s.active, 0);
    }

    #[test]
    fn plans_that_break_the_order_are_refused() {
        for (plan, says) in [
            (
                vec![TurnPlan::main(0, 2, Z)],
                "agent 0 turn 2 follows turn 0",
            ),
            (
                vec![TurnPlan::main(0, 1, Z), TurnPlan::sub_agent(0, 1, 1, 2, Z)],
                "forked at turn 2",
            ),
            (
                vec![
                    TurnPlan::main(0, 1, Z),
                    TurnPlan::sub_agent(0, 1, 1, 1, Z),
                    TurnPlan::main(0, 2, Z),
                    TurnPlan::sub_agent(0, 1, 2, 1, Z),
                ],
                "after the main agent went on",
            ),
        ] {
            let err = Sessions::new(plan.len(), Some(&plan)).unwrap_err();
            assert!(err.contains(says), "{err}");
        }
    }
}
