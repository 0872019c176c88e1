//! `servebench quality --target URL --eval synthetic:N|FILE.jsonl [--output Q.json]` asks a
//! server every item of an eval set (greedy, not streamed) and reports the accuracy with
//! its interval; `servebench quality compare A.json B.json [--margin POINTS]` pairs two
//! runs item by item (McNemar's exact test and a non-inferiority margin). The statistics
//! are `servebench::quality`'s.

use std::path::PathBuf;

use servebench::quality::eval;
use servebench::quality::paired::{accuracy, compare_runs};
use servebench::quality::run::{QualityRun, QUALITY_FORMAT};

use crate::input::InputError;

/// Arguments of `servebench quality`.
#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct Args {
    #[command(subcommand)]
    compare: Option<Sub>,
    /// The server's base URL (`http://127.0.0.1:8000`).
    #[arg(long, required = true)]
    target: Option<String>,
    /// The eval set: `synthetic:N` (N seeded arithmetic items) or a JSON Lines file
    /// (servebench's `prompt`/`answer`/`scorer`, GSM8K's or MMLU's lines).
    #[arg(long, value_name = "synthetic:N|FILE", required = true)]
    eval: Option<String>,
    /// The model to name in the requests (default: none, the server's own).
    #[arg(long)]
    model: Option<String>,
    /// Most tokens per answer.
    #[arg(long, default_value_t = 32, value_parser = clap::value_parser!(u64).range(1..))]
    max_tokens: u64,
    /// Requests in flight at once.
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u64).range(1..=1024))]
    concurrency: u64,
    /// Write the run (every item's outcome) to this file.
    #[arg(long, value_name = "Q.json")]
    output: Option<PathBuf>,
}

#[derive(Debug, clap::Subcommand)]
enum Sub {
    /// Compare two quality runs of the same eval set, item by item.
    Compare {
        /// The reference run.
        reference: String,
        /// The candidate run.
        candidate: String,
        /// Non-inferiority margin, accuracy points.
        #[arg(long, default_value_t = 1.0, value_parser = crate::values::positive_f64("--margin"))]
        margin: f64,
        /// The error rate α (two-sided test; one-sided for non-inferiority).
        #[arg(long, default_value_t = 0.05, value_parser = alpha)]
        alpha: f64,
    },
}

fn alpha(s: &str) -> Result<f64, String> {
    s.parse::<f64>()
        .ok()
        .filter(|a| *a > 0.0 && *a < 0.5)
        .ok_or_else(|| format!("--alpha must be between 0 and 0.5, got `{s}`"))
}

/// Runs the verb.
pub fn run(args: &Args) -> Result<String, InputError> {
    if let Some(Sub::Compare {
        reference,
        candidate,
        margin,
        alpha,
    }) = &args.compare
    {
        let r = QualityRun::read(reference).map_err(|e| InputError(e.to_string()))?;
        let c = QualityRun::read(candidate).map_err(|e| InputError(e.to_string()))?;
        if r.eval != c.eval {
            return Err(InputError(format!(
                "{reference} ran `{}`, {candidate} ran `{}`: compare runs of the same eval set",
                r.eval, c.eval
            )));
        }
        let ids_differ = r.items.iter().zip(&c.items).any(|(a, b)| a.id != b.id);
        if ids_differ {
            return Err(InputError(format!(
                "{reference} and {candidate} list their items in different orders or ids"
            )));
        }
        let cmp = compare_runs(&r.outcomes(), &c.outcomes(), *alpha, *margin)
            .map_err(|e| InputError(format!("{reference}, {candidate}: {e}")))?;
        let mut out = servebench::format::quality::comparison_lines(&cmp, &r.accuracy, &c.accuracy);
        out.push(format!("Test: {}.", cmp.test));
        return Ok(out.join("\n") + "\n");
    }
    let (Some(target), Some(spec)) = (&args.target, &args.eval) else {
        return Err(InputError("quality: --target and --eval are needed".into()));
    };
    let items = eval::load(spec).map_err(|e| InputError(e.to_string()))?;
    let mut config = servebench::HttpConfig::new(target.clone());
    config.model = args.model.clone();
    let engine = servebench::HttpEngine::new(config)
        .map_err(|e| InputError(format!("quality: {target}: {e}")))?;
    let outcomes = servebench::app::quality::ask_all(
        &engine,
        &items,
        args.max_tokens,
        args.concurrency as usize,
    );
    let failed = outcomes.iter().filter(|o| o.error.is_some()).count();
    if failed == items.len() {
        let why = outcomes
            .iter()
            .find_map(|o| o.error.clone())
            .unwrap_or_default();
        return Err(InputError(format!(
            "quality: {target}: every request failed (first: {why})"
        )));
    }
    let right = outcomes.iter().filter(|o| o.right).count();
    let run = QualityRun {
        format: QUALITY_FORMAT.into(),
        version: 1,
        target: target.clone(),
        model: args.model.clone(),
        eval: spec.clone(),
        sampling: format!(
            "temperature 0, max_tokens {}, not streamed",
            args.max_tokens
        ),
        items: outcomes,
        accuracy: accuracy(right, items.len(), 0.95),
    };
    let mut out = servebench::format::quality::accuracy_line(&run.accuracy);
    out.push('\n');
    if failed > 0 {
        out.push_str(&format!(
            "{failed} of {} requests failed (counted wrong)\n",
            items.len()
        ));
    }
    if let Some(path) = &args.output {
        let json = serde_json::to_string_pretty(&run)
            .map_err(|e| InputError(format!("{}: {e}", path.display())))?;
        servebench::atomic::write(path, json.as_bytes())
            .map_err(|e| InputError(format!("{}: {e}", path.display())))?;
    }
    Ok(out)
}
