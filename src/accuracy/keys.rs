//! The ids a client file knows each of its requests by — the `x-request-id` it sent, the
//! response id the server answered with — in the order of the loader's records, so that
//! each record can be joined to the server's timeline.
//!
//! | client file | ids |
//! |---|---|
//! | servebench run file | `x-request-id: servebench-{record id}` (what `bench` sends) |
//! | guidellm JSON / YAML | each listed request's `request_id` and `response_id` |
//! | aiperf `profile_export.jsonl` | `metadata.x_request_id` (aiperf sends it as `X-Request-ID`) |
//!
//! vLLM's `--save-detailed` lists, SGLang's `--output-details` lists and every aggregate-only
//! format keep no id: [`request_keys`] says so ([`KeysError::NoIds`]). vLLM's can still be
//! joined by request order: `vllm bench serve` (0.33.0, checked against its file and the
//! server's timeline) sends `x-request-id` = its `--request-id-prefix` followed by the
//! request's index, and saves its lists in request order ([`request_order_keys`]). The
//! prefix is random unless given and is not saved in the JSON (the console's
//! `Namespace(…)` line prints it).
//!
//! A servebench run file also gives its records' wall-clock zero ([`client_origin_unix_s`]),
//! so that the client's send and receive times can be set against the server's.

use serde::Deserialize;

use crate::http::client::REQUEST_ID_PREFIX;
use crate::load::{Format, Run};

/// How one client request can be found in the server's timeline.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RequestKeys {
    /// The `x-request-id` the client sent (the timeline's `request_id`), when known.
    pub request_id: Option<String>,
    /// The response's `id` as the client recorded it (the timeline's `response_id`).
    pub response_id: Option<String>,
}

/// Why a file's request ids could not be read.
#[derive(Debug, thiserror::Error)]
pub enum KeysError {
    /// The format keeps no per-request id.
    #[error("{format} keeps no request ids: it cannot be joined to a timeline")]
    NoIds {
        /// What the file was read as.
        format: &'static str,
    },
    /// The ids could not be read (the JSON path or line says where).
    #[error("reading request ids: {0}")]
    Parse(String),
    /// vLLM's request-order join found no prefix in the timeline.
    #[error(
        "{format} keeps no request ids; vLLM sends its request-id prefix followed by the \
         request's index, but no prefix in the timeline has exactly the ids 0 … {last}: give \
         the prefix (vLLM prints request_id_prefix='…' in its Namespace(…) line)"
    )]
    NoPrefix {
        /// What the file was read as.
        format: &'static str,
        /// The last index (requests − 1).
        last: usize,
    },
    /// vLLM's request-order join found several prefixes that fit.
    #[error(
        "{format} keeps no request ids, and {} prefixes in the timeline each have exactly the \
         ids 0 … {last}: {}; give the prefix",
        candidates.len(),
        candidates.join(", ")
    )]
    AmbiguousPrefix {
        /// What the file was read as.
        format: &'static str,
        /// The last index (requests − 1).
        last: usize,
        /// The prefixes that fit.
        candidates: Vec<String>,
    },
    /// The file lists a different number of ids than the loader found records.
    #[error("{what}: {ids} request ids for {records} records")]
    Count {
        /// Which run (`$.benchmarks[0]`) or the file.
        what: String,
        /// Ids read.
        ids: usize,
        /// Records the loader read.
        records: usize,
    },
}

/// The wall-clock time (Unix seconds) of a servebench run file's record zero, its
/// `started_at`; `None` for other formats, files of several runs, or a file without one.
///
/// ```
/// use servebench::accuracy::client_origin_unix_s;
/// use servebench::load::{Format, Provenance, Run};
/// let run = Run {
///     name: "r".into(),
///     result: Default::default(),
///     records: None,
///     layout: None,
///     provenance: Provenance { file: "r.json".into(), format: Format::ServebenchRun, at: None },
///     sweep: None,
/// };
/// let bytes = br#"{"started_at": "2026-12-04T03:22:08.5Z"}"#;
/// assert_eq!(client_origin_unix_s(&[run], bytes), Some(1_796_354_528.5));
/// ```
pub fn client_origin_unix_s(runs: &[Run], bytes: &[u8]) -> Option<f64> {
    #[derive(Deserialize)]
    struct Started {
        started_at: chrono::DateTime<chrono::FixedOffset>,
    }
    match runs {
        [run] if run.provenance.format == Format::ServebenchRun => {
            let s: Started = serde_json::from_slice(bytes).ok()?;
            let t = s.started_at;
            Some(t.timestamp() as f64 + f64::from(t.timestamp_subsec_nanos()) * 1e-9)
        }
        _ => None,
    }
}

/// The keys of every record of every run of one file (`runs`, as [`crate::load::load`]
/// read them from `bytes`), run by run in the loader's order; runs without records get an
/// empty list.
///
/// # Errors
///
/// [`KeysError::NoIds`] for formats without ids, [`KeysError::Parse`] when the ids cannot
/// be read, [`KeysError::Count`] when their number differs from the records'.
///
/// ```
/// use servebench::accuracy::request_keys;
/// let line = br#"{"metadata": {"x_request_id": "a-1", "request_start_ns": 1000000000, "request_end_ns": 1030000000}, "metrics": {"time_to_first_token": {"value": 10.0, "unit": "ms"}, "output_sequence_length": {"value": 3, "unit": "tokens"}}}"#;
/// let runs = servebench::load::load("profile_export.jsonl", line).unwrap();
/// let keys = request_keys(&runs, line).unwrap();
/// assert_eq!(keys[0][0].request_id.as_deref(), Some("a-1"));
/// ```
pub fn request_keys(runs: &[Run], bytes: &[u8]) -> Result<Vec<Vec<RequestKeys>>, KeysError> {
    let Some(format) = runs.first().map(|r| r.provenance.format) else {
        return Ok(Vec::new());
    };
    let keys: Vec<Vec<RequestKeys>> = match format {
        Format::ServebenchRun => runs
            .iter()
            .map(|r| {
                r.records
                    .iter()
                    .flat_map(|rs| &rs.all)
                    .map(|rec| RequestKeys {
                        request_id: Some(format!("{REQUEST_ID_PREFIX}{}", rec.id)),
                        response_id: None,
                    })
                    .collect()
            })
            .collect(),
        Format::GuidellmJson | Format::GuidellmYaml => {
            let report: GuidellmIds = if format == Format::GuidellmYaml {
                serde_yaml_ng::from_slice(bytes).map_err(|e| KeysError::Parse(e.to_string()))?
            } else {
                let de = &mut serde_json::Deserializer::from_slice(bytes);
                serde_path_to_error::deserialize(de).map_err(|e| KeysError::Parse(e.to_string()))?
            };
            report
                .benchmarks
                .into_iter()
                .map(|b| {
                    let r = b.requests.unwrap_or_default();
                    r.successful
                        .into_iter()
                        .chain(r.errored)
                        .chain(r.incomplete)
                        .map(|q| RequestKeys {
                            request_id: q.request_id,
                            response_id: q.response_id,
                        })
                        .collect()
                })
                .collect()
        }
        Format::AiperfJsonl => vec![aiperf_keys(bytes)?],
        other => {
            return Err(KeysError::NoIds {
                format: other.description(),
            })
        }
    };
    if keys.len() != runs.len() {
        return Err(KeysError::Count {
            what: "the file's runs".into(),
            ids: keys.len(),
            records: runs.len(),
        });
    }
    for (run, k) in runs.iter().zip(&keys) {
        let records = run.records.as_ref().map_or(0, |r| r.all.len());
        if records != k.len() {
            return Err(KeysError::Count {
                what: run.provenance.origin(),
                ids: k.len(),
                records,
            });
        }
    }
    Ok(keys)
}

/// The keys of `n` records in request order, sent as `{prefix}{index}` (vLLM's
/// `x-request-id`).
///
/// ```
/// use servebench::accuracy::request_order_keys;
/// let k = request_order_keys(3, "bench-6b8c69dc-");
/// assert_eq!(k[2].request_id.as_deref(), Some("bench-6b8c69dc-2"));
/// ```
pub fn request_order_keys(n: usize, prefix: &str) -> Vec<RequestKeys> {
    (0..n)
        .map(|i| RequestKeys {
            request_id: Some(format!("{prefix}{i}")),
            response_id: None,
        })
        .collect()
}

/// The prefixes `P` for which `ids` hold exactly `P0` … `P{n−1}` (each index once, no
/// other index under `P`; indices written without leading zeros), sorted.
///
/// ```
/// use servebench::accuracy::order_prefixes;
/// let ids = ["bench-a-0", "bench-a-1", "servebench-0", "chatcmpl-7", "bench-a-2"];
/// assert_eq!(order_prefixes(ids.iter().copied(), 3), vec!["bench-a-".to_string()]);
/// assert!(order_prefixes(ids.iter().copied(), 2).is_empty());
/// ```
pub fn order_prefixes<'a>(ids: impl IntoIterator<Item = &'a str>, n: usize) -> Vec<String> {
    let mut by_prefix: std::collections::HashMap<&str, Vec<u64>> = std::collections::HashMap::new();
    for id in ids {
        let digits = id.bytes().rev().take_while(u8::is_ascii_digit).count();
        let (prefix, index) = id.split_at(id.len() - digits);
        if index.is_empty() || (index.len() > 1 && index.starts_with('0')) {
            continue;
        }
        if let Ok(i) = index.parse::<u64>() {
            by_prefix.entry(prefix).or_default().push(i);
        }
    }
    let mut out: Vec<String> = by_prefix
        .into_iter()
        .filter_map(|(prefix, mut indices)| {
            indices.sort_unstable();
            let exact = indices.len() == n
                && indices
                    .iter()
                    .enumerate()
                    .all(|(i, &x)| u64::try_from(i).is_ok_and(|i| i == x));
            exact.then(|| prefix.to_string())
        })
        .collect();
    out.sort();
    out
}

/// aiperf's profiling lines' `metadata.x_request_id`, with the importer's filter (warmup
/// lines are not records).
fn aiperf_keys(bytes: &[u8]) -> Result<Vec<RequestKeys>, KeysError> {
    #[derive(Deserialize)]
    struct Line {
        metadata: Meta,
    }
    #[derive(Deserialize)]
    struct Meta {
        x_request_id: Option<String>,
        #[serde(default)]
        benchmark_phase: Option<String>,
    }
    let mut out = Vec::new();
    for (i, l) in bytes.split(|&b| b == b'\n').enumerate() {
        if l.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let de = &mut serde_json::Deserializer::from_slice(l);
        let line: Line = serde_path_to_error::deserialize(de)
            .map_err(|e| KeysError::Parse(format!("line {}: {e}", i + 1)))?;
        if line
            .metadata
            .benchmark_phase
            .as_deref()
            .is_some_and(|p| p != "profiling")
        {
            continue;
        }
        out.push(RequestKeys {
            request_id: line.metadata.x_request_id,
            response_id: None,
        });
    }
    Ok(out)
}

#[derive(Deserialize)]
struct GuidellmIds {
    #[serde(default)]
    benchmarks: Vec<GuidellmBench>,
}

#[derive(Deserialize)]
struct GuidellmBench {
    #[serde(default)]
    requests: Option<GuidellmRequests>,
}

#[derive(Deserialize, Default)]
struct GuidellmRequests {
    #[serde(default)]
    successful: Vec<GuidellmRequest>,
    #[serde(default)]
    errored: Vec<GuidellmRequest>,
    #[serde(default)]
    incomplete: Vec<GuidellmRequest>,
}

#[derive(Deserialize)]
struct GuidellmRequest {
    #[serde(default)]
    request_id: Option<String>,
    #[serde(default)]
    response_id: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys_of(name: &str, bytes: &[u8]) -> Result<Vec<Vec<RequestKeys>>, KeysError> {
        let runs = crate::load::load(name, bytes).unwrap();
        request_keys(&runs, bytes)
    }

    #[test]
    fn guidellm_json_and_yaml_give_the_same_ids_in_record_order() {
        let dir = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/guidellm-0.8.1/"
        );
        let json = std::fs::read(format!("{dir}benchmarks.json")).unwrap();
        let yaml = std::fs::read(format!("{dir}benchmarks.yaml")).unwrap();
        let j = keys_of("benchmarks.json", &json).unwrap();
        let y = keys_of("benchmarks.yaml", &yaml).unwrap();
        assert_eq!(j, y);
        assert_eq!(j[0].len(), 20);
        assert!(j[0].iter().all(|k| k
            .response_id
            .as_deref()
            .is_some_and(|r| r.starts_with("chatcmpl-"))));
        let distinct: std::collections::HashSet<_> =
            j[0].iter().map(|k| k.request_id.clone()).collect();
        assert_eq!(distinct.len(), 20);
    }

    #[test]
    fn aiperf_ids_follow_the_profiling_lines_and_formats_without_ids_say_so() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/aiperf/profile_export.jsonl"
        );
        let bytes = std::fs::read(path).unwrap();
        let k = keys_of("profile_export.jsonl", &bytes).unwrap();
        assert_eq!(k[0].len(), 40);
        assert!(k[0].iter().all(|k| k.request_id.is_some()));
        let vllm = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/vllm-0.33/result.json"
        ))
        .unwrap();
        let err = keys_of("result.json", &vllm).unwrap_err().to_string();
        assert_eq!(
            err,
            "a vLLM result (JSON) keeps no request ids: it cannot be joined to a timeline"
        );
    }
}
