//! The SVG chart of a Pareto front (feature `plot`, plotters' SVG backend as
//! [`super::plot`]): each run at its output tok/s per GPU against the second axis, with
//! its intervals as error bars; the front joined by a line, points dominated within noise
//! drawn hollow and clearly dominated points grey.
//!
//! ```
//! use servebench::compare::pareto::{pareto_points, Axes, ParetoInput};
//! use servebench::observe::pareto_chart;
//! let r = servebench::BenchmarkResult {
//!     output_throughput_per_s: Some(1000.0),
//!     tpot: Some(servebench::Summary { mean: Some(20.0), ..Default::default() }),
//!     ..Default::default()
//! };
//! let pts = pareto_points(&[ParetoInput { label: "a".into(), result: &r, gpus: 1 }], Axes::Interactivity);
//! let svg = pareto_chart(&pts, Axes::Interactivity).unwrap();
//! assert!(svg.starts_with("<svg") && svg.contains("tok/s per GPU"));
//! ```

use plotters::prelude::*;

use super::plot::{PlotError, SIZE};
use crate::compare::pareto::{Axes, Dominance, ParetoPoint};

/// The chart's file name (`pareto.svg`; `pareto-p99-ttft.svg` for the P99 TTFT front).
pub fn pareto_svg_name(axes: Axes) -> &'static str {
    match axes {
        Axes::Interactivity => "pareto.svg",
        Axes::P99Ttft => "pareto-p99-ttft.svg",
    }
}

/// Draws the points (see the module docs).
pub fn pareto_chart(points: &[ParetoPoint], axes: Axes) -> Result<String, PlotError> {
    draw(points, axes).map_err(|message| PlotError::Draw {
        chart: pareto_svg_name(axes).into(),
        message,
    })
}

fn span(lo: f64, hi: f64) -> (f64, f64) {
    let pad = ((hi - lo).abs() * 0.08).max(hi.abs() * 0.02).max(1e-9);
    ((lo - pad).max(0.0), hi + pad)
}

fn draw(points: &[ParetoPoint], axes: Axes) -> Result<String, String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let xs = points.iter().flat_map(|p| [p.x.lo, p.x.hi]);
        let ys = points.iter().flat_map(|p| [p.y.lo, p.y.hi]);
        let (x0, x1) = span(
            xs.clone().fold(f64::INFINITY, f64::min),
            xs.fold(0.0, f64::max),
        );
        let (y0, y1) = span(
            ys.clone().fold(f64::INFINITY, f64::min),
            ys.fold(0.0, f64::max),
        );
        let (x0, y0) = (x0.min(x1), y0.min(y1));
        let mut chart = ChartBuilder::on(&root)
            .caption(
                "Pareto front (intervals: within-run 95%)",
                ("sans-serif", 18),
            )
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(x0..x1, y0..y1)
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .x_desc("output tok/s per GPU")
            .y_desc(axes.y_label())
            .draw()
            .map_err(|e| e.to_string())?;
        let blue = RGBColor(0, 114, 178);
        let orange = RGBColor(230, 159, 0);
        let grey = RGBColor(150, 150, 150);
        let mut front: Vec<(f64, f64)> = points
            .iter()
            .filter(|p| p.dominance == Dominance::Front)
            .map(|p| (p.x.value, p.y.value))
            .collect();
        front.sort_by(|a, b| a.0.total_cmp(&b.0));
        chart
            .draw_series(std::iter::once(PathElement::new(
                front,
                blue.stroke_width(2),
            )))
            .map_err(|e| e.to_string())?
            .label("front")
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], blue));
        for p in points {
            let colour = match p.dominance {
                Dominance::Front => blue,
                Dominance::DominatedWithinNoise { .. } => orange,
                Dominance::Dominated { .. } => grey,
            };
            chart
                .draw_series([
                    PathElement::new(vec![(p.x.lo, p.y.value), (p.x.hi, p.y.value)], colour),
                    PathElement::new(vec![(p.x.value, p.y.lo), (p.x.value, p.y.hi)], colour),
                ])
                .map_err(|e| e.to_string())?;
            let style = if matches!(p.dominance, Dominance::DominatedWithinNoise { .. }) {
                colour.stroke_width(2)
            } else {
                colour.filled()
            };
            chart
                .draw_series(std::iter::once(Circle::new(
                    (p.x.value, p.y.value),
                    5,
                    style,
                )))
                .map_err(|e| e.to_string())?;
            chart
                .draw_series(std::iter::once(Text::new(
                    p.label.clone(),
                    (p.x.value, p.y.value),
                    ("sans-serif", 12).into_font().color(&BLACK),
                )))
                .map_err(|e| e.to_string())?;
        }
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
