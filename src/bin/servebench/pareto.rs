//! `servebench pareto RUN… [--gpus N] [--against RUN…] [--out DIR] [--format text|json]`:
//! the runs as points of output tok/s per GPU against tok/s per user and against P99 TTFT,
//! each with its within-run interval, the front computed with points dominated within
//! noise marked (`servebench::compare::pareto`); with `--against`, how the second set's
//! front fares against the first's. `--out DIR` writes the tables (`pareto.md`), the
//! points (`pareto.json`) and with the `plot` feature the charts (`pareto.svg`,
//! `pareto-p99-ttft.svg`) and a self-contained page with both (`pareto.html`).

use std::fmt::Write as _;
use std::path::PathBuf;

use servebench::compare::pareto::{pareto_points, Axes, Dominance, ParetoInput, ParetoPoint};

use crate::input::InputError;
use crate::observe::{load_all, Run};
use crate::output::TextOrJson;

/// Arguments of `servebench pareto`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Runs to place: run files, sweep files (one point per rate), any file with records,
    /// or `sim:PROFILE[@RATE]:CONFIG` (a simulated run; several rates make a sweep).
    #[arg(required = true, value_name = "RUN")]
    runs: Vec<String>,
    /// GPUs that served each run (divides the throughput axis).
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..))]
    gpus: u32,
    /// A second set of runs (another configuration's sweep): says which of its front's
    /// points the first set dominates, clearly or within noise, and the reverse.
    #[arg(long, value_name = "RUN", num_args = 1..)]
    against: Vec<String>,
    /// Write pareto.md, pareto.json and the SVG charts into this directory.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// `text`: the tables; `json`: the points.
    #[arg(long, value_enum, default_value_t)]
    format: TextOrJson,
}

/// Loads `specs`, with within-run intervals computed where a run has records but none.
fn load(specs: &[String]) -> Result<Vec<Run>, InputError> {
    let mut runs = Vec::new();
    for spec in specs {
        for mut r in load_all(spec)? {
            if r.result.intervals.is_none() && !r.records.is_empty() {
                let opts = servebench::noise::IntervalOptions::default();
                if let Err(e) =
                    servebench::noise::attach_intervals(&r.records, &mut r.result, &opts)
                {
                    eprintln!("servebench: {}: no intervals: {e}", r.label);
                }
            }
            runs.push(r);
        }
    }
    Ok(runs)
}

fn place(runs: &[Run], gpus: u32, axes: Axes, prefix: &str) -> Vec<ParetoPoint> {
    let inputs: Vec<ParetoInput> = runs
        .iter()
        .map(|r| ParetoInput {
            label: format!("{prefix}{}", r.label),
            result: &r.result,
            gpus,
        })
        .collect();
    pareto_points(&inputs, axes)
}

/// How set B's own front fares among both sets' points.
fn against(a: &[Run], b: &[Run], gpus: u32, axes: Axes) -> String {
    let inputs: Vec<ParetoInput> = a
        .iter()
        .map(|r| (format!("A:{}", r.label), r))
        .chain(b.iter().map(|r| (format!("B:{}", r.label), r)))
        .map(|(label, r)| ParetoInput {
            label,
            result: &r.result,
            gpus,
        })
        .collect();
    let union = pareto_points(&inputs, axes);
    let mut out = String::new();
    for (set, other) in [("B", "A"), ("A", "B")] {
        let own: Vec<&ParetoPoint> = union
            .iter()
            .filter(|p| p.label.starts_with(&format!("{set}:")))
            .collect();
        let beaten = |clear: bool| {
            own.iter()
                .filter(|p| match &p.dominance {
                    Dominance::Dominated { by } => clear && by.starts_with(other),
                    Dominance::DominatedWithinNoise { by } => !clear && by.starts_with(other),
                    Dominance::Front => false,
                })
                .count()
        };
        let _ = writeln!(
            out,
            "{set} against {other} ({}): {} of {set}'s {} points dominated by {other}'s, {} more within noise; {} on the joint front.",
            axes.y_label(),
            beaten(true),
            own.len(),
            beaten(false),
            own.iter().filter(|p| p.dominance == Dominance::Front).count()
        );
    }
    out
}

/// Runs the verb: the text or JSON on stdout, the files under `--out`.
pub fn run(args: &Args) -> Result<String, InputError> {
    let runs = load(&args.runs)?;
    let b = load(&args.against)?;
    let mut text = String::new();
    let mut all = Vec::new();
    for axes in [Axes::Interactivity, Axes::P99Ttft] {
        let points = place(&runs, args.gpus, axes, "");
        if points.is_empty() {
            return Err(InputError(format!(
                "no run has output throughput and {} to place",
                axes.y_label()
            )));
        }
        text.push_str(&servebench::format::pareto::table(&points, axes));
        text.push('\n');
        if !b.is_empty() {
            text.push_str(&against(&runs, &b, args.gpus, axes));
            text.push('\n');
        }
        all.push((axes, points));
    }
    let json = serde_json::to_string_pretty(&serde_json::json!({
        "format": "servebench-pareto",
        "version": 1,
        "gpus": args.gpus,
        "fronts": all.iter().map(|(axes, points)| serde_json::json!({"axes": axes, "points": points})).collect::<Vec<_>>(),
    }))
    .map_err(|e| InputError(format!("cannot write JSON: {e}")))?
        + "\n";
    if let Some(dir) = &args.out {
        let io = |e: std::io::Error| InputError(format!("{}: {e}", dir.display()));
        std::fs::create_dir_all(dir).map_err(io)?;
        let write = |name: &str, body: &str| {
            servebench::atomic::write(&dir.join(name), body.as_bytes())
                .map_err(|e| InputError(format!("{}: {e}", dir.join(name).display())))
        };
        write("pareto.md", &text)?;
        write("pareto.json", &json)?;
        #[cfg(feature = "plot")]
        {
            let mut page = String::from(
                "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>Pareto front</title>\n<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px}</style></head><body>\n<h1>Pareto front</h1>\n",
            );
            for (axes, points) in &all {
                let svg = servebench::observe::pareto_chart(points, *axes)
                    .map_err(|e| InputError(e.to_string()))?;
                write(servebench::observe::pareto_svg_name(*axes), &svg)?;
                page.push_str(&html_section(*axes, points, &svg));
            }
            page.push_str("</body></html>\n");
            write("pareto.html", &page)?;
        }
    }
    Ok(match args.format {
        TextOrJson::Text => text,
        TextOrJson::Json => json,
    })
}

/// One front in the HTML page: its chart inline and its table.
#[cfg(feature = "plot")]
fn html_section(axes: Axes, points: &[ParetoPoint], svg: &str) -> String {
    use servebench::observe::html::escape;
    let cell = servebench::format::pareto::estimate;
    let mut h = format!(
        "<h2>Output tok/s per GPU against {}</h2>\n{svg}\n<table class=\"pareto\"><thead><tr><th>run</th><th>output tok/s per GPU</th><th>{}</th><th>standing</th></tr></thead><tbody>\n",
        escape(axes.y_label()),
        escape(axes.y_label())
    );
    for p in points {
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&p.label),
            cell(&p.x),
            cell(&p.y),
            escape(&servebench::format::pareto::standing(&p.dominance))
        );
    }
    h.push_str("</tbody></table>\n");
    h
}
