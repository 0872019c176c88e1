//! Run files (`bench --output`) as input to `report`, `render`, `compare`, `lint` and
//! `parse`, until the library's single loader reads them for every verb.

use servebench::format::text::Style;
use servebench::import::report::{Numbers, ReportBlock, ReportOptions};
use servebench::lint::{lint_run, LintOptions, RunFindings};
use servebench::metrics::{compute, MetricsOptions};
use servebench::result::Convention;
use servebench::runfile::RunFile;

use crate::input::InputError;

/// Whether `bytes` look like a run file.
pub fn sniff(bytes: &[u8]) -> bool {
    RunFile::sniff(bytes)
}

/// The run file in `bytes`; errors name `name`.
pub fn read(name: &str, bytes: &[u8]) -> Result<RunFile, InputError> {
    RunFile::from_slice(bytes).map_err(|e| InputError(format!("{name}: {e}")))
}

/// The style whose labels match a convention's numbers.
pub fn style_for(convention: Option<Convention>) -> Style {
    match convention {
        Some(Convention::Guidellm) => Style::Gpustack,
        _ => Style::Vllm,
    }
}

/// `report` on a run file: its saved result, or the records recomputed.
pub fn report(file: &RunFile, opts: &ReportOptions) -> ReportBlock {
    let name = match &file.status {
        servebench::runfile::RunStatus::Complete => "run".to_string(),
        servebench::runfile::RunStatus::Interrupted { reason } => {
            format!("run (interrupted: {reason})")
        }
    };
    let (result, notes) = match opts.numbers {
        Numbers::File => (file.result.clone(), Vec::new()),
        Numbers::Recompute(convention) => {
            let mut m = MetricsOptions::new(convention);
            if let Some(p) = &opts.percentiles {
                m.percentiles = p.clone();
            }
            m.goodput = opts.goodput;
            let mut r = compute(&file.records, m);
            r.meta = file.result.meta.clone();
            r.meta.convention = Some(convention);
            if convention == Convention::Vllm {
                // vLLM prints its client cap there; the saved result has it when it was
                // computed in vLLM's convention, else the profile does.
                r.max_concurrency =
                    file.profile
                        .max_concurrency
                        .or(match file.result.meta.convention {
                            Some(Convention::Vllm) => file.result.max_concurrency,
                            _ => None,
                        });
            }
            (r, Vec::new())
        }
    };
    let style = style_for(result.meta.convention);
    ReportBlock {
        name,
        result,
        style,
        layout: None,
        notes,
    }
}

/// `lint` on a run file: the result and the records, with the file's profile; `opts`
/// (the command line) wins over what the file says.
pub fn lint(name: &str, file: &RunFile, opts: &LintOptions) -> RunFindings {
    let mut findings = file.lint();
    if opts.expected_requests.is_some() || opts.client_cap.is_some() {
        let defaults = LintOptions {
            expected_requests: Some(file.profile.total_requests),
            client_cap: file.profile.max_concurrency,
        };
        let o = LintOptions {
            expected_requests: opts.expected_requests.or(defaults.expected_requests),
            client_cap: opts.client_cap.or(defaults.client_cap),
        };
        findings = lint_run(&file.result, Some(&file.records), &o);
    }
    RunFindings {
        source: name.to_string(),
        run: "run".to_string(),
        findings,
    }
}
