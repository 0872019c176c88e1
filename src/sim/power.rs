//! The simulated GPU's power and energy: a documented power model of the H100/H200
//! ([`PowerModel`]), the work of one engine step ([`StepWork`]) and the energy meter the
//! simulator runs over its steps ([`EnergyMeter`]), which `/metrics` shows in the NVIDIA DCGM
//! exporter's names and units (`DCGM_FI_DEV_POWER_USAGE` in W,
//! `DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION` in mJ, `DCGM_FI_DEV_GPU_UTIL` in %,
//! `DCGM_FI_DEV_FB_USED` in MiB, `DCGM_FI_DEV_SM_CLOCK` in MHz; see dcgm-exporter's
//! `etc/default-counters.csv`, <https://github.com/NVIDIA/dcgm-exporter>).
//!
//! # The model
//!
//! A step that runs `flops` tensor FLOPs (BF16-equivalent: an FP8 FLOP counts half) and
//! moves `bytes` of HBM traffic in `seconds` draws
//!
//! `P = min(cap, idle + e_flop · flops / seconds + e_byte · bytes / seconds)`
//!
//! and the GPU draws `idle` between steps. The constants are the H200 SXM's, measured on
//! one H200 (driver 580, 2026-12-04, `nvidia-smi` every 100 ms and NVML's energy counter):
//!
//! | state | measured | model |
//! |---|---|---|
//! | idle with a CUDA context, clocks up | 119 W | `idle` = 119 W |
//! | BF16 8192³ GEMM loop, 672 TFLOP/s (held at the cap) | 692 W | `e_flop` = (692 − 119) / 672 T = 0.853 J/TFLOP |
//! | streaming reads, 4.22 TB/s | 634 W | `e_byte` = (634 − 119) / 4.22 T = 122 J/TB |
//! | decode-like M = 8 GEMMs, 0.57 TB/s | 190 W | 189 W |
//! | GEMM + streaming, 355 TFLOP/s + 2.15 TB/s | 694 W | 684 W |
//! | prefill attention, 611 TFLOP/s | 690 W | 640 W (attention's on-chip traffic is not counted) |
//!
//! The cap is the data sheet's TDP, 700 W for the H100 SXM and the H200 SXM (the measured
//! H200's enforced limit). The H100 has no measurement here: it shares the GH100 die, its
//! clocks and its HBM generation's energy per byte, so it gets the same constants
//! (an assumption, documented as one). Idle without a CUDA context is lower (79 W
//! measured); a serving engine holds a context, so the model's idle is the context's.
//!
//! GPU utilization is DCGM's: the share of time a kernel ran (busy steps ÷ time, per
//! sample interval: here the busy share since the previous reading). The SM clock is the
//! boost clock (1980 MHz) except at the cap, where the measured H200 throttled to 1485 MHz
//! at 692 W: the model scales the clock down linearly from 1980 MHz at 600 W to 1485 MHz
//! at 700 W.

use crate::observe::prom::Sample;

use super::model::StepModel;
use super::spec::GpuSpec;
use super::step_load::StepLoad;

/// A GPU's power model. See the module docs for the constants.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PowerModel {
    /// DCGM's `modelName` label (`NVIDIA H200`).
    pub name: &'static str,
    /// Power between steps (a CUDA context held, clocks up), W.
    pub idle_w: f64,
    /// Power limit (the data sheet's TDP), W.
    pub cap_w: f64,
    /// Energy above idle per BF16 tensor FLOP, J.
    pub joules_per_flop: f64,
    /// Energy above idle per HBM byte moved, J.
    pub joules_per_byte: f64,
    /// Boost SM clock, MHz.
    pub boost_clock_mhz: f64,
    /// SM clock held at the cap, MHz.
    pub capped_clock_mhz: f64,
    /// Frame-buffer memory, MiB.
    pub memory_mib: f64,
}

/// Measured H200: idle with a context, W.
const H200_IDLE_W: f64 = 119.3;
/// Measured H200: BF16 GEMM loop power, W, and its sustained rate, FLOP/s.
const H200_GEMM_W: f64 = 692.4;
const H200_GEMM_FLOPS: f64 = 672e12;
/// Measured H200: streaming-read power, W, and its rate, bytes/s.
const H200_STREAM_W: f64 = 633.7;
const H200_STREAM_BYTES: f64 = 4.22e12;

impl PowerModel {
    /// The H200 SXM (measured; see the module docs).
    pub fn h200() -> PowerModel {
        PowerModel {
            name: "NVIDIA H200",
            idle_w: H200_IDLE_W,
            cap_w: 700.0,
            joules_per_flop: (H200_GEMM_W - H200_IDLE_W) / H200_GEMM_FLOPS,
            joules_per_byte: (H200_STREAM_W - H200_IDLE_W) / H200_STREAM_BYTES,
            boost_clock_mhz: 1980.0,
            capped_clock_mhz: 1485.0,
            memory_mib: 143_771.0,
        }
    }

    /// The H100 SXM: the H200's constants (same die and clocks; not measured here), 80 GB.
    pub fn h100() -> PowerModel {
        PowerModel {
            name: "NVIDIA H100 80GB HBM3",
            memory_mib: 81_559.0,
            ..PowerModel::h200()
        }
    }

    /// The model for a simulated GPU: the H100's for a name containing `H100`, else the
    /// H200's; the memory is the spec's.
    pub fn for_gpu(gpu: &GpuSpec) -> PowerModel {
        let base = if gpu.name.to_ascii_uppercase().contains("H100") {
            PowerModel::h100()
        } else {
            PowerModel::h200()
        };
        PowerModel {
            memory_mib: gpu.memory_bytes / (1024.0 * 1024.0),
            ..base
        }
    }

    /// Power of a step doing `work` in `seconds`, W (idle for an empty or instant step).
    ///
    /// ```
    /// use servebench::sim::{PowerModel, StepWork};
    /// let m = PowerModel::h200();
    /// // The measured streaming loop: 4.22 TB/s for one second -> 634 W.
    /// let p = m.step_power_w(&StepWork { flops: 0.0, hbm_bytes: 4.22e12 }, 1.0);
    /// assert!((p - 633.7).abs() < 0.1, "{p}");
    /// // More than the cap allows is held at 700 W.
    /// assert_eq!(m.step_power_w(&StepWork { flops: 2e15, hbm_bytes: 0.0 }, 1.0), 700.0);
    /// ```
    pub fn step_power_w(&self, work: &StepWork, seconds: f64) -> f64 {
        if seconds.is_nan() || seconds <= 0.0 {
            return self.idle_w;
        }
        let dynamic =
            (self.joules_per_flop * work.flops + self.joules_per_byte * work.hbm_bytes) / seconds;
        (self.idle_w + dynamic.max(0.0)).min(self.cap_w)
    }

    /// The SM clock at power `p_w`, MHz.
    pub fn sm_clock_mhz(&self, p_w: f64) -> f64 {
        let knee = self.cap_w - 100.0;
        if p_w <= knee {
            self.boost_clock_mhz
        } else {
            let f = ((p_w - knee) / 100.0).min(1.0);
            self.boost_clock_mhz - f * (self.boost_clock_mhz - self.capped_clock_mhz)
        }
    }
}

/// What one engine step does to the GPU: tensor FLOPs (BF16-equivalent) and HBM bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct StepWork {
    /// Tensor FLOPs, an FP8 FLOP counted at the BF16 peak's share (FP8 runs twice the
    /// FLOPs at the same power).
    pub flops: f64,
    /// HBM bytes read and written.
    pub hbm_bytes: f64,
}

impl StepWork {
    /// The work of a forward step with `load` on `step`'s deployment: the linear layers'
    /// FLOPs (dense, lm_head, routed experts) and attention's, the weights streamed (the
    /// experts the step's tokens touch), the KV read and the linear-attention state read
    /// and written — the quantities [`StepModel::step_seconds`]'s roofline divides by the
    /// peaks.
    pub fn of(step: &StepModel, load: &StepLoad) -> StepWork {
        let n = load.tokens as f64;
        let s = load.seqs as f64;
        let rows = load.sampled_rows.max(load.seqs) as f64;
        let linear = 2.0 * n * step.dense_active_params
            + 2.0 * rows * step.lm_head_params
            + 2.0 * n * step.top_k * step.expert_params * step.moe_layers;
        // FP8 GEMMs: twice the FLOPs per joule of BF16's.
        let precision = if step.peak_mm > 0.0 {
            step.peak_bf16 / step.peak_mm
        } else {
            1.0
        };
        let attention = step.attention_flops_per_pair * load.attention_pairs;
        let weights = step.weight_bytes * step.dense_active_params
            + 2.0 * step.lm_head_params
            + step.weight_bytes * step.moe_layers * step.experts_touched(n) * step.expert_params;
        let kv_state = step.kv_bytes_per_token * load.kv_tokens as f64 + s * 2.0 * step.state_bytes;
        StepWork {
            flops: linear * precision + attention,
            hbm_bytes: weights + kv_state,
        }
    }
}

/// Steps the meter keeps to answer readings of the past (a scrape is taken at the
/// engine's clock, which may lag the step the simulator has just computed).
const HISTORY_STEPS: usize = 4096;

/// One recorded step and the totals at its start.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Mark {
    start_s: f64,
    end_s: f64,
    power_w: f64,
    /// Energy from time 0 to `start_s`, J.
    energy_j: f64,
    /// Busy seconds from time 0 to `start_s`.
    busy_s: f64,
}

/// The simulated GPU's energy over virtual time: steps at their power, idle between them.
/// Steps are recorded in time order (one GPU runs one step at a time); readings are exact
/// at any time from the start of the 4096th-last step on (earlier ones count that span as
/// idle).
#[derive(Debug, Clone, PartialEq)]
pub struct EnergyMeter {
    model: PowerModel,
    marks: std::collections::VecDeque<Mark>,
    /// Frame-buffer memory in use (the weights and the KV pool the engine holds), MiB.
    fb_used_mib: f64,
}

impl EnergyMeter {
    /// A meter at time 0, energy 0, with `fb_used_mib` of memory held.
    pub fn new(model: PowerModel, fb_used_mib: f64) -> EnergyMeter {
        EnergyMeter {
            model,
            marks: std::collections::VecDeque::new(),
            fb_used_mib,
        }
    }

    /// The power model.
    pub fn model(&self) -> &PowerModel {
        &self.model
    }

    /// A step ran from `start_s` for `seconds` doing `work`.
    pub fn step(&mut self, start_s: f64, seconds: f64, work: &StepWork) {
        let p = self.model.step_power_w(work, seconds);
        self.record(start_s, seconds, p);
    }

    /// A step ran from `start_s` for `seconds` at `power_w` (a step starting before the
    /// previous one ended starts when it ends).
    pub fn record(&mut self, start_s: f64, seconds: f64, power_w: f64) {
        let idle = self.model.idle_w;
        let (start, energy_j, busy_s) = match self.marks.back() {
            None => (start_s.max(0.0), start_s.max(0.0) * idle, 0.0),
            Some(m) => {
                let start = start_s.max(m.end_s);
                let busy = m.end_s - m.start_s;
                (
                    start,
                    m.energy_j + busy * m.power_w + (start - m.end_s) * idle,
                    m.busy_s + busy,
                )
            }
        };
        if self.marks.len() == HISTORY_STEPS {
            self.marks.pop_front();
        }
        self.marks.push_back(Mark {
            start_s: start,
            end_s: start + seconds.max(0.0),
            power_w,
            energy_j,
            busy_s,
        });
    }

    /// (energy J, busy seconds) from time 0 to `t_s`.
    fn totals(&self, t_s: f64) -> (f64, f64) {
        let idle = self.model.idle_w;
        let i = self.marks.partition_point(|m| m.start_s <= t_s);
        if i == 0 {
            // Before the first step kept: idle back from it.
            return match self.marks.front() {
                None => (t_s.max(0.0) * idle, 0.0),
                Some(m) => ((m.energy_j - (m.start_s - t_s) * idle).max(0.0), m.busy_s),
            };
        }
        let m = self.marks[i - 1];
        let in_step = t_s.min(m.end_s) - m.start_s;
        (
            m.energy_j + in_step * m.power_w + (t_s - m.end_s).max(0.0) * idle,
            m.busy_s + in_step,
        )
    }

    /// Energy from time 0 to `t_s`, J.
    ///
    /// ```
    /// use servebench::sim::{EnergyMeter, PowerModel};
    /// let m = PowerModel::h200();
    /// let mut meter = EnergyMeter::new(m, 1000.0);
    /// meter.record(1.0, 0.5, 600.0);
    /// meter.record(2.0, 0.5, 500.0);
    /// // idle 1 s, 600 W for 0.5 s, idle 0.5 s, 500 W for 0.5 s, idle 0.5 s
    /// let want = 2.0 * m.idle_w + 0.5 * 600.0 + 0.5 * 500.0;
    /// assert!((meter.energy_j(3.0) - want).abs() < 1e-9);
    /// ```
    pub fn energy_j(&self, t_s: f64) -> f64 {
        self.totals(t_s).0
    }

    /// Busy seconds (a step running) from time 0 to `t_s`.
    pub fn busy_s(&self, t_s: f64) -> f64 {
        self.totals(t_s).1
    }

    /// Power at `t_s`, W: the running step's, else idle.
    pub fn power_w(&self, t_s: f64) -> f64 {
        let i = self.marks.partition_point(|m| m.start_s <= t_s);
        match i.checked_sub(1).and_then(|i| self.marks.get(i)) {
            Some(m) if t_s < m.end_s => m.power_w,
            _ => self.model.idle_w,
        }
    }

    /// The DCGM exporter's samples at `t_s`, GPU utilization over `[since_s, t_s]` (the
    /// whole span when they are equal): power, the energy counter (mJ, "since boot" = since
    /// the simulation started), utilization, memory used and free, the SM clock.
    pub fn samples(&self, t_s: f64, since_s: f64) -> Vec<Sample> {
        let labels: Vec<(String, String)> = vec![
            ("gpu".into(), "0".into()),
            (
                "UUID".into(),
                "GPU-00000000-0000-0000-0000-000000000000".into(),
            ),
            ("device".into(), "nvidia0".into()),
            ("modelName".into(), self.model.name.into()),
            ("Hostname".into(), "servebench-sim".into()),
        ];
        let one = |name: &str, value: f64| Sample {
            name: name.into(),
            labels: labels.clone(),
            value,
        };
        let p = self.power_w(t_s);
        let util = if t_s > since_s {
            (self.busy_s(t_s) - self.busy_s(since_s)) / (t_s - since_s)
        } else if t_s > 0.0 {
            self.busy_s(t_s) / t_s
        } else {
            0.0
        };
        vec![
            one("DCGM_FI_DEV_SM_CLOCK", self.model.sm_clock_mhz(p).round()),
            one("DCGM_FI_DEV_POWER_USAGE", p),
            one(
                "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
                (self.energy_j(t_s) * 1000.0).round(),
            ),
            one(
                "DCGM_FI_DEV_GPU_UTIL",
                (util.clamp(0.0, 1.0) * 100.0).round(),
            ),
            one(
                "DCGM_FI_DEV_FB_FREE",
                (self.model.memory_mib - self.fb_used_mib).max(0.0).round(),
            ),
            one("DCGM_FI_DEV_FB_USED", self.fb_used_mib.round()),
        ]
    }
}

/// `# HELP`/`# TYPE` of the DCGM families [`EnergyMeter::samples`] writes (the exporter's
/// own help texts).
pub const DCGM_HELP: &[(&str, &str, &str)] = &[
    (
        "DCGM_FI_DEV_SM_CLOCK",
        "gauge",
        "SM clock frequency (in MHz).",
    ),
    ("DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W)."),
    (
        "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
        "counter",
        "Total energy consumption since boot (in mJ).",
    ),
    ("DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %)."),
    (
        "DCGM_FI_DEV_FB_FREE",
        "gauge",
        "Framebuffer memory free (in MiB).",
    ),
    (
        "DCGM_FI_DEV_FB_USED",
        "gauge",
        "Framebuffer memory used (in MiB).",
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    /// The model against the measured H200 states it was not fitted to.
    #[test]
    fn the_model_predicts_the_measured_states_it_was_not_fitted_to() {
        let m = PowerModel::h200();
        let p = |flops: f64, bytes: f64| {
            m.step_power_w(
                &StepWork {
                    flops,
                    hbm_bytes: bytes,
                },
                1.0,
            )
        };
        // Decode-like M = 8 GEMMs: 0.57 TB/s, measured 189.9 W.
        assert!((p(0.0, 0.57e12) - 189.9).abs() / 189.9 < 0.01);
        // GEMM + streaming: measured 694.1 W.
        assert!((p(355e12, 2.15e12) - 694.1).abs() / 694.1 < 0.02);
        // Idle.
        assert_eq!(p(0.0, 0.0), 119.3);
    }

    #[test]
    fn the_energy_counter_integrates_steps_and_idle_and_renders_in_mj() {
        let m = PowerModel::h200();
        let mut e = EnergyMeter::new(m, 100_000.0);
        e.record(0.5, 1.0, 400.0);
        // Mid-step: 0.5 s idle + 0.5 s at 400 W.
        assert!((e.energy_j(1.0) - (0.5 * m.idle_w + 200.0)).abs() < 1e-9);
        assert_eq!(e.power_w(1.0), 400.0);
        assert_eq!(e.power_w(2.0), m.idle_w);
        e.record(2.0, 1.0, 300.0);
        let at3 = 0.5 * m.idle_w + 400.0 + 0.5 * m.idle_w + 300.0;
        assert!((e.energy_j(3.0) - at3).abs() < 1e-9);
        assert!((e.busy_s(3.0) - 2.0).abs() < 1e-12);
        let s = e.samples(3.0, 1.0);
        let get = |n: &str| s.iter().find(|x| x.name == n).unwrap().value;
        assert_eq!(
            get("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"),
            (at3 * 1000.0).round()
        );
        // Busy 1.5 s (0.5 of step 1, all of step 2) of the 2 s since t = 1.
        assert_eq!(get("DCGM_FI_DEV_GPU_UTIL"), 75.0);
        assert_eq!(get("DCGM_FI_DEV_FB_USED"), 100_000.0);
        assert_eq!(get("DCGM_FI_DEV_SM_CLOCK"), 1980.0);
        assert_eq!(m.sm_clock_mhz(700.0), 1485.0);
    }
}
