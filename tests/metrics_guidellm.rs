//! `Convention::Guidellm` against real guidellm 0.8.1 output: the per-request records of
//! `tests/fixtures/guidellm/{constant_rate20,errors}.json` are turned into
//! [`RequestRecord`]s (read here with `serde_json::Value`, independently of any importer),
//! recomputed, and compared with the aggregates guidellm wrote into the same files — every
//! statistic of every status group, to 1e-9 relative.
//!
//! What the records do not carry, and is therefore not compared:
//! * `request_streaming_iterations_count` and `iter_tokens_per_iteration`: need
//!   `request_iterations` (SSE lines incl. usage/[DONE]), which a `RequestRecord` does not
//!   hold;
//! * `time_to_first_output_token_ms`: a record's chunks do not say which tokens were
//!   reasoning and which were output (on these fixtures, which have no reasoning output, it
//!   equals `time_to_first_token_ms` — asserted below);
//! * the round-trip delays, `turn_predecessor_delay`/`turn_scheduling_delay`,
//!   `root_dispatch_delay` and the text/image/… modality groups: websocket sends, the
//!   multi-turn conversation graph and word/character counts are not part of a
//!   `RequestRecord`. (`request_dispatch_delay` and `request_scheduled_latency` are: the
//!   arrival schedule is `RequestRecord::scheduled_at`, from `targeted_start`.)
//! * `mean_ci` / `percentile_cis` (confidence intervals are not computed by servebench).

use std::time::Duration;

use serde_json::Value;
use servebench::metrics::{
    compute, guidellm_metrics, GuidellmMetrics, MetricsOptions, StatusDistributions,
};
use servebench::record::{Chunk, ErrorKind, Outcome, RequestRecord};
use servebench::result::Convention;
use servebench::stats::WeightedDistribution;

fn load(name: &str) -> Value {
    let path = format!(
        "{}/tests/fixtures/guidellm/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn f(v: &Value) -> Option<f64> {
    v.as_f64()
}

/// guidellm's request stats → records, plus the options that reproduce its window and
/// float timestamps.
fn records_of(bench: &Value) -> (Vec<RequestRecord>, MetricsOptions) {
    let mut raw: Vec<(&Value, &str)> = Vec::new();
    for status in ["successful", "errored", "incomplete"] {
        for r in bench["requests"][status].as_array().unwrap() {
            raw.push((r, status));
        }
    }
    let sm = &bench["scheduler_metrics"];
    let (ms, me) = (
        f(&sm["measure_start_time"]).unwrap(),
        f(&sm["measure_end_time"]).unwrap(),
    );
    let origin = raw
        .iter()
        .flat_map(|(r, _)| {
            let t = &r["info"]["timings"];
            [f(&t["request_start"]), f(&t["targeted_start"])]
        })
        .flatten()
        .fold(ms, f64::min);
    let off = |t: f64| Duration::from_secs_f64(t - origin);
    let mut records = Vec::new();
    for (id, (r, status)) in raw.iter().enumerate() {
        let t = &r["info"]["timings"];
        let start = f(&t["request_start"]).or(f(&t["resolve_start"])).unwrap();
        let mut rec = RequestRecord::new(id as u64, off(start));
        rec.scheduled_at = f(&t["targeted_start"]).map(off);
        rec.ended_at = f(&t["request_end"]).or(f(&t["resolve_end"])).map(off);
        let iters = t["token_iterations"].as_u64().unwrap() as usize;
        if let (Some(first), Some(last)) = (
            f(&t["first_token_iteration"]),
            f(&t["last_token_iteration"]),
        ) {
            // Only the first and last iteration times are known; guidellm spreads the rest
            // evenly, and so do these records (their values do not enter guidellm's
            // formulas).
            rec.chunks = (0..iters)
                .map(|i| {
                    let t = if i + 1 == iters {
                        last
                    } else {
                        first + (last - first) * i as f64 / (iters.max(2) - 1) as f64
                    };
                    Chunk {
                        at: off(t),
                        tokens: 1,
                    }
                })
                .collect();
        } else {
            assert_eq!(iters, 0, "token iterations without token times");
        }
        rec.usage_output_tokens = r["output_metrics"]["total_tokens"].as_u64();
        rec.usage_prompt_tokens = r["input_metrics"]["total_tokens"].as_u64();
        rec.outcome = match *status {
            "successful" => Outcome::Success,
            "errored" => Outcome::Error {
                kind: ErrorKind::Other,
                message: r["info"]["error"].as_str().unwrap_or("").to_string(),
            },
            _ => Outcome::Incomplete {
                reason: r["info"]["error"]
                    .as_str()
                    .unwrap_or("cancelled")
                    .to_string(),
            },
        };
        records.push(rec);
    }
    let mut opts = MetricsOptions::new(Convention::Guidellm);
    opts.window = Some((off(ms), off(me)));
    opts.time_origin_s = Some(origin);
    (records, opts)
}

struct Checker {
    failures: Vec<String>,
    checked: usize,
}

impl Checker {
    fn num(&mut self, what: &str, got: f64, want: f64) {
        self.checked += 1;
        let tol = 1e-9 * want.abs().max(got.abs());
        if !((got - want).abs() <= tol || (got == 0.0 && want.abs() < 1e-12)) {
            self.failures
                .push(format!("{what}: got {got:?}, guidellm {want:?}"));
        }
    }

    fn dist(&mut self, what: &str, got: &WeightedDistribution, want: &Value) {
        for key in [
            "mean",
            "median",
            "mode",
            "variance",
            "std_dev",
            "min",
            "max",
            "total_sum",
        ] {
            let g = match key {
                "mean" => got.mean,
                "median" => got.median,
                "mode" => got.mode,
                "variance" => got.variance,
                "std_dev" => got.std_dev,
                "min" => got.min,
                "max" => got.max,
                _ => got.total_sum,
            };
            self.num(&format!("{what}.{key}"), g, f(&want[key]).unwrap());
        }
        self.checked += 1;
        if Some(got.count) != want["count"].as_u64() {
            self.failures.push(format!(
                "{what}.count: got {}, guidellm {}",
                got.count, want["count"]
            ));
        }
        let names = [
            "p001", "p01", "p05", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "p999",
        ];
        for (name, (_, v)) in names.iter().zip(&got.percentiles) {
            self.num(
                &format!("{what}.percentiles.{name}"),
                *v,
                f(&want["percentiles"][name]).unwrap(),
            );
        }
    }

    fn status(&mut self, what: &str, got: &StatusDistributions, want: &Value) {
        self.dist(
            &format!("{what}.successful"),
            &got.successful,
            &want["successful"],
        );
        self.dist(&format!("{what}.errored"), &got.errored, &want["errored"]);
        self.dist(
            &format!("{what}.incomplete"),
            &got.incomplete,
            &want["incomplete"],
        );
        self.dist(&format!("{what}.total"), &got.total, &want["total"]);
    }
}

fn check_all(m: &GuidellmMetrics, want: &Value) -> Checker {
    let mut c = Checker {
        failures: Vec::new(),
        checked: 0,
    };
    let t = &want["request_totals"];
    let got = m.request_totals;
    for (k, g) in [
        ("successful", got.successful),
        ("errored", got.errored),
        ("incomplete", got.incomplete),
        ("total", got.total),
    ] {
        c.checked += 1;
        if Some(g) != t[k].as_u64() {
            c.failures
                .push(format!("request_totals.{k}: got {g}, guidellm {}", t[k]));
        }
    }
    let pairs: [(&str, &StatusDistributions); 13] = [
        ("requests_per_second", &m.requests_per_second),
        ("request_concurrency", &m.request_concurrency),
        ("request_latency", &m.request_latency),
        ("prompt_token_count", &m.prompt_token_count),
        ("output_token_count", &m.output_token_count),
        ("total_token_count", &m.total_token_count),
        ("time_to_first_token_ms", &m.time_to_first_token_ms),
        ("time_per_output_token_ms", &m.time_per_output_token_ms),
        ("inter_token_latency_ms", &m.inter_token_latency_ms),
        ("prompt_tokens_per_second", &m.prompt_tokens_per_second),
        ("output_tokens_per_second", &m.output_tokens_per_second),
        ("tokens_per_second", &m.tokens_per_second),
        (
            "output_tokens_per_iteration",
            &m.output_tokens_per_iteration,
        ),
    ];
    for (name, got) in pairs {
        c.status(name, got, &want[name]);
    }
    // Both fixtures are constant-rate runs: guidellm wrote the schedule-relative metrics.
    for (name, got) in [
        ("request_dispatch_delay", &m.request_dispatch_delay),
        ("request_scheduled_latency", &m.request_scheduled_latency),
    ] {
        match got {
            Some(got) => c.status(name, got, &want[name]),
            None => c.failures.push(format!("{name}: not computed")),
        }
    }
    // No reasoning output in the fixtures: guidellm's TTFOT is its TTFT.
    assert_eq!(
        want["time_to_first_output_token_ms"], want["time_to_first_token_ms"],
        "the fixtures have no reasoning output"
    );
    c
}

fn check_fixture(name: &str) -> (Vec<RequestRecord>, MetricsOptions, Value) {
    let doc = load(name);
    let bench = &doc["benchmarks"][0];
    let (records, opts) = records_of(bench);
    let m = guidellm_metrics(&records, &opts);
    let c = check_all(&m, &bench["metrics"]);
    assert!(
        c.failures.is_empty(),
        "{name}: {} of {} figures differ:\n{}",
        c.failures.len(),
        c.checked,
        c.failures.join("\n")
    );
    assert!(
        c.checked >= 1044 + 2 * 4 * 20,
        "{name}: only {} figures compared",
        c.checked
    );
    (records, opts, bench.clone())
}

#[test]
fn constant_rate20_recomputes_every_aggregate() {
    let (records, _, bench) = check_fixture("constant_rate20.json");
    assert_eq!(records.len(), 60);
    // Sanity: guidellm's own counts, as the reference notes state them.
    let m = &bench["metrics"];
    assert_eq!(m["time_per_output_token_ms"]["successful"]["count"], 3840);
    assert_eq!(m["inter_token_latency_ms"]["successful"]["count"], 3780);
}

#[test]
fn errors_run_recomputes_every_aggregate_per_status() {
    let (records, opts, bench) = check_fixture("errors.json");
    // 23 incomplete requests are listed, 22 overlap the measurement window.
    assert_eq!(records.len(), 48 + 10 + 23);
    let m = guidellm_metrics(&records, &opts);
    assert_eq!(m.request_totals.incomplete, 22);
    assert_eq!(
        bench["metrics"]["request_totals"]["incomplete"].as_u64(),
        Some(22)
    );
}

#[test]
fn gpustack_block_fields_from_records() {
    let doc = load("constant_rate20.json");
    let bench = &doc["benchmarks"][0];
    let (records, opts) = records_of(bench);
    let res = compute(&records, &opts);
    let m = &bench["metrics"];
    let s = |k: &str, stat: &str| f(&m[k]["successful"][stat]).unwrap();
    let close = |got: Option<f64>, want: f64| {
        let g = got.unwrap();
        assert!((g - want).abs() <= 1e-9 * want.abs(), "{g} vs {want}");
    };
    assert_eq!(res.meta.convention, Some(Convention::Guidellm));
    assert_eq!(res.successful_requests, Some(60));
    close(res.duration_ms, f(&bench["duration"]).unwrap() * 1000.0);
    close(
        res.request_throughput_per_s,
        s("requests_per_second", "mean"),
    );
    close(
        res.output_throughput_per_s,
        s("output_tokens_per_second", "mean"),
    );
    close(
        res.peak_output_throughput_per_s,
        s("output_tokens_per_second", "max"),
    );
    close(
        res.peak_concurrent_requests,
        s("request_concurrency", "max"),
    );
    close(
        res.total_token_throughput_per_s,
        s("tokens_per_second", "mean"),
    );
    assert_eq!(
        res.total_output_tokens,
        Some((s("output_token_count", "mean") * 60.0).round() as u64)
    );
    let e2el = res.e2el.unwrap();
    close(e2el.mean, s("request_latency", "mean") * 1000.0);
    close(
        e2el.percentile(95.0),
        f(&m["request_latency"]["successful"]["percentiles"]["p95"]).unwrap() * 1000.0,
    );
    let itl = res.itl.unwrap();
    close(itl.median, s("inter_token_latency_ms", "median"));
    close(
        itl.percentile(99.0),
        f(&m["inter_token_latency_ms"]["successful"]["percentiles"]["p99"]).unwrap(),
    );
    close(
        res.tpot.unwrap().mean,
        s("time_per_output_token_ms", "mean"),
    );
    close(
        res.ttft.unwrap().percentile(95.0),
        f(&m["time_to_first_token_ms"]["successful"]["percentiles"]["p95"]).unwrap(),
    );
}

/// The importer's records (`servebench::import::guidellm`) carry what the recomputation
/// needs: with the measured window and the records' epoch origin, `Convention::Guidellm`
/// reproduces every aggregate of both fixtures from them too.
#[test]
fn importer_records_reproduce_the_aggregates() {
    for name in ["constant_rate20.json", "errors.json"] {
        let path = format!(
            "{}/tests/fixtures/guidellm/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        let report = servebench::import::guidellm::from_path(std::path::Path::new(&path))
            .unwrap_or_else(|e| panic!("{path}: {e}"));
        let b = &report.benchmarks[0];
        let mut opts = MetricsOptions::new(Convention::Guidellm);
        opts.window = Some((b.window_start, b.window_end));
        opts.time_origin_s = Some(b.origin_unix_s);
        let m = guidellm_metrics(&b.records, &opts);
        let doc = load(name);
        let c = check_all(&m, &doc["benchmarks"][0]["metrics"]);
        assert!(
            c.failures.is_empty(),
            "{name}: {} of {} figures differ:\n{}",
            c.failures.len(),
            c.checked,
            c.failures.join("\n")
        );
    }
}

#[test]
fn empty_and_all_failed_runs_do_not_panic() {
    let res = compute(&[], Convention::Guidellm);
    assert_eq!(res.successful_requests, Some(0));
    assert_eq!(res.duration_ms, Some(0.0));
    assert_eq!(res.ttft.unwrap().mean, Some(0.0));

    let mut r = RequestRecord::new(0, Duration::from_millis(5));
    r.ended_at = Some(Duration::from_millis(9));
    r.outcome = Outcome::Error {
        kind: ErrorKind::HttpStatus,
        message: "500".into(),
    };
    let m = guidellm_metrics(&[r], &MetricsOptions::new(Convention::Guidellm));
    assert_eq!(m.request_totals.errored, 1);
    // guidellm leaves request_end unset for errors: latency 0 with count 1, like its files.
    assert_eq!(m.request_latency.errored.count, 1);
    assert_eq!(m.request_latency.errored.mean, 0.0);
    assert_eq!(m.request_latency.successful.count, 0);
}
