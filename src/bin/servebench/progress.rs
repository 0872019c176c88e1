//! `bench`'s progress on stderr: a bar on a terminal, a plain line every few seconds
//! otherwise (CI logs, pipes).

use std::time::Duration;

use servebench::app::bench::Progress;

pub(crate) fn progress_bar(total: u64, quiet: bool) -> indicatif::ProgressBar {
    if quiet {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::with_draw_target(
        Some(total),
        indicatif::ProgressDrawTarget::stderr_with_hz(5),
    );
    if let Ok(style) =
        indicatif::ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} {msg}")
    {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}

/// How often a progress line is printed when stderr is not a terminal (CI logs, pipes).
pub(crate) const PLAIN_PROGRESS_EVERY: Duration = Duration::from_secs(5);

pub(crate) fn progress_line(p: &Progress, total: u64) -> String {
    format!(
        "servebench: progress {:.1} s: done {}/{total}, failed {}, in flight {}, {:.0} tok/s",
        p.elapsed.as_secs_f64(),
        p.done,
        p.failed,
        p.in_flight,
        p.tokens_per_s()
    )
}
