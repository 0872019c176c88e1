//! guidellm's CSV report (`--output kind=csv`, guidellm 0.8): three header rows (column
//! group, column, statistic: `Time to First Token` / `Successful ms` / `Mean`), then one row
//! per benchmark. Read into the same [`BenchmarkResult`] as the JSON report's aggregates
//! (GPUStack's mapping, see the parent module), as far as the CSV has the figures: each
//! distribution's mean, median and standard deviation, and a `Percentiles` cell listing
//! `[min, p0.1, p1, p5, p10, p25, p75, p90, p95, p99, max]` (guidellm 0.8's
//! `_add_stats_for_metric`: no p50, which is the median column, and no p99.9). It has no
//! per-request records.

use crate::import::{round_count, ImportError};
use crate::result::{BenchmarkResult, Convention, Percentile, RunMeta, Summary};

/// The ranks of the `Percentiles` cell between its min and max.
const RANKS: [f64; 9] = [0.1, 1.0, 5.0, 10.0, 25.0, 75.0, 90.0, 95.0, 99.0];

/// One benchmark row: its 1-based line, its name (the strategy, `concurrent@8`) and its
/// figures.
pub type CsvRun = (usize, String, BenchmarkResult);

struct Table {
    /// (group, column, statistic) per column.
    header: Vec<(String, String, String)>,
}

impl Table {
    fn col(&self, group: &str, name: &str, stat: &str) -> Option<usize> {
        self.header
            .iter()
            .position(|(g, n, s)| g == group && n == name && s == stat)
    }
}

struct Row<'a> {
    table: &'a Table,
    cells: &'a ::csv::StringRecord,
    line: usize,
}

impl Row<'_> {
    fn cell(&self, group: &str, name: &str, stat: &str) -> Option<&str> {
        let i = self.table.col(group, name, stat)?;
        self.cells.get(i).filter(|c| !c.is_empty())
    }

    fn err(&self, group: &str, name: &str, stat: &str, message: String) -> ImportError {
        let stat = if stat.is_empty() {
            String::new()
        } else {
            format!(" / {stat}")
        };
        ImportError::Csv {
            line: self.line,
            column: Some(format!("{group} / {name}{stat}")),
            message,
        }
    }

    fn num(&self, group: &str, name: &str, stat: &str) -> Result<Option<f64>, ImportError> {
        let Some(c) = self.cell(group, name, stat) else {
            return Ok(None);
        };
        let x: f64 = c
            .parse()
            .map_err(|_| self.err(group, name, stat, format!("`{c}` is not a number")))?;
        if !x.is_finite() || x < 0.0 {
            return Err(self.err(group, name, stat, format!("{x}: negative or not finite")));
        }
        Ok(Some(x))
    }

    fn count(&self, group: &str, name: &str) -> Result<Option<u64>, ImportError> {
        match self.num(group, name, "")? {
            None => Ok(None),
            Some(x) if x.fract() == 0.0 => Ok(round_count(x)),
            Some(x) => Err(self.err(group, name, "", format!("{x} is not a count"))),
        }
    }

    fn summary(&self, group: &str, name: &str, scale: f64) -> Result<Option<Summary>, ImportError> {
        let mean = self.num(group, name, "Mean")?;
        let median = self.num(group, name, "Median")?;
        let std = self.num(group, name, "Std Dev")?;
        let (mut min, mut max, mut percentiles) = (None, None, Vec::new());
        if let Some(c) = self.cell(group, name, "Percentiles") {
            let values: Vec<f64> = serde_json::from_str(c).map_err(|e| {
                self.err(
                    group,
                    name,
                    "Percentiles",
                    format!("not a list of numbers: {e}"),
                )
            })?;
            let [lo, ranked @ .., hi] = values.as_slice() else {
                return Err(self.err(group, name, "Percentiles", "empty list".into()));
            };
            if ranked.len() != RANKS.len() {
                return Err(self.err(
                    group,
                    name,
                    "Percentiles",
                    format!(
                        "{} values, guidellm writes {} (min, 9 percentiles, max)",
                        values.len(),
                        RANKS.len() + 2
                    ),
                ));
            }
            (min, max) = (Some(lo * scale), Some(hi * scale));
            for (&p, v) in RANKS.iter().zip(ranked) {
                if p == 75.0 {
                    // p50 is the median column.
                    percentiles.push(Percentile {
                        p: 50.0,
                        value: median.map(|m| m * scale),
                    });
                }
                percentiles.push(Percentile {
                    p,
                    value: Some(v * scale),
                });
            }
        }
        if mean.is_none() && median.is_none() && percentiles.is_empty() {
            return Ok(None);
        }
        Ok(Some(Summary {
            mean: mean.map(|x| x * scale),
            median: median.map(|x| x * scale),
            std: std.map(|x| x * scale),
            min,
            max,
            percentiles,
        }))
    }
}

/// Read guidellm's CSV report.
///
/// # Errors
///
/// [`ImportError::Csv`] naming the line and the column (`Time to First Token / Successful
/// ms / Mean`) for a cell that is not a number (or is negative or not finite), rows of
/// unequal length, missing header rows, or no benchmark row.
pub fn from_slice(bytes: &[u8]) -> Result<Vec<CsvRun>, ImportError> {
    let mut rdr = ::csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(bytes);
    let mut rows = Vec::new();
    for r in rdr.records() {
        let r = r.map_err(|e| ImportError::Csv {
            line: e.position().map_or(0, |p| p.line() as usize),
            column: None,
            message: e.to_string(),
        })?;
        rows.push(r);
    }
    let [g, n, s, data @ ..] = rows.as_slice() else {
        return Err(ImportError::Csv {
            line: rows.len() + 1,
            column: None,
            message: "guidellm's CSV has three header rows; the file ends before them".into(),
        });
    };
    let mut header = Vec::with_capacity(g.len());
    for i in 0..g.len() {
        let cell = |r: &::csv::StringRecord| r.get(i).unwrap_or_default().to_string();
        header.push((cell(g), cell(n), cell(s)));
    }
    let table = Table { header };
    if table.col("Request Counts", "Successful", "").is_none() {
        return Err(ImportError::Csv {
            line: 2,
            column: Some("Request Counts / Successful".into()),
            message: "missing: not a guidellm CSV report".into(),
        });
    }
    if data.is_empty() {
        return Err(ImportError::Csv {
            line: 4,
            column: None,
            message: "no benchmark row".into(),
        });
    }
    data.iter()
        .map(|cells| {
            let line = cells
                .position()
                .map_or(0, |p| crate::import::line_at(bytes, p.byte()));
            convert(&Row {
                table: &table,
                cells,
                line,
            })
        })
        .collect()
}

fn convert(row: &Row) -> Result<CsvRun, ImportError> {
    let ok = row
        .count("Request Counts", "Successful")?
        .ok_or_else(|| row.err("Request Counts", "Successful", "", "empty".into()))?;
    let failed = match (
        row.count("Request Counts", "Errored")?,
        row.count("Request Counts", "Incomplete")?,
    ) {
        (None, None) => None,
        (e, i) => Some(e.unwrap_or(0).saturating_add(i.unwrap_or(0))),
    };
    let name = row
        .cell("Benchmark", "Strategy", "")
        .unwrap_or("benchmark")
        .to_string();
    let rate = name
        .strip_prefix("constant@")
        .or_else(|| name.strip_prefix("poisson@"))
        .and_then(|r| r.parse::<f64>().ok());
    let total = |stat_name: &str| -> Result<Option<u64>, ImportError> {
        Ok(row
            .num("Token Metrics", stat_name, "Mean")?
            .and_then(|m| round_count(m * ok as f64)))
    };
    let mean = |group: &str, name: &str| row.num(group, name, "Mean");
    let model = row
        .cell("Run Info", "Backend", "")
        .and_then(|b| serde_json::from_str::<serde_json::Value>(b).ok())
        .and_then(|v| v.get("model")?.as_str().map(str::to_string))
        .filter(|m| !m.is_empty());
    let concurrency_max = row
        .summary("Server Throughput", "Successful Concurrency", 1.0)?
        .and_then(|s| s.max);
    let output_max = row
        .summary("Token Throughput", "Successful Output Tokens/Sec", 1.0)?
        .and_then(|s| s.max);
    let result = BenchmarkResult {
        meta: RunMeta {
            label: Some(name.clone()),
            model,
            convention: Some(Convention::Guidellm),
            source: Some("guidellm (CSV)".into()),
            ..RunMeta::default()
        },
        successful_requests: Some(ok),
        failed_requests: failed,
        max_concurrency: concurrency_max.and_then(round_count),
        request_rate_configured: rate,
        peak_output_throughput_per_s: output_max,
        peak_concurrent_requests: concurrency_max,
        duration_ms: row.num("Timings", "Duration", "Sec")?.map(|s| s * 1000.0),
        total_input_tokens: total("Successful Input Tokens")?,
        total_output_tokens: total("Successful Output Tokens")?,
        request_throughput_per_s: mean("Server Throughput", "Successful Requests/Sec")?,
        output_throughput_per_s: mean("Token Throughput", "Successful Output Tokens/Sec")?,
        total_token_throughput_per_s: mean("Token Throughput", "Successful Total Tokens/Sec")?,
        e2el: row.summary("Request Latency", "Successful Sec", 1000.0)?,
        ttft: row.summary("Time to First Token", "Successful ms", 1.0)?,
        tpot: row.summary("Time per Output Token", "Successful ms", 1.0)?,
        itl: row.summary("Inter Token Latency", "Successful ms", 1.0)?,
        ..BenchmarkResult::default()
    };
    Ok((row.line, name, result))
}
