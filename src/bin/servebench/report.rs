//! `servebench report FILE [--convention vllm|guidellm] [--percentiles P,..] [--goodput SLOS]
//! [--format text|json]`:
//! every benchmark of a guidellm, vLLM or SGLang result file as a "Serving Benchmark Result"
//! block. By default the file's own aggregates (guidellm → GPUStack style with GPUStack's
//! field mapping; vLLM → the report vLLM printed); `--convention` recomputes from the
//! per-request records and lists the rows it could not compute (`note: …` lines).

use servebench::import::report::{render_report, report_bytes, Numbers, ReportOptions};
use servebench::result::Convention;

use crate::input::{self, InputError};

/// The conventions, as typed on the command line.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum ConventionArg {
    /// vLLM `bench serve` definitions (printed vLLM style).
    Vllm,
    /// guidellm's definitions (printed GPUStack style).
    Guidellm,
}

/// Output formats.
#[derive(Debug, Clone, Copy, Default, clap::ValueEnum)]
pub enum FormatArg {
    /// "Serving Benchmark Result" blocks.
    #[default]
    Text,
    /// A JSON array of servebench results.
    Json,
}

/// Arguments of `servebench report`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A guidellm report (JSON), a `vllm bench serve` result (JSON or JSON Lines) or an
    /// SGLang `bench_serving` JSON Lines file; `-` reads stdin.
    #[arg(value_name = "FILE")]
    file: String,
    /// Recompute every row from the per-request records under this convention instead of
    /// printing the file's own aggregates.
    #[arg(long, value_enum)]
    convention: Option<ConventionArg>,
    /// Percentiles for recomputed blocks (default: 99 for vllm, 95,99 for guidellm); each
    /// in (0, 100].
    #[arg(long, value_delimiter = ',', value_name = "P,...", requires = "convention",
          allow_negative_numbers = true, value_parser = crate::values::percentile)]
    percentiles: Option<Vec<f64>>,
    /// Goodput SLOs for recomputed blocks, vLLM's syntax in ms (`"ttft:500 tpot:50 e2el:2000"`,
    /// inclusive); adds the `Request goodput (req/s)` row.
    #[arg(long, value_name = "SLOS", requires = "convention")]
    goodput: Option<servebench::metrics::Slo>,
    /// Output format.
    #[arg(long, value_enum, default_value_t)]
    format: FormatArg,
}

/// The report text (blocks, or JSON results), ending in a newline.
pub fn run(args: &Args) -> Result<String, InputError> {
    let name = input::display_name(&args.file);
    let bytes = read_bytes(&args.file)?;
    let opts = ReportOptions {
        numbers: match args.convention {
            None => Numbers::File,
            Some(ConventionArg::Vllm) => Numbers::Recompute(Convention::Vllm),
            Some(ConventionArg::Guidellm) => Numbers::Recompute(Convention::Guidellm),
        },
        percentiles: args.percentiles.clone(),
        goodput: args.goodput,
    };
    let blocks = if crate::runfile_in::sniff(&bytes) {
        let file = crate::runfile_in::read(&name, &bytes)?;
        vec![crate::runfile_in::report(&file, &opts)]
    } else {
        report_bytes(&bytes, &opts).map_err(|e| InputError(format!("{name}: {e}")))?
    };
    match args.format {
        FormatArg::Text => Ok(render_report(&blocks)),
        FormatArg::Json => {
            let results: Vec<_> = blocks.iter().map(|b| &b.result).collect();
            serde_json::to_string_pretty(&results)
                .map(|s| s + "\n")
                .map_err(|e| InputError(format!("{name}: cannot write JSON: {e}")))
        }
    }
}

/// Reads `path` (`-`: stdin) as bytes.
pub fn read_bytes(path: &str) -> Result<Vec<u8>, InputError> {
    use std::io::Read as _;
    let name = input::display_name(path);
    let mut bytes = Vec::new();
    let res = if path == "-" {
        std::io::stdin().read_to_end(&mut bytes).map(|_| ())
    } else {
        std::fs::read(path).map(|b| bytes = b)
    };
    res.map_err(|e| InputError(format!("{name}: cannot read: {e}")))?;
    Ok(bytes)
}
