//! Generate a deterministic synthetic run, optionally write it for
//! `scripts/numpy_metrics.py`, and time `metrics::compute` on it (`Convention::Vllm`, or
//! `--convention guidellm`).
//!
//! ```text
//! cargo run --release --example metrics_dataset -- --requests 1000000 --chunks 100 \
//!     --out /tmp/sb-100m --repeat 3
//! cargo run --release --example metrics_dataset -- --requests 1000000 --chunks 100 \
//!     --convention guidellm --repeat 3
//! ```
//!
//! With `--convention guidellm --reference`, the straightforward computation
//! (`guidellm_metrics`, every status group and distribution, plus the exact figures: what
//! `compute` ran before its fast path) is timed instead, and the run is checked to give the
//! same figures as `compute`.
//!
//! Prints one JSON object: sizes, each compute() time in seconds, and the main figures (so
//! the numpy script can check that both computed the same numbers).

use std::path::PathBuf;
use std::time::Instant;

use servebench::metrics::{compute, exact_figures, guidellm_metrics, MetricsOptions};
use servebench::record::synthetic as dataset;
use servebench::result::Convention;

/// User + system CPU seconds of this process so far (Linux `/proc/self/stat`, 100 Hz
/// ticks); `None` elsewhere. Wall time is noisy on a shared machine; CPU time much less.
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let after = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = after.split_whitespace().collect();
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) / 100.0)
}

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let num = |name: &str, default: u64| -> u64 {
        match arg(&args, name) {
            Some(v) => v.parse().unwrap_or_else(|e| {
                eprintln!("{name} {v}: {e}");
                std::process::exit(2)
            }),
            None => default,
        }
    };
    let n = num("--requests", 10_000) as usize;
    let chunks = num("--chunks", 100) as usize;
    let repeat = num("--repeat", 1).max(1);
    let seed = num("--seed", 42);
    let rate = (n as f64 / 1000.0).max(1.0);
    let convention = match arg(&args, "--convention").as_deref() {
        None | Some("vllm") => Convention::Vllm,
        Some("guidellm") => Convention::Guidellm,
        Some(other) => {
            eprintln!("--convention {other}: expected vllm or guidellm");
            std::process::exit(2)
        }
    };
    let reference = args.iter().any(|a| a == "--reference");
    if reference && convention != Convention::Guidellm {
        eprintln!("--reference needs --convention guidellm");
        std::process::exit(2)
    }

    let t = Instant::now();
    let records = dataset::generate(n, chunks, rate, seed);
    let gen_s = t.elapsed().as_secs_f64();
    if let Some(out) = arg(&args, "--out") {
        let dir = PathBuf::from(out);
        if let Err(e) = dataset::write_dataset(&dir, &records) {
            eprintln!("{}: {e}", dir.display());
            std::process::exit(1);
        }
    }
    let mut times = Vec::new();
    let mut reference_times = Vec::new();
    let mut cpu = Vec::new();
    let mut res = None;
    for _ in 0..repeat {
        let c0 = cpu_seconds();
        let t = Instant::now();
        let r = if reference {
            let opts = MetricsOptions::new(Convention::Guidellm);
            let m = guidellm_metrics(&records, &opts);
            let exact = exact_figures(&records);
            let elapsed = t.elapsed().as_secs_f64();
            let fast = compute(&records, Convention::Guidellm);
            reference_times.push(elapsed);
            let same = fast.peak_output_throughput_per_s
                == Some(m.output_tokens_per_second.successful.max)
                && fast.total_token_throughput_per_s == Some(m.tokens_per_second.successful.mean)
                && fast.exact == Some(exact);
            if !same {
                eprintln!("the reference and compute() disagree");
                std::process::exit(1)
            }
            fast
        } else {
            compute(&records, convention)
        };
        let elapsed = t.elapsed().as_secs_f64();
        times.push(reference_times.pop().unwrap_or(elapsed));
        // (With --reference the CPU time includes the checking compute() call.)
        if let (Some(a), Some(b)) = (c0, cpu_seconds()) {
            cpu.push(b - a);
        }
        res = Some(r);
    }
    let Some(res) = res else { return };
    let s = |x: &Option<servebench::result::Summary>,
             f: &dyn Fn(&servebench::result::Summary) -> Option<f64>| {
        x.as_ref().and_then(f).unwrap_or(f64::NAN)
    };
    let figures = serde_json::json!({
        "completed": res.successful_requests,
        "failed": res.failed_requests,
        "total_input": res.total_input_tokens,
        "total_output": res.total_output_tokens,
        "duration_s": res.duration_ms.map(|ms| ms / 1000.0),
        "mean_ttft_ms": s(&res.ttft, &|x| x.mean),
        "median_ttft_ms": s(&res.ttft, &|x| x.median),
        "std_ttft_ms": s(&res.ttft, &|x| x.std),
        "p99_ttft_ms": s(&res.ttft, &|x| x.percentile(99.0)),
        "mean_tpot_ms": s(&res.tpot, &|x| x.mean),
        "median_tpot_ms": s(&res.tpot, &|x| x.median),
        "p99_tpot_ms": s(&res.tpot, &|x| x.percentile(99.0)),
        "mean_itl_ms": s(&res.itl, &|x| x.mean),
        "median_itl_ms": s(&res.itl, &|x| x.median),
        "std_itl_ms": s(&res.itl, &|x| x.std),
        "p99_itl_ms": s(&res.itl, &|x| x.percentile(99.0)),
        "mean_e2el_ms": s(&res.e2el, &|x| x.mean),
        "p99_e2el_ms": s(&res.e2el, &|x| x.percentile(99.0)),
        "max_output_tokens_per_s": res.peak_output_throughput_per_s,
        "max_concurrent_requests": res.peak_concurrent_requests,
    });
    let out = serde_json::json!({
        "convention": if reference { "guidellm-reference".to_string() } else { format!("{convention:?}").to_lowercase() },
        "requests": n,
        "chunks": n * chunks,
        "generate_s": gen_s,
        "compute_s": times,
        "compute_min_s": times.iter().cloned().fold(f64::INFINITY, f64::min),
        "compute_cpu_s": cpu,
        "figures": figures,
    });
    println!("{out}");
}
