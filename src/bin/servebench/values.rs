//! Value parsers for numeric flags: a bad value is a usage error (exit 2) naming the flag
//! and saying what is expected.

/// A positive finite number; `name` is for the message.
pub fn positive_f64(name: &'static str) -> impl Fn(&str) -> Result<f64, String> + Clone {
    move |s: &str| {
        let v: f64 = s
            .trim()
            .parse()
            .map_err(|e| format!("`{s}` is not a number: {e}"))?;
        if v.is_finite() && v > 0.0 {
            Ok(v)
        } else {
            Err(format!("{name} must be a positive number, got `{s}`"))
        }
    }
}

/// A request rate: a positive number, or `inf` (everything at once).
pub fn rate(s: &str) -> Result<f64, String> {
    if s.trim().eq_ignore_ascii_case("inf") {
        return Ok(f64::INFINITY);
    }
    positive_f64("the request rate")(s).map_err(|e| format!("{e} (or `inf`: all at once)"))
}

/// A percentile in (0, 100].
pub fn percentile(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|e| format!("`{s}` is not a number: {e}"))?;
    if (0.0..=100.0).contains(&v) && v > 0.0 {
        Ok(v)
    } else {
        Err(format!("a percentile is in (0, 100], got `{s}`"))
    }
}

/// vLLM's range ratio, in [0, 1).
pub fn range_ratio(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|e| format!("`{s}` is not a number: {e}"))?;
    if (0.0..1.0).contains(&v) {
        Ok(v)
    } else {
        Err(format!("the range ratio is in [0, 1), got `{s}`"))
    }
}

/// `--gpu-metrics`: `nvidia-smi`, or an exporter's `http://` URL.
pub fn gpu_source(v: &str) -> Result<String, String> {
    if v == "nvidia-smi" || v.starts_with("http://") {
        Ok(v.to_string())
    } else {
        Err(format!(
            "`{v}` is neither a DCGM exporter's URL (http://gpu-host:9400) nor nvidia-smi"
        ))
    }
}

/// A share in [0, 1] (`--max-failed-share`).
pub fn share(v: &str) -> Result<f64, String> {
    v.parse::<f64>()
        .ok()
        .filter(|x| (0.0..=1.0).contains(x))
        .ok_or_else(|| format!("`{v}` is not a share in [0, 1] (0.5 = half the requests)"))
}

/// Seconds as a `Duration` (past its range: the longest one).
pub fn seconds(v: f64) -> std::time::Duration {
    std::time::Duration::try_from_secs_f64(v).unwrap_or(std::time::Duration::MAX)
}

/// A positive duration written as a number with one of `units` (suffix, seconds per unit;
/// the first that matches is taken) or a bare number of seconds; `None` otherwise (zero,
/// negative, not a number, past `Duration`'s range).
///
/// `--slice` takes `ms`, `s` and `m`; `--duration` takes `s`, `m` and `h`.
pub fn duration_in(v: &str, units: &[(&str, f64)]) -> Option<std::time::Duration> {
    let v = v.trim();
    let (num, scale) = units
        .iter()
        .find_map(|(suffix, scale)| v.strip_suffix(suffix).map(|n| (n, *scale)))
        .unwrap_or((v, 1.0));
    num.trim()
        .parse::<f64>()
        .ok()
        .and_then(|x| std::time::Duration::try_from_secs_f64(x * scale).ok())
        .filter(|d| !d.is_zero())
}
