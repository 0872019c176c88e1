//! Statistics over samples: exact summaries that reproduce numpy's arithmetic bit for bit
//! (vLLM's `np.mean`/`np.std`/`np.median`/`np.percentile`), guidellm's weighted inverse-CDF
//! distributions, and a streaming, bounded-memory [`Streaming`] summary on `hdrhistogram`
//! that can be serialized and merged across collectors, processes and hosts.
//!
//! # Exact, numpy convention
//!
//! * [`pairwise_sum`] is numpy's float64 summation (8 accumulators, blocks of 128, recursive
//!   halving), so [`mean`] and [`std()`] equal `np.mean` / `np.std` (population, `ddof=0`).
//! * [`percentile_linear`] is `np.percentile(x, p)` with the default `'linear'` method,
//!   including numpy's two-sided interpolation (`b − (b−a)(1−t)` for `t ≥ 0.5`).
//! * [`median_sorted`] is `np.median`: the middle value, or the mean of the two middle values.
//!
//! ```
//! use servebench::stats::{numpy_summary, percentile_linear};
//! let mut xs = vec![4.0, 1.0, 3.0, 2.0];
//! let s = numpy_summary(&mut xs, &[50.0, 90.0]).unwrap();
//! assert_eq!(s.mean, 2.5);
//! assert_eq!(s.median, 2.5);
//! assert!((s.percentiles[1].1 - 3.7).abs() < 1e-12);
//! assert_eq!(percentile_linear(&[1.0, 2.0, 3.0, 4.0], 100.0), Some(4.0));
//! ```
//!
//! # Modules
//!
//! * `exact`: correctly rounded integer ratios and exact integer moments.
//! * `numpy`: numpy's summation, mean, std, percentiles and median.
//! * `order`: order statistics in O(n) (selection, radix selection).
//! * `weighted`: guidellm's weighted, event-merging distributions.
//! * `pair_sort`: sorting their `(value, weight)` pairs (radix sort for long lists).
//! * `streaming`: bounded-memory, mergeable `hdrhistogram` summaries.
//!
//! Every public item is re-exported here, so `servebench::stats::X` names it whichever
//! file it lives in.

mod exact;
mod numpy;
mod order;
mod pair_sort;
mod proportion;
mod streaming;
mod weighted;

pub(crate) use exact::Moments;
// Crate paths as they were before the split (`crate::stats::X`), for code elsewhere.
#[allow(unused_imports)]
pub(crate) use exact::ratio_f64;
pub(crate) use numpy::SummaryRanks;
#[allow(unused_imports)]
pub(crate) use numpy::{leaf_sum, pairwise_split, pairwise_sum_by, pairwise_tree};
pub use numpy::{
    mean, median_sorted, numpy_summary, pairwise_sum, percentile_linear, std, NumpySummary,
};
pub use order::order_statistics;
pub(crate) use pair_sort::pair_order;
pub(crate) use pair_sort::{insertion_sort, sort_pairs};
pub use proportion::{wilson_interval, Z_95};
pub(crate) use streaming::nanos_u64;
pub use streaming::{StatsError, Streaming};
pub(crate) use weighted::{rate_mean_max, TimeMerger};
pub use weighted::{WeightedDistribution, GUIDELLM_MERGE_THRESHOLD_S, GUIDELLM_PERCENTILES};
