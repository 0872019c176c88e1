//! The operator-table model against the measured H200 kernels, operator by operator: the
//! interpolated time is the measurement at every measured size, predicts each interior
//! size from the others (leave-one-out) within a stated budget that plain log-log
//! interpolation misses, and matches the measured figures the table does not hold
//! (other shapes, a second run, a whole step as one CUDA graph) within 10 %, the known
//! misses listed with their reasons (`tests/fixtures/h200-kernels/reference.json`).
#![cfg(feature = "sim")]

use servebench::sim::{forward_ops, MoeKernel, OperatorModel};
use servebench::sim::{interpolate, Dtype, KernelTable, Operator, TableEntry};
use servebench::sim::{GpuSpec, ModelSpec};

fn h200_table() -> KernelTable {
    KernelTable::for_gpu(&GpuSpec::resolve("h200").unwrap()).unwrap()
}

fn label(e: &TableEntry) -> String {
    serde_json::to_string(&e.op).unwrap()
}

/// A row whose small sizes were derived (max of a floor and the largest size's rate, the
/// measurement being host-bound there), not measured: leave-one-out at its derived knot
/// tests nothing.
fn derived(e: &TableEntry) -> bool {
    e.implementation
        .as_deref()
        .is_some_and(|i| i.contains("below,"))
}

/// (a) At every measured point of every operator the model returns the measurement (the
/// routed experts' grouped-GEMM rows when asked for them as they are: by default the step
/// model times them as vLLM's fused-MoE kernel). A row superseded by a later one for the
/// same operator — the probe's flash-linear-attention Gated DeltaNet update, superseded by
/// vLLM's published kernel timings — is kept for its provenance, not used.
#[test]
fn every_table_point_is_returned_within_ten_percent() {
    let gpu = GpuSpec::resolve("h200").unwrap();
    let table = h200_table();
    let model = OperatorModel::new(
        &ModelSpec::resolve("qwen3.5-9b").unwrap(),
        &gpu,
        Dtype::Bf16,
        false,
        Some(table.clone()),
    )
    .with_moe_kernel(MoeKernel::GroupedMm);
    let mut n = 0;
    let mut superseded = 0;
    let mut worst: f64 = 0.0;
    for e in &table.entries {
        if !std::ptr::eq(table.entry(&e.op).unwrap(), e) {
            superseded += 1;
            continue;
        }
        for &[x, us] in &e.points {
            let t = table.time_us(&e.op, x).unwrap();
            let (s, measured) = model.op_seconds(&e.op, x);
            assert!(measured);
            for got in [t, s * 1e6] {
                let err = got / us - 1.0;
                assert!(err.abs() < 0.10, "{} at {x}: {got} vs {us}", label(e));
                worst = worst.max(err.abs());
            }
            n += 1;
        }
    }
    println!(
        "{n} measured points of {} operators, largest deviation {worst:.2e}",
        table.entries.len()
    );
    assert!(n > 250, "{n}");
    assert_eq!(superseded, 1);
}

/// Log-log linear interpolation, the table's rule before the knee-shaped one: kept here
/// to show the leave-one-out budget below tells the two apart.
fn log_log(points: &[[f64; 2]], x: f64) -> f64 {
    let [x0, t0] = points[0];
    if x <= x0 {
        return t0;
    }
    for w in points.windows(2) {
        let ([xa, ta], [xb, tb]) = (w[0], w[1]);
        if x <= xb {
            let f = (x / xa).ln() / (xb / xa).ln();
            return (ta.ln() + f * (tb / ta).ln()).exp();
        }
    }
    let [xl, tl] = points[points.len() - 1];
    tl * x / xl
}

struct LeaveOneOut {
    errors: Vec<f64>,
    lines: Vec<String>,
}

impl LeaveOneOut {
    fn run(table: &KernelTable, interp: fn(&[[f64; 2]], f64) -> f64) -> LeaveOneOut {
        let mut errors = Vec::new();
        let mut lines = Vec::new();
        for e in table.entries.iter().filter(|e| !derived(e)) {
            let mut line = format!("{:<100}", label(e));
            for j in 1..e.points.len().saturating_sub(1) {
                let mut rest = e.points.clone();
                let [x, us] = rest.remove(j);
                let err = interp(&rest, x) / us - 1.0;
                line.push_str(&format!(" {x}:{:+.0}%", err * 100.0));
                errors.push(err.abs());
            }
            lines.push(line);
        }
        errors.sort_by(f64::total_cmp);
        LeaveOneOut { errors, lines }
    }

    fn share_within(&self, bound: f64) -> f64 {
        self.errors.iter().filter(|e| **e <= bound).count() as f64 / self.errors.len() as f64
    }

    fn mean(&self) -> f64 {
        self.errors.iter().sum::<f64>() / self.errors.len() as f64
    }

    fn max(&self) -> f64 {
        self.errors.last().copied().unwrap_or(0.0)
    }

    /// The stated budget: at least 75 % of interior points within 10 %, 93 % within
    /// 20 %, a mean absolute error of at most 8 % and none beyond two thirds (the worst,
    /// RoPE over 5120 features at 8 and 32 rows, is measurement jitter: ±59 %).
    fn within_budget(&self) -> bool {
        self.share_within(0.10) >= 0.75
            && self.share_within(0.20) >= 0.93
            && self.mean() <= 0.08
            && self.max() <= 2.0 / 3.0
    }

    fn summary(&self) -> String {
        format!(
            "{} interior points: {:.1} % within 10 %, {:.1} % within 20 %, mean {:.1} %, \
             median {:.1} %, max {:.0} %",
            self.errors.len(),
            100.0 * self.share_within(0.10),
            100.0 * self.share_within(0.20),
            100.0 * self.mean(),
            100.0 * self.errors[self.errors.len() / 2],
            100.0 * self.max()
        )
    }
}

/// (b) Leave-one-out: each interior measured point predicted from the rest of its row.
///
/// The budget (see [`LeaveOneOut::within_budget`]) is looser than 10 % everywhere for two
/// measured reasons. Leaving a point out doubles the gap around it (256 tokens predicted
/// from 64 and 512, an 8× span across the GEMM knee), so these errors bound the
/// interpolation error at the table's own spacing from above. And the small elementwise
/// kernels jitter by 10–60 % between neighbouring sizes at 1–5 µs (RoPE over 5120
/// features: 3.4, 4.9, then 1.4 µs at 1, 8, 32 rows; RMSNorm jumps 2× from 1 to 8 rows),
/// which no interpolation predicts. Log-log interpolation misses the budget on every
/// count (a straight line across the knee overestimates the sizes between a flat floor
/// and a linear ramp by 15–40 %).
#[test]
fn leave_one_out_interior_points_stay_within_the_stated_budget() {
    let table = h200_table();
    let shaped = LeaveOneOut::run(&table, interpolate);
    let plain = LeaveOneOut::run(&table, log_log);
    println!("leave-one-out, knee-shaped interpolation (the model):");
    for l in &shaped.lines {
        println!("  {l}");
    }
    println!("  {}", shaped.summary());
    println!(
        "log-log interpolation (the former rule): {}",
        plain.summary()
    );
    assert!(shaped.errors.len() > 150, "{}", shaped.errors.len());
    assert!(shaped.within_budget(), "{}", shaped.summary());
    assert!(!plain.within_budget(), "{}", plain.summary());
    assert!(shaped.mean() < plain.mean() * 0.6);
}

#[derive(serde::Deserialize)]
struct Reference {
    rows: Vec<Row>,
}

#[derive(serde::Deserialize)]
struct Row {
    what: String,
    #[serde(default)]
    op: Option<Operator>,
    #[serde(default)]
    composite: Option<String>,
    x: f64,
    measured_us: f64,
    check: String,
    #[serde(default)]
    reason: Option<String>,
}

/// (c) The measured figures the table does not hold. Every `within` row within 10 %,
/// every `upper_bound` row (host-bound wall time) not exceeded, and every `exception`
/// still beyond 10 % (else it belongs with the others), printed with its reason.
#[test]
fn figures_outside_the_table_are_predicted_within_ten_percent_or_named() {
    let gpu = GpuSpec::resolve("h200").unwrap();
    let table = h200_table();
    let nine_b = ModelSpec::resolve("qwen3.5-9b").unwrap();
    let model = OperatorModel::new(&nine_b, &gpu, Dtype::Bf16, false, Some(table));
    let gemms: Vec<_> = forward_ops(&nine_b, Dtype::Bf16)
        .into_iter()
        .filter(|u| matches!(u.op, Operator::Gemm { .. }))
        .collect();
    assert_eq!(gemms.iter().map(|u| u.count).sum::<u64>(), 153);
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/h200-kernels/reference.json"
    ))
    .unwrap();
    let reference: Reference = serde_json::from_str(&text).unwrap();
    let (mut within, mut bounded, mut exceptions) = (0, 0, 0);
    let mut failures = Vec::new();
    for r in &reference.rows {
        let (us, source) = match (&r.op, r.composite.as_deref()) {
            (Some(op), None) => {
                let (s, measured) = model.op_seconds(op, r.x);
                (s * 1e6, if measured { "table" } else { "roofline" })
            }
            (None, Some("qwen3.5-9b-gemms")) => {
                let s: f64 = gemms
                    .iter()
                    .map(|u| model.op_seconds(&u.op, r.x).0 * u.count as f64)
                    .sum();
                (s * 1e6, "sum of table GEMMs")
            }
            _ => panic!("{}: neither an operator nor a known composite", r.what),
        };
        let err = us / r.measured_us - 1.0;
        println!(
            "{:>+6.1} %  model {us:>9.1} µs ({source}) vs {:>9.1} µs  [{}] {}{}",
            err * 100.0,
            r.measured_us,
            r.check,
            r.what,
            r.reason
                .as_deref()
                .map(|w| format!("\n           reason: {w}"))
                .unwrap_or_default()
        );
        let ok = match r.check.as_str() {
            "within" => {
                within += 1;
                err.abs() <= 0.10
            }
            "upper_bound" => {
                bounded += 1;
                us <= r.measured_us
            }
            "exception" => {
                exceptions += 1;
                r.reason.is_some() && err.abs() > 0.10
            }
            other => panic!("{}: unknown check `{other}`", r.what),
        };
        if !ok {
            failures.push(format!("{} [{}]: {err:+.3}", r.what, r.check));
        }
    }
    println!("{within} within 10 %, {bounded} upper bounds, {exceptions} named exceptions");
    assert!(failures.is_empty(), "{failures:#?}");
    assert!(within >= 20 && exceptions <= 6, "{within} {exceptions}");
}
