//! The SVG chart of a capacity search (feature `plot`, plotters' SVG backend as
//! [`super::plot`]): every probe's worst SLO ratio (observed / limit) over its load, the
//! limit at 1, the interval `[L, U]` shaded and the estimate as a vertical line.
//!
//! ```
//! use servebench::capacity::{search, SearchOptions};
//! use servebench::observe::capacity_chart;
//! use servebench::result::SearchKind;
//! let s = search(&SearchOptions::new(1.0, 40.0, 0.5), &mut |p| Ok::<_, ()>(p.load / 12.5)).unwrap();
//! let svg = capacity_chart(&s, SearchKind::Rate, "ttft:p99<=500ms").unwrap();
//! assert!(svg.starts_with("<svg") && svg.contains("req/s"));
//! ```

use plotters::prelude::*;

use super::plot::{PlotError, SIZE};
use crate::capacity::SearchOutcome;
use crate::result::SearchKind;

/// Ratios above this are drawn at it (a probe far over the limit).
pub const RATIO_CAP: f64 = 3.0;

/// The chart's file name beside the probes.
pub const CAPACITY_SVG: &str = "capacity.svg";

/// Draws the search (see the module docs); `slo` is the caption's SLO text.
pub fn capacity_chart(s: &SearchOutcome, kind: SearchKind, slo: &str) -> Result<String, PlotError> {
    draw(s, kind, slo).map_err(|message| PlotError::Draw {
        chart: CAPACITY_SVG.into(),
        message,
    })
}

fn draw(s: &SearchOutcome, kind: SearchKind, slo: &str) -> Result<String, String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let (x0, x1) = (s.options.min, s.options.max);
        let pad = (x1 - x0) * 0.03;
        let top = s
            .probes
            .iter()
            .map(|p| p.worst_ratio.min(RATIO_CAP))
            .fold(1.2, f64::max)
            * 1.05;
        let mut chart = ChartBuilder::on(&root)
            .caption(format!("Capacity search: {slo}"), ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d((x0 - pad)..(x1 + pad), 0f64..top)
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .x_desc(format!("load ({})", kind.unit()))
            .y_desc("worst SLO ratio (observed / limit)")
            .draw()
            .map_err(|e| e.to_string())?;
        let green = RGBColor(0, 158, 115);
        let red = RGBColor(213, 94, 0);
        let blue = RGBColor(0, 114, 178);
        let (lo, hi) = (s.lower.unwrap_or(x0 - pad), s.upper.unwrap_or(x1 + pad));
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(lo, 0.0), (hi, top)],
                blue.mix(0.15).filled(),
            )))
            .map_err(|e| e.to_string())?;
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(x0 - pad, 1.0), (x1 + pad, 1.0)],
                BLACK.stroke_width(1),
            )))
            .map_err(|e| e.to_string())?
            .label("SLO limit")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], BLACK));
        if let Some(e) = s.estimate {
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(e, 0.0), (e, top)],
                    blue.stroke_width(2),
                )))
                .map_err(|e| e.to_string())?
                .label(format!("capacity {e:.2}"))
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], blue));
        }
        let point = |held: bool| if held { green } else { red };
        chart
            .draw_series(s.probes.iter().map(|p| {
                let c = point(p.worst_ratio <= 1.0);
                Circle::new((p.load, p.worst_ratio.min(RATIO_CAP)), 5, c.filled())
            }))
            .map_err(|e| e.to_string())?;
        chart
            .configure_series_labels()
            .border_style(BLACK)
            .background_style(WHITE.mix(0.8))
            .draw()
            .map_err(|e| e.to_string())?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(svg)
}
