//! The run file: everything `servebench bench --output` keeps of one run, versioned, so that
//! every metric can be recomputed later and every verb can read the run back.
//!
//! A [`RunFile`] holds the computed [`BenchmarkResult`], every [`RequestRecord`], the
//! [`Profile`], the target, the server's model and its `/v1/models` answer, the command line,
//! the start time and whether the run completed or was interrupted ([`RunStatus`]).
//!
//! # Forms
//!
//! Two forms, picked by the file name ([`Form::for_path`]):
//!
//! - **JSON** (`run.json`, anything not ending in `.jsonl`): one object,
//!   `{"format": "servebench-run", "version": 1, …, "result": {…}, "records": [ … ]}`.
//! - **JSON Lines** (`run.jsonl`): line 1 is the same object without `records` and with
//!   `"record_count": N`; lines 2 to N + 1 hold one record each. A file with fewer or more
//!   record lines than the header declares is rejected as truncated.
//!
//! Readers check `format` and reject a `version` other than [`VERSION`]. Fields may be added
//! in later releases of version 1; readers ignore fields they do not know.
//!
//! # Example
//!
//! ```
//! use std::time::Duration;
//! use servebench::metrics::{compute, MetricsOptions};
//! use servebench::profile::Profile;
//! use servebench::record::{Chunk, RequestRecord};
//! use servebench::runfile::{Form, RunFile, RunStatus};
//! use servebench::Convention;
//!
//! let mut r = RequestRecord::new(0, Duration::ZERO);
//! r.chunks.push(Chunk { at: Duration::from_millis(40), tokens: 1 });
//! r.ended_at = Some(Duration::from_millis(40));
//! let records = vec![r];
//! let result = compute(&records, MetricsOptions::new(Convention::Vllm));
//! let started_at = chrono::DateTime::parse_from_rfc3339("2026-12-03T18:00:00Z").unwrap();
//! let mut run = RunFile::new(result, records, Profile::preset("latency").unwrap(), started_at);
//! run.status = RunStatus::Interrupted { reason: "SIGINT".into() };
//!
//! for form in [Form::Json, Form::Jsonl] {
//!     let mut bytes = Vec::new();
//!     run.write_to(&mut bytes, form).unwrap();
//!     assert_eq!(RunFile::from_slice(&bytes).unwrap(), run);
//! }
//! // Errors name the JSON path of the bad value.
//! let err = RunFile::from_slice(br#"{"format":"servebench-run","version":1,"started_at":7}"#)
//!     .unwrap_err();
//! assert!(err.to_string().contains("started_at"), "{err}");
//! ```

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::driver::arrivals::Arrivals;
use crate::metrics::MetricsOptions;
use crate::profile::Profile;
use crate::record::RequestRecord;
use crate::record::ServerClock;
use crate::result::BenchmarkResult;

/// The value of a run file's `format` field.
pub const FORMAT: &str = "servebench-run";

/// The run-file version this crate writes and reads.
pub const VERSION: u32 = 1;

/// Whether a run completed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "kebab-case")]
pub enum RunStatus {
    /// Every request of the profile was sent and ended (successfully or not).
    Complete,
    /// The run stopped early (a signal, a time limit, the engine failing as a whole); the
    /// records are those sent before it stopped.
    Interrupted {
        /// Why it stopped (`"SIGINT"`, `"SIGTERM"`, an engine error, …).
        reason: String,
    },
}

impl RunStatus {
    /// `true` for [`RunStatus::Complete`].
    pub fn is_complete(&self) -> bool {
        matches!(self, RunStatus::Complete)
    }
}

/// Which part of a sharded run a file holds: shard `index` (1-based) of `count` (the
/// driver's [`crate::driver::Shard`], which decides which requests it sends).
pub use crate::driver::shard::Shard;

/// One benchmark run as `servebench bench --output` saves it. See the module docs for the
/// file forms.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunFile {
    /// Always [`FORMAT`].
    pub format: String,
    /// [`VERSION`] when written by this crate.
    pub version: u32,
    /// Version of servebench that wrote the file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_version: Option<String>,
    /// When the first request was about to be sent (wall clock). Record times are offsets
    /// from the run's start.
    pub started_at: chrono::DateTime<chrono::FixedOffset>,
    /// When the run ended (wall clock), if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<chrono::DateTime<chrono::FixedOffset>>,
    /// Complete or interrupted.
    pub status: RunStatus,
    /// What was benchmarked: a base URL (`http://127.0.0.1:8000`) or `sim:…`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// The model name sent in the requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The server's answer to `GET /v1/models`, as received.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub models_response: Option<serde_json::Value>,
    /// The command line that produced the run (`argv`, program name first).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub command_line: Vec<String>,
    /// The load profile that was run.
    pub profile: Profile,
    /// When requests were scheduled to arrive, when not the profile's constant rate
    /// (Poisson, vLLM's gamma arrivals, all at once).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arrivals: Option<Arrivals>,
    /// The seed of the workload and the arrival times, when one was used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// The shard this file holds, for a sharded run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
    /// Bounds on the server's clock at `started_at`, from the responses' `Date` headers
    /// (sharded runs: [`crate::merge`] reports the clock skew between shards from them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_clock: Option<ServerClock>,
    /// Where the measured arrival schedule starts, as an offset from `started_at`: a
    /// record's send offset in the schedule is `scheduled_at − schedule_origin`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule_origin: Option<std::time::Duration>,
    /// The wall-clock start the shards of a run agreed on (`bench --start-at`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_at: Option<chrono::DateTime<chrono::FixedOffset>>,
    /// Free-form labels (`"study": "…"`, `"step": "baseline"`, …).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// This run's place in a capacity search under an SLO (`bench --slo … --search`, a
    /// study with `goal = "capacity"`): the search, the load, and whether the SLO held.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity_probe: Option<crate::result::CapacityProbe>,
    /// The options `result` was computed with (convention, percentiles, goodput), so that a
    /// reader can recompute it identically.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics_options: Option<MetricsOptions>,
    /// The figures, computed from `records` (warm-up records excluded).
    pub result: BenchmarkResult,
    /// The server's `/metrics` scraped during the run ([`crate::observe`]), when scraped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_metrics: Option<crate::observe::ServerSeries>,
    /// GPU telemetry sampled during the run (`bench --gpu-metrics`: a DCGM exporter's
    /// `/metrics`, or `nvidia-smi` in the DCGM exporter's names; see
    /// [`crate::observe::energy_figures`]), when sampled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_metrics: Option<crate::observe::ServerSeries>,
    /// The phases of a phased run (`bench --phases FILE`), when it was one; `report`
    /// prints each phase's figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phases: Option<crate::driver::Phases>,
    /// A run started on a server still starting (`bench --cold`): how long it took to
    /// become healthy; `report` then shows the first requests apart from the steady state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cold_start: Option<ColdStart>,
    /// The run's load stages (its phases, ramp steps or staged fill), which `report`
    /// prints and `plot` draws; empty for a run of one load.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stages: Vec<crate::observe::Stage>,
    /// Warm-up requests: sent before the measured ones (or within `--warmup-seconds` of
    /// the first send) and excluded from `result`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warmup_records: Vec<RequestRecord>,
    /// Cool-down requests: sent within `--cooldown-seconds` of the last send and excluded
    /// from `result`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cooldown_records: Vec<RequestRecord>,
    /// One record per measured request, in id order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub records: Vec<RequestRecord>,
}

/// A cold start as `bench --cold` saw it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ColdStart {
    /// Seconds from the client's first health check until `GET /health` answered 200.
    pub healthy_after_s: f64,
}

/// A run file's two forms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// One JSON object.
    Json,
    /// A header line, then one record per line.
    Jsonl,
}

impl Form {
    /// [`Form::Jsonl`] for a name ending in `.jsonl`, else [`Form::Json`].
    ///
    /// ```
    /// use servebench::runfile::Form;
    /// assert_eq!(Form::for_path("out/run.jsonl".as_ref()), Form::Jsonl);
    /// assert_eq!(Form::for_path("run.json".as_ref()), Form::Json);
    /// ```
    pub fn for_path(path: &Path) -> Form {
        if path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("jsonl"))
        {
            Form::Jsonl
        } else {
            Form::Json
        }
    }
}

/// Errors reading, checking or writing a run file. Each names the file when there is one.
#[derive(Debug, thiserror::Error)]
pub enum RunFileError {
    /// Opening, reading or writing failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A value does not fit the schema (or the bytes are not JSON).
    #[error("{}{}: {source}", file_prefix(path), location(*line, json_path))]
    Json {
        /// The file, when reading one.
        path: Option<PathBuf>,
        /// 1-based line (JSON Lines form only).
        line: Option<usize>,
        /// Where in the document, e.g. `records[3].chunks[0].at` (`.` for the document).
        json_path: String,
        /// serde_json's error, with its line and column.
        source: serde_json::Error,
    },
    /// The document is JSON but not a run file (its `format` is missing or different).
    #[error("{}not a servebench run file (`format` is {}, expected \"{FORMAT}\")", file_prefix(path), found.as_deref().map(|f| format!("\"{f}\"")).unwrap_or_else(|| "missing".into()))]
    NotARunFile {
        /// The file, when reading one.
        path: Option<PathBuf>,
        /// The `format` value found, if any.
        found: Option<String>,
    },
    /// A run file of a version this crate does not read.
    #[error(
        "{}run file version {found} is not supported (this servebench reads version {VERSION})",
        file_prefix(path)
    )]
    UnsupportedVersion {
        /// The file, when reading one.
        path: Option<PathBuf>,
        /// The version found.
        found: u32,
    },
    /// The JSON Lines form has a different number of record lines than its header declares.
    #[error("{}truncated or extended run file: the header declares {declared} records, the file holds {found}", file_prefix(path))]
    RecordCount {
        /// The file, when reading one.
        path: Option<PathBuf>,
        /// `record_count` of the header.
        declared: u64,
        /// Record lines found.
        found: u64,
    },
    /// The output path cannot be written (checked before a run starts).
    #[error("{}: cannot write the run file there: {reason}", path.display())]
    Unwritable {
        /// The output path.
        path: PathBuf,
        /// Why.
        reason: String,
    },
}

fn location(line: Option<usize>, json_path: &str) -> String {
    let line = line.map(|l| format!("line {l}: ")).unwrap_or_default();
    if json_path.is_empty() || json_path == "." {
        format!("{line}the document")
    } else {
        format!("{line}at `{json_path}`")
    }
}

fn file_prefix(path: &Option<PathBuf>) -> String {
    path.as_ref()
        .map(|p| format!("{}: ", p.display()))
        .unwrap_or_default()
}

impl RunFileError {
    fn in_file(self, p: &Path) -> Self {
        let path = Some(p.to_path_buf());
        match self {
            RunFileError::Json {
                line,
                json_path,
                source,
                ..
            } => RunFileError::Json {
                path,
                line,
                json_path,
                source,
            },
            RunFileError::NotARunFile { found, .. } => RunFileError::NotARunFile { path, found },
            RunFileError::UnsupportedVersion { found, .. } => {
                RunFileError::UnsupportedVersion { path, found }
            }
            RunFileError::RecordCount {
                declared, found, ..
            } => RunFileError::RecordCount {
                path,
                declared,
                found,
            },
            other => other,
        }
    }
}

/// The header line of the JSON Lines form: a run file's fields without the records.
#[derive(Serialize)]
struct HeaderOut<'a> {
    #[serde(flatten)]
    run: &'a RunFile,
    record_count: u64,
}

/// Just enough of a document to recognise a run file.
#[derive(Deserialize)]
struct Probe {
    #[serde(default)]
    format: Option<serde_json::Value>,
    #[serde(default)]
    version: Option<serde_json::Value>,
    #[serde(default)]
    record_count: Option<u64>,
}

fn json_err(line: Option<usize>, e: serde_path_to_error::Error<serde_json::Error>) -> RunFileError {
    RunFileError::Json {
        path: None,
        line,
        json_path: e.path().to_string(),
        source: e.into_inner(),
    }
}

fn parse<T: serde::de::DeserializeOwned>(
    bytes: &[u8],
    line: Option<usize>,
) -> Result<T, RunFileError> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let v = serde_path_to_error::deserialize(&mut de).map_err(|e| json_err(line, e))?;
    de.end().map_err(|source| RunFileError::Json {
        path: None,
        line,
        json_path: String::new(),
        source,
    })?;
    Ok(v)
}

/// Checks `format` and `version`; returns the header's `record_count` (JSON Lines form).
fn check_probe(bytes: &[u8], line: Option<usize>) -> Result<Option<u64>, RunFileError> {
    let probe: Probe = parse(bytes, line)?;
    let format = probe.format.as_ref().and_then(|f| f.as_str());
    if format != Some(FORMAT) {
        return Err(RunFileError::NotARunFile {
            path: None,
            found: probe.format.map(|f| match f {
                serde_json::Value::String(s) => s,
                other => other.to_string(),
            }),
        });
    }
    match probe.version.as_ref().and_then(|v| v.as_u64()) {
        Some(v) if v == u64::from(VERSION) => Ok(probe.record_count),
        Some(v) => Err(RunFileError::UnsupportedVersion {
            path: None,
            found: u32::try_from(v).unwrap_or(u32::MAX),
        }),
        // Missing or not a number: the full parse names it.
        None => Ok(probe.record_count),
    }
}

impl RunFile {
    /// A complete run of `profile` started at `started_at`, with `result` computed from
    /// `records`; every other field empty. `tool_version` is this crate's version.
    pub fn new(
        result: BenchmarkResult,
        records: Vec<RequestRecord>,
        profile: Profile,
        started_at: chrono::DateTime<chrono::FixedOffset>,
    ) -> Self {
        RunFile {
            format: FORMAT.to_string(),
            version: VERSION,
            tool_version: Some(env!("CARGO_PKG_VERSION").to_string()),
            started_at,
            finished_at: None,
            status: RunStatus::Complete,
            target: None,
            model: None,
            models_response: None,
            command_line: Vec::new(),
            profile,
            arrivals: None,
            seed: None,
            shard: None,
            server_clock: None,
            schedule_origin: None,
            start_at: None,
            labels: BTreeMap::new(),
            capacity_probe: None,
            metrics_options: None,
            result,
            warmup_records: Vec::new(),
            cooldown_records: Vec::new(),
            server_metrics: None,
            gpu_metrics: None,
            phases: None,
            stages: Vec::new(),
            cold_start: None,
            records,
        }
    }

    /// `true` when `bytes` (a file's start is enough) look like a run file in either form:
    /// a cheap test for dispatchers, which then call [`RunFile::from_slice`] for the errors.
    ///
    /// ```
    /// use servebench::runfile::RunFile;
    /// assert!(RunFile::sniff(br#"{"format":"servebench-run","version":1,"#));
    /// assert!(!RunFile::sniff(br#"{"schema_version":1}"#));
    /// ```
    pub fn sniff(bytes: &[u8]) -> bool {
        let head = &bytes[..bytes.len().min(4096)];
        let needle = br#""format":"servebench-run""#;
        let compact: Vec<u8> = head
            .iter()
            .copied()
            .filter(|b| !b.is_ascii_whitespace())
            .collect();
        compact.windows(needle.len()).any(|w| w == needle)
    }

    /// Read a run file in either form from bytes. The JSON Lines form is recognised by a
    /// first line that is a complete JSON object declaring `record_count`.
    pub fn from_slice(bytes: &[u8]) -> Result<RunFile, RunFileError> {
        let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
        let first_end = memchr::memchr(b'\n', bytes).unwrap_or(bytes.len());
        let first = &bytes[..first_end];
        let rest = bytes.get(first_end + 1..).unwrap_or(&[]);
        let jsonl_header = serde_json::from_slice::<Probe>(first)
            .ok()
            .and_then(|p| p.record_count);
        match jsonl_header {
            Some(_) => Self::from_jsonl(first, rest),
            None => {
                check_probe(bytes, None)?;
                parse(bytes, None)
            }
        }
    }

    fn from_jsonl(first: &[u8], rest: &[u8]) -> Result<RunFile, RunFileError> {
        let declared = check_probe(first, Some(1))?.unwrap_or(0);
        let mut run: RunFile = parse(first, Some(1))?;
        if !run.records.is_empty() {
            // A header carrying records would make `record_count` ambiguous.
            return Err(RunFileError::RecordCount {
                path: None,
                declared,
                found: run.records.len() as u64,
            });
        }
        let mut records = Vec::with_capacity(usize::try_from(declared.min(1 << 20)).unwrap_or(0));
        for (i, line) in rest.split(|&b| b == b'\n').enumerate() {
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            records.push(parse::<RequestRecord>(line, Some(i + 2))?);
        }
        if records.len() as u64 != declared {
            return Err(RunFileError::RecordCount {
                path: None,
                declared,
                found: records.len() as u64,
            });
        }
        run.records = records;
        Ok(run)
    }

    /// Read a run file in either form; errors name the file.
    pub fn read(path: impl AsRef<Path>) -> Result<RunFile, RunFileError> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|source| RunFileError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Self::from_slice(&bytes).map_err(|e| e.in_file(path))
    }

    /// Write the run in `form` to any writer (compact JSON; the writer is flushed).
    pub fn write_to<W: Write>(&self, mut w: W, form: Form) -> std::io::Result<()> {
        match form {
            Form::Json => serde_json::to_writer(&mut w, self)?,
            Form::Jsonl => {
                let header = self.clone_without_records();
                serde_json::to_writer(
                    &mut w,
                    &HeaderOut {
                        run: &header,
                        record_count: self.records.len() as u64,
                    },
                )?;
                w.write_all(b"\n")?;
                for r in &self.records {
                    serde_json::to_writer(&mut w, r)?;
                    w.write_all(b"\n")?;
                }
            }
        }
        w.flush()
    }

    fn clone_without_records(&self) -> RunFile {
        RunFile {
            format: self.format.clone(),
            version: self.version,
            tool_version: self.tool_version.clone(),
            started_at: self.started_at,
            finished_at: self.finished_at,
            status: self.status.clone(),
            target: self.target.clone(),
            model: self.model.clone(),
            models_response: self.models_response.clone(),
            command_line: self.command_line.clone(),
            profile: self.profile.clone(),
            arrivals: self.arrivals,
            seed: self.seed,
            shard: self.shard,
            server_clock: self.server_clock,
            schedule_origin: self.schedule_origin,
            start_at: self.start_at,
            labels: self.labels.clone(),
            capacity_probe: self.capacity_probe.clone(),
            metrics_options: self.metrics_options.clone(),
            result: self.result.clone(),
            warmup_records: self.warmup_records.clone(),
            cooldown_records: self.cooldown_records.clone(),
            server_metrics: self.server_metrics.clone(),
            gpu_metrics: self.gpu_metrics.clone(),
            phases: self.phases.clone(),
            stages: self.stages.clone(),
            cold_start: self.cold_start,
            records: Vec::new(),
        }
    }

    /// Write the run to `path` atomically, in the form its name picks ([`Form::for_path`]):
    /// a temporary file beside it is written, flushed to disk and renamed over `path`, so
    /// that `path` holds either its old content or the whole new run, never a part.
    pub fn write_atomic(&self, path: impl AsRef<Path>) -> Result<(), RunFileError> {
        let path = path.as_ref();
        let io = |source| RunFileError::Io {
            path: path.to_path_buf(),
            source,
        };
        crate::atomic::write_with(path, |w| self.write_to(w, Form::for_path(path))).map_err(io)
    }
}

impl RunFile {
    /// Write the run to `path` atomically as [`RunFile::write_atomic`] does, its records
    /// read from `spool` — `records` of them, one JSON record per line, as a soak streams
    /// them — instead of [`RunFile::records`], copied line by line so that they are never
    /// all in memory.
    pub fn write_atomic_spooled(
        &self,
        path: impl AsRef<Path>,
        spool: &Path,
        records: u64,
    ) -> Result<(), RunFileError> {
        use std::io::BufRead as _;
        let path = path.as_ref();
        let io = |source| RunFileError::Io {
            path: path.to_path_buf(),
            source,
        };
        let header = self.clone_without_records();
        let lines = std::io::BufReader::new(std::fs::File::open(spool).map_err(io)?).lines();
        crate::atomic::write_with(path, |mut w| {
            match Form::for_path(path) {
                Form::Jsonl => {
                    let out = HeaderOut {
                        run: &header,
                        record_count: records,
                    };
                    serde_json::to_writer(&mut w, &out)?;
                    w.write_all(b"\n")?;
                    for line in lines {
                        w.write_all(line?.as_bytes())?;
                        w.write_all(b"\n")?;
                    }
                }
                Form::Json => {
                    // The records are the object's last member: written after the rest.
                    let mut text = serde_json::to_vec(&header)?;
                    text.pop();
                    w.write_all(&text)?;
                    w.write_all(b",\"records\":[")?;
                    for (i, line) in lines.enumerate() {
                        if i > 0 {
                            w.write_all(b",")?;
                        }
                        w.write_all(line?.as_bytes())?;
                    }
                    w.write_all(b"]}")?;
                }
            }
            w.flush()
        })
        .map_err(io)
    }
}

fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Check, before a run, that [`RunFile::write_atomic`] will be able to write `path`: its
/// directory exists and accepts a new file, and `path` is not a directory or a read-only
/// file. Leaves nothing behind.
///
/// ```
/// use servebench::runfile::check_writable;
/// let dir = std::env::temp_dir();
/// assert!(check_writable(&dir.join("servebench-doc-run.json")).is_ok());
/// assert!(check_writable(&dir.join("no-such-dir/x/run.json")).is_err());
/// assert!(check_writable(&dir).is_err()); // a directory
/// ```
pub fn check_writable(path: &Path) -> Result<(), RunFileError> {
    let unwritable = |reason: String| RunFileError::Unwritable {
        path: path.to_path_buf(),
        reason,
    };
    if let Ok(meta) = std::fs::metadata(path) {
        if meta.is_dir() {
            return Err(unwritable("it is a directory".into()));
        }
        if meta.permissions().readonly() {
            return Err(unwritable("the file is read-only".into()));
        }
    }
    let dir = parent_dir(path);
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => return Err(unwritable(format!("{} is not a directory", dir.display()))),
        Err(e) => return Err(unwritable(format!("directory {}: {e}", dir.display()))),
    }
    // The only reliable test of write permission (ACLs, read-only mounts, root): try it.
    tempfile::Builder::new()
        .prefix(".servebench-check-")
        .tempfile_in(dir)
        .map(drop)
        .map_err(|e| unwritable(format!("cannot create a file in {}: {e}", dir.display())))
}

#[cfg(test)]
mod tests;

#[cfg(feature = "parquet")]
pub mod parquet;
