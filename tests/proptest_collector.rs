//! Collector properties: no event is lost when many threads record concurrently (exact
//! counts), and merging two collectors equals one collector over the union.

use std::collections::HashMap;
use std::time::Duration;

use proptest::prelude::*;
use servebench::collector::{Collector, CollectorOptions, ManualClock};
use servebench::engine::Usage;
use servebench::metrics::VllmHistograms as LatencyHistograms;
use servebench::record::{ErrorKind, Outcome};

/// How a generated request ends.
#[derive(Debug, Clone, Copy, PartialEq)]
enum End {
    Finish,
    Fail,
    Cancel,
    Drop,
}

fn end_of(i: usize) -> End {
    [End::Finish, End::Fail, End::Cancel, End::Drop][i % 4]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    #[test]
    fn no_event_lost_with_concurrent_threads(
        threads in 1usize..8,
        per_thread in 1usize..150,
        chunk_counts in prop::collection::vec(0u32..24, 1..32),
        tokens_per_chunk in 1u32..5,
    ) {
        let c = Collector::new();
        // Each thread returns what it recorded: id → (chunks, tokens, how it ended).
        let expected: Vec<HashMap<u64, (usize, u64, End)>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..threads)
                .map(|t| {
                    let c = &c;
                    let chunk_counts = &chunk_counts;
                    s.spawn(move || {
                        let mut mine = HashMap::new();
                        for i in 0..per_thread {
                            let k = chunk_counts[(t * 7 + i) % chunk_counts.len()] as usize;
                            let mut h = c.begin();
                            for _ in 0..k {
                                h.chunk(tokens_per_chunk);
                            }
                            let end = end_of(t + i);
                            mine.insert(h.id(), (k, k as u64 * u64::from(tokens_per_chunk), end));
                            match end {
                                End::Finish => h.finish(Usage::default()),
                                End::Fail => h.fail(ErrorKind::Timeout, "t"),
                                End::Cancel => h.cancel("c"),
                                End::Drop => drop(h),
                            }
                        }
                        mine
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let all: HashMap<u64, (usize, u64, End)> = expected.into_iter().flatten().collect();
        let n = threads * per_thread;
        prop_assert_eq!(all.len(), n, "ids are unique");

        let snap = c.snapshot();
        let count = |e: End| all.values().filter(|v| v.2 == e).count() as u64;
        prop_assert_eq!(snap.started, n as u64);
        prop_assert_eq!(snap.in_flight, 0);
        prop_assert_eq!(snap.succeeded, count(End::Finish));
        prop_assert_eq!(snap.failed, count(End::Fail));
        prop_assert_eq!(snap.incomplete, count(End::Cancel) + count(End::Drop));
        prop_assert_eq!(snap.output_tokens, all.values().map(|v| v.1).sum::<u64>());
        prop_assert_eq!(snap.chunks, all.values().map(|v| v.0 as u64).sum::<u64>());

        let records = c.into_records();
        prop_assert_eq!(records.len(), n);
        for (i, r) in records.iter().enumerate() {
            prop_assert_eq!(r.id, i as u64, "sorted by id, none missing");
            let (k, tokens, end) = all[&r.id];
            prop_assert_eq!(r.chunks.len(), k);
            prop_assert_eq!(r.client_output_tokens(), tokens);
            prop_assert!(r.chunks.windows(2).all(|w| w[0].at <= w[1].at), "monotonic clock");
            let ok = match end {
                End::Finish => r.outcome == Outcome::Success,
                End::Fail => matches!(r.outcome, Outcome::Error { kind: ErrorKind::Timeout, .. }),
                End::Cancel | End::Drop => matches!(r.outcome, Outcome::Incomplete { .. }),
            };
            prop_assert!(ok, "record {} ended as {:?}, expected {:?}", r.id, r.outcome, end);
            prop_assert!(r.ended_at.is_some());
        }
    }

    #[test]
    fn merged_collectors_equal_one_over_the_union(
        reqs in prop::collection::vec(
            (0u64..5_000, prop::collection::vec((1u64..400, 1u32..4), 0..12), 0usize..4, prop::bool::ANY),
            0..60,
        ),
    ) {
        let opts = CollectorOptions { keep_records: true, histograms: true };
        let a = Collector::<_, LatencyHistograms>::with_accumulator(ManualClock::new(), opts);
        let b = Collector::<_, LatencyHistograms>::with_accumulator(ManualClock::new(), opts);
        let union = Collector::<_, LatencyHistograms>::with_accumulator(ManualClock::new(), opts);
        let ms = Duration::from_millis;
        for (id, (sent, gaps, end, to_a)) in reqs.iter().enumerate() {
            for c in [if *to_a { &a } else { &b }, &union] {
                let mut h = c.begin_with_id(id as u64, ms(*sent));
                let mut t = *sent;
                for &(gap, tokens) in gaps {
                    t += gap;
                    h.chunk_at(ms(t), tokens);
                }
                let at = ms(t + 1);
                match end_of(*end) {
                    End::Finish => h.finish_at(at, Usage { prompt_tokens: Some(10), completion_tokens: None }),
                    End::Fail => h.fail_at(at, ErrorKind::HttpStatus, "500"),
                    End::Cancel => h.cancel_at(at, "end of run"),
                    End::Drop => drop(h),
                }
            }
        }
        // B travels as JSON, as if from another load machine.
        let wire = serde_json::to_string(&b.export().unwrap()).unwrap();
        a.absorb(serde_json::from_str(&wire).unwrap()).unwrap();

        prop_assert_eq!(a.records(), union.records());
        let (sa, su) = (a.snapshot(), union.snapshot());
        prop_assert_eq!(
            (sa.started, sa.in_flight, sa.succeeded, sa.failed, sa.incomplete, sa.output_tokens, sa.chunks),
            (su.started, su.in_flight, su.succeeded, su.failed, su.incomplete, su.output_tokens, su.chunks)
        );
        let (ha, hu): (LatencyHistograms, LatencyHistograms) =
            (a.histograms().unwrap().unwrap(), union.histograms().unwrap().unwrap());
        prop_assert_eq!((ha.requests, ha.output_tokens), (hu.requests, hu.output_tokens));
        for (x, y) in [(&ha.ttft, &hu.ttft), (&ha.tpot, &hu.tpot), (&ha.itl, &hu.itl), (&ha.e2el, &hu.e2el)] {
            prop_assert_eq!(x.count(), y.count());
            for p in [0.0, 1.0, 50.0, 90.0, 99.0, 100.0] {
                prop_assert_eq!(x.percentile(p), y.percentile(p));
            }
            prop_assert_eq!(x.mean_ns(), y.mean_ns());
        }
    }
}
