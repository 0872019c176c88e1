//! Properties of the statistics: percentiles are monotone in p and inside [min, max] under
//! every rule (numpy linear, guidellm inverse CDF, streaming nearest rank); the streaming
//! summary stays within its documented bound of the exact one; merging histograms equals
//! recording the union.

use std::time::Duration;

use proptest::prelude::*;
use servebench::stats::{numpy_summary, percentile_linear, Streaming, WeightedDistribution};

/// Fewer ranks for the histogram tests (each lookup scans the histogram in debug builds).
fn ps_small() -> Vec<f64> {
    vec![
        0.0, 0.1, 1.0, 10.0, 25.0, 50.0, 75.0, 90.0, 95.0, 99.0, 99.9, 100.0,
    ]
}

fn ps() -> Vec<f64> {
    let mut v: Vec<f64> = (0..=100).map(f64::from).collect();
    v.extend([0.1, 0.5, 99.5, 99.9, 99.99]);
    v.sort_by(f64::total_cmp);
    v
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn numpy_percentiles_monotone_and_bounded(mut xs in prop::collection::vec(-1e6f64..1e6, 1..300)) {
        let mut sorted = xs.clone();
        sorted.sort_by(f64::total_cmp);
        let (lo, hi) = (sorted[0], sorted[sorted.len() - 1]);
        let mut prev = f64::NEG_INFINITY;
        for p in ps() {
            let v = percentile_linear(&sorted, p).unwrap();
            prop_assert!(v >= prev, "p{p}: {v} < {prev}");
            prop_assert!(v >= lo && v <= hi, "p{p}: {v} outside [{lo}, {hi}]");
            prev = v;
        }
        // The selection-based summary gives the same values as the sorted definition.
        let s = numpy_summary(&mut xs, &ps()).unwrap();
        for (p, v) in s.percentiles {
            prop_assert_eq!(v, percentile_linear(&sorted, p).unwrap());
        }
        prop_assert_eq!((s.min, s.max), (lo, hi));
        prop_assert!(s.mean >= lo - 1e-9 * lo.abs() && s.mean <= hi + 1e-9 * hi.abs());
    }

    #[test]
    fn guidellm_percentiles_monotone_and_bounded(
        pairs in prop::collection::vec((0f64..1e4, 0f64..100.0), 1..200)
    ) {
        let d = WeightedDistribution::from_weighted(&pairs, None);
        if d.values.is_empty() {
            // Every weight was zero → all-uniform fallback never applies to an empty set.
            return Ok(());
        }
        let mut prev = f64::NEG_INFINITY;
        for p in ps() {
            let v = d.percentile(p).unwrap();
            prop_assert!(v >= prev);
            prop_assert!(v >= d.min && v <= d.max);
            prev = v;
        }
        prop_assert!(d.mean >= d.min - 1e-9 && d.mean <= d.max + 1e-9);
        prop_assert_eq!(d.median, d.percentile(50.0).unwrap());
    }

    #[test]
    fn streaming_within_bound_of_exact(ns in prop::collection::vec(0u64..2_000_000_000_000, 1..400)) {
        let mut s = Streaming::new();
        for &v in &ns {
            s.record(Duration::from_nanos(v));
        }
        let mut sorted = ns.clone();
        sorted.sort_unstable();
        let n = sorted.len();
        let bound = 1.0 + 1.0 / 1024.0;
        let mut prev = Duration::ZERO;
        for p in ps_small() {
            let got = s.percentile(p).unwrap();
            prop_assert!(got >= prev, "not monotone at p{p}");
            prop_assert!(
                got >= s.min().unwrap() && got <= s.max().unwrap(),
                "p{p}: {got:?} outside the summary's own [min, max]"
            );
            prev = got;
            if p == 0.0 {
                continue; // p0 is the bucket's lowest value, checked with min below
            }
            let k = ((p / 100.0 * n as f64).ceil() as usize).max(1);
            let exact = sorted[k - 1] as f64;
            let g = got.as_nanos() as f64;
            prop_assert!(g >= exact && g <= exact * bound + 1.0, "p{p}: {g} vs x({k}) = {exact}");
        }
        let (lo, hi) = (sorted[0] as f64, sorted[n - 1] as f64);
        let min = s.min().unwrap().as_nanos() as f64;
        let max = s.max().unwrap().as_nanos() as f64;
        prop_assert!(min <= lo && min >= lo / bound - 1.0);
        prop_assert!(max >= hi && max <= hi * bound + 1.0);
        let exact_mean = sorted.iter().map(|&v| v as f64).sum::<f64>() / n as f64;
        let mean = s.mean_ns().unwrap();
        prop_assert!((mean - exact_mean).abs() <= exact_mean / 2048.0 * (1.0 + 1e-9) + 1.0,
            "mean {mean} vs {exact_mean}");
        prop_assert_eq!(s.count(), n as u64);
    }
}

proptest! {
    // Deflate round trips are slow in debug builds: fewer cases.
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn merged_histograms_equal_the_union(
        a in prop::collection::vec(0u64..10_000_000_000, 0..200),
        b in prop::collection::vec(0u64..10_000_000_000, 0..200),
    ) {
        let rec = |xs: &[u64]| {
            let mut s = Streaming::new();
            for &v in xs { s.record(Duration::from_nanos(v)); }
            s
        };
        let mut merged = rec(&a);
        // Through the wire format, as another process would receive it.
        let other = Streaming::from_bytes(&rec(&b).to_bytes().unwrap()).unwrap();
        merged.merge(&other).unwrap();
        let mut all = a.clone();
        all.extend(&b);
        let union = rec(&all);
        prop_assert_eq!(merged.count(), union.count());
        for p in ps_small() {
            prop_assert_eq!(merged.percentile(p), union.percentile(p));
        }
        prop_assert_eq!(merged.mean_ns(), union.mean_ns());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// `ExactFigures::peak_in_flight` against its definition, brute force: the most
    /// half-open `[send, end)` intervals (end = `ended_at`, else the last chunk, else the
    /// send) containing one instant; the maximum is reached at some send time.
    #[test]
    fn peak_in_flight_equals_brute_force(
        reqs in prop::collection::vec(
            (0u64..2_000, prop::option::of(0u64..1_500), prop::collection::vec(0u64..1_500, 0..4), any::<bool>()),
            0..40,
        )
    ) {
        use servebench::record::{Chunk, ErrorKind, Outcome, RequestRecord};
        let records: Vec<RequestRecord> = reqs
            .iter()
            .enumerate()
            .map(|(i, (sent, ended, chunks, failed))| {
                let mut r = RequestRecord::new(i as u64, Duration::from_millis(*sent));
                let mut at: Vec<u64> = chunks.iter().map(|c| sent + c).collect();
                at.sort_unstable();
                r.chunks = at.iter().map(|&t| Chunk { at: Duration::from_millis(t), tokens: 1 }).collect();
                r.ended_at = ended.map(|e| Duration::from_millis(sent + e));
                if *failed {
                    r.outcome = Outcome::Error { kind: ErrorKind::Other, message: "x".into() };
                }
                r
            })
            .collect();
        let end = |r: &RequestRecord| {
            r.ended_at.or(r.chunks.last().map(|c| c.at)).unwrap_or(r.sent_at)
        };
        let brute = records
            .iter()
            .map(|t| {
                records
                    .iter()
                    .filter(|r| r.sent_at <= t.sent_at && t.sent_at < end(r))
                    .count() as u64
            })
            .max()
            .unwrap_or(0);
        let got = servebench::metrics::exact_figures(&records).peak_in_flight.unwrap();
        prop_assert_eq!(got, brute);
    }
}
