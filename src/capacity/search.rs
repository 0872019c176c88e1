//! The search for the highest load at which an SLO holds: a bisection on a monotone
//! margin, noise-aware, that only asks a probe closure for the SLO's worst ratio at a load
//! (so the same search runs over HTTP, on the in-process simulator, or on a model).
//!
//! # What is estimated
//!
//! A probe at load `x` returns the SLO's worst ratio `m` (observed / limit, the largest
//! over the conditions; the SLO held when `m <= 1`). The ratio grows with the load, up to
//! noise. The **capacity** is the load at which the expected `ln m` crosses 0: the highest
//! load at which the SLO holds in the typical run.
//!
//! # How a load is judged
//!
//! A load's first probe decides alone when it is clear of the limit by the noise band:
//! `|ln m| >= max(ln(1+b), 2.5 σ)`, with `b` the band of the options and `σ` the pooled
//! standard deviation of `ln m` over the loads probed more than once so far (none yet: the
//! band alone). Otherwise the load is near the limit and is probed again, up to `repeats`
//! probes, stopping as soon as the 95 % Student-t interval of the mean of `ln m` over them
//! (its standard error from the standard deviation pooled over every load probed more than
//! once, this one included) excludes 0: entirely below holds, entirely above fails; if it
//! never does, the load is
//! **uncertain** (the limit is within the noise there). With `repeats = 1` a near load is
//! judged by its one probe.
//!
//! # The search and its interval
//!
//! The minimum and the maximum load are judged first (a maximum that holds ends the search:
//! the capacity is at least the maximum; a minimum that fails ends it: the capacity is below
//! the minimum). Then, repeatedly, the interval is `[L, U]`: `U` the lowest load judged to
//! fail, `L` the highest load below `U` judged to hold. Among the neighbouring probed loads
//! inside `[L, U]`, the widest gap wider than the resolution is halved by probing its
//! midpoint; the search ends when no such gap is left (or the probe budget is spent).
//! Without uncertain loads this is plain bisection and `U − L <= resolution` at the end;
//! uncertain loads stay inside `[L, U]`, which then spans the zone where the SLO is within
//! the noise. When the gaps are closed, an end of `[L, U]` judged by one probe is
//! confirmed: probed again (up to `repeats` probes, until the t-interval decides) and
//! re-judged on all its probes; if its judgement changes (it may become uncertain), the
//! search goes on. So with `repeats >= 2` both ends rest on at least two probes whose 95 %
//! t-interval of the mean `ln m` excludes 0, and `[L, U]` contains the capacity whenever
//! those two judgements are right. The point estimate interpolates the mean `ln m` linearly
//! between the highest load whose mean held and the next probed load above it.
//!
//! ```
//! use servebench::capacity::{search, SearchOptions};
//! // A server whose p99 TTFT is 40 ms per req/s: a 500 ms limit holds up to 12.5 req/s.
//! let opts = SearchOptions::new(1.0, 40.0, 0.5);
//! let s = search(&opts, &mut |p| Ok::<_, ()>(40.0 * p.load / 500.0)).unwrap();
//! let (lo, hi) = (s.lower.unwrap(), s.upper.unwrap());
//! assert!(lo <= 12.5 && 12.5 <= hi && hi - lo <= 0.5);
//! assert!(lo <= s.estimate.unwrap() && s.estimate.unwrap() <= hi);
//! assert!(s.probes.len() < opts.grid_probes());
//! ```

use serde::{Deserialize, Serialize};

use crate::noise::dist::t_quantile;

/// How a search runs. See the module docs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchOptions {
    /// The lowest load probed.
    pub min: f64,
    /// The highest load probed.
    pub max: f64,
    /// The search ends when no two neighbouring probed loads inside the interval are
    /// further apart than this.
    pub resolution: f64,
    /// Most probes at one load near the limit (at least 1).
    pub repeats: u32,
    /// The noise band `b`: a single probe with a worst ratio outside `[1/(1+b), 1+b]`
    /// decides its load alone.
    pub band: f64,
    /// Loads are whole numbers (a concurrency search).
    pub integer: bool,
    /// Most probes in all.
    pub max_probes: u32,
}

/// Default [`SearchOptions::repeats`].
pub const DEFAULT_REPEATS: u32 = 3;
/// Default [`SearchOptions::band`].
pub const DEFAULT_BAND: f64 = 0.1;
/// Default [`SearchOptions::max_probes`].
pub const DEFAULT_MAX_PROBES: u32 = 60;

/// Options that cannot run a search.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SearchOptionsError {
    /// `min` is not positive and finite or `max` is not above it.
    #[error("the search range must have 0 < min < max (got min {min}, max {max})")]
    Range {
        /// The minimum.
        min: f64,
        /// The maximum.
        max: f64,
    },
    /// A resolution that is not positive and finite.
    #[error("the resolution must be a positive number (got {0})")]
    Resolution(f64),
    /// A band that is not positive and finite.
    #[error("the noise band must be a positive number (got {0})")]
    Band(f64),
    /// No repeats or no probes.
    #[error("repeats and the probe budget must be at least 1 (and the budget at least 2)")]
    Counts,
}

impl SearchOptions {
    /// A rate search over `[min, max]` to `resolution`, with the default repeats, band and
    /// budget.
    pub fn new(min: f64, max: f64, resolution: f64) -> SearchOptions {
        SearchOptions {
            min,
            max,
            resolution,
            repeats: DEFAULT_REPEATS,
            band: DEFAULT_BAND,
            integer: false,
            max_probes: DEFAULT_MAX_PROBES,
        }
    }

    /// Checks the options.
    pub fn check(&self) -> Result<(), SearchOptionsError> {
        if !(self.min.is_finite() && self.max.is_finite() && self.min > 0.0 && self.max > self.min)
        {
            return Err(SearchOptionsError::Range {
                min: self.min,
                max: self.max,
            });
        }
        if !(self.resolution.is_finite() && self.resolution > 0.0) {
            return Err(SearchOptionsError::Resolution(self.resolution));
        }
        if !(self.band.is_finite() && self.band > 0.0) {
            return Err(SearchOptionsError::Band(self.band));
        }
        if self.repeats == 0 || self.max_probes < 2 {
            return Err(SearchOptionsError::Counts);
        }
        Ok(())
    }

    /// Probes of a fixed grid over `[min, max]` spaced by the resolution (one probe per
    /// point): what the same resolution costs without a search.
    pub fn grid_probes(&self) -> usize {
        let steps = ((self.max - self.min) / self.resolution.max(f64::MIN_POSITIVE)).ceil();
        if steps.is_finite() && steps >= 0.0 {
            steps as usize + 1
        } else {
            usize::MAX
        }
    }
}

/// Where the closure is asked to probe.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProbeAt {
    /// The probe's place in the search, 1-based.
    pub index: u32,
    /// The load.
    pub load: f64,
    /// Which probe at this load, 1-based.
    pub repetition: u32,
}

/// One probe as the search saw it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeRecord {
    /// The probe's place in the search, 1-based.
    pub index: u32,
    /// The load.
    pub load: f64,
    /// Which probe at this load, 1-based.
    pub repetition: u32,
    /// The SLO's worst ratio the probe returned.
    pub worst_ratio: f64,
}

/// A load's judgement. See the module docs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LoadVerdict {
    /// The SLO holds here.
    Holds,
    /// The SLO fails here.
    Fails,
    /// The limit is within the noise here.
    Uncertain,
}

/// A probed load and its judgement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgedLoad {
    /// The load.
    pub load: f64,
    /// Its probes' worst ratios, in order.
    pub worst_ratios: Vec<f64>,
    /// The mean of their natural logarithms.
    pub mean_log_ratio: f64,
    /// The judgement.
    pub verdict: LoadVerdict,
}

/// A finished search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchOutcome {
    /// The options it ran with.
    pub options: SearchOptions,
    /// Every probe, in order.
    pub probes: Vec<ProbeRecord>,
    /// Every probed load, by load.
    pub loads: Vec<JudgedLoad>,
    /// The point estimate of the capacity (`None`: the SLO held nowhere).
    pub estimate: Option<f64>,
    /// The highest load judged to hold below [`SearchOutcome::upper`].
    pub lower: Option<f64>,
    /// The lowest load judged to fail.
    pub upper: Option<f64>,
    /// Whether the search reached its resolution (else its budget ran out).
    pub converged: bool,
}

/// Pooled standard deviations of `ln m` inside which a single probe does not decide.
pub const NOISE_BANDS: f64 = 2.5;

/// The smallest ratio taken into a logarithm (a ratio of 0: every request was perfect).
const MIN_RATIO: f64 = 1e-6;

/// The mean of the probes' log worst ratios.
fn mean_log(ratios: &[f64]) -> f64 {
    ratios.iter().map(|m| ln(*m)).sum::<f64>() / ratios.len() as f64
}

fn ln(m: f64) -> f64 {
    m.max(MIN_RATIO).ln()
}

struct State<'a, E> {
    opts: &'a SearchOptions,
    probe: &'a mut dyn FnMut(&ProbeAt) -> Result<f64, E>,
    probes: Vec<ProbeRecord>,
    loads: Vec<JudgedLoad>,
}

impl<E> State<'_, E> {
    fn budget_left(&self) -> bool {
        (self.probes.len() as u32) < self.opts.max_probes
    }

    fn one(&mut self, load: f64, repetition: u32) -> Result<f64, E> {
        let at = ProbeAt {
            index: self.probes.len() as u32 + 1,
            load,
            repetition,
        };
        let m = (self.probe)(&at)?;
        let m = if m.is_nan() {
            f64::INFINITY
        } else {
            m.max(0.0)
        };
        self.probes.push(ProbeRecord {
            index: at.index,
            load,
            repetition,
            worst_ratio: m,
        });
        Ok(m)
    }

    /// The pooled standard deviation of `ln m` over the loads probed more than once (and
    /// `extra`, the probes of the load being judged), with its degrees of freedom.
    fn pooled(&self, extra: &[f64]) -> Option<(f64, usize)> {
        let (mut ss, mut df) = (0.0, 0usize);
        let mut add = |logs: &[f64]| {
            if logs.len() > 1 {
                let mean = logs.iter().sum::<f64>() / logs.len() as f64;
                ss += logs.iter().map(|x| (x - mean).powi(2)).sum::<f64>();
                df += logs.len() - 1;
            }
        };
        for l in &self.loads {
            add(&l.worst_ratios.iter().map(|m| ln(*m)).collect::<Vec<_>>());
        }
        add(extra);
        (df > 0).then(|| ((ss / df as f64).sqrt(), df))
    }

    /// The half-width of the band around `ln m = 0` inside which one probe does not decide:
    /// `ln(1 + b)`, widened to [`NOISE_BANDS`] pooled standard deviations once repeated
    /// probes have measured the noise.
    fn log_band(&self) -> f64 {
        let b = (1.0 + self.opts.band).ln();
        self.pooled(&[])
            .map_or(b, |(sd, _)| b.max(NOISE_BANDS * sd))
    }

    /// The 95 % t-interval of the mean of `logs` (one load's `ln m`), its standard error
    /// from the noise pooled over every load probed more than once: below 0 holds, above 0
    /// fails, else undecided.
    fn t_verdict(&self, logs: &[f64]) -> Option<LoadVerdict> {
        let (sd, df) = self.pooled(logs)?;
        let mean = logs.iter().sum::<f64>() / logs.len() as f64;
        let half = t_quantile(0.975, df as f64) * sd / (logs.len() as f64).sqrt();
        if mean + half < 0.0 {
            Some(LoadVerdict::Holds)
        } else if mean - half > 0.0 {
            Some(LoadVerdict::Fails)
        } else {
            None
        }
    }

    /// Probes `load` again after the `ratios` it already has, until the t-interval on all
    /// of them decides, `repeats` probes are reached or the budget is spent.
    fn repeat_until_decided(
        &mut self,
        load: f64,
        ratios: &mut Vec<f64>,
    ) -> Result<Option<LoadVerdict>, E> {
        while (ratios.len() as u32) < self.opts.repeats && self.budget_left() {
            let r = ratios.len() as u32 + 1;
            ratios.push(self.one(load, r)?);
            let logs: Vec<f64> = ratios.iter().map(|m| ln(*m)).collect();
            if let Some(v) = self.t_verdict(&logs) {
                return Ok(Some(v));
            }
        }
        Ok(None)
    }

    /// Probes a bracket end judged by one probe again (up to `repeats` probes, until the
    /// t-interval decides) and re-judges it on all its probes. `false` when there is
    /// nothing to confirm.
    fn confirm(&mut self, load: f64) -> Result<bool, E> {
        let Some(i) = self.loads.iter().position(|l| l.load == load) else {
            return Ok(false);
        };
        let want = self.opts.repeats.min(2) as usize;
        if self.loads[i].worst_ratios.len() >= want || !self.budget_left() {
            return Ok(false);
        }
        let mut ratios = self.loads[i].worst_ratios.clone();
        // The load's filed single probe adds nothing to the pool; `ratios` brings it in.
        let verdict = self.repeat_until_decided(load, &mut ratios)?;
        let l = &mut self.loads[i];
        l.mean_log_ratio = mean_log(&ratios);
        l.worst_ratios = ratios;
        l.verdict = verdict.unwrap_or(LoadVerdict::Uncertain);
        Ok(true)
    }

    /// Judges `load` (see the module docs) and files it by load.
    fn judge(&mut self, load: f64) -> Result<(), E> {
        let band = self.log_band();
        let first = self.one(load, 1)?;
        let mut ratios = vec![first];
        let clear = ln(first).abs() >= band;
        let verdict = if clear {
            None
        } else {
            self.repeat_until_decided(load, &mut ratios)?
        };
        let mean = mean_log(&ratios);
        let verdict = match verdict {
            Some(v) => v,
            None if clear || ratios.len() < 2 => {
                if first <= 1.0 {
                    LoadVerdict::Holds
                } else {
                    LoadVerdict::Fails
                }
            }
            None => LoadVerdict::Uncertain,
        };
        let at = self.loads.partition_point(|l| l.load < load);
        self.loads.insert(
            at,
            JudgedLoad {
                load,
                worst_ratios: ratios,
                mean_log_ratio: mean,
                verdict,
            },
        );
        Ok(())
    }

    /// `(L, U)`: the highest load judged to hold below the lowest judged to fail.
    fn bracket(&self) -> (Option<f64>, Option<f64>) {
        let upper = self
            .loads
            .iter()
            .find(|l| l.verdict == LoadVerdict::Fails)
            .map(|l| l.load);
        let lower = self
            .loads
            .iter()
            .filter(|l| l.verdict == LoadVerdict::Holds && upper.is_none_or(|u| l.load < u))
            .map(|l| l.load)
            .next_back();
        (lower, upper)
    }

    /// The midpoint of the widest gap wider than the resolution inside the bracket.
    fn next_load(&self) -> Option<f64> {
        let (lower, upper) = self.bracket();
        let lo = lower.unwrap_or(self.opts.min);
        let hi = upper.unwrap_or(self.opts.max);
        let inside: Vec<f64> = self
            .loads
            .iter()
            .map(|l| l.load)
            .filter(|x| *x >= lo && *x <= hi)
            .collect();
        let mut best: Option<(f64, f64)> = None;
        for w in inside.windows(2) {
            let (a, b) = (w[0], w[1]);
            let gap = b - a;
            if gap <= self.opts.resolution {
                continue;
            }
            let mid = if self.opts.integer {
                ((a + b) / 2.0).floor()
            } else {
                (a + b) / 2.0
            };
            if mid <= a || mid >= b {
                continue;
            }
            if best.is_none_or(|(g, _)| gap > g) {
                best = Some((gap, mid));
            }
        }
        best.map(|(_, mid)| mid)
    }

    fn estimate(&self, lower: Option<f64>, upper: Option<f64>) -> Option<f64> {
        let below_upper = |x: f64| upper.is_none_or(|u| x < u);
        let a = self
            .loads
            .iter()
            .rfind(|l| l.mean_log_ratio <= 0.0 && below_upper(l.load))?;
        let b = self
            .loads
            .iter()
            .find(|l| l.load > a.load && l.mean_log_ratio > 0.0);
        let x = match b {
            Some(b) if !self.opts.integer => {
                let t = -a.mean_log_ratio / (b.mean_log_ratio - a.mean_log_ratio);
                a.load + (b.load - a.load) * t.clamp(0.0, 1.0)
            }
            _ => a.load,
        };
        Some(match (lower, upper) {
            (Some(l), Some(u)) => x.clamp(l, u),
            (Some(l), None) => x.max(l),
            (None, Some(u)) => x.min(u),
            (None, None) => x,
        })
    }
}

/// Runs the search: `probe` runs one probe at [`ProbeAt::load`] and returns the SLO's worst
/// ratio there (a NaN counts as a failure). See the module docs. The options must pass
/// [`SearchOptions::check`]; a closure's error ends the search.
pub fn search<E>(
    opts: &SearchOptions,
    probe: &mut dyn FnMut(&ProbeAt) -> Result<f64, E>,
) -> Result<SearchOutcome, E> {
    let integer = |x: f64| if opts.integer { x.round() } else { x };
    let (min, max) = (integer(opts.min), integer(opts.max));
    let mut s = State {
        opts,
        probe,
        probes: Vec::new(),
        loads: Vec::new(),
    };
    s.judge(min)?;
    let mut converged = true;
    let min_fails = s.loads[0].verdict == LoadVerdict::Fails;
    if !min_fails && max > min {
        if s.budget_left() {
            s.judge(max)?;
        } else {
            converged = false;
        }
    }
    let max_holds = s
        .loads
        .last()
        .is_some_and(|l| l.load == max && l.verdict == LoadVerdict::Holds);
    if !min_fails && !max_holds {
        loop {
            if let Some(x) = s.next_load() {
                if !s.budget_left() {
                    converged = false;
                    break;
                }
                s.judge(x)?;
                continue;
            }
            // Converged: confirm the bracket's ends (the lower first).
            let (lower, upper) = s.bracket();
            let mut again = false;
            for end in [lower, upper].into_iter().flatten() {
                if s.confirm(end)? {
                    again = true;
                    break;
                }
            }
            if !again {
                break;
            }
        }
    }
    let (lower, upper) = s.bracket();
    let estimate = s.estimate(lower, upper);
    Ok(SearchOutcome {
        options: opts.clone(),
        probes: s.probes,
        loads: s.loads,
        estimate,
        lower,
        upper,
        converged,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    /// A standard normal deviate (Box–Muller).
    fn normal(rng: &mut Rng) -> f64 {
        let (u, v) = (rng.f64_open0(), rng.f64());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }

    #[test]
    fn without_noise_it_is_a_bisection_that_brackets_the_capacity() {
        for cap in [1.3, 7.77, 12.5, 20.0, 39.9] {
            let opts = SearchOptions::new(1.0, 40.0, 0.25);
            let s = search(&opts, &mut |p| Ok::<_, ()>((p.load / cap).powi(3))).unwrap();
            let (lo, hi) = (s.lower.unwrap(), s.upper.unwrap());
            assert!(
                lo <= cap && cap <= hi && hi - lo <= 0.25,
                "{cap}: [{lo}, {hi}]"
            );
            assert!((s.estimate.unwrap() - cap).abs() < 0.25, "{cap}: {s:?}");
            // 2 ends + ceil(log2(39 / 0.25)) = 8 midpoints, and a few repeats near the limit.
            let loads = s.loads.len();
            assert!(loads <= 2 + 8, "{cap}: {loads} loads");
            assert!(s.probes.len() <= loads + 2 * 3, "{cap}: {}", s.probes.len());
            assert!(s.probes.len() < opts.grid_probes() / 4);
            assert!(s.converged);
        }
    }

    #[test]
    fn the_ends_of_the_range_end_the_search() {
        let opts = SearchOptions::new(2.0, 8.0, 0.5);
        let all = search(&opts, &mut |_| Ok::<_, ()>(0.2)).unwrap();
        assert_eq!(
            (all.lower, all.upper, all.estimate),
            (Some(8.0), None, Some(8.0))
        );
        assert_eq!(all.probes.len(), 2);
        let none = search(&opts, &mut |_| Ok::<_, ()>(5.0)).unwrap();
        assert_eq!(
            (none.lower, none.upper, none.estimate),
            (None, Some(2.0), None)
        );
        assert_eq!(none.probes.len(), 1);
        // A closure's error ends it.
        let mut n = 0;
        let err = search(&opts, &mut |_| {
            n += 1;
            if n == 3 {
                Err("down")
            } else {
                Ok(0.5 * n as f64)
            }
        });
        assert_eq!(err.unwrap_err(), "down");
    }

    #[test]
    fn concurrency_searches_probe_whole_numbers() {
        let mut opts = SearchOptions::new(1.0, 64.0, 1.0);
        opts.integer = true;
        // Holds up to 23 in flight.
        let s = search(&opts, &mut |p| {
            assert_eq!(p.load, p.load.round());
            Ok::<_, ()>(if p.load <= 23.0 { 0.5 } else { 2.0 })
        })
        .unwrap();
        assert_eq!(
            (s.lower, s.upper, s.estimate),
            (Some(23.0), Some(24.0), Some(23.0))
        );
        // Two ends, six halvings, the bracket's two ends confirmed.
        assert!(s.probes.len() <= 2 + 6 + 2, "{}", s.probes.len());
    }

    /// Seeded calibration: a margin `exp(k (x − c) + σ z)`, σ from a quarter of the band to
    /// more than half of it; the interval contains `c` in at least 90 % of 400 searches
    /// each, and the searches cost far fewer probes than the grid.
    #[test]
    fn with_noise_the_interval_covers_the_capacity() {
        let (c, k) = (12.4, 0.08);
        let opts = SearchOptions::new(1.0, 40.0, 0.5);
        for sigma in [0.02, 0.04, 0.06] {
            let (mut covered, mut probes, n) = (0, 0, 400);
            let mut widths = Vec::new();
            for seed in 0..n {
                let mut rng = Rng::new(seed);
                let s = search(&opts, &mut |p| {
                    Ok::<_, ()>((k * (p.load - c) + sigma * normal(&mut rng)).exp())
                })
                .unwrap();
                let (lo, hi) = (s.lower.unwrap_or(0.0), s.upper.unwrap_or(f64::INFINITY));
                if lo <= c && c <= hi {
                    covered += 1;
                }
                widths.push(hi - lo);
                probes += s.probes.len();
            }
            let coverage = covered as f64 / n as f64;
            let mean_probes = probes as f64 / n as f64;
            widths.sort_by(f64::total_cmp);
            eprintln!(
                "sigma {sigma}: coverage {coverage:.3}, mean probes {mean_probes:.1}, median width {:.2} (grid: {})",
                widths[widths.len() / 2],
                opts.grid_probes()
            );
            assert!(coverage >= 0.90, "sigma {sigma}: coverage {coverage}");
            assert!(
                mean_probes < opts.grid_probes() as f64 / 2.0,
                "{mean_probes}"
            );
        }
    }
}
