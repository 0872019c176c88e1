//! The prediction gate (aiconfigurator's pattern, `prediction_regression_gate_design.md`):
//! a pinned set of the simulator's predictions — a grid over models × GPUs × named
//! configurations × the load presets, and the development points — checked on every test
//! run. A change that moves any figure beyond [`BAND`] fails here until the pins are
//! updated in the same commit, with the reason in the commit message and the CHANGELOG:
//!
//! ```sh
//! SERVEBENCH_UPDATE_PINS=1 cargo test --test prediction_gate
//! ```
//!
//! Each prediction keeps seven figures: duration, mean and P99 TTFT, mean TPOT, mean and
//! P99 end-to-end latency, output tokens/s. A combination the simulator refuses (a model
//! that does not fit the GPU) is pinned as its error text, so a change that makes it fit,
//! or stop fitting, moves a pin too.
#![cfg(feature = "sim")]

use std::collections::BTreeMap;
use std::path::Path;

use servebench::profile::Profile;
use servebench::sim::{simulate, Config};

/// The largest relative move of a figure that passes (the simulator is deterministic for a
/// seed: the band only absorbs floating-point differences between platforms' libm).
const BAND: f64 = 1e-4;
const PINS: &str = "tests/fixtures/predictions.json";
const MODELS: [&str; 2] = ["qwen3.5-35b-a3b", "qwen3.5-9b"];
const GPUS: [&str; 2] = ["h100", "h200"];
const CONFIGS: [&str; 3] = ["baseline", "quantization", "optimized"];
const PRESETS: [&str; 5] = [
    "sharegpt",
    "throughput",
    "long-context",
    "generation-heavy",
    "latency",
];
const FIGURES: [&str; 7] = [
    "duration_s",
    "ttft_mean_ms",
    "ttft_p99_ms",
    "tpot_mean_ms",
    "e2el_mean_ms",
    "e2el_p99_ms",
    "output_tok_s",
];

/// Every prediction, by key: its figures, or the simulator's refusal.
fn predictions() -> BTreeMap<String, serde_json::Value> {
    let mut out = BTreeMap::new();
    for model in MODELS {
        for gpu in GPUS {
            for config in CONFIGS {
                let c = Config::named_on(config, model, gpu);
                for preset in PRESETS {
                    let key = format!("{model}/{gpu}/{config}/{preset}");
                    let value = match &c {
                        Err(e) => serde_json::json!({"refused": e.to_string()}),
                        Ok(c) => {
                            let p = Profile::preset(preset).unwrap();
                            match simulate(&p, c, 42, false) {
                                Ok(s) => figures(&s.result),
                                Err(e) => serde_json::json!({"refused": e.to_string()}),
                            }
                        }
                    };
                    out.insert(key, value);
                }
            }
        }
    }
    for r in servebench::sim::development_points(42).unwrap() {
        out.insert(
            format!("dev/{}", r.point.label),
            serde_json::json!({"duration_s": r.duration_s, "ttft_mean_ms": r.ttft_s * 1000.0,
                "e2el_mean_ms": r.e2e_s * 1000.0}),
        );
    }
    out
}

fn figures(r: &servebench::BenchmarkResult) -> serde_json::Value {
    let s = |x: &Option<servebench::Summary>, f: fn(&servebench::Summary) -> Option<f64>| {
        x.as_ref().and_then(f)
    };
    let p99 = |x: &servebench::Summary| {
        x.percentiles
            .iter()
            .find(|q| q.p == 99.0)
            .and_then(|q| q.value)
    };
    serde_json::json!({
        "duration_s": r.duration_ms.map(|d| d / 1000.0),
        "ttft_mean_ms": s(&r.ttft, |x| x.mean),
        "ttft_p99_ms": s(&r.ttft, p99),
        "tpot_mean_ms": s(&r.tpot, |x| x.mean),
        "e2el_mean_ms": s(&r.e2el, |x| x.mean),
        "e2el_p99_ms": s(&r.e2el, p99),
        "output_tok_s": r.output_throughput_per_s,
    })
}

/// What moved between `pinned` and `now`, one line each.
fn moved(
    pinned: &BTreeMap<String, serde_json::Value>,
    now: &BTreeMap<String, serde_json::Value>,
) -> Vec<String> {
    let mut out = Vec::new();
    for key in pinned
        .keys()
        .chain(now.keys())
        .collect::<std::collections::BTreeSet<_>>()
    {
        let (Some(a), Some(b)) = (pinned.get(key), now.get(key)) else {
            out.push(format!(
                "{key}: pinned {:?}, now {:?}",
                pinned.get(key),
                now.get(key)
            ));
            continue;
        };
        if a.get("refused").is_some() || b.get("refused").is_some() {
            if a != b {
                out.push(format!("{key}: pinned {a}, now {b}"));
            }
            continue;
        }
        for f in FIGURES {
            match (
                a.get(f).and_then(|v| v.as_f64()),
                b.get(f).and_then(|v| v.as_f64()),
            ) {
                (Some(x), Some(y)) if (y - x).abs() <= BAND * x.abs().max(1e-12) => {}
                (None, None) => {}
                (x, y) => out.push(format!(
                    "{key} {f}: pinned {x:?}, now {y:?}{}",
                    match (x, y) {
                        (Some(x), Some(y)) if x != 0.0 =>
                            format!(" ({:+.3} %)", (y / x - 1.0) * 100.0),
                        _ => String::new(),
                    }
                )),
            }
        }
    }
    out
}

#[test]
fn the_simulators_predictions_match_their_pins() {
    let now = predictions();
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(PINS);
    if std::env::var_os("SERVEBENCH_UPDATE_PINS").is_some() {
        let doc = serde_json::json!({
            "format": "servebench-prediction-pins",
            "band": BAND,
            "seed": 42,
            "predictions": now,
        });
        let text = serde_json::to_string_pretty(&doc).unwrap() + "\n";
        servebench::atomic::write(&path, text.as_bytes()).unwrap();
        eprintln!("wrote {} predictions to {PINS}", now.len());
        return;
    }
    let doc: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{PINS}: {e}")),
    )
    .unwrap();
    let pinned: BTreeMap<String, serde_json::Value> =
        serde_json::from_value(doc["predictions"].clone()).unwrap();
    let changes = moved(&pinned, &now);
    assert!(
        changes.is_empty(),
        "{} simulator predictions moved beyond {BAND:e} (if intended, run \
         `SERVEBENCH_UPDATE_PINS=1 cargo test --test prediction_gate`, commit {PINS} and say \
         why in the commit message and the CHANGELOG):\n{}",
        changes.len(),
        changes.join("\n")
    );
    // The grid is whole: every combination is pinned, none simulated twice.
    assert_eq!(
        pinned.keys().filter(|k| !k.starts_with("dev/")).count(),
        MODELS.len() * GPUS.len() * CONFIGS.len() * PRESETS.len()
    );
}

/// The gate catches what it is for: a one-per-cent change of one figure fails it, a change
/// inside the band does not.
#[test]
fn the_gate_fails_on_a_moved_prediction() {
    let mut a = BTreeMap::new();
    a.insert(
        "m/g/c/p".to_string(),
        serde_json::json!({"duration_s": 10.0, "ttft_mean_ms": 100.0}),
    );
    let mut b = a.clone();
    b.insert(
        "m/g/c/p".to_string(),
        serde_json::json!({"duration_s": 10.0, "ttft_mean_ms": 101.0}),
    );
    let out = moved(&a, &b);
    assert_eq!(out.len(), 1);
    assert!(out[0].contains("ttft_mean_ms: pinned Some(100.0), now Some(101.0) (+1.000 %)"));
    b.insert(
        "m/g/c/p".to_string(),
        serde_json::json!({"duration_s": 10.0, "ttft_mean_ms": 100.0 * (1.0 + BAND / 2.0)}),
    );
    assert!(moved(&a, &b).is_empty());
}
