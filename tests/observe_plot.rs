//! The charts and the HTML report: every SVG is well-formed XML and its plotted values equal
//! the results (read back from the SVG: the Total TPS labels exactly, every point within a
//! pixel through the axis ticks); the report opens in a real headless Chromium, which draws
//! the charts (DOM dump) and a screenshot that is not blank.
#![cfg(all(feature = "plot", feature = "sim"))]

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use quick_xml::events::Event;
use quick_xml::Reader;
use servebench::observe::html::write_report;
use servebench::observe::ServerSeries;
use servebench::observe::{
    cdf_points, charts, latencies_ms, total_tps, tps_label, Latency, PlotRun,
};
use servebench::profile::Profile;
use servebench::sim::{simulate_observed, Config};

struct Sim {
    label: &'static str,
    out: servebench::sim::Simulated,
    series: ServerSeries,
}

fn sims() -> Vec<Sim> {
    let mut p = Profile::preset("throughput").unwrap();
    p.total_requests = 300;
    ["baseline", "quantization"]
        .into_iter()
        .map(|label| {
            let (out, series) = simulate_observed(
                &p,
                &Config::named(label).unwrap(),
                0,
                true,
                Duration::from_secs(1),
            )
            .unwrap();
            Sim { label, out, series }
        })
        .collect()
}

fn plot_runs(s: &[Sim]) -> Vec<PlotRun<'_>> {
    s.iter()
        .map(|s| PlotRun {
            server: Some(&s.series),
            ..PlotRun::new(s.label, &s.out.result, &s.out.records)
        })
        .collect()
}

#[derive(Default, Debug)]
struct Svg {
    /// (x, y, text-anchor, content)
    texts: Vec<(f64, f64, String, String)>,
    /// (stroke, points)
    polylines: Vec<(String, Vec<(f64, f64)>)>,
    /// (fill, cx, cy)
    circles: Vec<(String, f64, f64)>,
}

/// Reads an SVG with a real XML parser (any malformation fails), keeping what the tests read.
fn read_svg(svg: &str) -> Svg {
    let mut r = Reader::from_str(svg);
    let mut out = Svg::default();
    let mut open_text: Option<(f64, f64, String)> = None;
    let mut root = None;
    loop {
        let ev = r
            .read_event()
            .unwrap_or_else(|e| panic!("malformed SVG at {}: {e}", r.buffer_position()));
        let attrs =
            |e: &quick_xml::events::BytesStart| -> std::collections::HashMap<String, String> {
                e.attributes()
                    .map(|a| {
                        let a = a.expect("well-formed attribute");
                        (
                            String::from_utf8(a.key.as_ref().to_vec()).unwrap(),
                            a.unescape_value().unwrap().into_owned(),
                        )
                    })
                    .collect()
            };
        let num =
            |m: &std::collections::HashMap<String, String>, k: &str| m[k].parse::<f64>().unwrap();
        match ev {
            Event::Start(e) | Event::Empty(e) if e.name().as_ref() == b"text" => {
                let a = attrs(&e);
                open_text = Some((num(&a, "x"), num(&a, "y"), a["text-anchor"].clone()));
            }
            Event::Start(e) | Event::Empty(e) => {
                let name = e.name().as_ref().to_vec();
                root.get_or_insert_with(|| name.clone());
                let a = attrs(&e);
                match name.as_slice() {
                    b"polyline" => {
                        let pts = a["points"]
                            .split_whitespace()
                            .map(|p| {
                                let (x, y) = p.split_once(',').unwrap();
                                (x.parse().unwrap(), y.parse().unwrap())
                            })
                            .collect();
                        out.polylines.push((a["stroke"].clone(), pts));
                    }
                    b"circle" => {
                        out.circles
                            .push((a["fill"].clone(), num(&a, "cx"), num(&a, "cy")))
                    }
                    _ => {}
                }
            }
            Event::Text(t) => {
                if let Some((x, y, anchor)) = &open_text {
                    let s = t.unescape().unwrap().trim().to_string();
                    out.texts.push((*x, *y, anchor.clone(), s));
                }
            }
            Event::End(_) => open_text = None,
            Event::Eof => break,
            _ => {}
        }
    }
    assert_eq!(root.as_deref(), Some(&b"svg"[..]));
    out
}

/// The linear pixel ↔ value map of an axis, from its numeric tick labels.
struct Axis {
    px: (f64, f64),
    v: (f64, f64),
}

impl Axis {
    fn from_ticks(ticks: &[(f64, f64)]) -> Axis {
        assert!(ticks.len() >= 2, "an axis needs two tick labels: {ticks:?}");
        let (a, b) = (ticks[0], ticks[ticks.len() - 1]);
        Axis {
            px: (a.0, b.0),
            v: (a.1, b.1),
        }
    }
    fn to_px(&self, v: f64) -> f64 {
        self.px.0 + (v - self.v.0) * (self.px.1 - self.px.0) / (self.v.1 - self.v.0)
    }
    /// Value per pixel.
    fn resolution(&self) -> f64 {
        ((self.v.1 - self.v.0) / (self.px.1 - self.px.0)).abs()
    }
}

fn y_axis(svg: &Svg) -> Axis {
    let y: Vec<(f64, f64)> = svg
        .texts
        .iter()
        .filter(|t| t.2 == "end")
        .filter_map(|t| Some((t.1, t.3.parse::<f64>().ok()?)))
        .collect();
    Axis::from_ticks(&y)
}

fn axes(svg: &Svg) -> (Axis, Axis) {
    let numeric = |anchor: &str| -> Vec<(f64, f64, f64)> {
        svg.texts
            .iter()
            .filter(|t| t.2 == anchor)
            .filter_map(|t| Some((t.0, t.1, t.3.parse::<f64>().ok()?)))
            .collect()
    };
    // y ticks: right-aligned numbers left of the plot; x ticks: centred numbers under it.
    let y: Vec<(f64, f64)> = numeric("end").into_iter().map(|(_, y, v)| (y, v)).collect();
    let middle = numeric("middle");
    let bottom = middle.iter().map(|t| t.1).fold(0.0, f64::max);
    let x: Vec<(f64, f64)> = middle
        .into_iter()
        .filter(|t| t.1 == bottom)
        .map(|(x, _, v)| (x, v))
        .collect();
    (Axis::from_ticks(&x), Axis::from_ticks(&y))
}

#[test]
fn svgs_are_well_formed_and_plot_the_results() {
    let s = sims();
    let runs = plot_runs(&s);
    let out = charts(&runs).unwrap();
    let files: Vec<&str> = out.iter().map(|c| c.file.as_str()).collect();
    assert_eq!(
        files,
        [
            "total_tps.svg",
            "ttft_cdf.svg",
            "tpot_cdf.svg",
            "e2e_cdf.svg",
            "throughput_over_time.svg",
            "concurrency_over_time.svg",
            "kv_cache_over_time.svg"
        ]
    );
    let svgs: Vec<Svg> = out.iter().map(|c| read_svg(&c.svg)).collect();

    // Total TPS: the label above each point is the result's value; the point sits at it.
    let tps = &svgs[0];
    let y = y_axis(tps);
    assert_eq!(tps.circles.len(), runs.len());
    for (r, c) in runs.iter().zip(&tps.circles) {
        let v = total_tps(r.result).unwrap();
        assert!(
            tps.texts.iter().any(|t| t.3 == tps_label(v)),
            "label {} missing",
            tps_label(v)
        );
        assert!(
            (c.2 - y.to_px(v)).abs() <= 1.5,
            "{}: point at y={} for {v}",
            r.label,
            c.2
        );
    }
    assert!(tps.texts.iter().any(|t| t.3 == "quantization"));

    // CDFs: every point of every line is the run's latency and its rank, within a pixel.
    for (svg, which) in svgs[1..4]
        .iter()
        .zip([Latency::Ttft, Latency::Tpot, Latency::E2e])
    {
        let (x, y) = axes(svg);
        let lines: Vec<_> = svg.polylines.iter().filter(|p| p.1.len() > 2).collect();
        assert_eq!(lines.len(), runs.len(), "{which:?}");
        for (r, (_, pts)) in runs.iter().zip(lines) {
            let want = cdf_points(latencies_ms(r.records, which));
            assert_eq!(pts.len(), want.len(), "{which:?} {}", r.label);
            assert!(want.len() > 50);
            for (p, w) in pts.iter().zip(&want) {
                assert!(
                    (p.0 - x.to_px(w.0)).abs() <= 1.5 && (p.1 - y.to_px(w.1)).abs() <= 1.5,
                    "{which:?} {}: pixel {p:?} for {w:?} (resolution {} ms)",
                    r.label,
                    x.resolution()
                );
            }
        }
    }

    // KV-cache usage: the server's samples, in percent.
    let kv = &svgs[6];
    let (x, y) = axes(kv);
    let lines: Vec<_> = kv.polylines.iter().filter(|p| p.1.len() > 2).collect();
    for (sim, (_, pts)) in s.iter().zip(lines) {
        let v = sim
            .series
            .known(servebench::observe::Known::KvCacheUsage)
            .unwrap();
        assert_eq!(pts.len(), sim.series.len());
        for ((p, t), v) in pts.iter().zip(&sim.series.times_s).zip(v) {
            let v = v.unwrap() * 100.0;
            assert!(
                (p.0 - x.to_px(*t)).abs() <= 1.5 && (p.1 - y.to_px(v)).abs() <= 1.5,
                "{p:?} vs ({t}, {v})"
            );
        }
    }
}

fn chromium() -> Option<&'static str> {
    ["chromium", "chromium-browser"].into_iter().find(|b| {
        Command::new(b)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

fn run_chromium(bin: &str, profile_dir: &Path, extra: &[&str], url: &str) -> std::process::Output {
    let mut cmd = Command::new(bin);
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--hide-scrollbars",
    ])
    .arg(format!("--user-data-dir={}", profile_dir.display()))
    .args(extra)
    .arg(url);
    // `output()` waits for the process and reaps it.
    cmd.output().expect("chromium runs")
}

#[test]
fn the_html_report_renders_in_headless_chromium() {
    let s = sims();
    let runs = plot_runs(&s);
    let dir = std::env::temp_dir().join(format!("observe_plot_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let index = write_report(&dir, "baseline vs FP8", &runs, &[]).unwrap();
    let html = std::fs::read_to_string(&index).unwrap();
    // Self-contained: no script, no external resource, every chart inline.
    assert!(!html.contains("<script") && !html.contains(" src=") && !html.contains("<link"));
    assert_eq!(html.matches("<svg").count(), 7);
    for f in ["total_tps.svg", "ttft_cdf.svg", "kv_cache_over_time.svg"] {
        assert!(dir.join(f).is_file(), "{f}");
    }

    let Some(bin) = chromium() else {
        if std::env::var_os("CI").is_some() {
            panic!("chromium is not installed (.ci/run installs Debian's `chromium`)");
        }
        eprintln!("\n!!! SKIPPED: chromium is not installed; the HTML report was not opened in a browser (apt-get install chromium) !!!\n");
        return;
    };
    let url = format!("file://{}", index.display());
    let profile = dir.join("chromium-profile");
    let dom = run_chromium(bin, &profile, &["--dump-dom"], &url);
    assert!(
        dom.status.success(),
        "{}",
        String::from_utf8_lossy(&dom.stderr)
    );
    let dom = String::from_utf8_lossy(&dom.stdout);
    // The browser parsed every chart as SVG (its DOM holds them) and the run table.
    assert_eq!(
        dom.matches("<svg").count(),
        7,
        "{}",
        &dom[..dom.len().min(2000)]
    );
    assert!(dom.contains("id=\"ttft_cdf\"") && dom.contains("<td>quantization</td>"));

    let shot = dir.join("report.png");
    let out = run_chromium(
        bin,
        &profile,
        &[
            "--window-size=1200,1800",
            &format!("--screenshot={}", shot.display()),
        ],
        &url,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&shot).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!((info.width, info.height), (1200, 1800));
    let px = info.color_type.samples();
    let pixels = &buf[..info.buffer_size()];
    let total = pixels.len() / px;
    let inked = pixels
        .chunks(px)
        .filter(|p| p[..3].iter().any(|&c| c < 200))
        .count();
    // Coloured chart lines: the Okabe–Ito blue of the first configuration.
    let blue = pixels
        .chunks(px)
        .filter(|p| p[0] < 30 && (90..140).contains(&p[1]) && p[2] > 150)
        .count();
    assert!(
        inked * 100 > total,
        "the screenshot is blank: {inked} of {total} pixels inked"
    );
    assert!(blue > 500, "no chart line drawn: {blue} blue pixels");
    if let Some(keep) = std::env::var_os("SERVEBENCH_KEEP_SCREENSHOT") {
        std::fs::copy(&shot, keep).unwrap();
    }
    let _ = std::fs::remove_dir_all(&dir);
}
