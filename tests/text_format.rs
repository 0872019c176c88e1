//! Integration tests of `servebench::format::text`: the seed's 15 GPUStack blocks and the
//! vLLM fixtures round-trip byte for byte, values and units come out right, blocks are found
//! inside other text, malformed blocks give the right typed error, hand-built results render
//! to the reference layouts, and render → parse → render is the identity (proptest).

use proptest::prelude::*;
use servebench::format::text::{
    canonical_rows, parse, parse_block, render, render_with, Field, Layout, LineEnding, ParseError,
    ParsedBlock, Row, Section, Stat, Style,
};
use servebench::result::{Percentile, Summary};
use servebench::{BenchmarkResult, Convention};

const SEED: &str = include_str!("fixtures/seed.txt");
const ASCEND: &str =
    include_str!("fixtures/vllm/vllm_bench_serve_2026-07_ascend_qwen3vl_report.txt");
const SHAREGPT_E2EL: &str =
    include_str!("fixtures/vllm/vllm_bench_serve_2026-05_sharegpt_e2el_p50-90-95-99_report.txt");

/// The title lines of the seed's blocks (from `grep -n "Serving Benchmark Result"`).
const SEED_TITLE_LINES: [usize; 15] = [
    131, 175, 221, 266, 312, 359, 404, 457, 500, 542, 585, 627, 670, 712, 755,
];

/// Lines `first..=last` (1-based) of `text`, joined with `\n`.
fn lines(text: &str, first: usize, last: usize) -> String {
    text.split('\n')
        .skip(first - 1)
        .take(last - first + 1)
        .collect::<Vec<_>>()
        .join("\n")
}

fn seed_block(i: usize) -> String {
    lines(SEED, SEED_TITLE_LINES[i], SEED_TITLE_LINES[i] + 31)
}

// ---------------------------------------------------------------------------------------
// The seed

#[test]
fn all_15_seed_blocks_parse_and_rerender_byte_exact() {
    let blocks = parse(SEED).expect("seed parses");
    assert_eq!(blocks.len(), 15);
    for (i, b) in blocks.iter().enumerate() {
        assert_eq!(b.start_line, SEED_TITLE_LINES[i], "block {i}");
        assert_eq!(b.end_line, SEED_TITLE_LINES[i] + 31, "block {i}");
        let expected = seed_block(i);
        assert_eq!(&SEED[b.span.clone()], expected, "span of block {i}");
        assert_eq!(b.render(), expected, "block {i}");
        assert_eq!(render(&b.result, Style::Gpustack), expected, "block {i}");
        // Each block alone parses to the same result.
        assert_eq!(
            parse_block(&expected).expect("block parses").result,
            b.result
        );
        let layout = &b.layout;
        assert_eq!(layout.style, Style::Gpustack);
        assert_eq!(layout.rows.len(), 30);
        assert!(layout
            .rows
            .contains(&Row::Field(Field::TotalTokenThroughputCapital)));
        assert_eq!(b.result.meta.convention, Some(Convention::Guidellm));
    }
}

#[test]
fn seed_canonical_gpustack_layout_is_the_seed_layout() {
    // Without the stored layout the canonical GPUStack layout gives the same bytes.
    for (i, b) in parse(SEED).unwrap().into_iter().enumerate() {
        let r = b.result;
        assert_eq!(render(&r, Style::Gpustack), seed_block(i), "block {i}");
    }
}

#[test]
fn seed_values_and_units() {
    let blocks = parse(SEED).unwrap();
    let r = &blocks[0].result; // vLLM baseline, ShareGPT
    assert_eq!(r.successful_requests, Some(1000));
    assert_eq!(r.max_concurrency, Some(512));
    assert_eq!(r.duration_ms, Some(70_720.0));
    assert_eq!(r.total_input_tokens, Some(342_058));
    assert_eq!(r.total_output_tokens, Some(281_412));
    assert_eq!(r.request_throughput_per_s, Some(14.14));
    assert_eq!(r.output_throughput_per_s, Some(4347.55));
    assert_eq!(r.peak_output_throughput_per_s, Some(30_810_010.86));
    assert_eq!(r.peak_concurrent_requests, Some(512.0));
    assert_eq!(r.total_token_throughput_per_s, Some(9632.01));
    assert_eq!(r.failed_requests, None);
    let e2el = r.e2el.as_ref().unwrap();
    // Seconds in the text, ms inside.
    assert_eq!(e2el.mean, Some(30_190.0));
    assert_eq!(e2el.median, Some(27_480.0));
    assert_eq!(e2el.percentile(95.0), Some(60_730.0));
    assert_eq!(e2el.percentile(99.0), Some(65_370.0));
    let ttft = r.ttft.as_ref().unwrap();
    assert_eq!(ttft.mean, Some(4072.64));
    assert_eq!(ttft.percentile(99.0), Some(10_204.44));
    assert_eq!(r.tpot.as_ref().unwrap().median, Some(11.63));
    assert_eq!(r.itl.as_ref().unwrap().median, Some(0.0));
    assert_eq!(r.itl.as_ref().unwrap().percentile(95.0), Some(101.72));

    let sglang = &blocks[1].result;
    assert_eq!(sglang.duration_ms, Some(124_990.0));
    assert_eq!(sglang.ttft.as_ref().unwrap().mean, Some(34_359.37));
    assert_eq!(
        sglang.e2el.as_ref().unwrap().percentile(99.0),
        Some(95_750.0)
    );

    let mtp = &blocks[6].result; // the MTP run: 516 of 1000 requests
    assert_eq!(mtp.successful_requests, Some(516));
    assert_eq!(mtp.duration_ms, Some(17_440.0));
    assert_eq!(mtp.peak_output_throughput_per_s, Some(19_149_104.07));

    let last = &blocks[14].result;
    assert_eq!(last.total_output_tokens, Some(400_000));
    assert_eq!(last.e2el.as_ref().unwrap().percentile(99.0), Some(49_200.0));
}

#[test]
fn seed_block_rendered_in_vllm_style_converts_latency_to_ms() {
    let r = parse(SEED).unwrap().remove(0).result;
    let text = render(&r, Style::Vllm);
    assert!(text.contains("\nMean E2EL (ms):                          30190.00  \n"));
    assert!(text.contains("\nBenchmark duration (s):                  70.72     \n"));
    assert!(text.contains("\nTotal token throughput (tok/s):          9632.01   \n"));
    assert!(!text.contains("Latency(s)"));
    // And it parses back as a vLLM block with the same numbers.
    let back = parse_block(&text).unwrap();
    assert_eq!(back.layout.style, Style::Vllm);
    assert_eq!(back.result.e2el.as_ref().unwrap().mean, Some(30_190.0));
    assert_eq!(back.result.duration_ms, r.duration_ms);
    assert_eq!(back.render(), text);
}

#[test]
fn gpustack_block_without_p95_latency_round_trips() {
    let block = seed_block(0).replace("P95 Latency(s):                           60.73\n", "");
    assert_eq!(block.lines().count(), 31);
    let r = parse_block(&block).unwrap();
    assert_eq!(r.result.e2el.as_ref().unwrap().percentile(95.0), None);
    assert_eq!(
        r.result.e2el.as_ref().unwrap().percentile(99.0),
        Some(65_370.0)
    );
    assert_eq!(r.layout.rows.len(), 29);
    assert_eq!(r.render(), block);
    // The canonical layout prints the row again, as N/A.
    let canonical = r.result.clone();
    let full = render(&canonical, Style::Gpustack);
    assert_eq!(full.lines().count(), 32);
    assert!(full.contains("\nP95 Latency(s):                           N/A\n"));
}

#[test]
fn gpustack_na_values_are_none_and_round_trip() {
    let block = seed_block(1)
        .replace(
            "P95 TTFT (ms):                           50796.35",
            "P95 TTFT (ms):                           N/A",
        )
        .replace(
            "Maximum request concurrency:             512",
            "Maximum request concurrency:             N/A",
        );
    let r = parse_block(&block).unwrap();
    assert_eq!(r.result.max_concurrency, None);
    assert_eq!(
        r.result.ttft.as_ref().unwrap().percentiles,
        vec![
            Percentile {
                p: 95.0,
                value: None
            },
            Percentile {
                p: 99.0,
                value: Some(53_280.79)
            }
        ]
    );
    assert_eq!(r.render(), block);
}

#[test]
fn gpustack_python_int_values_keep_their_form() {
    // fmt_number(int) prints no decimals even in a `.2f` row.
    let block = seed_block(0).replace(
        "Peak concurrent requests:                512.00",
        "Peak concurrent requests:                512",
    );
    let r = parse_block(&block).unwrap();
    assert_eq!(r.result.peak_concurrent_requests, Some(512.0));
    assert_eq!(
        r.layout.int_valued,
        vec![Row::Field(Field::PeakConcurrentRequests)]
    );
    assert_eq!(r.render(), block);
}

#[test]
fn layout_json_round_trip_keeps_rendering_exact() {
    for b in parse(SEED)
        .unwrap()
        .into_iter()
        .chain(parse(SHAREGPT_E2EL).unwrap())
    {
        let json = serde_json::to_string(&b).unwrap();
        let back: ParsedBlock = serde_json::from_str(&json).unwrap();
        assert_eq!(back, b);
        assert_eq!(back.render(), b.render());
    }
    let r = parse(SHAREGPT_E2EL).unwrap().remove(0);
    let json = serde_json::to_value(&r.layout).unwrap();
    assert_eq!(json["style"], "vllm");
    assert_eq!(json["rows"][0], "Successful requests:");
    assert!(json["rows"]
        .as_array()
        .unwrap()
        .iter()
        .any(|row| row == "P90 E2EL (ms):"));
}

// ---------------------------------------------------------------------------------------
// vLLM fixtures

#[test]
fn vllm_ascend_fixture_round_trips() {
    let blocks = parse(ASCEND).unwrap();
    assert_eq!(blocks.len(), 1);
    let b = &blocks[0];
    assert_eq!((b.start_line, b.end_line), (1, 25));
    assert_eq!(b.render(), ASCEND.trim_end_matches('\n'));
    assert_eq!(parse_block(ASCEND).unwrap().result, b.result);
    let r = &b.result;
    let layout = &b.layout;
    assert_eq!(layout.style, Style::Vllm);
    assert!(!layout.pad_stripped);
    assert_eq!(r.meta.convention, Some(Convention::Vllm));
    assert_eq!(r.successful_requests, Some(200));
    assert_eq!(r.failed_requests, Some(0));
    assert_eq!(r.max_concurrency, None);
    assert_eq!(r.request_rate_configured, Some(1.0));
    assert_eq!(r.duration_ms, Some(203_510.0));
    assert_eq!(r.total_input_tokens, Some(40_000));
    assert_eq!(r.peak_output_throughput_per_s, Some(313.0));
    assert_eq!(r.peak_concurrent_requests, Some(12.0));
    assert_eq!(r.total_token_throughput_per_s, Some(322.34));
    assert!(layout
        .rows
        .contains(&Row::Field(Field::TotalTokenThroughput)));
    assert_eq!(r.e2el, None);
    assert_eq!(layout.percentiles(Section::Ttft), vec![99.0]);
    assert_eq!(r.ttft.as_ref().unwrap().percentile(99.0), Some(143.33));
    assert_eq!(r.itl.as_ref().unwrap().mean, Some(27.91));
    // The canonical vLLM layout is this fixture's layout.
    let canonical = r.clone();
    assert_eq!(
        render(&canonical, Style::Vllm),
        ASCEND.trim_end_matches('\n')
    );
}

#[test]
fn vllm_e2el_percentiles_fixture_round_trips() {
    let blocks = parse(SHAREGPT_E2EL).unwrap();
    assert_eq!(blocks.len(), 1);
    let r = &blocks[0].result;
    assert_eq!(blocks[0].render(), SHAREGPT_E2EL.trim_end_matches('\n'));
    let layout = &blocks[0].layout;
    for s in [Section::Ttft, Section::Tpot, Section::Itl, Section::E2el] {
        assert_eq!(layout.percentiles(s), vec![50.0, 90.0, 95.0, 99.0], "{s:?}");
    }
    let e2el = r.e2el.as_ref().unwrap();
    assert_eq!(e2el.mean, Some(64_102.61));
    assert_eq!(e2el.median, Some(40_514.38));
    assert_eq!(e2el.percentile(50.0), Some(40_514.38));
    assert_eq!(e2el.percentile(90.0), Some(160_035.87)); // 9 chars: one pad space
    assert_eq!(r.duration_ms, Some(997_900.0));
    assert_eq!(r.request_rate_configured, Some(0.3));
    assert_eq!(r.ttft.as_ref().unwrap().percentile(90.0), Some(1281.67));
}

#[test]
fn vllm_stripped_trailing_spaces_are_tolerated_and_remembered() {
    let stripped: String = ASCEND
        .lines()
        .map(str::trim_end)
        .collect::<Vec<_>>()
        .join("\n");
    assert_ne!(stripped, ASCEND.trim_end_matches('\n'));
    let r = parse_block(&stripped).unwrap();
    assert!(r.layout.pad_stripped);
    assert_eq!(r.render(), stripped);
    // Same numbers as the padded report; restoring the pad restores the original.
    let mut padded = parse_block(ASCEND).unwrap();
    assert_eq!(r.result, padded.result);
    padded.layout.pad_stripped = true;
    assert_eq!(padded.render(), stripped);
}

#[test]
fn vllm_old_spelling_and_optional_rows() {
    // vLLM 0.12-style: capital T, max concurrency, goodput, P99.9, no Failed row.
    let text = "\
============ Serving Benchmark Result ============
Successful requests:                     1000      
Maximum request concurrency:             64        
Benchmark duration (s):                  40.10     
Total input tokens:                      220000    
Total generated tokens:                  190000    
Request throughput (req/s):              24.94     
Request goodput (req/s):                 20.00     
Output token throughput (tok/s):         4738.15   
Total Token throughput (tok/s):          10224.44  
---------------Time to First Token----------------
Mean TTFT (ms):                          45.20     
Median TTFT (ms):                        40.10     
P99.9 TTFT (ms):                         250.00    
==================================================";
    let b = parse_block(text).unwrap();
    let (r, layout) = (&b.result, &b.layout);
    assert_eq!(layout.style, Style::Vllm);
    assert!(layout
        .rows
        .contains(&Row::Field(Field::TotalTokenThroughputCapital)));
    assert_eq!(r.request_goodput_per_s, Some(20.0));
    assert_eq!(r.max_concurrency, Some(64));
    assert_eq!(r.ttft.as_ref().unwrap().percentile(99.9), Some(250.0));
    assert_eq!(r.tpot, None);
    assert_eq!(b.render(), text);
    // The canonical vLLM layout uses the 0.13+ spelling.
    let canonical = render(r, Style::Vllm);
    assert!(canonical.contains("Total token throughput (tok/s):          10224.44  "));
}

// ---------------------------------------------------------------------------------------
// Blocks inside other text

#[test]
fn blocks_found_in_markdown_admonition_and_log() {
    let gpustack = seed_block(3);
    let indented: String = gpustack
        .lines()
        .map(|l| format!("    {l}"))
        .collect::<Vec<_>>()
        .join("\n");
    let vllm = SHAREGPT_E2EL.trim_end_matches('\n');
    let doc = format!(
        "# Results\n\n??? info \"Benchmark result\"\n    ```\n{indented}\n    ```\n\n\
         Log:\n\nINFO 05-12 10:00:01 [api_server.py] Starting\n\
         100%|██████████| 250/250 [16:37<00:00,  3.99s/it]\n\
         tip: install termplotlib and gnuplot to plot the metrics\n{vllm}\n\
         INFO 05-12 10:17:00 shutting down\n"
    );
    let blocks = parse(&doc).unwrap();
    assert_eq!(blocks.len(), 2);
    assert_eq!((blocks[0].start_line, blocks[0].end_line), (5, 36));
    assert_eq!((blocks[1].start_line, blocks[1].end_line), (44, 84));
    assert_eq!(&doc[blocks[0].span.clone()], indented);
    assert_eq!(&doc[blocks[1].span.clone()], vllm);
    assert_eq!(blocks[0].layout.indent, "    ");
    for b in &blocks {
        assert_eq!(b.render(), &doc[b.span.clone()]);
    }
    // The indent changes nothing but the layout.
    let plain = parse_block(&gpustack).unwrap();
    assert_eq!(plain.result, blocks[0].result);
}

#[test]
fn crlf_and_quoted_blocks_round_trip() {
    let crlf = format!(
        "intro\r\n{}\r\noutro\r\n",
        seed_block(2).replace('\n', "\r\n")
    );
    let b = parse(&crlf).unwrap().remove(0);
    assert_eq!(b.start_line, 2);
    assert_eq!(b.layout.line_ending, LineEnding::Crlf);
    assert_eq!(b.render(), &crlf[b.span.clone()]);

    let quoted: String = ASCEND.lines().map(|l| format!("> {l}\n")).collect();
    let b = parse(&quoted).unwrap().remove(0);
    assert_eq!(b.layout.indent, "> ");
    assert_eq!(b.render(), &quoted[b.span.clone()]);
}

#[test]
fn text_without_blocks_gives_no_blocks() {
    assert_eq!(parse("").unwrap(), vec![]);
    assert_eq!(parse("Serving Benchmark Result\n=====\n").unwrap(), vec![]);
    // The title inside a sentence is not a block.
    assert_eq!(
        parse("see ============ Serving Benchmark Result ============\n").unwrap(),
        vec![]
    );
}

// ---------------------------------------------------------------------------------------
// Errors

/// Replaces line `n` (1-based) of `text`.
fn with_line(text: &str, n: usize, new: &str) -> String {
    text.split('\n')
        .enumerate()
        .map(|(i, l)| if i + 1 == n { new } else { l })
        .collect::<Vec<_>>()
        .join("\n")
}

fn doc_around(block: &str) -> String {
    format!("line one\nline two\n\n{block}\n\nafter\n")
}

#[test]
fn unknown_row_names_its_line() {
    let block = with_line(
        &seed_block(0),
        5,
        "Total wombats:                           342058",
    );
    let err = parse(&doc_around(&block)).unwrap_err();
    assert_eq!(
        err,
        ParseError::UnknownRow {
            line: 8,
            text: "Total wombats:                           342058".into()
        }
    );
    assert_eq!(err.line(), 8);
    assert!(err.to_string().starts_with("line 8: unknown row"));
    // A blank line inside a block, and an unknown section header.
    let blank = with_line(&seed_block(0), 12, "");
    assert!(matches!(
        parse_block(&blank),
        Err(ParseError::UnknownRow { line: 12, .. })
    ));
    let header = with_line(
        &seed_block(0),
        17,
        "---------------Time to Last Token-----------------",
    );
    assert!(matches!(
        parse_block(&header),
        Err(ParseError::UnknownRow { line: 17, .. })
    ));
    let bad_p = with_line(
        &seed_block(0),
        15,
        "P99.90 Latency(s):                        65.37",
    );
    assert!(matches!(
        parse_block(&bad_p),
        Err(ParseError::UnknownRow { line: 15, .. })
    ));
}

#[test]
fn misaligned_rows_are_rejected() {
    // Value at column 41 on a Latency row (GPUStack puts it at 42).
    let block = with_line(
        &seed_block(0),
        13,
        "Mean Latency(s):                         30.19",
    );
    assert!(matches!(
        parse(&doc_around(&block)),
        Err(ParseError::Misaligned { line: 16, .. })
    ));
    // Trailing spaces in a GPUStack block.
    let block = with_line(
        &seed_block(0),
        2,
        "Successful requests:                     1000   ",
    );
    assert!(matches!(
        parse_block(&block),
        Err(ParseError::Misaligned { line: 2, .. })
    ));
    // A line without the block's indent.
    let indented: String = seed_block(0)
        .lines()
        .enumerate()
        .map(|(i, l)| {
            if i == 9 {
                l.to_string()
            } else {
                format!("    {l}")
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    assert!(matches!(
        parse(&indented),
        Err(ParseError::Misaligned { line: 10, .. })
    ));
    // vLLM value padded to the wrong width.
    let block = with_line(ASCEND, 3, "Failed requests:                         0    ");
    assert!(matches!(
        parse(&block),
        Err(ParseError::Misaligned { line: 3, .. })
    ));
}

#[test]
fn bad_values_are_rejected() {
    for (value, n) in [
        ("30.1", 4),
        ("abc", 4),
        ("1,234.50", 7),
        ("070.72", 4),
        ("1e3", 7),
    ] {
        let label = if n == 4 {
            "Benchmark duration (s):"
        } else {
            "Request throughput (req/s):"
        };
        let block = with_line(&seed_block(0), n, &format!("{label:<40} {value}"));
        match parse_block(&block) {
            Err(ParseError::BadValue {
                line,
                value: v,
                label: l,
                ..
            }) => {
                assert_eq!((line, v.as_str(), l.as_str()), (n, value, label));
            }
            other => panic!("{value}: {other:?}"),
        }
    }
    let block = with_line(
        &seed_block(0),
        2,
        "Successful requests:                     1000.5",
    );
    assert!(matches!(
        parse_block(&block),
        Err(ParseError::BadValue { line: 2, .. })
    ));
    let block = with_line(
        &seed_block(0),
        2,
        "Successful requests:                     ",
    );
    assert!(matches!(
        parse_block(&block),
        Err(ParseError::BadValue { line: 2, .. })
    ));
    let block = with_line(
        &seed_block(0),
        2,
        "Successful requests:                     1000 2",
    );
    assert!(matches!(
        parse_block(&block),
        Err(ParseError::BadValue { line: 2, .. })
    ));
}

#[test]
fn duplicate_rows_are_rejected() {
    let block = with_line(
        &seed_block(0),
        3,
        "Successful requests:                     1000",
    );
    assert!(matches!(
        parse_block(&block),
        Err(ParseError::DuplicateRow { line: 3, .. })
    ));
    // Both spellings of the total token throughput fill one value (line 11 has `Total Token`).
    let block = with_line(
        &seed_block(0),
        10,
        "Total token throughput (tok/s):          9632.01",
    );
    assert_eq!(
        parse_block(&block),
        Err(ParseError::DuplicateRow {
            line: 11,
            text: "Total Token throughput (tok/s):          9632.01".into()
        })
    );
    // The E2EL and Latency(s) rows fill the same summary.
    let block = with_line(
        &seed_block(0),
        16,
        "Mean E2EL (ms):                          30190.00",
    );
    assert!(matches!(
        parse_block(&block),
        Err(ParseError::DuplicateRow { line: 16, .. })
    ));
}

#[test]
fn inconsistent_padding_and_line_endings_are_rejected() {
    let block = with_line(ASCEND, 5, "Benchmark duration (s):                  203.51");
    assert_eq!(
        parse(&block),
        Err(ParseError::InconsistentPadding { line: 5 })
    );
    let mixed = seed_block(0).replacen('\n', "\r\n", 3);
    assert_eq!(parse(&mixed), Err(ParseError::MixedLineEndings { line: 4 }));
}

#[test]
fn unterminated_blocks_are_rejected() {
    let block = seed_block(0);
    let cut = block.rsplit_once('\n').unwrap().0;
    assert_eq!(
        parse(&format!("x\n{cut}")),
        Err(ParseError::Unterminated {
            line: 2,
            reached: 32
        })
    );
    let two = format!("{cut}\n{block}");
    assert_eq!(
        parse(&two),
        Err(ParseError::Unterminated {
            line: 1,
            reached: 32
        })
    );
}

#[test]
fn parse_block_wants_exactly_one_block() {
    let block = seed_block(0);
    assert!(parse_block(&format!("{block}\n")).is_ok());
    assert_eq!(
        parse_block(&format!("hello\n{block}")),
        Err(ParseError::ExpectedTitle {
            line: 1,
            text: "hello".into()
        })
    );
    assert_eq!(
        parse_block(&format!("{block}\nmore")),
        Err(ParseError::TrailingText {
            line: 33,
            text: "more".into()
        })
    );
    assert!(matches!(
        parse_block(&format!("{block}\n\n")),
        Err(ParseError::TrailingText { line: 33, .. })
    ));
}

// ---------------------------------------------------------------------------------------
// Hand-built results against the reference layouts

fn summary(mean: Option<f64>, median: Option<f64>, pcts: &[(f64, Option<f64>)]) -> Summary {
    Summary {
        mean,
        median,
        percentiles: pcts
            .iter()
            .map(|&(p, value)| Percentile { p, value })
            .collect(),
        ..Default::default()
    }
}

#[test]
fn hand_built_gpustack_block_matches_reference_layout() {
    let r = BenchmarkResult {
        successful_requests: Some(100),
        max_concurrency: None,
        duration_ms: Some(101_230.0),
        total_input_tokens: Some(12_800),
        total_output_tokens: Some(12_800),
        request_throughput_per_s: Some(0.99),
        output_throughput_per_s: Some(126.44),
        peak_output_throughput_per_s: Some(256.0),
        peak_concurrent_requests: Some(3.0),
        total_token_throughput_per_s: Some(252.875), // exact tie: half to even → 252.88
        e2el: Some(summary(Some(1234.5), Some(1200.0), &[(99.0, Some(2675.0))])),
        ttft: Some(summary(
            Some(0.125), // exact tie → 0.12
            Some(45.678),
            &[(95.0, Some(50.0)), (99.0, Some(60.555))],
        )),
        tpot: None,
        itl: Some(summary(Some(7.0), None, &[])),
        ..Default::default()
    };
    // Expected text written with Python from the reference notes' rules
    // (`{:<40} {}` with fmt_number, Latency rows one column later).
    let expected = "\
============ Serving Benchmark Result ============\n\
Successful requests:                     100\n\
Maximum request concurrency:             N/A\n\
Benchmark duration (s):                  101.23\n\
Total input tokens:                      12800\n\
Total generated tokens:                  12800\n\
Request throughput (req/s):              0.99\n\
Output token throughput (tok/s):         126.44\n\
Peak output token throughput (tok/s):    256.00\n\
Peak concurrent requests:                3.00\n\
Total Token throughput (tok/s):          252.88\n\
----------------------Latency---------------------\n\
Mean Latency(s):                          1.23\n\
Median Latency(s):                        1.20\n\
P95 Latency(s):                           N/A\n\
P99 Latency(s):                           2.67\n\
---------------Time to First Token----------------\n\
Mean TTFT (ms):                          0.12\n\
Median TTFT (ms):                        45.68\n\
P95 TTFT (ms):                           50.00\n\
P99 TTFT (ms):                           60.55\n\
-----Time per Output Token (excl. 1st token)------\n\
Mean TPOT (ms):                          N/A\n\
Median TPOT (ms):                        N/A\n\
P95 TPOT (ms):                           N/A\n\
P99 TPOT (ms):                           N/A\n\
---------------Inter-token Latency----------------\n\
Mean ITL (ms):                           7.00\n\
Median ITL (ms):                         N/A\n\
P95 ITL (ms):                            N/A\n\
P99 ITL (ms):                            N/A\n\
==================================================";
    assert_eq!(render(&r, Style::Gpustack), expected);
    assert_eq!(Layout::default().style, Style::Gpustack); // no layout: GPUStack
    let back = parse_block(expected).unwrap();
    assert_eq!(back.result.e2el.as_ref().unwrap().mean, Some(1230.0));
    assert_eq!(back.render(), expected);
}

#[test]
fn hand_built_vllm_block_matches_reference_layout() {
    let r = BenchmarkResult {
        successful_requests: Some(1000),
        failed_requests: Some(3),
        max_concurrency: Some(64),
        request_rate_configured: Some(10.0),
        duration_ms: Some(100_000.0),
        total_input_tokens: Some(220_000),
        total_output_tokens: Some(190_000),
        request_throughput_per_s: Some(9.97),
        request_goodput_per_s: Some(8.5),
        output_throughput_per_s: Some(1900.123),
        peak_output_throughput_per_s: Some(2345.0),
        peak_concurrent_requests: Some(64.0),
        total_token_throughput_per_s: Some(4100.5),
        ttft: Some(summary(
            Some(45.2),
            Some(40.1),
            &[(99.0, Some(120.345)), (99.9, Some(250.0))],
        )),
        tpot: Some(summary(Some(12.0), Some(11.5), &[(99.0, Some(20.125))])),
        e2el: Some(summary(
            Some(30_190.0),
            Some(27_480.0),
            &[(99.9, Some(65_370.129))],
        )),
        ..Default::default()
    };
    // Expected text written with Python's "{:<40} {:<10}" / "{:<40} {:<10.2f}" and
    // "{:-^50}" headers.
    let expected = "\
============ Serving Benchmark Result ============\n\
Successful requests:                     1000      \n\
Failed requests:                         3         \n\
Maximum request concurrency:             64        \n\
Request rate configured (RPS):           10.00     \n\
Benchmark duration (s):                  100.00    \n\
Total input tokens:                      220000    \n\
Total generated tokens:                  190000    \n\
Request throughput (req/s):              9.97      \n\
Request goodput (req/s):                 8.50      \n\
Output token throughput (tok/s):         1900.12   \n\
Peak output token throughput (tok/s):    2345.00   \n\
Peak concurrent requests:                64.00     \n\
Total token throughput (tok/s):          4100.50   \n\
---------------Time to First Token----------------\n\
Mean TTFT (ms):                          45.20     \n\
Median TTFT (ms):                        40.10     \n\
P99 TTFT (ms):                           120.34    \n\
P99.9 TTFT (ms):                         250.00    \n\
-----Time per Output Token (excl. 1st token)------\n\
Mean TPOT (ms):                          12.00     \n\
Median TPOT (ms):                        11.50     \n\
P99 TPOT (ms):                           20.12     \n\
----------------End-to-end Latency----------------\n\
Mean E2EL (ms):                          30190.00  \n\
Median E2EL (ms):                        27480.00  \n\
P99.9 E2EL (ms):                         65370.13  \n\
==================================================";
    assert_eq!(render(&r, Style::Vllm), expected);
    let back = parse_block(expected).unwrap();
    assert_eq!(back.render(), expected);
    assert_eq!(
        back.result.e2el.as_ref().unwrap().percentile(99.9),
        Some(65_370.13)
    );
}

#[test]
fn render_with_a_layout_of_the_other_style_uses_the_canonical_layout() {
    let r = parse_block(ASCEND).unwrap().result;
    let g = render(&r, Style::Gpustack);
    assert_eq!(g.lines().count(), 32);
    assert!(g.contains("\nMean Latency(s):                          N/A\n"));
    assert!(g.contains("\nMean TTFT (ms):                          95.63\n"));
    // A default (empty-rows) layout with an indent: canonical rows, indented.
    let layout = Layout {
        style: Style::Vllm,
        indent: "  ".into(),
        ..Layout::default()
    };
    let text = render_with(&r, &layout);
    assert!(text.lines().all(|l| l.starts_with("  ")));
    assert_eq!(text.lines().count(), 25);
    assert_eq!(canonical_rows(&r, Style::Vllm).len(), 23);
}

// ---------------------------------------------------------------------------------------
// proptest: render → parse → render is the identity

/// A float: two-decimal values, arbitrary ones in a report's range, and a few specials.
fn float() -> impl Strategy<Value = f64> {
    prop_oneof![
        8 => (0u64..100_000_000_000).prop_map(|c| c as f64 / 100.0),
        8 => 0.0f64..1e9,
        1 => (0u32..100_000).prop_map(f64::from),
        1 => Just(f64::NAN),
        1 => Just(f64::INFINITY),
        // Any normal float, huge and negative ones included.
        1 => prop::num::f64::NORMAL,
    ]
}

fn opt_float() -> impl Strategy<Value = Option<f64>> {
    prop::option::weighted(0.8, float())
}

fn opt_int() -> impl Strategy<Value = Option<u64>> {
    prop::option::weighted(0.8, prop_oneof![0u64..100_000, any::<u64>()])
}

fn arb_summary() -> impl Strategy<Value = Option<Summary>> {
    let ps = vec![50.0, 90.0, 95.0, 99.0, 99.9, 99.99, 25.0, 0.1, 75.5];
    prop::option::weighted(
        0.85,
        (
            opt_float(),
            opt_float(),
            prop::sample::subsequence(ps, 0..=5).prop_shuffle(),
            prop::collection::vec(opt_float(), 5),
        )
            .prop_map(|(mean, median, ps, values)| Summary {
                mean,
                median,
                percentiles: ps
                    .into_iter()
                    .zip(values)
                    .map(|(p, value)| Percentile { p, value })
                    .collect(),
                ..Default::default()
            }),
    )
}

prop_compose! {
    fn arb_result()(
        ints in prop::collection::vec(opt_int(), 5),
        floats in prop::collection::vec(opt_float(), 9),
        summaries in prop::collection::vec(arb_summary(), 4),
    ) -> BenchmarkResult {
        BenchmarkResult {
            successful_requests: ints[0],
            failed_requests: ints[1],
            max_concurrency: ints[2],
            total_input_tokens: ints[3],
            total_output_tokens: ints[4],
            request_rate_configured: floats[0],
            duration_ms: floats[1],
            request_throughput_per_s: floats[2],
            request_goodput_per_s: floats[3],
            input_throughput_per_s: floats[4],
            output_throughput_per_s: floats[5],
            peak_output_throughput_per_s: floats[6],
            peak_concurrent_requests: floats[7],
            total_token_throughput_per_s: floats[8],
            e2el: summaries[0].clone(),
            ttft: summaries[1].clone(),
            tpot: summaries[2].clone(),
            itl: summaries[3].clone(),
            ..Default::default()
        }
    }
}

fn arb_style() -> impl Strategy<Value = Style> {
    prop_oneof![Just(Style::Gpustack), Just(Style::Vllm)]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn render_parse_render_is_identity(r in arb_result(), style in arb_style()) {
        let text = render(&r, style);
        let parsed = parse_block(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert_eq!(parsed.layout.style, style);
        prop_assert_eq!(parsed.render(), text.clone());
        prop_assert_eq!(render(&parsed.result, style), text);
    }

    #[test]
    fn layout_options_round_trip(
        r in arb_result(),
        style in arb_style(),
        indent in prop::sample::select(vec!["", "    ", "> ", "\t", "  >  "]),
        crlf in any::<bool>(),
        pad_stripped in any::<bool>(),
        before in "[a-z %|#=-]{0,30}",
    ) {
        let layout = Layout {
            style,
            indent: indent.to_string(),
            line_ending: if crlf { LineEnding::Crlf } else { LineEnding::Lf },
            pad_stripped,
            ..Layout::default()
        };
        let text = render_with(&r, &layout);
        let doc = format!("{before}\n{text}\n{before}\n");
        let blocks = parse(&doc).map_err(|e| TestCaseError::fail(format!("{e}\n{doc}")))?;
        prop_assert_eq!(blocks.len(), 1);
        let b = &blocks[0];
        prop_assert_eq!(b.start_line, 2);
        prop_assert_eq!(&doc[b.span.clone()], text.as_str());
        prop_assert_eq!(b.render(), text);
    }

    #[test]
    fn parsed_values_equal_the_printed_values(r in arb_result()) {
        // Values that are already two-decimal come back unchanged (ms for seconds rows:
        // the decimal point shifts exactly).
        let text = render(&r, Style::Vllm);
        let back = parse_block(&text).unwrap().result;
        prop_assert_eq!(back.successful_requests, r.successful_requests);
        prop_assert_eq!(back.total_output_tokens, r.total_output_tokens);
        if let Some(d) = r.duration_ms.filter(|d| d.is_finite()) {
            let d2 = back.duration_ms.unwrap();
            prop_assert!((d - d2).abs() <= 5.0 + d.abs() * 1e-15, "{} vs {}", d, d2);
        }
    }
}

#[test]
fn stat_rows_are_labelled_like_vllm() {
    assert_eq!(
        Row::Stat(Section::E2el, Stat::Percentile(99.9)).text(),
        "P99.9 E2EL (ms):"
    );
    assert_eq!(
        Row::Stat(Section::Itl, Stat::Median).text(),
        "Median ITL (ms):"
    );
}
