//! The study document's cost table: for each final profile, what a million output tokens
//! cost and the output tokens per second per GPU, baseline against the recommendation,
//! beside the energy per token — when the study file gives the engine a GPU price.

use std::fmt::Write as _;

use crate::metrics::cost_figures;
use crate::result::BenchmarkResult;
use crate::study::file::StudyFile;
use crate::study::journal::Configuration;
use crate::study::plan::{representative, Analysis, Outcomes};

/// The cost table (nothing when the engine has no `gpu_price`).
pub(super) fn cost_table(w: &mut String, study: &StudyFile, o: &Outcomes, a: &Analysis) {
    let (Some(b), Some(r)) = (&a.baseline, &a.recommended) else {
        return;
    };
    let Some(engine) = study.engines.iter().find(|e| e.name == b.engine) else {
        return;
    };
    let Some(price) = engine.gpu_price else {
        return;
    };
    let gpus = engine.gpus.unwrap_or(1);
    let money = |v: Option<f64>| v.map_or("–".to_string(), |v| format!("${v:.4}"));
    let num = |v: Option<f64>, d: usize| v.map_or("–".to_string(), |v| format!("{v:.d$}"));
    let cost = |c: &Configuration, p: &str| -> Option<(&BenchmarkResult, _)> {
        let (_, x) = representative(study, o, c, p)?;
        Some((x, cost_figures(x, gpus, price)))
    };
    let mut rows = Vec::new();
    for p in &study.final_.profiles {
        let (Some((br, bc)), Some((rr, rc))) = (cost(b, p), cost(r, p)) else {
            continue;
        };
        let joules =
            |x: &BenchmarkResult| x.energy.as_ref().and_then(|e| e.joules_per_output_token);
        rows.push(format!(
            "| {p} | {} → {} | {} → {} | {} → {} |",
            money(bc.usd_per_million_output_tokens),
            money(rc.usd_per_million_output_tokens),
            num(bc.output_tokens_per_s_per_gpu, 1),
            num(rc.output_tokens_per_s_per_gpu, 1),
            num(joules(br), 4),
            num(joules(rr), 4),
        ));
    }
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(
        w,
        "Cost at ${price:.2} per GPU-hour, {gpus} GPU{} (baseline → optimized):\n\n\
         | Profile | $/1M output tokens | Output tok/s per GPU | Energy per output token (J) |\n\
         |---|---|---|---|\n{}\n",
        if gpus == 1 { "" } else { "s" },
        rows.join("\n")
    );
}
