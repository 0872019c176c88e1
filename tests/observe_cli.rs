//! `servebench bench` → `explain`, `slices`, `plot` through the binary, against the
//! simulator served over HTTP: the saved run carries the scraped series, and every verb
//! reads it back; bad input names the file or flag.
#![cfg(all(feature = "http", feature = "sim", feature = "cli", feature = "plot"))]

use std::process::{Command, Output};

use servebench::sim::serve::{self, ServeArgs};
use servebench::sim::Config;

const BIN: &str = env!("CARGO_BIN_EXE_servebench");

fn sb(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .output()
        .expect("servebench runs")
}

/// The simulator's baseline configuration served over HTTP at `speed`, taking at most
/// `max_connections`: the handle (the server lives while it does) and its URL.
fn serve_baseline(speed: f64, max_connections: usize) -> (servebench::http::ServerHandle, String) {
    serve_baseline_from(speed, max_connections, None)
}

/// [`serve_baseline`], started cold when `startup_s` is set (not healthy for that many
/// virtual seconds, then a first batch that pays the cold-start cost).
fn serve_baseline_from(
    speed: f64,
    max_connections: usize,
    startup_s: Option<f64>,
) -> (servebench::http::ServerHandle, String) {
    let args = ServeArgs {
        speed,
        max_connections,
        startup_s,
        ..ServeArgs::default()
    };
    let server = serve::spawn(&Config::named("baseline").unwrap(), &args).unwrap();
    let target = format!("http://{}", server.local_addr());
    (server, target)
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn a_benched_run_is_explained_sliced_and_plotted() {
    let (_server, target) = serve_baseline(20.0, 256);
    let dir = std::env::temp_dir().join(format!("observe_cli_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let run = dir.join("run.json");
    let run_s = run.to_str().unwrap();
    let o = sb(&[
        "bench",
        "--target",
        &target,
        "--input-tokens",
        "256",
        "--output-tokens",
        "32",
        "--max-requests",
        "30",
        "--rate",
        "30",
        "--scrape-interval",
        "0.2",
        "--output",
        run_s,
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("scrapes of http://"), "{}", text(&o));

    // The same run on both sides: nothing changed, every part is zero.
    let o = sb(&["explain", run_s, run_s]);
    assert!(o.status.success(), "{}", text(&o));
    let t = text(&o);
    assert!(
        t.contains("mean TTFT") && t.contains("admission wait: scheduler queue"),
        "{t}"
    );
    assert!(t.contains("mean TPOT") && t.contains("batch size"), "{t}");
    // The server runs 20× the wall clock and says so: its histograms are divided by 20
    // before they are set beside the client's TTFT (no part larger than the whole).
    assert!(
        t.contains("(20 and 20 server seconds per wall second"),
        "{t}"
    );
    let ttft_ms: f64 = t
        .split("mean TTFT: ")
        .nth(1)
        .and_then(|r| r.split(" ms").next())
        .and_then(|v| v.parse().ok())
        .unwrap();
    let prefill_ms: f64 = t
        .lines()
        .find(|l| l.trim_start().starts_with("prefill"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap();
    assert!(prefill_ms < ttft_ms, "{t}");

    let o = sb(&["slices", run_s, "--slice", "500ms", "--json"]);
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let completed: u64 = v["slices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["requests_completed"].as_u64().unwrap())
        .sum();
    assert_eq!(completed, 30);
    assert!(v["steady_state"]["level_tokens_per_s"].as_f64().unwrap() > 0.0);

    let out = dir.join("report");
    let o = sb(&["plot", run_s, run_s, "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    // KV-cache usage comes from the scraped series.
    assert!(html.contains("id=\"kv_cache_over_time\""));
    assert_eq!(html.matches("<svg").count(), 7);

    // Bad input: the file, the flag.
    let missing = dir.join("missing.json");
    let o = sb(&["explain", missing.to_str().unwrap(), run_s]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).contains("missing.json"), "{}", text(&o));
    let o = sb(&["slices", run_s, "--slice", "0s"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).contains("--slice"), "{}", text(&o));
    let o = sb(&["explain", "sim:throughput:nope", run_s]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o).contains("unknown configuration `nope`"),
        "{}",
        text(&o)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `sim:PROFILE:CONFIG:NOISE_SEED` is one draw of the simulator's run-to-run noise: the same
/// seed gives the same run, another seed another run; without a seed the simulation is
/// deterministic; a seed that is not a number is bad input naming the spec.
#[test]
fn sim_runs_take_a_noise_seed() {
    let slices = |spec: &str| {
        let o = sb(&["slices", spec, "--slice", "2s"]);
        assert_eq!(o.status.code(), Some(0), "{spec}: {}", text(&o));
        text(&o)
    };
    let plain = slices("sim:latency:baseline");
    assert_eq!(plain, slices("sim:latency:baseline"));
    let one = slices("sim:latency:baseline:1");
    assert_eq!(one, slices("sim:latency:baseline:1"));
    assert_ne!(one, slices("sim:latency:baseline:2"));
    assert_ne!(one, plain);
    let o = sb(&["slices", "sim:latency:baseline:x"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o).contains("sim:latency:baseline:x: the noise seed `x`"),
        "{}",
        text(&o)
    );
}

/// `explain` on a run recorded against the example server at `--speed 10` (its histograms
/// in virtual seconds, the client's records in wall seconds): no `inf`, `NaN` or part
/// larger than the whole; it says why it does not split the change.
#[test]
fn explain_refuses_a_server_clock_that_is_not_the_clients() {
    let f = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/accuracy-clients/servebench-run.json"
    );
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_servebench"))
        .args(["explain", f, f])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for bad in ["inf", "NaN", "−200", "-200"] {
        assert!(!text.contains(bad), "{text}");
    }
    assert!(
        text.contains("the server's clock is not the client's"),
        "{text}"
    );
}

/// A run that starts with a burst: 300 requests of 2,048 prompt tokens in its first second
/// (30 a virtual second, more than the simulated H200 prefills), then 30 a second (3 a
/// virtual second), fills a queue that drains; `report` and `slices` print the MSER-5
/// steady window, whose P99 TTFT is well below the whole run's (the fill's tail is left
/// out, and said).
#[test]
fn report_and_slices_show_the_steady_window_beside_the_whole_run() {
    let (_server, target) = serve_baseline(10.0, 1024);
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run.json");
    let run_s = run.to_str().unwrap();
    let o = sb(&[
        "bench",
        "--target",
        &target,
        "--input-tokens",
        "2048",
        "--output-tokens",
        "32",
        "--duration",
        "12s",
        "--rate-expr",
        "30 + 270 * min(max((1 - t) * 1000, 0), 1)",
        "--output",
        run_s,
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let o = sb(&["report", run_s]);
    assert!(o.status.success(), "{}", text(&o));
    let t = text(&o);
    let line = t
        .lines()
        .find(|l| l.starts_with("steady state (MSER-5 on TTFT in send order): "))
        .unwrap_or_else(|| panic!("{t}"));
    let p99 = |part: &str| -> f64 {
        part.split("P99 TTFT ")
            .nth(1)
            .and_then(|r| r.split(" ms").next())
            .and_then(|v| v.parse().ok())
            .unwrap()
    };
    eprintln!("{line}");
    let (over, whole) = line.split_once("; whole run: ").unwrap();
    assert!(p99(over) < p99(whole) / 2.0, "{line}");
    let o = sb(&["slices", run_s, "--slice", "1s"]);
    assert!(text(&o).contains(line), "{}", text(&o));
    let o = sb(&["slices", run_s, "--slice", "1s", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["steady_window"]["method"], "MSER-5 on TTFT in send order");
}

/// A staged fill, a ramp and a phase file against the simulator over HTTP: each run file
/// keeps its stages, `report` prints one line per stage (the fill's, the ramp's steps, the
/// phases), and `plot` marks the stage starts on the charts over time and lists the stages
/// with their figures in the HTML report.
#[test]
fn staged_runs_report_and_plot_each_stage() {
    let (_server, target) = serve_baseline(20.0, 512);
    let dir = tempfile::tempdir().unwrap();
    let bench = |name: &str, extra: &[&str]| {
        let out = dir.path().join(name);
        let mut args = vec![
            "bench",
            "--target",
            &target,
            "--quiet",
            "--input-tokens",
            "256",
            "--output-tokens",
            "32",
            "--output",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let o = sb(&args);
        assert!(o.status.success(), "{}", text(&o));
        let file = servebench::runfile::RunFile::read(&out).unwrap();
        let report = sb(&["report", out.to_str().unwrap()]);
        assert!(report.status.success(), "{}", text(&report));
        (
            out,
            file,
            String::from_utf8_lossy(&report.stdout).into_owned(),
        )
    };
    let stage_lines = |report: &str| -> Vec<String> {
        report
            .lines()
            .filter(|l| l.starts_with("stage \"") || l.starts_with("phase \""))
            .map(str::to_string)
            .collect()
    };

    // A staged fill: 64 streams reached over 2 s.
    let (_, file, report) = bench(
        "fill.json",
        &[
            "--max-requests",
            "300",
            "--max-concurrency",
            "64",
            "--rate",
            "inf",
            "--fill-seconds",
            "2",
        ],
    );
    assert_eq!(file.stages.len(), 2, "{:?}", file.stages);
    let lines = stage_lines(&report);
    assert_eq!(lines.len(), 2, "{report}");
    assert!(
        lines[0].starts_with("stage \"fill\" 0.0–2.0 s, cap 1→64: "),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].starts_with("stage \"filled\" from 2.0 s, cap 64: "),
        "{}",
        lines[1]
    );
    let sent: usize = lines
        .iter()
        .map(|l| {
            let n = l.split(": ").nth(1).unwrap().split(' ').next().unwrap();
            n.parse::<usize>().unwrap()
        })
        .sum();
    assert_eq!(sent, 300, "every request in one stage: {lines:?}");

    // A linear ramp from 10 to 60 req/s, reported in 5 steps of 30 requests.
    let (_, file, report) = bench(
        "ramp.json",
        &[
            "--max-requests",
            "150",
            "--ramp-up",
            "linear",
            "--ramp-start",
            "10",
            "--ramp-end",
            "60",
        ],
    );
    assert_eq!(file.stages.len(), 5);
    let lines = stage_lines(&report);
    assert_eq!(lines.len(), 5, "{report}");
    assert!(
        lines[0].starts_with("stage \"ramp 1/5\" 0.0–"),
        "{}",
        lines[0]
    );
    assert!(
        lines[0].contains(" at 10–19.73 req/s: 30 requests sent"),
        "{}",
        lines[0]
    );
    assert!(
        lines[4].contains(" at 50.27–60 req/s: 30 requests sent"),
        "{}",
        lines[4]
    );

    // Phases, drawn by `plot`.
    let phases = dir.path().join("phases.toml");
    std::fs::write(
        &phases,
        "[[phase]]\nname = \"quiet\"\nseconds = 2\nrate = 10\n\n\
         [[phase]]\nname = \"burst\"\nseconds = 1\nrate = 80\n\n\
         [[phase]]\nname = \"after\"\nseconds = 2\nrate = 10\n",
    )
    .unwrap();
    let (run, file, report) = bench("phased.json", &["--phases", phases.to_str().unwrap()]);
    assert_eq!(file.stages.len(), 3);
    assert_eq!(stage_lines(&report).len(), 3, "{report}");
    let charts = dir.path().join("charts");
    let o = sb(&[
        "plot",
        run.to_str().unwrap(),
        "--out",
        charts.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let svg = std::fs::read_to_string(charts.join("throughput_over_time.svg")).unwrap();
    assert!(
        svg.contains("\nburst\n") && svg.contains("\nafter\n"),
        "no stage marks: {svg}"
    );
    assert!(!svg.contains("\nquiet\n"), "the run's start is not marked");
    let html = std::fs::read_to_string(charts.join("index.html")).unwrap();
    let table = &html[html.find("class=\"stages\"").expect("a stage table")..];
    assert!(
        table.contains("<td>burst</td><td>2.0–3.0</td><td>80.00</td><td>–</td><td>80</td>"),
        "{table}"
    );
}

/// `bench --cold` against a server started cold (20 virtual seconds to healthy at speed 10,
/// then the MoE cold-start cost on its first batch): the run waits for health and records
/// how long it took, and `report` shows the first request's TTFT and the requests before
/// the steady state far above the steady state's.
#[test]
fn a_cold_run_waits_for_health_and_reports_its_first_requests_apart() {
    let (_server, target) = serve_baseline_from(10.0, 256, Some(20.0));
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("cold.json");
    let o = sb(&[
        "bench",
        "--target",
        &target,
        "--quiet",
        "--input-tokens",
        "256",
        "--output-tokens",
        "32",
        "--max-requests",
        "120",
        "--rate",
        "20",
        "--cold",
        "--output",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let file = servebench::runfile::RunFile::read(&out).unwrap();
    let healthy = file
        .cold_start
        .expect("the cold start in the run file")
        .healthy_after_s;
    assert!(
        (1.0..4.0).contains(&healthy),
        "healthy after {healthy} s (2 s expected)"
    );
    assert!(file.records.iter().all(|r| r.outcome.is_success()));
    let report = sb(&["report", out.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&report.stdout).into_owned();
    let line = stdout
        .lines()
        .find(|l| l.starts_with("cold start: healthy after "))
        .unwrap_or_else(|| panic!("no cold-start line: {stdout}"));
    eprintln!("{line}");
    // The first batch waits for the 6.5 virtual seconds of cold start: 0.65 s here.
    let first_ms: f64 = line
        .split("first request's TTFT ")
        .nth(1)
        .and_then(|r| r.split(" ms").next())
        .unwrap()
        .parse()
        .unwrap();
    assert!(first_ms > 500.0, "{line}");
    let ms_after = |key: &str, from: &str| -> f64 {
        let rest = &line[line.find(from).unwrap()..];
        rest.split(key)
            .nth(1)
            .unwrap()
            .split(" ms")
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    let before = ms_after("P99 TTFT ", "before the steady state");
    let steady = ms_after("P99 TTFT ", "; steady state:");
    assert!(before > 5.0 * steady, "{line}");
    // Without a cold start there is nothing to wait for and no such line.
    let warm = dir.path().join("warm.json");
    let o = sb(&[
        "bench",
        "--target",
        &target,
        "--quiet",
        "--input-tokens",
        "256",
        "--output-tokens",
        "32",
        "--max-requests",
        "40",
        "--rate",
        "20",
        "--output",
        warm.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let report = sb(&["report", warm.to_str().unwrap()]);
    assert!(!String::from_utf8_lossy(&report.stdout).contains("cold start:"));
    // A server that never becomes healthy: the wait ends with an error naming /health.
    let (_late, late_target) = serve_baseline_from(1.0, 16, Some(3600.0));
    let o = sb(&[
        "bench",
        "--target",
        &late_target,
        "--input-tokens",
        "16",
        "--output-tokens",
        "4",
        "--max-requests",
        "2",
        "--cold",
        "--cold-timeout",
        "1",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("GET /health did not answer 200 within 1 s (last: HTTP 503)"),
        "{}",
        text(&o)
    );
}

/// Peak resident memory (VmRSS, kB) of `cmd` over its run, and its output.
fn peak_rss_kb(args: &[&str]) -> (u64, Output) {
    let mut child = Command::new(BIN)
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let status = format!("/proc/{}/status", child.id());
    let mut peak = 0;
    while child.try_wait().unwrap().is_none() {
        if let Ok(s) = std::fs::read_to_string(&status) {
            let rss = s
                .lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.split_whitespace().next()?.parse().ok())
                .unwrap_or(0);
            peak = peak.max(rss);
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    (peak, child.wait_with_output().unwrap())
}

/// A soak (`--duration`) streams each record to disk as it ends and keeps a slim copy
/// (2,000 requests of 512 output tokens against a whole run of the same requests, both
/// peaks printed). The run file still holds every whole record (the spool copied in and removed), and `report` recomputes from them the
/// TTFT the soak reported, an ITL within the streaming histogram's bound, and the same
/// 1-second peaks.
#[test]
#[cfg(target_os = "linux")]
fn a_soak_streams_its_records_to_disk_and_keeps_memory_flat() {
    let (_server, target) = serve_baseline(50.0, 1024);
    let dir = tempfile::tempdir().unwrap();
    let common = [
        "bench",
        "--target",
        &target,
        "--quiet",
        "--input-tokens",
        "64",
        "--output-tokens",
        "512",
        "--rate",
        "200",
    ];
    let soak_out = dir.path().join("soak.json");
    let mut soak_args = common.to_vec();
    soak_args.extend(["--duration", "10s", "--output", soak_out.to_str().unwrap()]);
    let (soak_kb, o) = peak_rss_kb(&soak_args);
    assert!(o.status.success(), "{}", text(&o));
    let whole_out = dir.path().join("whole.json");
    let mut whole_args = common.to_vec();
    whole_args.extend([
        "--max-requests",
        "2000",
        "--output",
        whole_out.to_str().unwrap(),
    ]);
    let (whole_kb, o) = peak_rss_kb(&whole_args);
    assert!(o.status.success(), "{}", text(&o));
    eprintln!("peak RSS: soak {soak_kb} kB, whole records {whole_kb} kB");
    // Not asserted: in a debug build the peaks are dominated by the chunk events the client
    // has not handled yet (it falls behind at 100,000 chunks a second and its resident
    // memory grows about 18 MB a second, then drops when the run ends), which the machine's
    // load moves by tens of MB either way. What the soak keeps is the collector's contract
    // (a sink's record is not kept, `collector::RecordSink`) and `slim`'s (at most four
    // chunks, the spool's tests).
    assert!(
        !dir.path().join("soak.json.spool.jsonl").exists(),
        "the spool is removed"
    );
    let run = servebench::runfile::RunFile::read(&soak_out).unwrap();
    assert_eq!(run.records.len(), 2000);
    // Requests still streaming when the duration ends are cut (a debug client that falls
    // behind leaves more of them); the rest streamed all 512 tokens (in fewer chunks when
    // the server coalesced tokens a slow reader had not taken yet).
    let whole: Vec<_> = run
        .records
        .iter()
        .filter(|r| r.outcome.is_success())
        .collect();
    assert!(whole.len() >= 1000, "{} of 2000 finished", whole.len());
    assert!(whole.iter().all(|r| r.client_output_tokens() == 512));
    let recomputed = servebench::metrics::compute(
        &run.records,
        servebench::metrics::MetricsOptions::new(servebench::Convention::Vllm),
    );
    let mean = |s: &Option<servebench::result::Summary>| s.as_ref().unwrap().mean.unwrap();
    assert!((mean(&run.result.ttft) - mean(&recomputed.ttft)).abs() < 1e-9);
    let (itl, exact) = (mean(&run.result.itl), mean(&recomputed.itl));
    assert!((itl - exact).abs() <= exact / 512.0, "ITL {itl} vs {exact}");
    // vLLM's 1-second peaks come from the spool on disk: the whole records' own.
    assert_eq!(
        run.result.peak_output_throughput_per_s,
        recomputed.peak_output_throughput_per_s
    );
    assert_eq!(
        run.result.peak_concurrent_requests,
        recomputed.peak_concurrent_requests
    );
    assert!(run.result.peak_output_throughput_per_s.unwrap() > 10_000.0);
}
