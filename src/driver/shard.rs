//! Shards: one logical run split over N client processes (`servebench bench --shard K/N`).
//!
//! Every shard builds the **whole** workload and arrival schedule from the same seed, then
//! sends only its own part: request `i` (0-based, in workload order) belongs to shard
//! `i mod N + 1`, and keeps its id `i` and its scheduled offset from the common start. So
//! the N shards together send exactly the requests, at exactly the times, that one process
//! would; their records concatenate into the single run's (see [`crate::merge`]).
//!
//! The client-side concurrency cap is split too ([`Shard::cap_share`]): the N shares add up
//! to the single process's cap, so the server never sees more requests in flight than the
//! unsharded run allowed (a shard can wait for a slot while another has one free: with a cap
//! that binds, sharded queueing is not identical to one queue).
//!
//! ```
//! use servebench::driver::Shard;
//! let s: Shard = "2/4".parse().unwrap();
//! assert_eq!((s.index, s.count), (2, 4));
//! assert_eq!(s.indices(10).collect::<Vec<_>>(), [1, 5, 9]);
//! assert_eq!(s.cap_share(10).unwrap(), 3); // 3 + 3 + 2 + 2
//! assert!("0/4".parse::<Shard>().is_err());
//! assert_eq!(s.to_string(), "2/4");
//! ```

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// One shard of a run: the `index`-th (1-based) of `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Shard {
    /// 1-based shard number, `1..=count` (a Kubernetes completion index plus one).
    pub index: u32,
    /// How many shards the run has.
    pub count: u32,
}

/// A shard that is not `K/N` with `1 <= K <= N`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShardError {
    /// Not of the form `K/N` with two integers.
    #[error("shard `{0}` is not K/N (two whole numbers, e.g. 2/4)")]
    Syntax(String),
    /// `K` is 0 or larger than `N`, or `N` is 0.
    #[error("shard {index}/{count}: K must be between 1 and N (N at least 1)")]
    OutOfRange {
        /// The K given.
        index: u32,
        /// The N given.
        count: u32,
    },
    /// The concurrency cap is smaller than the number of shards.
    #[error("a cap of {cap} requests in flight cannot be split over {count} shards (each needs at least 1)")]
    CapTooSmall {
        /// The single-process cap.
        cap: usize,
        /// The number of shards.
        count: u32,
    },
}

impl Shard {
    /// Shard `index` of `count`, checked.
    pub fn new(index: u32, count: u32) -> Result<Shard, ShardError> {
        if count == 0 || index == 0 || index > count {
            return Err(ShardError::OutOfRange { index, count });
        }
        Ok(Shard { index, count })
    }

    /// The whole run as one shard (`1/1`).
    pub const WHOLE: Shard = Shard { index: 1, count: 1 };

    /// Whether request `i` (0-based position in the workload) is this shard's.
    pub fn owns(&self, i: usize) -> bool {
        let n = self.count.max(1) as usize;
        i % n == (self.index.max(1) - 1) as usize
    }

    /// This shard's requests among the first `n`, in order.
    pub fn indices(&self, n: usize) -> impl Iterator<Item = usize> {
        let step = self.count.max(1) as usize;
        let first = (self.index.max(1) - 1) as usize;
        (first..n).step_by(step)
    }

    /// This shard's part of a client-side cap of `cap` requests in flight: `cap / N`, plus
    /// one for the first `cap mod N` shards, so the parts add up to `cap`.
    pub fn cap_share(&self, cap: usize) -> Result<usize, ShardError> {
        let n = self.count.max(1) as usize;
        if cap < n {
            return Err(ShardError::CapTooSmall {
                cap,
                count: self.count,
            });
        }
        let k = (self.index.max(1) - 1) as usize;
        Ok(cap / n + usize::from(k < cap % n))
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl FromStr for Shard {
    type Err = ShardError;

    fn from_str(s: &str) -> Result<Shard, ShardError> {
        let syntax = || ShardError::Syntax(s.to_string());
        let (k, n) = s.trim().split_once('/').ok_or_else(syntax)?;
        let k: u32 = k.trim().parse().map_err(|_| syntax())?;
        let n: u32 = n.trim().parse().map_err(|_| syntax())?;
        Shard::new(k, n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_partition_every_request_exactly_once() {
        for count in 1..=7u32 {
            for n in [0usize, 1, 5, 13, 100] {
                let mut seen = vec![0u32; n];
                for index in 1..=count {
                    let s = Shard::new(index, count).unwrap();
                    for i in s.indices(n) {
                        assert!(s.owns(i));
                        seen[i] += 1;
                    }
                    assert_eq!(s.indices(n).count(), (0..n).filter(|&i| s.owns(i)).count());
                }
                assert!(seen.iter().all(|&c| c == 1), "{count} shards of {n}");
            }
        }
    }

    #[test]
    fn cap_shares_add_up_to_the_cap() {
        for count in 1..=6u32 {
            for cap in count as usize..40 {
                let total: usize = (1..=count)
                    .map(|k| Shard::new(k, count).unwrap().cap_share(cap).unwrap())
                    .sum();
                assert_eq!(total, cap);
            }
        }
        assert_eq!(
            Shard::new(1, 4).unwrap().cap_share(3),
            Err(ShardError::CapTooSmall { cap: 3, count: 4 })
        );
    }

    #[test]
    fn bad_shards_are_typed_errors() {
        for bad in ["", "3", "a/b", "1/", "/2", "-1/2", "1/2/3"] {
            assert!(
                matches!(bad.parse::<Shard>(), Err(ShardError::Syntax(_))),
                "{bad}"
            );
        }
        assert_eq!(
            "5/4".parse::<Shard>(),
            Err(ShardError::OutOfRange { index: 5, count: 4 })
        );
        assert_eq!(
            "0/0".parse::<Shard>(),
            Err(ShardError::OutOfRange { index: 0, count: 0 })
        );
        assert_eq!(" 4 / 4 ".parse::<Shard>(), Ok(Shard { index: 4, count: 4 }));
    }
}
