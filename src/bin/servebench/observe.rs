//! `servebench explain BASE CANDIDATE`, `servebench slices RUN [--slice 5s]` and
//! `servebench plot RUN… --out DIR`: seeing inside runs (see `servebench::observe`). A run
//! is a run file (`bench --output`) or, with the simulator, `sim:PROFILE:CONFIG[:NOISE_SEED]`
//! (the seed's profile on a simulator configuration, its vLLM metrics sampled every second;
//! with a noise seed, one draw of the run-to-run noise model).

use std::path::{Path, PathBuf};
use std::time::Duration;

use servebench::observe::ServerSeries;
use servebench::observe::{explain, RunView};
use servebench::observe::{slices, steady_state};
use servebench::record::RequestRecord;
use servebench::result::BenchmarkResult;

use crate::input::InputError;

/// A run as these commands read it.
pub struct Run {
    /// Its name (the configuration, else the file name).
    pub label: String,
    /// Its figures.
    pub result: BenchmarkResult,
    /// Its records.
    pub records: Vec<RequestRecord>,
    /// Its server metrics.
    pub server: Option<ServerSeries>,
    /// Its load stages (a staged servebench run's).
    pub stages: Vec<servebench::observe::Stage>,
}

/// The run-file shape `bench --output` wrote before run files were versioned.
#[derive(serde::Deserialize)]
struct Legacy {
    result: BenchmarkResult,
    records: Vec<RequestRecord>,
    #[serde(default)]
    server_metrics: Option<ServerSeries>,
}

fn stem(path: &str) -> String {
    Path::new(path)
        .file_stem()
        .map_or(path.to_string(), |s| s.to_string_lossy().into_owned())
}

/// Loads `spec`: a run file or `sim:PROFILE:CONFIG[:NOISE_SEED]`, or any file with one run that has
/// records (read through `servebench::load`).
pub fn load(spec: &str) -> Result<Run, InputError> {
    let mut runs = load_all(spec)?;
    if runs.len() == 1 {
        return Ok(runs.swap_remove(0));
    }
    Err(InputError(format!(
        "{spec}: holds {} runs ({}); this command takes one (`servebench plot` takes them all)",
        runs.len(),
        runs.iter()
            .map(|r| r.label.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    )))
}

/// Every run of `spec`: a run file (with its server metrics), `sim:PROFILE:CONFIG[:NOISE_SEED]`, or any
/// other file `servebench::load` reads whose runs have records (a sweep file: one run per
/// rate, labelled `FILE:constant@R`).
pub fn load_all(spec: &str) -> Result<Vec<Run>, InputError> {
    if let Some(rest) = spec.strip_prefix("sim:") {
        return Ok(vec![load_sim(spec, rest)?]);
    }
    let err = match servebench::runfile::RunFile::read(spec) {
        Ok(f) => {
            // The check every loader makes.
            if let Some(why) = servebench::load::implausible(&f.result, &f.records, None) {
                return Err(InputError(format!("{spec}: {why}")));
            }
            return Ok(vec![Run {
                label: f.result.meta.label.clone().unwrap_or_else(|| stem(spec)),
                result: f.result,
                stages: f.stages,
                records: f.records,
                server: f.server_metrics,
            }]);
        }
        Err(e) => e,
    };
    let bytes = std::fs::read(spec).map_err(|io| InputError(format!("{spec}: {io}")))?;
    // An unversioned {"result", "records"} file from an older `bench --output`.
    if let Ok(legacy) = serde_json::from_slice::<Legacy>(&bytes) {
        return Ok(vec![Run {
            label: legacy
                .result
                .meta
                .label
                .clone()
                .unwrap_or_else(|| stem(spec)),
            result: legacy.result,
            records: legacy.records,
            server: legacy.server_metrics,
            stages: Vec::new(),
        }]);
    }
    let loaded = match servebench::load::load(spec, &bytes) {
        Ok(l) => l,
        // Not a run file and not anything else: the run file's error is the useful one.
        Err(e) if e.format.is_none() => return Err(InputError(err.to_string())),
        Err(e) => return Err(e.into()),
    };
    let many = loaded.len() > 1;
    loaded
        .into_iter()
        .map(|r| {
            let label = if many {
                format!("{}:{}", stem(spec), r.name)
            } else {
                r.result.meta.label.clone().unwrap_or_else(|| stem(spec))
            };
            match r.records {
                Some(recs) => Ok(Run {
                    label,
                    result: r.result,
                    records: recs.measured(),
                    server: None,
                    stages: recs.stages,
                }),
                None => Err(InputError(format!(
                    "{}: {} has no per-request records to draw or slice",
                    r.provenance.origin(),
                    r.provenance.format.description()
                ))),
            }
        })
        .collect()
}

#[cfg(feature = "sim")]
fn load_sim(spec: &str, rest: &str) -> Result<Run, InputError> {
    use servebench::sim::NoiseModel;
    use servebench::sim::{simulate_observed_with, Config, CONFIG_NAMES};
    let (profile, config) = rest.split_once(':').ok_or_else(|| {
        InputError(format!(
            "{spec}: expected sim:PROFILE[@RATE]:CONFIG[:NOISE_SEED], e.g. sim:throughput:baseline"
        ))
    })?;
    // An optional fourth part turns the run-to-run noise model on with that seed (the
    // ShareGPT sample stays the same: only the server varies, as between real runs).
    let (config, noise) = match config.split_once(':') {
        None => (config, None),
        Some((config, seed)) => {
            let seed: u64 = seed.parse().map_err(|_| {
                InputError(format!(
                    "{spec}: the noise seed `{seed}` is not a whole number \
                     (sim:PROFILE:CONFIG:NOISE_SEED)"
                ))
            })?;
            let model = NoiseModel {
                resample_dataset: false,
                ..NoiseModel::typical(seed)
            };
            (config, Some(model))
        }
    };
    // `PROFILE@RATE`: the preset at another request rate (a point of a simulated sweep).
    let (profile, rate) = match profile.split_once('@') {
        None => (profile, None),
        Some((name, r)) => match r.parse::<f64>() {
            Ok(v) if v.is_finite() && v > 0.0 => (name, Some(v)),
            _ => {
                return Err(InputError(format!(
                    "{spec}: the rate `{r}` is not a positive number (sim:PROFILE@RATE:CONFIG)"
                )))
            }
        },
    };
    let mut p = servebench::profile::Profile::preset(profile)
        .map_err(|e| InputError(format!("{spec}: {e}")))?;
    if let Some(r) = rate {
        p.request_rate = r;
    }
    let c = Config::named(config).ok_or_else(|| {
        InputError(format!(
            "{spec}: unknown configuration `{config}` ({})",
            CONFIG_NAMES.join(", ")
        ))
    })?;
    let (out, series) = simulate_observed_with(&p, &c, noise, 0, false, Duration::from_secs(1))
        .map_err(|e| InputError(format!("{spec}: {e}")))?;
    Ok(Run {
        label: match rate {
            Some(r) => format!("{config}@{r}"),
            None => config.to_string(),
        },
        result: out.result,
        records: out.records,
        server: Some(series),
        stages: Vec::new(),
    })
}

#[cfg(not(feature = "sim"))]
fn load_sim(spec: &str, _: &str) -> Result<Run, InputError> {
    Err(InputError(format!(
        "{spec}: this build has no simulator (feature `sim`)"
    )))
}

impl Run {
    fn view(&self) -> RunView<'_> {
        RunView {
            label: &self.label,
            records: &self.records,
            server: self.server.as_ref(),
        }
    }
}

/// Arguments of `servebench explain`.
#[derive(Debug, clap::Args)]
pub struct ExplainArgs {
    /// The base run (a run file, or sim:PROFILE:CONFIG).
    base: String,
    /// The candidate run.
    candidate: String,
}

/// Explains the change of mean TTFT and TPOT from BASE to CANDIDATE.
pub fn run_explain(a: &ExplainArgs) -> Result<String, InputError> {
    let (b, c) = (load(&a.base)?, load(&a.candidate)?);
    Ok(explain(&b.view(), &c.view()).render())
}

/// Parses `5s`, `500ms`, `2m` or a number of seconds.
pub fn parse_duration(flag: &str, v: &str) -> Result<Duration, InputError> {
    crate::values::duration_in(v, &[("ms", 1e-3), ("s", 1.0), ("m", 60.0)]).ok_or_else(|| {
        InputError(format!(
            "{flag}: not a positive duration: `{}` (e.g. 5s, 500ms)",
            v.trim()
        ))
    })
}

/// Arguments of `servebench slices`.
#[derive(Debug, clap::Args)]
pub struct SlicesArgs {
    /// The run (a run file, or sim:PROFILE:CONFIG).
    run: String,
    /// Window width (5s, 500ms, 1m).
    #[arg(long, default_value = "5s")]
    slice: String,
    /// Print JSON (the windows and the steady state) instead of a table.
    #[arg(long)]
    json: bool,
}

/// Prints the run's windows and steady state.
pub fn run_slices(a: &SlicesArgs) -> Result<String, InputError> {
    let width = parse_duration("--slice", &a.slice)?;
    let r = load(&a.run)?;
    let s = slices(&r.records, width).map_err(crate::flagged::slice)?;
    let mser = servebench::observe::steady_figures(&r.records);
    if a.json {
        let window = mser.as_ref().map(|(w, _, _)| {
            serde_json::json!({
                "method": "MSER-5 on TTFT in send order",
                "start_s": w.start.as_secs_f64(),
                "end_s": w.end.as_secs_f64(),
                "requests": w.requests,
                "fill": w.fill,
                "drain": w.drain,
            })
        });
        let v = serde_json::json!({
            "slices": s,
            "steady_state": steady_state(&s),
            "steady_window": window,
        });
        return Ok(format!("{v}\n"));
    }
    let mut text = servebench::format::render_slices(&s);
    if let Some((w, window, whole)) = &mser {
        text.push_str(&servebench::format::steady_line(w, window, whole));
        text.push('\n');
    }
    Ok(text)
}

/// Arguments of `servebench plot`.
#[cfg(feature = "plot")]
#[derive(Debug, clap::Args)]
pub struct PlotArgs {
    /// Runs to draw (run files, sweep files — one configuration per rate —, any file with
    /// per-request records, or sim:PROFILE:CONFIG), one configuration each.
    #[arg(required = true)]
    runs: Vec<String>,
    /// Where to write the SVGs and index.html.
    #[arg(long)]
    out: PathBuf,
    /// The report's title.
    #[arg(long, default_value = "servebench report")]
    title: String,
}

/// Writes the charts and the HTML report; explains each run against the first.
#[cfg(feature = "plot")]
pub fn run_plot(a: &PlotArgs) -> Result<String, InputError> {
    use servebench::observe::html::{write_report, PageSection};
    use servebench::observe::PlotRun;
    let runs = a
        .runs
        .iter()
        .map(|s| load_all(s))
        .collect::<Result<Vec<_>, _>>()?
        .into_iter()
        .flatten()
        .collect::<Vec<_>>();
    let plot_runs: Vec<PlotRun> = runs
        .iter()
        .map(|r| PlotRun {
            server: r.server.as_ref(),
            stages: &r.stages,
            ..PlotRun::new(&r.label, &r.result, &r.records)
        })
        .collect();
    let sections: Vec<PageSection> = runs
        .iter()
        .skip(1)
        .map(|c| {
            let e = explain(&runs[0].view(), &c.view());
            PageSection::text(format!("{} → {}", runs[0].label, c.label), e.render())
        })
        .collect();
    let path = write_report(&a.out, &a.title, &plot_runs, &sections)
        .map_err(|e| InputError(e.to_string()))?;
    Ok(format!("{}\n", path.display()))
}
