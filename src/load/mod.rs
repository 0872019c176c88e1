//! The one loader: bytes (and the file's name, for messages) → [`Run`]s, whatever wrote
//! them. Every `servebench` verb reads its inputs through [`load`], so every file one verb
//! reads, all of them read.
//!
//! | format | what a run holds |
//! |---|---|
//! | text report ("Serving Benchmark Result" blocks) | the block's result, with the metadata written around it |
//! | servebench JSON result (one object or an array) | the result |
//! | servebench run file (`bench --output`) | the result and every record |
//! | servebench sweep file (`bench --sweep N --output`) | one run per rate, each with its records and [`SweepPoint`] |
//! | guidellm JSON / YAML report | guidellm's aggregates; every listed request, with guidellm's measured window |
//! | guidellm CSV | guidellm's aggregates (no records) |
//! | vLLM result JSON / JSON Lines | vLLM's aggregates; records with `--save-detailed` |
//! | SGLang JSON Lines | SGLang's aggregates; records with `--output-details` (no send times) |
//! | aiperf `profile_export.jsonl` | records (recomputed under either convention) |
//! | aiperf `profile_export_aiperf.json` / `.csv` | aiperf's aggregates (no records) |
//!
//! A [`Run`] is a result, optional [`Records`] (with what a recomputation needs: the
//! measured window, the time origin, whether send times were recorded) and its
//! [`Provenance`]. Errors are one type, [`LoadError`]: the file, what it was recognised
//! as, and why it did not fit (line, column, JSON path or CSV column).
//!
//! ```
//! use servebench::load::{load, Format};
//! let bytes = std::fs::read("tests/fixtures/seed.txt").unwrap();
//! let runs = load("seed.txt", &bytes).unwrap();
//! assert_eq!(runs.len(), 15);
//! assert_eq!(runs[0].provenance.format, Format::Text);
//! assert_eq!(runs[0].provenance.at.as_deref(), Some("line 131"));
//!
//! let err = load("r.json", br#"{"completed": "many"}"#).unwrap_err();
//! assert_eq!(err.to_string(), "r.json: read as a vLLM result (JSON): $.completed: expected an integer, found a string");
//! ```

use std::path::Path;
use std::time::Duration;

use crate::format::text::{BlocksFile, Layout, BLOCKS_FORMAT, BLOCKS_VERSION};
use crate::import::{self, ImportError};
use crate::record::RequestRecord;
use crate::result::{BenchmarkResult, MIN_SCHEMA_VERSION, SCHEMA_VERSION};

mod error;
mod sniff;
mod sweep;
mod validate;

pub use error::{LoadError, LoadErrorKind};
pub use sniff::sniff;
pub use sweep::{strategy_name, sweep_of, SweepPoint};
pub use validate::{implausible, PLAUSIBLE_S};

/// The file formats [`load`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Format {
    /// A text report: "Serving Benchmark Result" blocks (GPUStack or vLLM style).
    Text,
    /// servebench's JSON result: one [`BenchmarkResult`] or an array of them.
    ServebenchJson,
    /// servebench's run file (`servebench bench --output`).
    ServebenchRun,
    /// servebench's sweep file (`servebench bench --sweep N --output`): one run per rate.
    ServebenchSweep,
    /// guidellm's JSON report.
    GuidellmJson,
    /// guidellm's YAML report (the JSON report's content as YAML).
    GuidellmYaml,
    /// guidellm's CSV summary (one row per benchmark).
    GuidellmCsv,
    /// `vllm bench serve --save-result` JSON (or `benchmark_serving.py` JSON Lines).
    VllmJson,
    /// SGLang `bench_serving` JSON Lines.
    SglangJsonl,
    /// aiperf's per-request export (`profile_export.jsonl`).
    AiperfJsonl,
    /// aiperf's aggregate export (`profile_export_aiperf.json`).
    AiperfJson,
    /// aiperf's aggregate CSV (`profile_export_aiperf.csv`).
    AiperfCsv,
    /// None of the above.
    Unknown,
}

impl Format {
    /// What the format is, for messages (`a guidellm report (JSON)`).
    pub fn description(self) -> &'static str {
        match self {
            Format::Text => "a text report",
            Format::ServebenchJson => "a servebench result (JSON)",
            Format::ServebenchRun => "a servebench run file",
            Format::ServebenchSweep => "a servebench sweep file",
            Format::GuidellmJson => "a guidellm report (JSON)",
            Format::GuidellmYaml => "a guidellm report (YAML)",
            Format::GuidellmCsv => "a guidellm report (CSV)",
            Format::VllmJson => "a vLLM result (JSON)",
            Format::SglangJsonl => "an SGLang result (JSON Lines)",
            Format::AiperfJsonl => "an aiperf per-request export (JSON Lines)",
            Format::AiperfJson => "an aiperf aggregate export (JSON)",
            Format::AiperfCsv => "an aiperf aggregate export (CSV)",
            Format::Unknown => "an unknown format",
        }
    }

    /// Which client wrote files of this format (`guidellm`, `vllm`, …).
    pub fn tool(self) -> &'static str {
        match self {
            Format::Text
            | Format::ServebenchJson
            | Format::ServebenchRun
            | Format::ServebenchSweep => "servebench",
            Format::GuidellmJson | Format::GuidellmYaml | Format::GuidellmCsv => "guidellm",
            Format::VllmJson => "vllm",
            Format::SglangJsonl => "sglang",
            Format::AiperfJsonl | Format::AiperfJson | Format::AiperfCsv => "aiperf",
            Format::Unknown => "unknown",
        }
    }
}

/// Where a run came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Provenance {
    /// The file's name as given to [`load`].
    pub file: String,
    /// What the file was read as.
    pub format: Format,
    /// Where in the file: `line 131` (a text block or a JSON Lines run), `[2]` (an array
    /// element), a benchmark's index; `None` for a file that is one run.
    pub at: Option<String>,
}

impl Provenance {
    /// `FILE:LINE` for a text block, `FILE[INDEX]`, `FILE (AT)` otherwise, or `FILE`.
    pub fn origin(&self) -> String {
        match &self.at {
            Some(at) if self.format == Format::Text => {
                format!("{}:{}", self.file, at.trim_start_matches("line "))
            }
            Some(at) if at.starts_with('[') => format!("{}{at}", self.file),
            Some(at) => format!("{} ({at})", self.file),
            None => self.file.clone(),
        }
    }
}

/// A run's per-request records and what a recomputation needs besides them.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Records {
    /// Every request the file lists (for guidellm, also those outside the measured window).
    pub all: Vec<RequestRecord>,
    /// Which of [`Records::all`] are inside the measured window (`None`: all of them).
    pub in_window: Option<Vec<bool>>,
    /// The measured window, as offsets from the records' origin (guidellm).
    pub window: Option<(Duration, Duration)>,
    /// The records' origin as a Unix time in seconds, when the file gives one (guidellm's
    /// epoch timestamps, for bit-exact float arithmetic).
    pub time_origin_unix_s: Option<f64>,
    /// Whether the records carry real send times (SGLang's `--output-details` lists do not,
    /// nor a vLLM file without `start_times`; vLLM 0.33.0's `--save-detailed` file has them):
    /// without them every request is "sent" at offset zero.
    pub send_times: bool,
    /// The run's duration as the tool that wrote the file defines it, when the file (or
    /// aiperf's aggregate export beside it, see [`attach_aiperf_aggregates`]) holds it:
    /// vLLM's and SGLang's `duration` (their wall clock around the run), aiperf's
    /// observation window (its profiling phase: `request_count / request_throughput`).
    /// A recomputation under the tool's own convention divides by it. Seconds, exactly the
    /// float the tool wrote (or `request_count / request_throughput` for aiperf).
    pub tool_duration_s: Option<f64>,
    /// When the file lists only a sample of the requests its aggregates count (guidellm's
    /// `sample_size`): how many it counts.
    pub sampled_of: Option<u64>,
    /// Notes on how the records were read (client-side counts, reconstructed chunk times),
    /// printed beside any recomputation.
    pub notes: Vec<String>,
    /// Set when the run stopped before sending every request of its profile (a servebench
    /// run file marked interrupted): why. Lints then expect the requests that were sent.
    pub interrupted: Option<String>,
    /// The load stages of a servebench run (its phases, ramp steps or staged fill):
    /// reports print each stage's figures.
    pub stages: Vec<crate::observe::Stage>,
    /// Set for a servebench run started on a starting server (`bench --cold`): reports
    /// show its first requests apart from the steady state.
    pub cold_start: Option<crate::runfile::ColdStart>,
}

impl Records {
    /// Records without a window or notes: every listed request is measured.
    pub fn plain(all: Vec<RequestRecord>) -> Self {
        let send_times = all.iter().any(|r| !r.sent_at.is_zero());
        Records {
            all,
            send_times,
            ..Records::default()
        }
    }

    /// The records inside the measured window.
    pub fn measured(&self) -> Vec<RequestRecord> {
        match &self.in_window {
            None => self.all.clone(),
            Some(w) => self
                .all
                .iter()
                .zip(w)
                .filter(|(_, &inside)| inside)
                .map(|(r, _)| r.clone())
                .collect(),
        }
    }
}

/// One benchmark run read from a file.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// A short name (`constant@20.00`, `line 131`, `vllm (line 2)`).
    pub name: String,
    /// The file's own figures (under the convention `result.meta.convention` names).
    pub result: BenchmarkResult,
    /// Per-request records, when the file has them.
    pub records: Option<Records>,
    /// How the result was printed, when the file tells (a text block, a `servebench parse`
    /// block, vLLM's own report): `render` follows it to reproduce the block byte for byte.
    pub layout: Option<Layout>,
    /// Where the run came from.
    pub provenance: Provenance,
    /// Its place in a rate sweep, when it came from a sweep file.
    pub sweep: Option<SweepPoint>,
}

/// Read a file (`-` reads standard input) and [`load`] it.
///
/// # Errors
///
/// [`LoadErrorKind::Io`] when it cannot be read, else as [`load`].
pub fn load_path(path: &Path) -> Result<Vec<Run>, LoadError> {
    let name = if path == Path::new("-") {
        "<stdin>".to_string()
    } else {
        path.display().to_string()
    };
    let bytes = if path == Path::new("-") {
        let mut b = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut b).map(|_| b)
    } else {
        std::fs::read(path)
    }
    .map_err(|e| LoadError::new(&name, None, LoadErrorKind::Io(e)))?;
    load(&name, &bytes)
}

/// Every run in `bytes`, a file called `name` (used in messages and provenance).
///
/// # Errors
///
/// A [`LoadError`] naming `name`, what the bytes were recognised as, and why they did not
/// fit. A recognised file without any run is [`LoadErrorKind::NoRuns`]: no verb ever sees
/// an empty list.
pub fn load(name: &str, bytes: &[u8]) -> Result<Vec<Run>, LoadError> {
    let format = sniff(name, bytes).map_err(|k| LoadError::new(name, None, k))?;
    let bytes = bytes.strip_prefix(sniff::BOM).unwrap_or(bytes);
    let fail = |kind| LoadError::new(name, Some(format), kind);
    let imp = |e: ImportError| fail(LoadErrorKind::Import(e));
    let prov = |at: Option<String>| Provenance {
        file: name.to_string(),
        format,
        at,
    };
    // The whole file is one run (no layout, no place in a sweep).
    let single = |name: String, result: BenchmarkResult, records: Option<Records>| Run {
        layout: None,
        name,
        result,
        records,
        provenance: prov(None),
        sweep: None,
    };
    // A benchmark tool's run with its per-request records and its own duration (vLLM's and
    // SGLang's `bench_serving`).
    let tool_run =
        |layout, name: String, result, records: Option<Vec<_>>, duration_s: Option<f64>| Run {
            layout,
            provenance: prov(line_of(&name)),
            sweep: None,
            records: records.map(|all| Records {
                tool_duration_s: duration_s.filter(|s| s.is_finite() && *s > 0.0),
                ..Records::plain(all)
            }),
            name,
            result,
        };
    let runs: Vec<Run> = match format {
        Format::Unknown => {
            let text = String::from_utf8_lossy(&bytes[..bytes.len().min(200)]);
            let first = text.trim_start().lines().next().unwrap_or_default();
            let start: String = first.chars().take(60).collect();
            return Err(LoadError::new(
                name,
                None,
                LoadErrorKind::Unrecognised { start },
            ));
        }
        Format::Text => {
            let text = utf8(bytes).map_err(fail)?;
            let blocks =
                crate::format::doc::parse(text).map_err(|e| fail(LoadErrorKind::Text(e)))?;
            blocks
                .into_iter()
                .map(|b| Run {
                    layout: Some(b.layout),
                    name: format!("line {}", b.start_line),
                    result: b.result,
                    records: None,
                    provenance: prov(Some(format!("line {}", b.start_line))),
                    sweep: None,
                })
                .collect()
        }
        Format::ServebenchJson => servebench_json(bytes)
            .map_err(imp)?
            .into_iter()
            .map(|(at, result, layout)| Run {
                layout,
                name: result.meta.label.clone().unwrap_or_else(|| match &at {
                    Some(a) => a.clone(),
                    None => "result".into(),
                }),
                result,
                records: None,
                provenance: prov(at),
                sweep: None,
            })
            .collect(),
        Format::ServebenchSweep => sweep::runs(bytes, prov).map_err(imp)?,
        Format::ServebenchRun => {
            let file = crate::runfile::RunFile::from_slice(bytes)
                .map_err(|e| fail(LoadErrorKind::RunFile(e)))?;
            let interrupted = match file.status {
                crate::runfile::RunStatus::Complete => None,
                crate::runfile::RunStatus::Interrupted { reason } => Some(reason),
            };
            let run_name: String = match &interrupted {
                None => "run".into(),
                Some(why) => format!("run (interrupted: {why})"),
            };
            let records = Records {
                interrupted,
                stages: file.stages,
                cold_start: file.cold_start,
                ..Records::plain(file.records)
            };
            vec![single(run_name, file.result, Some(records))]
        }
        Format::GuidellmJson | Format::GuidellmYaml => {
            let report = if format == Format::GuidellmYaml {
                import::guidellm::yaml::from_slice(bytes)
            } else {
                import::guidellm::from_slice(bytes)
            }
            .map_err(imp)?;
            report
                .benchmarks
                .into_iter()
                .enumerate()
                .map(|(i, b)| {
                    let sampled_of = b
                        .is_sampled()
                        .then(|| b.counts.reported.map(|r| r.total()))
                        .flatten();
                    Run {
                        layout: None,
                        name: b.name,
                        result: b.result,
                        records: Some(Records {
                            all: b.records,
                            in_window: Some(b.in_window),
                            window: Some((b.window_start, b.window_end)),
                            time_origin_unix_s: Some(b.origin_unix_s),
                            send_times: true,
                            sampled_of,
                            notes: Vec::new(),
                            interrupted: None,
                            tool_duration_s: None,
                            stages: Vec::new(),
                            cold_start: None,
                        }),
                        provenance: prov(Some(format!("$.benchmarks[{i}]"))),
                        sweep: None,
                    }
                })
                .collect()
        }
        Format::GuidellmCsv => import::guidellm::csv::from_slice(bytes)
            .map_err(imp)?
            .into_iter()
            .map(|(line, name, result)| Run {
                layout: None,
                name,
                result,
                records: None,
                provenance: prov(Some(format!("line {line}"))),
                sweep: None,
            })
            .collect(),
        Format::VllmJson => import::vllm::from_slice(bytes)
            .map_err(imp)?
            .into_iter()
            .map(|r| tool_run(Some(r.layout), r.name, r.result, r.records, r.duration_s))
            .collect(),
        Format::SglangJsonl => import::sglang::from_slice(bytes)
            .map_err(imp)?
            .into_iter()
            .map(|r| tool_run(None, r.name, r.result, r.records, r.duration_s))
            .collect(),
        Format::AiperfJsonl => {
            let run = import::aiperf::records_from_slice(bytes).map_err(imp)?;
            let records = Records {
                notes: vec![AIPERF_TOKENS_NOTE.into()],
                ..Records::plain(run.records)
            };
            vec![single("aiperf".into(), run.result, Some(records))]
        }
        Format::AiperfJson | Format::AiperfCsv => {
            let result = if format == Format::AiperfJson {
                import::aiperf::aggregate_from_slice(bytes)
            } else {
                import::aiperf::csv_from_slice(bytes)
            };
            vec![single("aiperf".into(), result.map_err(imp)?, None)]
        }
    };
    if runs.is_empty() {
        let hint = match format {
            Format::Text => " (no \"Serving Benchmark Result\" block)".to_string(),
            _ => String::new(),
        };
        return Err(fail(LoadErrorKind::NoRuns(hint)));
    }
    // The one check every format's runs pass.
    for run in &runs {
        validate::check(run).map_err(|message| {
            fail(LoadErrorKind::Implausible {
                run: run.name.clone(),
                message,
            })
        })?;
    }
    Ok(runs)
}

/// aiperf's observation window, in seconds, from its aggregates: `request_count /
/// request_throughput` (aiperf's throughput is the count over that window).
fn aiperf_window_s(r: &BenchmarkResult) -> Option<f64> {
    let n = r.successful_requests? as f64;
    Some(n / r.request_throughput_per_s?).filter(|s| s.is_finite() && *s > 0.0)
}

/// The name aiperf gives its aggregate export, written beside `profile_export.jsonl` in
/// its artifact directory.
pub const AIPERF_AGGREGATE_FILE: &str = "profile_export_aiperf.json";

/// aiperf's per-request export does not hold the figures aiperf printed, nor the
/// observation window it divides its throughputs by: its aggregate export, written beside
/// it in the same artifact directory, does. For each aiperf per-request run read from
/// `path`, when `profile_export_aiperf.json` is beside it and counts the same successful
/// requests, the run's figures become aiperf's own ([`Run::result`]), its records learn
/// aiperf's window ([`Records::tool_duration_s`]) and a note says where both came from.
/// Without that file the runs are left as read.
///
/// # Errors
///
/// A [`LoadError`] naming the aggregate export when it is there but cannot be read.
pub fn attach_aiperf_aggregates(path: &Path, runs: &mut [Run]) -> Result<(), LoadError> {
    if !runs
        .iter()
        .any(|r| r.provenance.format == Format::AiperfJsonl)
    {
        return Ok(());
    }
    let Some(dir) = path.parent() else {
        return Ok(());
    };
    let beside = dir.join(AIPERF_AGGREGATE_FILE);
    if !beside.is_file() {
        return Ok(());
    }
    let name = beside.display().to_string();
    let bytes = std::fs::read(&beside)
        .map_err(|e| LoadError::new(&name, Some(Format::AiperfJson), LoadErrorKind::Io(e)))?;
    let aggregate = import::aiperf::aggregate_from_slice(&bytes)
        .map_err(|e| LoadError::new(&name, Some(Format::AiperfJson), LoadErrorKind::Import(e)))?;
    for run in runs
        .iter_mut()
        .filter(|r| r.provenance.format == Format::AiperfJsonl)
    {
        let Some(records) = run.records.as_mut() else {
            continue;
        };
        let successes = records
            .measured()
            .iter()
            .filter(|r| r.outcome.is_success())
            .count() as u64;
        if aggregate.successful_requests != Some(successes) {
            records.notes.push(format!(
                "{AIPERF_AGGREGATE_FILE} beside this file counts {} successful requests, the \
                 records {successes}: another run's, not used",
                aggregate
                    .successful_requests
                    .map_or_else(|| "no".into(), |n| n.to_string())
            ));
            continue;
        }
        records.tool_duration_s = aiperf_window_s(&aggregate);
        records.notes.push(format!(
            "aiperf's own figures and observation window (its profiling phase, \
             request_count / request_throughput) from {AIPERF_AGGREGATE_FILE} beside this file"
        ));
        run.result = aggregate.clone();
    }
    Ok(())
}

/// What a recomputation from aiperf's records cannot know.
const AIPERF_TOKENS_NOTE: &str = "aiperf records no tokens per response: its output tokens \
     are spread one per streamed response (the remainder on the first)";

/// `line N` from an importer's run name (`vllm (line 3)`), for the provenance.
fn line_of(name: &str) -> Option<String> {
    let i = name.rfind("(line ")?;
    Some(name.get(i + 1..)?.trim_end_matches(')').to_string())
}

/// The bytes as UTF-8 text, or where they stop being it.
fn utf8(bytes: &[u8]) -> Result<&str, LoadErrorKind> {
    std::str::from_utf8(bytes).map_err(|e| sniff::binary(bytes, e.valid_up_to()))
}

/// A result as servebench JSON holds it: where in the file, the result, its layout.
type JsonResult = (Option<String>, BenchmarkResult, Option<Layout>);

/// servebench JSON: a [`BlocksFile`] (what `servebench parse` writes), or results (one
/// object or an array, possibly with the `layout` key older versions wrote inside). The
/// version is checked before the shape, so a file written by another major version says so
/// instead of failing on a renamed field.
fn servebench_json(bytes: &[u8]) -> Result<Vec<JsonResult>, ImportError> {
    let value: serde_json::Value = import::json::parse_slice(bytes, 0)?;
    if value.get("format").and_then(|f| f.as_str()) == Some(BLOCKS_FORMAT) {
        let version = value.get("version").and_then(serde_json::Value::as_u64);
        if version != Some(u64::from(BLOCKS_VERSION)) {
            return Err(ImportError::UnsupportedSchema {
                format: BLOCKS_FORMAT,
                path: "$.version".into(),
                found: format!(
                    "{} (this servebench reads {BLOCKS_VERSION})",
                    version.map_or_else(|| "missing".to_string(), |v| v.to_string())
                ),
            });
        }
        check_versions(
            &value,
            |i| format!("$.blocks[{i}].result.schema_version"),
            |v| {
                v.get("blocks")
                    .and_then(serde_json::Value::as_array)
                    .map(|b| b.iter().filter_map(|e| e.get("result")).collect())
                    .unwrap_or_default()
            },
        )?;
        let file: BlocksFile = import::json::parse_slice(bytes, 0)?;
        return Ok(file
            .blocks
            .into_iter()
            .enumerate()
            .map(|(i, b)| (Some(format!("blocks[{i}]")), b.result, b.layout))
            .collect());
    }
    let array = value.is_array();
    check_versions(
        &value,
        |i| {
            if array {
                format!("$[{i}].schema_version")
            } else {
                "$.schema_version".to_string()
            }
        },
        |v| match v {
            serde_json::Value::Array(a) => a.iter().collect(),
            v => vec![v],
        },
    )?;
    let items: Vec<&serde_json::Value> = match &value {
        serde_json::Value::Array(a) => a.iter().collect(),
        v => vec![v],
    };
    // Typed parse from the bytes (not the value) so errors carry line, column and path.
    let results: Vec<BenchmarkResult> = if array {
        import::json::parse_slice(bytes, 0)?
    } else {
        vec![import::json::parse_slice(bytes, 0)?]
    };
    results
        .into_iter()
        .zip(items)
        .enumerate()
        .map(|(i, (r, v))| {
            let at = array.then(|| format!("[{i}]"));
            // The layout servebench wrote inside a result before the blocks envelope.
            let layout = match v.get("layout") {
                None => None,
                Some(l) => Some(serde_json::from_value::<Layout>(l.clone()).map_err(|e| {
                    ImportError::invalid(
                        if array {
                            format!("$[{i}].layout")
                        } else {
                            "$.layout".into()
                        },
                        e.to_string(),
                    )
                })?),
            };
            Ok((at, r, layout))
        })
        .collect()
}

/// Every result's `schema_version` is one this crate reads
/// ([`MIN_SCHEMA_VERSION`]`..=`[`SCHEMA_VERSION`]).
fn check_versions<'a>(
    value: &'a serde_json::Value,
    path: impl Fn(usize) -> String,
    results: impl Fn(&'a serde_json::Value) -> Vec<&'a serde_json::Value>,
) -> Result<(), ImportError> {
    for (i, v) in results(value).into_iter().enumerate() {
        match v.get("schema_version") {
            Some(s)
                if s.as_u64().is_some_and(|v| {
                    (u64::from(MIN_SCHEMA_VERSION)..=u64::from(SCHEMA_VERSION)).contains(&v)
                }) => {}
            Some(s) => {
                return Err(ImportError::UnsupportedSchema {
                    format: "servebench",
                    path: path(i),
                    found: format!(
                        "{s} (this servebench reads {MIN_SCHEMA_VERSION} to {SCHEMA_VERSION})"
                    ),
                });
            }
            None => {
                return Err(ImportError::invalid(
                    path(i),
                    "missing: not a servebench result",
                ))
            }
        }
    }
    Ok(())
}
