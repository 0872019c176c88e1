//! The tuner's price and trade-off: `report --gpu-price --gpus` prints what a million
//! tokens cost and the throughput per GPU, agreeing with the block beside it; `pareto`
//! places a simulated sweep per GPU against interactivity with intervals, marks points
//! dominated within noise, and writes its table, points and charts.
#![cfg(all(feature = "cli", feature = "sim", feature = "plot"))]

use std::process::Command;

fn servebench(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_servebench"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn fixture(rel: &str) -> String {
    format!("{}/tests/fixtures/{rel}", env!("CARGO_MANIFEST_DIR"))
}

/// Dollars per million output tokens are the GPUs' price per second over the block's own
/// output throughput; tokens per second per GPU its throughput over the GPUs.
#[test]
fn report_prices_the_blocks_tokens() {
    let file = fixture("vllm/vllm_bench_serve_2026-07_ascend_qwen3vl_result.json");
    let (ok, text, err) = servebench(&["report", &file, "--gpu-price", "3.5", "--gpus", "2"]);
    assert!(ok, "{err}");
    // The block prints the throughputs rounded; the prices use the file's full figures.
    let (ok, json, _) = servebench(&["report", &file, "--format", "json"]);
    assert!(ok);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let out_tps = v[0]["output_throughput_per_s"].as_f64().unwrap();
    let total_tps = v[0]["total_token_throughput_per_s"].as_f64().unwrap();
    let blocks = servebench::format::text::parse(&text).unwrap();
    let r = &blocks[0].result;
    assert_eq!(
        r.output_throughput_per_s,
        Some((out_tps * 100.0).round() / 100.0)
    );
    let usd_per_s = 3.5 * 2.0 / 3600.0;
    let want = format!(
        "Cost at $3.50/GPU-hour x 2 GPUs: ${:.4}/1M output tokens, ${:.4}/1M total tokens; {:.1} output tok/s per GPU, {:.1} total tok/s per GPU",
        usd_per_s / out_tps * 1e6,
        usd_per_s / total_tps * 1e6,
        out_tps / 2.0,
        total_tps / 2.0
    );
    assert!(text.contains(&want), "{want}\n{text}");
    // JSON carries the figures as data.
    let (ok, json, _) = servebench(&["report", &file, "--gpu-price", "3.5", "--format", "json"]);
    assert!(ok);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v[0]["cost"]["gpus"], 1);
    assert_eq!(v[0]["cost"]["usd_per_gpu_hour"], 3.5);
    // `compare` shows the cost figures among the production figures when both have them.
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
    for (path, price) in [(&a, "3.5"), (&b, "2.0")] {
        let (ok, json, _) =
            servebench(&["report", &file, "--gpu-price", price, "--format", "json"]);
        assert!(ok);
        std::fs::write(path, json).unwrap();
    }
    let (_, cmp, err) = servebench(&["compare", a.to_str().unwrap(), b.to_str().unwrap()]);
    let row = cmp
        .lines()
        .find(|l| l.contains("$/1M output tokens"))
        .unwrap_or_else(|| panic!("{cmp}{err}"));
    // $3.50 → $2.00 per GPU-hour at the same throughput: 3/7 less per token.
    let (base, cand) = (3.5 / 3600.0 / out_tps * 1e6, 2.0 / 3600.0 / out_tps * 1e6);
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(
        cells[3..6],
        [
            format!("{base:.2}"),
            format!("{cand:.2}"),
            format!("{:+.2}", cand - base)
        ],
        "{row}"
    );
    assert!(row.contains("-42.86%"), "{row}");
    // A GPU count without a price, a price of zero: usage errors naming the flag.
    let (ok, _, err) = servebench(&["report", &file, "--gpus", "2"]);
    assert!(!ok && err.contains("--gpu-price"), "{err}");
    let (ok, _, err) = servebench(&["report", &file, "--gpu-price", "0"]);
    assert!(!ok && err.contains("--gpu-price"), "{err}");
}

/// A simulated sweep of the optimized configuration against the baseline's at the same
/// rates: each point has within-run intervals; at equal offered load the baseline's
/// throughput is within noise of the optimized one's while its interactivity is lower, so
/// its points are dominated within noise — marked, not dropped.
#[test]
fn pareto_marks_points_dominated_within_noise() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("front");
    let specs = [
        "sim:sharegpt@2:optimized",
        "sim:sharegpt@4:optimized",
        "sim:sharegpt@8:optimized",
        "sim:sharegpt@4:baseline",
    ];
    let mut args = vec!["pareto"];
    args.extend(specs);
    args.extend(["--out", out.to_str().unwrap()]);
    let (ok, text, err) = servebench(&args);
    assert!(ok, "{err}");
    assert!(text.contains("Pareto front, output tok/s per GPU against tok/s per user (1000 / mean TPOT ms): 3 of 4 runs on the front, 1 dominated within noise."), "{text}");
    assert!(text.contains("| baseline@4 | "), "{text}");
    assert!(
        text.contains("| dominated within noise by optimized@4 |"),
        "{text}"
    );
    for name in [
        "pareto.md",
        "pareto.json",
        "pareto.svg",
        "pareto-p99-ttft.svg",
    ] {
        assert!(out.join(name).is_file(), "{name}");
    }
    let svg = std::fs::read_to_string(out.join("pareto.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("baseline@4"));
    // The points are the runs' own figures: x is the output throughput (1 GPU), y is
    // 1000 / mean TPOT, each inside its interval.
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("pareto.json")).unwrap()).unwrap();
    let points = v["fronts"][0]["points"].as_array().unwrap();
    assert_eq!(points.len(), 4);
    for p in points {
        let (x, y) = (&p["x"], &p["y"]);
        for e in [x, y] {
            assert_eq!(e["interval"], true, "{p}");
            let (lo, val, hi) = (
                e["lo"].as_f64().unwrap(),
                e["value"].as_f64().unwrap(),
                e["hi"].as_f64().unwrap(),
            );
            assert!(lo <= val && val <= hi, "{p}");
        }
    }
}
