//! Tests of the one-walk vLLM path against the reference computation.

use super::figures::*;
use super::*;
use crate::metrics::{vllm_figures_reference, Slo};
use crate::metrics::{MetricsOptions, VllmFigures};
use crate::record::RequestRecord;
use crate::record::{ErrorKind, Outcome};
use crate::result::Convention;
use crate::stats::SummaryRanks;
use proptest::prelude::*;
use std::time::Duration;

/// Both figure sets, every f64 compared by its bits (via `{:?}`, which prints the
/// shortest round-trip form and the sign of zero).
fn same(a: &VllmFigures, b: &VllmFigures) -> Result<(), TestCaseError> {
    prop_assert_eq!(format!("{a:?}"), format!("{b:?}"));
    Ok(())
}

#[derive(Debug, Clone)]
struct Req {
    sent: u64,
    gaps: Vec<(u64, u32)>,
    first: u64,
    ok: bool,
    ended: Option<u64>,
    usage: Option<u64>,
    prompt: Option<u64>,
}

fn build(reqs: &[Req], scale: u64) -> Vec<RequestRecord> {
    reqs.iter()
        .enumerate()
        .map(|(i, q)| {
            let mut r = RequestRecord::new(i as u64, Duration::from_nanos(q.sent * scale));
            let mut t = q.sent * scale + q.first;
            r.chunks = q
                .gaps
                .iter()
                .map(|&(g, tokens)| {
                    // Gaps ≥ 2^63 stand for "go back": an out-of-order chunk.
                    if g >> 63 == 1 {
                        t = t.saturating_sub(g & 0xffff_ffff);
                    } else {
                        t += g;
                    }
                    Chunk {
                        at: Duration::from_nanos(t),
                        tokens,
                    }
                })
                .collect();
            r.ended_at = q.ended.map(|e| Duration::from_nanos(t + e));
            r.usage_output_tokens = q.usage;
            r.prompt_tokens = q.prompt;
            if !q.ok {
                r.outcome = Outcome::Error {
                    kind: ErrorKind::StreamCut,
                    message: "cut".into(),
                };
            }
            r
        })
        .collect()
}

fn gap() -> impl Strategy<Value = u64> {
    prop_oneof![
        6 => 0u64..60_000_000,
        1 => Just(0u64),
        1 => 900_000_000u64..1_100_000_000,
        1 => 4_000_000_000u64..9_000_000_000,
        1 => (0..50_000_000u64).prop_map(|g| (1u64 << 63) | g),
    ]
}

fn req() -> impl Strategy<Value = Req> {
    (
        0u64..3_000,
        prop::collection::vec((gap(), prop_oneof![4 => Just(1u32), 1 => 0u32..5]), 0..60),
        0u64..500_000_000,
        prop::bool::weighted(0.9),
        prop::option::of(0u64..2_000_000_000),
        prop::option::of(0u64..100),
        prop::option::of(0u64..3_000),
    )
        .prop_map(|(sent, gaps, first, ok, ended, usage, prompt)| Req {
            sent,
            gaps,
            first,
            ok,
            ended,
            usage,
            prompt,
        })
}

fn options(pct: Vec<f64>, slo: bool) -> MetricsOptions {
    let mut o = MetricsOptions::new(Convention::Vllm);
    o.percentiles = pct;
    if slo {
        o.goodput = Some(Slo {
            ttft_ms: Some(250.0),
            tpot_ms: Some(20.0),
            ..Slo::default()
        });
    }
    o
}

fn check(records: &[RequestRecord], opts: &MetricsOptions) -> Result<(), TestCaseError> {
    let want = vllm_figures_reference(records, opts);
    // Both thread counts; the sample's prediction on, off, and for the first rank only
    // (so ranks are found by the walk, by the second walk, and by both).
    for (parallel, predict) in [
        (usize::MAX, usize::MAX),
        (0, usize::MAX),
        (0, 0),
        (usize::MAX, 1),
    ] {
        match vllm_figures_with(records, opts, parallel, predict) {
            Some(got) => same(&got, &want)?,
            None => {
                // Only inputs outside the one-pass method's scope may decline.
                let huge = |d: Duration| d.as_secs() >> SECS_LIMIT_BITS != 0;
                let odd = records.iter().any(|r| {
                    huge(r.sent_at)
                        || r.chunks.iter().any(|c| c.at < r.sent_at || huge(c.at))
                        || r.ended_at.is_some_and(huge)
                });
                // Or a span of more than 2^20 cells of 1 ms.
                let long = records
                    .iter()
                    .flat_map(|r| {
                        let chunks = r.chunks.iter().map(|c| c.at);
                        std::iter::once(r.sent_at).chain(r.ended_at).chain(chunks)
                    })
                    .max()
                    .is_some_and(|t| t >= Duration::from_secs(1 << 10));
                prop_assert!(odd || long, "declined an ordinary input");
            }
        }
    }
    let res = crate::metrics::compute(records, opts);
    prop_assert_eq!(
        format!("{res:?}"),
        format!(
            "{:?}",
            crate::metrics::compute_vllm_reference(records, opts)
        )
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn one_pass_equals_reference(
        reqs in prop::collection::vec(req(), 0..30),
        scale in prop::sample::select(vec![1u64, 1_000, 1_000_000, 1_000_000_000]),
        pct in prop::sample::select(vec![
            vec![99.0],
            vec![],
            vec![0.0, 50.0, 100.0],
            vec![25.0, 99.9, 101.0, -1.0, f64::NAN, 1.0, 99.0],
        ]),
        slo in any::<bool>(),
    ) {
        let records = build(&reqs, scale);
        check(&records, &options(pct, slo))?;
    }
}

fn plain_req() -> impl Strategy<Value = Req> {
    (
        0u64..2_000,
        prop::collection::vec(
            (
                prop_oneof![8 => 0u64..60_000_000, 1 => Just(0u64), 1 => Just(5_000_000u64)],
                prop_oneof![9 => Just(1u32), 1 => 0u32..5],
            ),
            1..120,
        ),
        0u64..400_000_000,
        prop::bool::weighted(0.95),
        prop::option::of(0u64..1_000_000),
        prop::option::of(1u64..200),
    )
        .prop_map(|(sent, gaps, first, ok, ended, usage)| Req {
            sent,
            gaps,
            first,
            ok,
            ended,
            usage,
            prompt: Some(100),
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Runs large enough for the two-thread split (> 512 gaps), ordinary gaps.
    #[test]
    fn one_pass_equals_reference_on_split_runs(
        reqs in prop::collection::vec(plain_req(), 8..40),
        scale in prop::sample::select(vec![1_000u64, 1_000_000]),
        pct in prop::sample::select(vec![vec![99.0], vec![0.0, 10.0, 50.0, 90.0, 99.0, 99.9, 100.0]]),
    ) {
        let records = build(&reqs, scale);
        let opts = options(pct, true);
        let want = vllm_figures_reference(&records, &opts);
        for predict in [usize::MAX, 0, 2] {
            let got = vllm_figures_with(&records, &opts, 0, predict);
            prop_assert!(got.is_some(), "declined an ordinary run");
            if let Some(got) = got {
                same(&got, &want)?;
            }
        }
    }
}

#[test]
fn edge_cases() {
    let ms = Duration::from_millis;
    let chunk = |t: u64, tokens: u32| Chunk { at: ms(t), tokens };
    let mut cases: Vec<Vec<RequestRecord>> = vec![Vec::new()];
    // One request, one chunk.
    let mut r = RequestRecord::new(0, ms(5));
    r.chunks = vec![chunk(10, 1)];
    cases.push(vec![r.clone()]);
    // Only failures; a success without chunks.
    let mut f = r.clone();
    f.outcome = Outcome::Incomplete { reason: "x".into() };
    cases.push(vec![f.clone(), RequestRecord::new(1, ms(3))]);
    // Zero gaps only.
    let mut z = RequestRecord::new(0, ms(0));
    z.chunks = vec![chunk(7, 1); 300];
    cases.push(vec![z.clone(), f]);
    // Huge times: past 2^34 s (the reference path) and a chunk 146 billion years out.
    let mut h = z.clone();
    h.chunks.push(Chunk {
        at: Duration::from_secs(u64::MAX / 4),
        tokens: 1,
    });
    cases.push(vec![h, r.clone()]);
    let mut h = z.clone();
    h.sent_at = Duration::from_secs(1 << 40);
    cases.push(vec![h]);
    // Usage of u64::MAX tokens.
    let mut u = r.clone();
    u.usage_output_tokens = Some(u64::MAX);
    u.usage_prompt_tokens = Some(u64::MAX);
    cases.push(vec![u.clone(), u]);
    // A long run without `ended_at`: the cells grow while walking.
    let recs: Vec<RequestRecord> = (0..2000u64)
        .map(|i| {
            let mut r = RequestRecord::new(i, ms(i));
            r.chunks = (0..50)
                .map(|j| chunk(i + j * j * 300, 1 + (j % 3) as u32))
                .collect();
            r
        })
        .collect();
    cases.push(recs);
    for records in &cases {
        for pct in [vec![99.0], vec![0.0, 50.0, 100.0, 200.0]] {
            let opts = options(pct, true);
            if let Err(e) = check(records, &opts) {
                panic!("{e}");
            }
        }
    }
}

/// On a run of ordinary size, the sample's ranges hold every wanted rank (so the walk
/// finds them all, without the second walks) and only a small share of the gaps.
#[test]
fn the_sample_predicts_the_ranks_of_a_large_run() {
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let records: Vec<RequestRecord> = (0..3000u64)
        .map(|i| {
            let mut r = RequestRecord::new(i, Duration::from_millis(i * 7));
            let mut t = r.sent_at.as_nanos() as u64 + 50_000_000 + next() % 200_000_000;
            r.chunks = (0..100)
                .map(|_| {
                    // Mostly 20–40 ms, a tail to 400 ms.
                    let g = 20_000_000 + next() % 20_000_000;
                    t += if next() % 50 == 0 { g * 10 } else { g };
                    Chunk {
                        at: Duration::from_nanos(t),
                        tokens: 1 + (next() % 3) as u32,
                    }
                })
                .collect();
            r
        })
        .collect();
    let opts = options(vec![50.0, 90.0, 99.0, 99.9], false);
    let mut gaps: Vec<u64> = records
        .iter()
        .flat_map(|r| r.chunks.windows(2))
        .map(|w| (w[1].at - w[0].at).as_nanos() as u64)
        .collect();
    gaps.sort_unstable();
    let ranks = SummaryRanks::new(gaps.len(), &opts.percentiles);
    let gaps_of: Vec<u32> = records.iter().map(gap_mark).collect();
    let groups = predict_groups(&records, &gaps_of, gaps.len(), &ranks.ranks, usize::MAX);
    assert!(
        !groups.is_empty() && groups.len() <= MAX_GROUPS,
        "{groups:?}"
    );
    for &r in &ranks.ranks {
        assert!(
            groups.iter().any(|g| g.contains(gaps[r])),
            "rank {r} missed"
        );
    }
    let inside = gaps
        .iter()
        .filter(|&&g| groups.iter().any(|x| x.contains(g)))
        .count();
    assert!(inside * 10 < gaps.len(), "{inside} of {} kept", gaps.len());
    if let Err(e) = check(&records, &opts) {
        panic!("{e}");
    }
}

#[test]
fn secs_f64_is_as_secs_f64() {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    for i in 0..200_000u64 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let v = match i % 4 {
            0 => x % 1_000_000_000,
            1 => x % 10_000_000_000,
            2 => x >> (x % 64),
            _ => i,
        };
        let d = Duration::from_nanos(v);
        assert_eq!(secs_f64(v).to_bits(), d.as_secs_f64().to_bits(), "{v}");
    }
}

#[test]
fn histogram_buckets_are_monotone_and_in_range() {
    let mut prev = 0;
    let mut g: u64 = 0;
    while g <= u64::from(u32::MAX) {
        let b = hbucket(g as u32);
        assert!(b >= prev && b < HBUCKETS, "{g}");
        let (lo, width) = bucket_values(b);
        if g < u64::from(ESCAPE) {
            assert!((g as u32).wrapping_sub(lo) <= width, "{g} in bucket {b}");
        }
        if lo > 0 {
            assert_ne!(hbucket(lo - 1), b, "below bucket {b}");
        }
        if let Some(above) = lo.checked_add(width).and_then(|x| x.checked_add(1)) {
            if above != ESCAPE {
                assert_ne!(hbucket(above), b, "above bucket {b}");
            }
        }
        prev = b;
        g += 1 + g / 4096;
    }
    assert_eq!(hbucket(u32::MAX), HBUCKETS - 1);
}
