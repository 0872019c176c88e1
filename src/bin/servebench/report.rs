//! `servebench report FILE [--convention vllm|guidellm] [--percentiles P,..] [--goodput SLOS]
//! [--format text|json] [--gpu-price USD_PER_HOUR [--gpus N]]`:
//! every benchmark of a guidellm, vLLM or SGLang result file as a "Serving Benchmark Result"
//! block. By default the file's own aggregates (guidellm → GPUStack style with GPUStack's
//! field mapping; vLLM → the report vLLM printed); `--convention` recomputes from the
//! per-request records and lists the rows it could not compute (`note: …` lines). A sweep
//! file (`bench --sweep N --output`) adds the rate table and the saturation point.

use servebench::app::{render_report, report_runs, Numbers, ReportOptions};
use servebench::result::Convention;

use crate::input::{self, InputError};
use crate::output::TextOrJson;

/// The conventions, as typed on the command line.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum ConventionArg {
    /// vLLM `bench serve` definitions (printed vLLM style).
    Vllm,
    /// guidellm's definitions (printed GPUStack style).
    Guidellm,
}

/// Arguments of `servebench report`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Any file servebench reads: a guidellm report (JSON, YAML, CSV), a `vllm bench serve`
    /// result, an SGLang JSON Lines file, an aiperf export, a servebench run file, result or
    /// text report; `-` reads stdin.
    #[arg(value_name = "FILE")]
    file: String,
    /// Recompute every row from the per-request records under this convention instead of
    /// printing the file's own aggregates.
    #[arg(long, value_enum)]
    convention: Option<ConventionArg>,
    /// Percentiles for recomputed blocks (default: 99 for vllm, 95,99 for guidellm); each
    /// in (0, 100]. Without --convention the records are recomputed under the file's own
    /// convention (vLLM's when it names none).
    #[arg(long, value_delimiter = ',', value_name = "P,...",
          allow_negative_numbers = true, value_parser = crate::values::percentile)]
    percentiles: Option<Vec<f64>>,
    /// Goodput SLOs for recomputed blocks, vLLM's syntax in ms (`"ttft:500 tpot:50 e2el:2000"`,
    /// inclusive); adds the `Request goodput (req/s)` row.
    #[arg(long, value_name = "SLOS", requires = "convention")]
    goodput: Option<servebench::metrics::Slo>,
    /// Output format: `text`, "Serving Benchmark Result" blocks; `json`, an array of
    /// servebench results.
    #[arg(long, value_enum, default_value_t)]
    format: TextOrJson,
    #[command(flatten)]
    cost: crate::cost_args::CostArgs,
}

/// The report text (blocks, or JSON results), ending in a newline.
///
/// Every run that can be reported on is printed; a run that cannot (a recomputation asked
/// of a run without records, guidellm's definitions without send times) is named on stderr
/// and the command then exits 1 after printing the others.
pub fn run(args: &Args) -> Result<String, InputError> {
    let name = input::display_name(&args.file);
    let mut runs = input::load(&args.file)?;
    // aiperf's per-request export: aiperf's own figures and window from its aggregate
    // export beside it.
    servebench::load::attach_aiperf_aggregates(std::path::Path::new(&args.file), &mut runs)?;
    let opts = ReportOptions {
        numbers: match args.convention {
            // Percentiles need a recomputation: under the file's own convention.
            None if args.percentiles.is_some() => Numbers::Recompute(
                runs.first()
                    .and_then(|r| r.result.meta.convention)
                    .unwrap_or(Convention::Vllm),
            ),
            None => Numbers::File,
            Some(ConventionArg::Vllm) => Numbers::Recompute(Convention::Vllm),
            Some(ConventionArg::Guidellm) => Numbers::Recompute(Convention::Guidellm),
        },
        percentiles: args.percentiles.clone(),
        goodput: args.goodput,
    };
    let mut blocks = Vec::new();
    let mut failed = Vec::new();
    for (b, run) in report_runs(&runs, &opts).into_iter().zip(&runs) {
        match b {
            Ok(mut b) => {
                args.cost.apply(&mut b.result);
                blocks.push(b);
            }
            Err(e) => failed.push(format!("{}: {e}", run.provenance.origin())),
        }
    }
    let out = match args.format {
        TextOrJson::Text => {
            let mut text = render_report(&blocks);
            // A sweep file: the rate table and the saturation point after the blocks.
            if let Some(sweep) = servebench::load::sweep_of(&runs) {
                let mut table = Vec::new();
                servebench::format::sweep::write_table(&sweep, &mut table)
                    .map_err(|e| InputError(format!("{name}: {e}")))?;
                text.push('\n');
                text.push_str(&String::from_utf8_lossy(&table));
            }
            text
        }
        TextOrJson::Json => {
            let results: Vec<_> = blocks.iter().map(|b| &b.result).collect();
            serde_json::to_string_pretty(&results)
                .map(|s| s + "\n")
                .map_err(|e| InputError(format!("{name}: cannot write JSON: {e}")))?
        }
    };
    if failed.is_empty() {
        return Ok(out);
    }
    // Print what could be reported, then fail naming every run that could not.
    if !blocks.is_empty() {
        use std::io::Write as _;
        let mut stdout = std::io::stdout().lock();
        let _ = stdout
            .write_all(out.as_bytes())
            .and_then(|()| stdout.flush());
    }
    Err(InputError(format!(
        "{} of {} runs not reported:\n  {}",
        failed.len(),
        runs.len(),
        failed.join("\n  ")
    )))
}
