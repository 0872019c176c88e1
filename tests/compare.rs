//! The comparison outputs against the seed document: every figure of its tables, its
//! summary sentence and its recommended configuration, from the seed's own blocks.

use approx::assert_abs_diff_eq;
use proptest::prelude::*;
use servebench::compare::gpustack::{
    conclusion_row, optimization_ladder, requests_sent, speed_summary, Annotation, Cell,
    ConclusionTable, Verdict,
};
use servebench::compare::{compare, Delta, Direction, METRICS};
use servebench::format::doc::{self, Role};
use servebench::format::gpustack::serving_command;
use servebench::result::{BenchmarkResult, Summary};

const SEED: &str = include_str!("fixtures/seed.txt");

/// A seed block: its result (run metadata attached) and its document context.
struct Block {
    result: BenchmarkResult,
    ctx: doc::BlockContext,
}

/// The seed's 15 blocks as `format::doc` reads them.
fn seed_blocks() -> Vec<Block> {
    doc::parse(SEED)
        .unwrap()
        .into_iter()
        .map(|b| Block {
            result: b.result,
            ctx: b.context,
        })
        .collect()
}

fn by_label<'a>(blocks: &'a [Block], label: &str) -> &'a BenchmarkResult {
    &blocks
        .iter()
        .find(|b| b.result.meta.label.as_deref() == Some(label))
        .unwrap_or_else(|| panic!("no block labelled {label}"))
        .result
}

/// The seed's lines from the one equal to `first` on, `n` of them.
fn seed_lines(first: &str, n: usize) -> Vec<&'static str> {
    let i = SEED.lines().position(|l| l == first).unwrap();
    SEED.lines().skip(i).take(n).collect()
}

#[test]
fn conclusion_table_reproduces_the_seed_byte_for_byte() {
    let blocks = seed_blocks();
    let base: Vec<&Block> = blocks
        .iter()
        .filter(|b| b.ctx.role == Some(Role::Baseline))
        .collect();
    let opt: Vec<&Block> = blocks
        .iter()
        .filter(|b| b.ctx.role == Some(Role::Optimized))
        .collect();
    assert_eq!(base.len(), 4);
    assert_eq!(opt.len(), 4);
    let rows = base
        .iter()
        .zip(&opt)
        .map(|(b, o)| {
            // The table names each case after its profile ("ShareGPT Profile"), also where
            // the section heading says only "ShareGPT".
            let profile = b.result.meta.profile.as_ref().unwrap();
            conclusion_row(
                &format!("{} Profile", profile.title()),
                &b.result,
                &o.result,
            )
        })
        .collect();
    let table = ConclusionTable::new(rows);
    let expected = seed_lines(
        "Benchmark Case\tbaseline (vLLM without any optimizations)\tOptimized",
        5,
    );
    let generated = table.text();
    assert_eq!(generated.lines().collect::<Vec<_>>(), expected);
    let percents: Vec<String> = table
        .rows
        .iter()
        .map(|r| r.optimized.annotation.unwrap().text())
        .collect();
    assert_eq!(
        percents,
        ["(+9.75%)", "(+33.03%)", "(+25.41%)", "(+17.25%)"]
    );
}

#[test]
fn conclusion_row_markdown_is_gpustacks() {
    let blocks = seed_blocks();
    let row = conclusion_row(
        "ShareGPT Profile",
        by_label(&blocks, "ShareGPT (baseline)"),
        by_label(&blocks, "ShareGPT (optimized)"),
    );
    assert_eq!(
        row.markdown(),
        "| **ShareGPT Profile** | Total TPS: 9632.01<br>Mean TPOT(ms): 25.89 | Total TPS: 10570.88 \
         <span style=\"background-color:lightgreen;\">(+9.75%)</span><br>Mean TPOT(ms): 24.71 |"
    );
    // Swapped, the change is negative and the span turns red.
    let back = conclusion_row(
        "ShareGPT Profile",
        by_label(&blocks, "ShareGPT (optimized)"),
        by_label(&blocks, "ShareGPT (baseline)"),
    );
    assert_eq!(
        back.optimized.markdown(),
        "Total TPS: 9632.01 <span style=\"background-color:#ffd6d6;\">(-8.88%)</span><br>Mean TPOT(ms): 25.89"
    );
    let md = ConclusionTable::new(vec![row]).markdown();
    assert!(md.starts_with(
        "| Benchmark Case | baseline (vLLM without any optimizations) | Optimized |\n|----------|-------------------------------------------|-----------|\n| **ShareGPT Profile** |"
    ));
}

/// The seed's "Summary of Optimization Options" ladder: the five steps after the engine
/// baseline, each against the vLLM baseline.
#[test]
fn optimization_ladder_reproduces_the_seed_table_and_skips() {
    let blocks = seed_blocks();
    let baseline = by_label(&blocks, "vLLM");
    let steps: Vec<(&str, &BenchmarkResult)> = blocks
        .iter()
        .filter(|b| b.ctx.engine.is_none() && b.ctx.role.is_none())
        .map(|b| (b.ctx.heading.as_deref().unwrap(), &b.result))
        .collect();
    assert_eq!(steps.len(), 5);
    let ladder = optimization_ladder(baseline, &steps);
    let generated = ladder.text();
    let generated: Vec<&str> = generated.lines().collect();
    let expected = seed_lines("Benchmark Cases\tOptimized\tBaseline", 6);
    assert_eq!(generated.len(), expected.len());
    for (i, (g, e)) in generated.iter().zip(&expected).enumerate() {
        if i == 4 {
            // The seed's KV-cache row names the options in another order than its own
            // section heading ("… && Prefix Cache && Performance Mode && …"): a hand edit.
            // The figures and the skip note match byte for byte; the names hold the same options.
            let (gn, gr) = g.split_once('\t').unwrap();
            let (en, er) = e.split_once('\t').unwrap();
            assert_eq!(gr, er);
            let mut a: Vec<&str> = gn.split(" && ").collect();
            let mut b: Vec<&str> = en.split(" && ").collect();
            a.sort_unstable();
            b.sort_unstable();
            assert_eq!(a, b);
        } else {
            assert_eq!(g, e, "row {i}");
        }
    }
    let notes: Vec<String> = ladder
        .steps
        .iter()
        .map(|s| s.optimized.annotation.unwrap().text())
        .collect();
    assert_eq!(
        notes,
        [
            "(+3.23%)",
            "(+7.34%)",
            "(+8.47%)",
            "(+7.60%,lower than previous +8.47%, optimization skipped in final command)",
            "(Success rate: 51.6%, optimization skipped)",
        ]
    );
    assert_eq!(ladder.steps[0].verdict, Verdict::Accepted);
    assert!(matches!(
        ladder.steps[3].verdict,
        Verdict::SkippedLowerThanPrevious { previous_percent } if (previous_percent - 8.4667).abs() < 1e-3
    ));
    match ladder.steps[4].verdict {
        Verdict::SkippedSuccessRate { success_rate } => {
            assert_abs_diff_eq!(success_rate, 0.516, epsilon = 1e-12)
        }
        v => panic!("{v:?}"),
    }
    assert_eq!(
        ladder.recommended().unwrap().name,
        "Performance Mode && Prefix Cache && Quantization"
    );
}

#[test]
fn success_rate_total_comes_from_the_profile_else_the_baseline() {
    let blocks = seed_blocks();
    let baseline = by_label(&blocks, "vLLM");
    let mut mtp = by_label(&blocks, "Speculative Decoding && Quantization").clone();
    assert_eq!(mtp.meta.profile.as_ref().unwrap().total_requests, 1000);
    let with_profile = Cell::candidate(baseline, &mtp).annotation.unwrap();
    mtp.meta.profile = None;
    let mut bare_base = baseline.clone();
    bare_base.meta.profile = None;
    let from_baseline = Cell::candidate(&bare_base, &mtp).annotation.unwrap();
    assert_eq!(with_profile, from_baseline);
    assert_eq!(
        with_profile.markdown(),
        "<span style=\"background-color:#ffd6d6;\">(Success rate: 51.6%, optimization skipped)</span>"
    );
    // A full run is not skipped.
    let full = Cell::candidate(baseline, by_label(&blocks, "Quantization"));
    assert_eq!(full.annotation.unwrap().text(), "(+3.23%)");
}

#[test]
fn final_configuration_is_the_seeds_serving_command() {
    let blocks = seed_blocks();
    let baseline = by_label(&blocks, "vLLM");
    let steps: Vec<(&str, &BenchmarkResult)> = blocks[2..7]
        .iter()
        .map(|b| (b.ctx.heading.as_deref().unwrap(), &b.result))
        .collect();
    let ladder = optimization_ladder(baseline, &steps);
    let params = ladder.final_parameters();
    assert!(!params
        .iter()
        .any(|p| p.contains("kv-cache-dtype") || p.contains("speculative")));
    let cmd = serving_command("vLLM", "Qwen/Qwen3.5-35B-A3B-FP8", &params);
    let expected = seed_lines("vllm serve Qwen/Qwen3.5-35B-A3B-FP8 \\", 5).join("\n");
    assert_eq!(cmd, expected);
}

#[test]
fn final_configuration_accumulates_delta_style_steps() {
    let run = |tps: f64, params: &[&str]| {
        let mut r = BenchmarkResult {
            successful_requests: Some(10),
            total_token_throughput_per_s: Some(tps),
            ..Default::default()
        };
        r.meta.backend_parameters = params.iter().map(|s| s.to_string()).collect();
        r
    };
    let base = run(100.0, &["--max-model-len=8192"]);
    let a = run(110.0, &["--enable-prefix-caching"]);
    let b = run(90.0, &["--kv-cache-dtype=fp8"]); // below the best: skipped
    let c = run(120.0, &["--max-model-len=32768", "--async-scheduling"]);
    let ladder = optimization_ladder(&base, &[("A", &a), ("B", &b), ("C", &c)]);
    assert_eq!(
        ladder.final_parameters(),
        [
            "--enable-prefix-caching",
            "--max-model-len=32768",
            "--async-scheduling"
        ]
    );
    assert_eq!(
        ladder.steps[1].optimized.text(),
        "Total TPS: 90.00 (-10.00%,lower than previous +10.00%, optimization skipped in final command) Mean TPOT(ms): N/A"
    );
    // A first step below the baseline is skipped with a plain red change.
    let l = optimization_ladder(&base, &[("B", &b)]);
    assert_eq!(l.steps[0].verdict, Verdict::SkippedBelowBaseline);
    assert_eq!(l.best, None);
    assert_eq!(l.final_parameters(), ["--max-model-len=8192"]);
    assert!(l.markdown().contains("#ffd6d6;\">(-10.00%)</span>"));
}

#[test]
fn ladder_markdown_matches_the_generators_form() {
    let blocks = seed_blocks();
    let steps: Vec<(&str, &BenchmarkResult)> = blocks[2..7]
        .iter()
        .map(|b| (b.ctx.heading.as_deref().unwrap(), &b.result))
        .collect();
    let md = optimization_ladder(&blocks[0].result, &steps).markdown();
    let lines: Vec<&str> = md.lines().collect();
    assert_eq!(lines[0], "| Benchmark Cases | Optimized | Baseline |");
    assert_eq!(
        lines[2],
        "| Quantization | Total TPS: 9942.93 <span style=\"background-color:lightgreen;\">(+3.23%)</span><br>Mean TPOT(ms): 24.85 | Total TPS: 9632.01<br>Mean TPOT(ms): 25.89 |"
    );
    assert!(lines[5].contains(
        "<span style=\"background-color:yellow;\">(+7.60%,lower than previous +8.47%, optimization skipped in final command)</span><br>"
    ));
}

#[test]
fn summary_sentence_is_the_generators_not_the_seeds_hand_edit() {
    let blocks = seed_blocks();
    let s = speed_summary(&[
        ("vLLM", by_label(&blocks, "vLLM")),
        ("SGLang", by_label(&blocks, "SGLang")),
    ])
    .unwrap();
    assert_eq!(
        s.sentence(),
        "`vLLM` Total TPS = 9632.01, `SGLang` Total TPS = 4995.66. `vLLM` is faster by 4636.35 tok/s \
         (92.81%); Mean TPOT = 25.89 ms vs 180.73 ms, reduced by 154.84 ms (85.67%)."
    );
    assert_eq!(s.markdown(), format!("- Summary: {}", s.sentence()));
    let seed_line = SEED.lines().find(|l| l.starts_with("Summary: ")).unwrap();
    // The seed's sentence was edited by hand ("4,636.35 tok/s (92.8%)"); apart from that
    // fragment, it is the generator's text with markup removed.
    assert_ne!(s.text(), seed_line);
    assert_eq!(
        s.text(),
        seed_line.replace("4,636.35 tok/s (92.8%)", "4636.35 tok/s (92.81%)")
    );
    // Order of the input does not matter.
    let r = speed_summary(&[
        ("SGLang", by_label(&blocks, "SGLang")),
        ("vLLM", by_label(&blocks, "vLLM")),
    ])
    .unwrap();
    assert_eq!(r, s);
}

#[test]
fn summary_sentence_increased_and_unchanged_variants() {
    let run = |tps: f64, tpot: f64| BenchmarkResult {
        total_token_throughput_per_s: Some(tps),
        tpot: Some(Summary {
            mean: Some(tpot),
            ..Default::default()
        }),
        ..Default::default()
    };
    let (a, b) = (run(10570.88, 24.71), run(10447.52, 25.56));
    let s = speed_summary(&[("PM", &b), ("PM+async", &a)]).unwrap();
    assert!(s
        .sentence()
        .ends_with("; Mean TPOT = 24.71 ms vs 25.56 ms, reduced by 0.85 ms (3.33%)."));
    let (c, d) = (run(200.0, 198.01), run(100.0, 179.88));
    let s = speed_summary(&[("slow", &d), ("fast", &c)]).unwrap();
    assert_eq!(
        s.sentence(),
        "`fast` Total TPS = 200.00, `slow` Total TPS = 100.00. `fast` is faster by 100.00 tok/s \
         (100.00%); Mean TPOT = 198.01 ms vs 179.88 ms, increased by 18.13 ms (10.08% slower)."
    );
    let (e, f) = (run(200.0, 30.0), run(150.0, 30.0));
    let s = speed_summary(&[("e", &e), ("f", &f)]).unwrap();
    assert!(s
        .sentence()
        .ends_with("Mean TPOT = 30.00 ms vs 30.00 ms, unchanged."));
    // Without TPOT the sentence ends after the throughput.
    let g = BenchmarkResult {
        total_token_throughput_per_s: Some(100.0),
        ..Default::default()
    };
    let s = speed_summary(&[("e", &e), ("g", &g)]).unwrap();
    assert!(s.sentence().ends_with("faster by 100.00 tok/s (100.00%)."));
    assert!(speed_summary(&[("e", &e)]).is_none());
}

#[test]
fn metric_comparison_of_the_engines() {
    let blocks = seed_blocks();
    let c = compare(by_label(&blocks, "vLLM"), by_label(&blocks, "SGLang"));
    let tps = c
        .metrics
        .iter()
        .find(|m| m.metric.key == "total_token_throughput")
        .unwrap();
    assert_eq!(tps.verdict(), "worse");
    assert_abs_diff_eq!(tps.delta.absolute(), -4636.35, epsilon = 1e-9);
    let tpot = c
        .metrics
        .iter()
        .find(|m| m.metric.key == "mean_tpot_ms")
        .unwrap();
    assert_eq!(tpot.verdict(), "worse");
    let ok = c
        .metrics
        .iter()
        .find(|m| m.metric.key == "successful_requests")
        .unwrap();
    assert_eq!(ok.verdict(), "same");
    let text = c.to_text();
    assert!(text.lines().all(|l| l == l.trim_end()));
    assert!(text.contains("-48.13%"));
    assert!(c
        .to_markdown()
        .contains("| Mean TPOT (ms) | 25.89 | 180.73 | +154.84 | +598.07% | worse |"));
}

#[test]
fn annotation_na_when_a_throughput_is_missing() {
    let base = BenchmarkResult::default();
    let cand = BenchmarkResult {
        total_token_throughput_per_s: Some(5.0),
        ..Default::default()
    };
    let cell = Cell::candidate(&base, &cand);
    assert_eq!(cell.annotation, Some(Annotation::NotAvailable));
    assert_eq!(cell.text(), "Total TPS: 5.00 N/A Mean TPOT(ms): N/A");
}

fn value() -> impl Strategy<Value = f64> {
    prop_oneof![-1e9..1e9f64, 0.0..1e6f64, Just(0.0)]
}

proptest! {
    #[test]
    fn delta_of_a_value_against_itself_is_zero(x in value()) {
        let d = Delta::new(x, x);
        prop_assert_eq!(d.absolute(), 0.0);
        if x != 0.0 {
            let p = d.percent().unwrap();
            assert_abs_diff_eq!(p, 0.0);
        } else {
            prop_assert!(d.percent().is_none());
        }
        for dir in [Direction::HigherIsBetter, Direction::LowerIsBetter] {
            prop_assert!(!d.is_better(dir));
            prop_assert!(!d.is_worse(dir));
        }
    }

    #[test]
    fn better_agrees_with_direction_and_sign(a in value(), b in value()) {
        let d = Delta::new(a, b);
        prop_assert_eq!(d.is_better(Direction::HigherIsBetter), d.absolute() > 0.0);
        prop_assert_eq!(d.is_better(Direction::LowerIsBetter), d.absolute() < 0.0);
        prop_assert_eq!(d.is_better(Direction::HigherIsBetter), d.is_worse(Direction::LowerIsBetter));
        if let Some(p) = d.percent() {
            if a > 0.0 {
                prop_assert_eq!(p > 0.0, d.absolute() > 0.0);
            }
        }
        // Swapping the two runs swaps better and worse.
        let s = Delta::new(b, a);
        for m in METRICS {
            prop_assert_eq!(d.is_better(m.direction), s.is_worse(m.direction));
        }
    }
}

/// vLLM prints `nan` for a statistic of nothing, and the text parser reads it back as NaN:
/// such a row is not comparable, so it must not be called "same" (nor printed as Rust's
/// `NaN`).
#[test]
fn a_nan_value_is_not_same_but_not_comparable() {
    let blocks = seed_blocks();
    let mut base = by_label(&blocks, "vLLM").clone();
    let cand = by_label(&blocks, "SGLang");
    if let Some(ttft) = base.ttft.as_mut() {
        ttft.mean = Some(f64::NAN);
    }
    let c = compare(&base, cand);
    let ttft = c
        .metrics
        .iter()
        .find(|m| m.metric.key == "mean_ttft_ms")
        .unwrap();
    assert_eq!(ttft.verdict(), "N/A");
    assert_eq!(ttft.delta.percent(), None);
    let text = c.to_text();
    let row = text
        .lines()
        .find(|l| l.starts_with("Mean TTFT (ms)"))
        .unwrap();
    assert!(row.contains(" nan ") && !row.contains("NaN"), "{row}");
    assert!(!row.contains("+nan"), "{row}");
    assert!(row.ends_with("N/A"), "{row}");
}

/// Counts come from JSON files: successful + failed must not overflow.
#[test]
fn requests_sent_saturates_on_huge_counts() {
    let r = BenchmarkResult {
        successful_requests: Some(u64::MAX),
        failed_requests: Some(7),
        ..Default::default()
    };
    assert_eq!(requests_sent(&r), Some(u64::MAX));
    let c = Cell::of(&BenchmarkResult {
        total_token_throughput_per_s: Some(f64::NAN),
        ..Default::default()
    });
    // Python's spelling, as the generator would print it.
    assert_eq!(c.text(), "Total TPS: nan Mean TPOT(ms): N/A");
}
