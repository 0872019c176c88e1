//! A run file's records as Apache Parquet, for the data tools (DuckDB, pandas, Polars,
//! pyarrow read it directly): one row per request, the run's metadata in the file's
//! key-value metadata (`servebench.run`: the run file without its records, as JSON). Behind
//! the `parquet` cargo feature (the Apache Arrow project's `parquet` crate, without Arrow).
//!
//! Columns (times in seconds on the run's clock, latencies in ms):
//!
//! | column | type | what |
//! |---|---|---|
//! | `id` | int64 | the request's id |
//! | `sent_at_s`, `scheduled_at_s`, `ended_at_s` | double (the last two nullable) | when it was sent, due, ended |
//! | `outcome` | string | `success`, `error` or `incomplete` |
//! | `outcome_detail` | string, nullable | the error's kind and message, or why it did not finish |
//! | `prompt_tokens`, `usage_prompt_tokens`, `usage_output_tokens` | int64, nullable | the workload's prompt length; the server's usage |
//! | `output_tokens` | int64 | the tokens the chunks carried |
//! | `ttft_ms`, `e2el_ms` | double, nullable | first chunk − send; vLLM's end-to-end latency ([`RequestRecord::latency`]) |
//! | `chunk_offsets_ms` | list of double | every chunk's time after the send |
//!
//! The chunk times are a list column in the same file, not a second file: a request's row
//! then holds all of it (`UNNEST(chunk_offsets_ms)` in DuckDB, `explode` in pandas), and the
//! file stays one artifact whose metadata covers every column.
//!
//! ```
//! use std::time::Duration;
//! use servebench::record::{Chunk, RequestRecord};
//! use servebench::runfile::RunFile;
//! let mut r = RequestRecord::new(0, Duration::ZERO);
//! r.chunks.push(Chunk { at: Duration::from_millis(40), tokens: 1 });
//! r.ended_at = Some(Duration::from_millis(40));
//! let profile = servebench::Profile::preset("latency").unwrap();
//! let started = chrono::Utc::now().fixed_offset();
//! let run = RunFile::new(Default::default(), vec![r], profile, started);
//! let bytes = servebench::runfile::parquet::write(&run, Vec::new()).unwrap();
//! assert_eq!(&bytes[..4], b"PAR1");
//! ```

use std::io::Write;
use std::sync::Arc;

use ::parquet::basic::{ConvertedType, LogicalType, Repetition, Type as Physical};
use ::parquet::data_type::{ByteArray, ByteArrayType, DoubleType, Int64Type};
use ::parquet::file::metadata::KeyValue;
use ::parquet::file::properties::WriterProperties;
use ::parquet::file::writer::SerializedFileWriter;
use ::parquet::schema::types::Type;

use super::RunFile;
use crate::record::{Outcome, RequestRecord};

/// Requests per row group.
const ROWS_PER_GROUP: usize = 65_536;

/// The records could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ParquetExportError {
    /// The Parquet writer failed (or the output did).
    #[error("parquet: {0}")]
    Parquet(#[from] ::parquet::errors::ParquetError),
    /// The run's metadata did not serialize.
    #[error("the run's metadata: {0}")]
    Json(#[from] serde_json::Error),
}

fn column(
    name: &str,
    physical: Physical,
    repetition: Repetition,
) -> Result<Type, ::parquet::errors::ParquetError> {
    let b = Type::primitive_type_builder(name, physical).with_repetition(repetition);
    let b = if physical == Physical::BYTE_ARRAY {
        b.with_logical_type(Some(LogicalType::String))
    } else {
        b
    };
    b.build()
}

/// The file's schema (see the module docs).
fn schema() -> Result<Type, ::parquet::errors::ParquetError> {
    const BYTE_ARRAY: Physical = Physical::BYTE_ARRAY;
    const DOUBLE: Physical = Physical::DOUBLE;
    const INT64: Physical = Physical::INT64;
    const OPTIONAL: Repetition = Repetition::OPTIONAL;
    const REQUIRED: Repetition = Repetition::REQUIRED;
    let element = Type::primitive_type_builder("element", DOUBLE)
        .with_repetition(REQUIRED)
        .build()?;
    let list = Type::group_type_builder("list")
        .with_repetition(Repetition::REPEATED)
        .with_fields(vec![Arc::new(element)])
        .build()?;
    let chunks = Type::group_type_builder("chunk_offsets_ms")
        .with_repetition(REQUIRED)
        .with_converted_type(ConvertedType::LIST)
        .with_logical_type(Some(LogicalType::List))
        .with_fields(vec![Arc::new(list)])
        .build()?;
    let mut fields = [
        ("id", INT64, REQUIRED),
        ("sent_at_s", DOUBLE, REQUIRED),
        ("scheduled_at_s", DOUBLE, OPTIONAL),
        ("ended_at_s", DOUBLE, OPTIONAL),
        ("outcome", BYTE_ARRAY, REQUIRED),
        ("outcome_detail", BYTE_ARRAY, OPTIONAL),
        ("prompt_tokens", INT64, OPTIONAL),
        ("usage_prompt_tokens", INT64, OPTIONAL),
        ("usage_output_tokens", INT64, OPTIONAL),
        ("output_tokens", INT64, REQUIRED),
        ("ttft_ms", DOUBLE, OPTIONAL),
        ("e2el_ms", DOUBLE, OPTIONAL),
    ]
    .into_iter()
    .map(|(name, t, r)| column(name, t, r))
    .collect::<Result<Vec<_>, _>>()?;
    fields.push(chunks);
    Type::group_type_builder("servebench_request")
        .with_fields(fields.into_iter().map(Arc::new).collect())
        .build()
}

/// One column's values: present values and, for a nullable column, the definition levels.
enum Values {
    I64(Vec<i64>, Option<Vec<i16>>),
    F64(Vec<f64>, Option<Vec<i16>>),
    Text(Vec<ByteArray>, Option<Vec<i16>>),
    /// The chunk offsets: values, definition and repetition levels.
    List(Vec<f64>, Vec<i16>, Vec<i16>),
}

fn opt_f64(rows: &[RequestRecord], f: impl Fn(&RequestRecord) -> Option<f64>) -> Values {
    let (mut v, mut d) = (Vec::new(), Vec::with_capacity(rows.len()));
    for r in rows {
        match f(r) {
            Some(x) => {
                v.push(x);
                d.push(1);
            }
            None => d.push(0),
        }
    }
    Values::F64(v, Some(d))
}

fn opt_i64(rows: &[RequestRecord], f: impl Fn(&RequestRecord) -> Option<u64>) -> Values {
    let (mut v, mut d) = (Vec::new(), Vec::with_capacity(rows.len()));
    for r in rows {
        match f(r) {
            Some(x) => {
                v.push(i64::try_from(x).unwrap_or(i64::MAX));
                d.push(1);
            }
            None => d.push(0),
        }
    }
    Values::I64(v, Some(d))
}

fn ms(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// The columns of `rows`, in the schema's order.
fn columns(rows: &[RequestRecord]) -> Vec<Values> {
    let outcome = |r: &RequestRecord| match &r.outcome {
        Outcome::Success => "success",
        Outcome::Error { .. } => "error",
        Outcome::Incomplete { .. } => "incomplete",
    };
    let detail = |r: &RequestRecord| match &r.outcome {
        Outcome::Success => None,
        Outcome::Error { kind, message } => Some(format!("{kind:?}: {message}")),
        Outcome::Incomplete { reason } => Some(reason.clone()),
    };
    let (mut dv, mut dd) = (Vec::new(), Vec::with_capacity(rows.len()));
    for r in rows {
        match detail(r) {
            Some(t) => {
                dv.push(ByteArray::from(t.into_bytes()));
                dd.push(1);
            }
            None => dd.push(0),
        }
    }
    let n_chunks: usize = rows.iter().map(|r| r.chunks.len()).sum();
    let (mut cv, mut cd, mut cr) = (
        Vec::with_capacity(n_chunks),
        Vec::with_capacity(n_chunks + rows.len()),
        Vec::with_capacity(n_chunks + rows.len()),
    );
    for r in rows {
        if r.chunks.is_empty() {
            // An empty list: one level entry, no value.
            cd.push(0);
            cr.push(0);
        }
        for (i, c) in r.chunks.iter().enumerate() {
            cv.push(ms(c.at.saturating_sub(r.sent_at)));
            cd.push(1);
            cr.push(i16::from(i > 0));
        }
    }
    vec![
        Values::I64(
            rows.iter()
                .map(|r| i64::try_from(r.id).unwrap_or(i64::MAX))
                .collect(),
            None,
        ),
        Values::F64(rows.iter().map(|r| r.sent_at.as_secs_f64()).collect(), None),
        opt_f64(rows, |r| r.scheduled_at.map(|t| t.as_secs_f64())),
        opt_f64(rows, |r| r.ended_at.map(|t| t.as_secs_f64())),
        Values::Text(
            rows.iter()
                .map(|r| ByteArray::from(outcome(r).as_bytes().to_vec()))
                .collect(),
            None,
        ),
        Values::Text(dv, Some(dd)),
        opt_i64(rows, |r| r.prompt_tokens),
        opt_i64(rows, |r| r.usage_prompt_tokens),
        opt_i64(rows, |r| r.usage_output_tokens),
        Values::I64(
            rows.iter()
                .map(|r| i64::try_from(r.client_output_tokens()).unwrap_or(i64::MAX))
                .collect(),
            None,
        ),
        opt_f64(rows, |r| r.ttft().map(ms)),
        opt_f64(rows, |r| r.latency().map(ms)),
        Values::List(cv, cd, cr),
    ]
}

/// Writes `run`'s records to `out` as Parquet (see the module docs); `out` back.
pub fn write<W: Write + Send>(run: &RunFile, out: W) -> Result<W, ParquetExportError> {
    let props = Arc::new(WriterProperties::builder().build());
    let mut w = SerializedFileWriter::new(out, Arc::new(schema()?), props)?;
    let mut meta = run.clone();
    meta.records = Vec::new();
    w.append_key_value_metadata(KeyValue::new(
        "servebench.run".into(),
        serde_json::to_string(&meta)?,
    ));
    for rows in run.records.chunks(ROWS_PER_GROUP) {
        let mut group = w.next_row_group()?;
        for values in columns(rows) {
            let Some(mut col) = group.next_column()? else {
                break;
            };
            match &values {
                Values::I64(v, d) => {
                    col.typed::<Int64Type>()
                        .write_batch(v, d.as_deref(), None)?;
                }
                Values::F64(v, d) => {
                    col.typed::<DoubleType>()
                        .write_batch(v, d.as_deref(), None)?;
                }
                Values::Text(v, d) => {
                    col.typed::<ByteArrayType>()
                        .write_batch(v, d.as_deref(), None)?;
                }
                Values::List(v, d, r) => {
                    col.typed::<DoubleType>().write_batch(v, Some(d), Some(r))?;
                }
            }
            col.close()?;
        }
        group.close()?;
    }
    Ok(w.into_inner()?)
}
