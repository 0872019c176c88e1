//! Files: what `servebench lint FILE...` runs — every run the loader reads from a file,
//! linted with its records when it has them ([`crate::format::lint`] prints the findings).

use crate::lint::{lint_run, Finding, LintOptions, RunFindings};
use crate::runfile::{RunFile, RunStatus};

/// `servebench lint` exit status with no findings.
pub const EXIT_CLEAN: i32 = 0;
/// Exit status for unreadable or malformed input.
pub const EXIT_BAD_INPUT: i32 = 1;
/// Exit status for a usage error.
pub const EXIT_USAGE: i32 = 2;
/// Exit status when there are findings.
pub const EXIT_FINDINGS: i32 = 3;

/// Why a file could not be linted: the loader's error (see [`crate::load`]).
pub type LintInputError = crate::load::LoadError;

/// Lint every run in `bytes`, a file called `source_name`: everything [`crate::load`]
/// reads (text reports with the profile and parameters written around each block,
/// servebench results and run files, guidellm, vLLM, SGLang and aiperf files, with their
/// records when they have them).
///
/// ```
/// let bytes = std::fs::read("tests/fixtures/seed.txt").unwrap();
/// let runs = servebench::app::lint_bytes("seed.txt", &bytes, &Default::default()).unwrap();
/// assert_eq!(runs.len(), 15);
/// assert_eq!(runs[0].run, "line 131");
/// assert!(runs[0].findings.iter().any(|f| f.code.as_str() == "single-iteration-streams"));
/// ```
///
/// # Errors
///
/// The loader's [`crate::load::LoadError`]: the file, what it was read as, and why it did
/// not fit.
pub fn lint_bytes(
    source_name: &str,
    bytes: &[u8],
    opts: &LintOptions,
) -> Result<Vec<RunFindings>, LintInputError> {
    let runs = crate::load::load(source_name, bytes)?;
    Ok(lint_runs(&runs, opts))
}

/// Lint runs already loaded.
pub fn lint_runs(runs: &[crate::load::Run], opts: &LintOptions) -> Vec<RunFindings> {
    runs.iter()
        .map(|run| RunFindings {
            source: run.provenance.file.clone(),
            findings: match &run.records {
                Some(recs) if recs.interrupted.is_some() && opts.expected_requests.is_none() => {
                    // An interrupted run is judged on the requests it sent.
                    let sent = LintOptions {
                        expected_requests: Some(recs.all.len() as u64),
                        ..opts.clone()
                    };
                    lint_run(&run.result, Some(&recs.measured()), &sent)
                }
                Some(recs) => lint_run(&run.result, Some(&recs.measured()), opts),
                None => lint_run(&run.result, None, opts),
            },
            run: run.name.clone(),
        })
        .collect()
}

/// [`lint_bytes`] on a file.
///
/// # Errors
///
/// As [`lint_bytes`], or the file cannot be read.
pub fn lint_path(
    path: &std::path::Path,
    opts: &LintOptions,
) -> Result<Vec<RunFindings>, LintInputError> {
    let runs = crate::load::load_path(path)?;
    Ok(lint_runs(&runs, opts))
}

/// [`EXIT_FINDINGS`] when any run has a finding, else [`EXIT_CLEAN`].
pub fn exit_code(runs: &[RunFindings]) -> i32 {
    if runs.iter().any(|r| !r.findings.is_empty()) {
        EXIT_FINDINGS
    } else {
        EXIT_CLEAN
    }
}

/// The lints of a saved run, with what its file knows: the requests it meant to send (the
/// profile's count; for an interrupted run, those sent) and the profile's cap.
pub fn lint_run_file(file: &RunFile) -> Vec<Finding> {
    let expected = match (&file.status, file.shard) {
        (RunStatus::Interrupted { .. }, _) => file.records.len() as u64,
        (RunStatus::Complete, None) => file.profile.total_requests,
        // A shard meant to send its part of the profile's requests.
        (RunStatus::Complete, Some(shard)) => {
            let n = usize::try_from(file.profile.total_requests).unwrap_or(usize::MAX);
            shard.indices(n).count() as u64
        }
    };
    let opts = LintOptions {
        expected_requests: Some(expected),
        client_cap: file.profile.max_concurrency,
    };
    lint_run(&file.result, Some(&file.records), &opts)
}
