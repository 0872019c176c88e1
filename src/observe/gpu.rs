//! GPU telemetry: what NVIDIA's DCGM exporter metrics (scraped into a [`ServerSeries`]) say
//! about a run's energy, power, utilization, memory and clocks ([`energy_figures`]), what a
//! vLLM server's speculative-decoding counters say about acceptance
//! ([`spec_decode_figures`]), and [`nvidia_smi_samples`], which samples `nvidia-smi` on this
//! machine into the DCGM exporter's names so the same figures come from either.
//!
//! The DCGM names and units are the exporter's (`etc/default-counters.csv` of
//! <https://github.com/NVIDIA/dcgm-exporter>): `DCGM_FI_DEV_POWER_USAGE` (W, gauge),
//! `DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION` (mJ since boot, counter), `DCGM_FI_DEV_GPU_UTIL`
//! (%), `DCGM_FI_DEV_FB_USED` (MiB), `DCGM_FI_DEV_SM_CLOCK` (MHz). Series of several GPUs
//! (label `gpu`) are added up (energy, power, memory) or averaged (utilization, clock).
//!
//! Energy over a window `[t0, t1]` of the run's clock is the energy counter's cumulative
//! increase (resets survived), interpolated linearly between the scrapes around `t0` and
//! `t1`; without the counter (`nvidia-smi` has none), the power samples integrated by the
//! trapezoid rule (power linear between samples: holding each sample until the next would
//! lag a ramp by one interval). The speculative-decoding names are vLLM's
//! (`vllm:spec_decode_num_drafts`, `…_num_draft_tokens`, `…_num_accepted_tokens`,
//! `…_num_accepted_tokens_per_pos` with label `position`; counters, `_total` on the wire):
//! acceptance rate = accepted ÷ draft tokens, mean accepted length = 1 + accepted ÷ drafts
//! (the bonus token counted), per position = accepted at the position ÷ drafts.
//!
//! ```
//! use servebench::observe::energy_figures;
//! use servebench::observe::prom::Sample;
//! use servebench::observe::ServerSeries;
//! let mut s = ServerSeries::new("http://gpu-host:9400/metrics", 1.0);
//! for (t, mj, w) in [(0.0, 1_000_000.0, 100.0), (1.0, 1_400_000.0, 400.0), (2.0, 1_800_000.0, 400.0)] {
//!     s.push(t, vec![
//!         Sample::new("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", mj),
//!         Sample::new("DCGM_FI_DEV_POWER_USAGE", w),
//!     ]);
//! }
//! let e = energy_figures(&s, Some((0.5, 2.0)), Some(300)).unwrap();
//! assert_eq!(e.energy_j, Some(600.0)); // 200 J of the first second's 400, then 400
//! assert_eq!(e.joules_per_output_token, Some(2.0));
//! // Mean power: the energy over the window's seconds, 600 J over 1.5 s.
//! assert_eq!(e.mean_power_w, Some(400.0));
//! ```

use std::collections::BTreeSet;

use super::prom::Sample;
use super::series::{counter_increase, ServerSeries};
use crate::result::{EnergyFigures, SpecDecodeFigures};

/// Power draw, W (gauge).
pub const POWER: &str = "DCGM_FI_DEV_POWER_USAGE";
/// Energy since boot, mJ (counter; no `_total` suffix).
pub const ENERGY: &str = "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION";
/// GPU utilization, % (gauge).
pub const GPU_UTIL: &str = "DCGM_FI_DEV_GPU_UTIL";
/// Frame-buffer memory used, MiB (gauge).
pub const FB_USED: &str = "DCGM_FI_DEV_FB_USED";
/// SM clock, MHz (gauge).
pub const SM_CLOCK: &str = "DCGM_FI_DEV_SM_CLOCK";

/// The cumulative quantity (a counter's increase from the first scrape, resets survived)
/// at each scrape that has a value: `(time, cumulative)`.
fn cumulative(times: &[f64], values: &[Option<f64>]) -> Vec<(f64, f64)> {
    let mut out = Vec::new();
    let mut seen = Vec::new();
    for (t, v) in times.iter().zip(values) {
        if let Some(v) = v {
            seen.push(*v);
            out.push((*t, counter_increase(seen.iter().copied())));
        }
    }
    out
}

/// A quantity accumulated from one series' values at the scrape times: `(time, total)`.
type Accumulate = fn(&[f64], &[Option<f64>]) -> Vec<(f64, f64)>;

/// The power samples integrated by the trapezoid rule (power linear between scrapes), J,
/// at each scrape.
fn integrated(times: &[f64], watts: &[Option<f64>]) -> Vec<(f64, f64)> {
    let mut out = Vec::new();
    let mut total = 0.0;
    let mut last: Option<(f64, f64)> = None;
    for (t, w) in times.iter().zip(watts) {
        if let Some(w) = w {
            if let Some((lt, lw)) = last {
                total += (lw + w) / 2.0 * (t - lt);
            }
            out.push((*t, total));
            last = Some((*t, *w));
        }
    }
    out
}

/// `points` (time-ordered) interpolated linearly at `t`, clamped to their span.
fn at(points: &[(f64, f64)], t: f64) -> Option<f64> {
    let first = points.first()?;
    let last = points.last()?;
    if t <= first.0 {
        return Some(first.1);
    }
    if t >= last.0 {
        return Some(last.1);
    }
    let i = points.partition_point(|p| p.0 <= t);
    let (a, b) = (points[i - 1], points[i]);
    if b.0 <= a.0 {
        return Some(b.1);
    }
    Some(a.1 + (b.1 - a.1) * (t - a.0) / (b.0 - a.0))
}

/// The fewest GPU samples inside a run's window for mean power, utilization and clock.
pub const MIN_WINDOW_SAMPLES: usize = 2;

/// Energy and GPU telemetry from the DCGM series in `s`, over `window` (seconds of the run's
/// clock; default: the whole scraped span); J per output token over `output_tokens`. Each
/// figure is given only when the samples measure it, else a note says why:
/// - energy needs a window of some length, output tokens (for J/token), and samples close
///   enough around the window that at most half of the energy is interpolated (the scrapes
///   bracketing the window at most twice its length apart);
/// - mean power is the energy over the window's (server) seconds, so the three printed
///   figures agree; without energy, and for utilization and clock, the time-weighted mean
///   of the samples inside the window, at least [`MIN_WINDOW_SAMPLES`] of them (a
///   sub-second run between 1-s samples would report the idle scrape before it);
/// - a source on a clock of its own ([`ServerSeries::clock_speed`]) is said
///   ([`EnergyFigures::server_speed`]): its joules are server joules over
///   `span × speed` server seconds.
///
/// `None` when `s` holds neither DCGM power nor energy.
pub fn energy_figures(
    s: &ServerSeries,
    window: Option<(f64, f64)>,
    output_tokens: Option<u64>,
) -> Option<EnergyFigures> {
    let energy_col = s.metric(&[ENERGY]);
    let power_col = s.metric(&[POWER]);
    if energy_col.is_none() && power_col.is_none() {
        return None;
    }
    let gpus: BTreeSet<String> = s
        .family(ENERGY)
        .chain(s.family(POWER))
        .map(|(key, _)| {
            // One GPU per `gpu` label; unlabelled series are one GPU (the energy counter
            // and the power gauge of the same GPU are two series).
            key.split("gpu=\"")
                .nth(1)
                .and_then(|r| r.split('"').next())
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    let gpus = u32::try_from(gpus.len()).unwrap_or(u32::MAX).max(1);
    let (t0, t1) = window.unwrap_or((
        s.times_s.first().copied().unwrap_or(0.0),
        s.times_s.last().copied().unwrap_or(0.0),
    ));
    let span = t1 - t0;
    let speed = s.clock_speed();
    let mut notes = Vec::new();
    // The scrapes bracketing the window.
    let lo = s
        .times_s
        .iter()
        .copied()
        .filter(|&t| t <= t0)
        .fold(f64::NAN, f64::max);
    let hi = s
        .times_s
        .iter()
        .copied()
        .filter(|&t| t >= t1)
        .fold(f64::NAN, f64::min);
    let bracketed = (hi - lo) <= 2.0 * span;
    let energy_measured = if span.is_nan() || span <= 0.0 {
        notes.push(
            "no energy: the run's measured window has no length (no request succeeded)".into(),
        );
        false
    } else if !bracketed {
        notes.push(format!(
            "no energy: the GPU samples around the run are {:.2} s apart for a {span:.2} s run, \
             so most of its energy would be interpolated (sample more often: --scrape-interval)",
            hi - lo
        ));
        false
    } else {
        true
    };
    // Each GPU's series on its own, then added up: a scrape missing one GPU's value is
    // bridged for that GPU (a sum over the GPUs present would read it as a GPU drawing
    // nothing, or as an energy counter reset).
    let per_gpu_total = |name: &str, f: Accumulate| {
        let mut total: Option<f64> = None;
        for (_, col) in s.family(name) {
            let values: Vec<Option<f64>> = col.iter().map(|v| v.map(|v| v.0)).collect();
            let c = f(&s.times_s, &values);
            if let (Some(a), Some(b)) = (at(&c, t0), at(&c, t1)) {
                *total.get_or_insert(0.0) += b - a;
            }
        }
        total
    };
    let energy_j = if !energy_measured {
        None
    } else if energy_col.is_some() {
        per_gpu_total(ENERGY, cumulative).map(|mj| mj / 1000.0)
    } else {
        per_gpu_total(POWER, integrated)
    };
    let per_token = match (energy_j, output_tokens) {
        (Some(j), Some(n)) if n > 0 && j > 0.0 => Some(j / n as f64),
        _ => None,
    };
    // Time-weighted means of the samples inside the window, taken GPU by GPU (a scrape
    // missing one GPU's value leaves that GPU's mean alone instead of lowering a
    // per-scrape sum), then added up (power) or averaged over the GPUs that report
    // (utilization, clock).
    let inside: Vec<usize> = (0..s.times_s.len())
        .filter(|&i| (t0..=t1).contains(&s.times_s[i]))
        .collect();
    let enough = inside.len() >= MIN_WINDOW_SAMPLES;
    if !enough {
        notes.push(too_few_samples(energy_j.is_some(), inside.len(), span));
    }
    let times: Vec<f64> = inside.iter().map(|&i| s.times_s[i]).collect();
    let means = |name: &str| -> Vec<f64> {
        if !enough {
            return Vec::new();
        }
        s.family(name)
            .filter_map(|(_, col)| {
                let values: Vec<Option<f64>> =
                    inside.iter().map(|&i| col[i].map(|v| v.0)).collect();
                super::series::time_weighted_mean(&times, &values)
            })
            .collect()
    };
    let total = |v: Vec<f64>| (!v.is_empty()).then(|| v.iter().sum::<f64>());
    let average = |v: Vec<f64>| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
    // Energy ÷ the window's server seconds (a sped-up simulator's joules are its own, its
    // span wall-clock), so that energy, span and power agree as printed; the power
    // samples' own time-weighted mean only without an energy figure.
    let mean_power_w = energy_j
        .filter(|_| span > 0.0)
        .map(|j| j / (span * speed))
        .or_else(|| total(means(POWER)));
    let peak_power_w = peak_power(s, &inside, mean_power_w, &mut notes);
    Some(EnergyFigures {
        source: format!("dcgm:{}", s.target),
        gpus,
        span_s: Some(span),
        energy_j,
        mean_power_w,
        peak_power_w,
        joules_per_output_token: per_token,
        output_tokens_per_joule: per_token.map(|j| 1.0 / j),
        gpu_util_mean_pct: average(means(GPU_UTIL)),
        fb_used_peak_mib: s.peak(&[FB_USED]),
        sm_clock_mean_mhz: average(means(SM_CLOCK)),
        server_speed: (speed != 1.0).then_some(speed),
        notes,
    })
}

/// The note of a run with fewer than [`MIN_WINDOW_SAMPLES`] samples inside it: what it
/// lacks (with energy, mean power is energy ÷ time and stands; the samples give the rest).
fn too_few_samples(energy: bool, inside: usize, span: f64) -> String {
    let what = match (energy, inside == 0) {
        (true, false) => "no utilization or clock",
        (true, true) => "no peak power, utilization or clock",
        (false, false) => "no mean power, utilization or clock",
        (false, true) => "no mean or peak power, utilization or clock",
    };
    format!(
        "{what}: {inside} GPU sample(s) inside the {span:.2} s run, at least \
         {MIN_WINDOW_SAMPLES} needed (sample more often: --scrape-interval)"
    )
}

/// The peak of the power samples at `inside` (the scrapes before and after a run are idle),
/// however few; one below the run's mean power missed its busiest moments and is no peak
/// (a note says so).
fn peak_power(
    s: &ServerSeries,
    inside: &[usize],
    mean_power_w: Option<f64>,
    notes: &mut Vec<String>,
) -> Option<f64> {
    let col = s.metric(&[POWER])?;
    let peak = inside
        .iter()
        .filter_map(|&i| col.get(i).copied().flatten())
        .reduce(f64::max)?;
    match mean_power_w {
        Some(m) if peak < m => {
            notes.push(format!(
                "no peak power: the highest sample inside the run ({peak:.1} W) is below its \
                 mean power ({m:.1} W), so the samples missed its busiest moments"
            ));
            None
        }
        _ => Some(peak),
    }
}

/// Speculative decoding from vLLM's counters in `s` over the scraped span; `None` when the
/// server made no draft.
///
/// ```
/// use servebench::observe::spec_decode_figures;
/// use servebench::observe::prom::Sample;
/// use servebench::observe::ServerSeries;
/// let mut s = ServerSeries::new("x", 1.0);
/// let pos = |p: &str, v| Sample { name: "vllm:spec_decode_num_accepted_tokens_per_pos_total".into(),
///     labels: vec![("position".into(), p.into())], value: v };
/// s.push(0.0, vec![Sample::new("vllm:spec_decode_num_drafts_total", 0.0),
///     Sample::new("vllm:spec_decode_num_draft_tokens_total", 0.0),
///     Sample::new("vllm:spec_decode_num_accepted_tokens_total", 0.0), pos("0", 0.0), pos("1", 0.0)]);
/// s.push(1.0, vec![Sample::new("vllm:spec_decode_num_drafts_total", 100.0),
///     Sample::new("vllm:spec_decode_num_draft_tokens_total", 200.0),
///     Sample::new("vllm:spec_decode_num_accepted_tokens_total", 120.0), pos("0", 80.0), pos("1", 40.0)]);
/// let f = spec_decode_figures(&s).unwrap();
/// assert_eq!(f.acceptance_rate, Some(0.6));
/// assert_eq!(f.mean_accepted_length, Some(2.2));
/// assert_eq!(f.acceptance_per_position, [0.8, 0.4]);
/// ```
pub fn spec_decode_figures(s: &ServerSeries) -> Option<SpecDecodeFigures> {
    let drafts = s.increase(&["vllm:spec_decode_num_drafts_total"])?;
    if drafts <= 0.0 {
        return None;
    }
    let draft_tokens = s.increase(&["vllm:spec_decode_num_draft_tokens_total"]);
    let accepted = s.increase(&["vllm:spec_decode_num_accepted_tokens_total"]);
    let mut per_pos: Vec<(u64, f64)> = Vec::new();
    for (key, _) in s.family("vllm:spec_decode_num_accepted_tokens_per_pos_total") {
        let pos = key
            .split("position=\"")
            .nth(1)
            .and_then(|r| r.split('"').next())
            .and_then(|p| p.parse::<u64>().ok());
        if let (Some(p), Some(n)) = (pos, s.key_increase(key)) {
            match per_pos.iter_mut().find(|(q, _)| *q == p) {
                Some((_, total)) => *total += n,
                None => per_pos.push((p, n)),
            }
        }
    }
    per_pos.sort_by_key(|(p, _)| *p);
    Some(SpecDecodeFigures {
        drafts: Some(drafts),
        draft_tokens,
        accepted_tokens: accepted,
        acceptance_rate: match (draft_tokens, accepted) {
            (Some(d), Some(a)) if d > 0.0 => Some(a / d),
            _ => None,
        },
        mean_accepted_length: accepted.map(|a| 1.0 + a / drafts),
        acceptance_per_position: per_pos.into_iter().map(|(_, n)| n / drafts).collect(),
        tokens_per_chunk: None,
    })
}

/// The fields `nvidia-smi --query-gpu` is asked for, in order.
pub const NVIDIA_SMI_QUERY: &str = "index,power.draw,utilization.gpu,memory.used,clocks.sm";

/// One `nvidia-smi --query-gpu=NVIDIA_SMI_QUERY --format=csv,noheader,nounits` output as
/// samples in DCGM's names (power W, utilization %, memory MiB, SM clock MHz; label `gpu`);
/// a `[N/A]` field is left out.
///
/// ```
/// use servebench::observe::parse_nvidia_smi;
/// let s = parse_nvidia_smi("0, 119.30, 0, 81000, 1980\n1, [N/A], 35, 1024, 1980\n").unwrap();
/// assert_eq!(s.len(), 7);
/// assert_eq!((s[0].name.as_str(), s[0].value), ("DCGM_FI_DEV_POWER_USAGE", 119.3));
/// assert_eq!(s[0].label("gpu"), Some("0"));
/// assert!(parse_nvidia_smi("0, 1, 2\n").unwrap_err().contains("line 1"));
/// ```
pub fn parse_nvidia_smi(text: &str) -> Result<Vec<Sample>, String> {
    let names = [POWER, GPU_UTIL, FB_USED, SM_CLOCK];
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        if fields.len() != names.len() + 1 {
            return Err(format!(
                "nvidia-smi line {}: expected {} fields ({NVIDIA_SMI_QUERY}), got `{line}`",
                i + 1,
                names.len() + 1
            ));
        }
        let gpu = fields[0].to_string();
        for (name, field) in names.iter().zip(&fields[1..]) {
            if field.starts_with('[') {
                continue; // [N/A], [Not Supported]
            }
            let value: f64 = field.parse().map_err(|_| {
                format!(
                    "nvidia-smi line {}: `{field}` is not a number ({name})",
                    i + 1
                )
            })?;
            out.push(Sample {
                name: (*name).to_string(),
                labels: vec![("gpu".into(), gpu.clone())],
                value,
            });
        }
    }
    Ok(out)
}

/// Whether `samples` hold a GPU power or energy series, the ones energy figures need.
#[cfg(feature = "http")]
pub fn has_gpu_series(samples: &[Sample]) -> bool {
    samples.iter().any(|s| s.name == POWER || s.name == ENERGY)
}

/// Samples `nvidia-smi` on this machine once (see [`parse_nvidia_smi`]).
pub fn nvidia_smi_samples() -> Result<Vec<Sample>, String> {
    let out = std::process::Command::new("nvidia-smi")
        .arg(format!("--query-gpu={NVIDIA_SMI_QUERY}"))
        .arg("--format=csv,noheader,nounits")
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("nvidia-smi: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "nvidia-smi exited with {}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    parse_nvidia_smi(&String::from_utf8_lossy(&out.stdout))
}

/// Adds what the scraped series say to `result`: energy (from `gpu`, the DCGM exporter or
/// `nvidia-smi` series, else from DCGM names in `server`, as the example server exports
/// them) over `window` with J per output token over the result's output tokens, and
/// speculative decoding from `server`'s vLLM counters, with the client's
/// `tokens_per_chunk` beside them.
pub fn add_server_figures(
    result: &mut crate::result::BenchmarkResult,
    window: Option<(f64, f64)>,
    server: Option<&ServerSeries>,
    gpu: Option<&ServerSeries>,
    tokens_per_chunk: Option<f64>,
) {
    let tokens = result.total_output_tokens;
    let from_gpu = gpu.and_then(|g| {
        let mut e = energy_figures(g, window, tokens)?;
        if g.target == NVIDIA_SMI {
            e.source = g.target.clone();
        }
        Some(e)
    });
    // Only figures from `gpu` are named after it: when it gave none (an `nvidia-smi` that
    // failed), the server's are named after the server.
    let energy = from_gpu.or_else(|| server.and_then(|s| energy_figures(s, window, tokens)));
    if let Some(e) = energy {
        result.energy = Some(e);
    }
    if let Some(mut s) = server.and_then(spec_decode_figures) {
        s.tokens_per_chunk = tokens_per_chunk;
        result.spec_decode = Some(s);
    }
}

/// The name of a series sampled from `nvidia-smi` (and the `--gpu-metrics` value asking
/// for one).
pub const NVIDIA_SMI: &str = "nvidia-smi";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::prom::Sample;

    /// A series of one GPU sampled at `times` (seconds): the energy counter at `w` watts of
    /// server time per wall second times `speed`, the power at `w`, utilization 80 %.
    fn gpu_series(times: &[f64], w: f64, speed: Option<f64>) -> ServerSeries {
        let mut s = ServerSeries::new("http://gpu:9400/metrics", 1.0);
        for &t in times {
            let mut v = vec![
                Sample::new(ENERGY, w * t * speed.unwrap_or(1.0) * 1000.0),
                Sample::new(POWER, w),
                Sample::new(GPU_UTIL, 80.0),
            ];
            if let Some(x) = speed {
                v.push(Sample::new(crate::observe::CLOCK_SPEED, x));
            }
            s.push(t, v);
        }
        s
    }

    fn line(e: EnergyFigures) -> Vec<String> {
        let r = crate::result::BenchmarkResult {
            energy: Some(e),
            ..Default::default()
        };
        crate::format::production::lines(&r)
    }

    /// At `--speed 10` the counter holds server joules: 4000 J in 1 s of wall time is
    /// 10 s of server time at 400 W, and the line says both clocks, so energy, span and
    /// power agree (it printed "4000.0 J over 1.0 s, mean power 400.0 W").
    #[test]
    fn a_sped_up_source_says_its_server_seconds() {
        let times: Vec<f64> = (0..=10).map(|i| f64::from(i) * 0.1).collect();
        let e = energy_figures(
            &gpu_series(&times, 400.0, Some(10.0)),
            Some((0.0, 1.0)),
            Some(8000),
        )
        .unwrap();
        assert_eq!(e.server_speed, Some(10.0));
        let head = &line(e)[0];
        assert!(
            head.starts_with(
                "Energy (dcgm:http://gpu:9400/metrics, 1 GPU): 4000.0 J over 1.0 s (10.0 s of \
                 server time at 10×), mean power 400.0 W"
            ),
            "{head}"
        );
    }

    /// A 0.25-s run between two 1-s samples: no energy (most of it would be
    /// interpolated), no means and no peak (the only samples are outside it: the idle one
    /// before it was printed as the run's power); notes say why.
    #[test]
    fn a_run_shorter_than_the_sampling_gets_no_figures_but_notes() {
        let e = energy_figures(
            &gpu_series(&[0.0, 1.0], 400.0, None),
            Some((0.2, 0.45)),
            Some(100),
        )
        .unwrap();
        assert_eq!(
            (e.energy_j, e.mean_power_w, e.gpu_util_mean_pct),
            (None, None, None)
        );
        let lines = line(e);
        assert_eq!(
            lines[0],
            "Energy (dcgm:http://gpu:9400/metrics, 1 GPU): no figures"
        );
        let text = lines.join("\n");
        assert!(
            text.contains(
                "Energy note: no energy: the GPU samples around the run are 1.00 s apart"
            ),
            "{text}"
        );
        assert!(
            text.contains("0 GPU sample(s) inside the 0.25 s run"),
            "{text}"
        );
    }

    /// A half-second run at 10× between scrapes 0.25 s apart, whose energy counter says 180 W
    /// while the two power samples inside it read 120 W: the mean stands (energy ÷ time),
    /// the peak is withheld — it printed "mean power 180.0 W, peak 120.0 W".
    #[test]
    fn a_peak_below_the_mean_is_no_peak() {
        let mut s = ServerSeries::new("http://gpu:9400/metrics", 1.0);
        for (i, t) in [0.0, 0.25, 0.5, 0.75].into_iter().enumerate() {
            let power = if i == 0 || i == 3 { 100.0 } else { 120.0 };
            s.push(
                t,
                vec![
                    Sample::new(ENERGY, 180.0 * t * 1000.0),
                    Sample::new(POWER, power),
                ],
            );
        }
        let e = energy_figures(&s, Some((0.2, 0.6)), Some(100)).unwrap();
        assert!((e.mean_power_w.unwrap() - 180.0).abs() < 1e-9, "{e:?}");
        assert_eq!(e.peak_power_w, None);
        let text = line(e).join("\n");
        assert!(
            text.contains("no peak power: the highest sample inside the run (120.0 W) is below its mean power (180.0 W)"),
            "{text}"
        );
    }

    /// Every request failed: the measured window has no length, and no energy is claimed
    /// over it (it printed "22.9 J over 0.0 s").
    #[test]
    fn a_window_of_no_length_has_no_energy() {
        let times: Vec<f64> = (0..=10).map(f64::from).collect();
        let e =
            energy_figures(&gpu_series(&times, 400.0, None), Some((3.0, 3.0)), Some(0)).unwrap();
        assert_eq!((e.energy_j, e.joules_per_output_token), (None, None));
        assert!(line(e)
            .join("\n")
            .contains("no energy: the run's measured window has no length"));
    }

    /// Samples inside the window give every figure, consistent with each other.
    #[test]
    fn a_well_sampled_run_has_consistent_figures() {
        let times: Vec<f64> = (0..=40).map(|i| f64::from(i) * 0.25).collect();
        let e = energy_figures(
            &gpu_series(&times, 300.0, None),
            Some((1.0, 9.0)),
            Some(2400),
        )
        .unwrap();
        let (j, s, p) = (
            e.energy_j.unwrap(),
            e.span_s.unwrap(),
            e.mean_power_w.unwrap(),
        );
        assert!(
            (j - 2400.0).abs() < 1e-6 && (s - 8.0).abs() < 1e-12,
            "{e:?}"
        );
        assert!((j / s - p).abs() < 1e-6, "{e:?}");
        assert_eq!(e.joules_per_output_token, Some(1.0));
        assert!(e.notes.is_empty());
    }
}
