//! `servebench bench --slo … --search rate` against the example server (the simulator
//! served in-process at 2× speed, as `h200_server --serve --speed 2` serves it): the
//! capacity's interval contains the simulator's own capacity under the same SLO, found
//! offline by bisection on its virtual timeline (no HTTP, no wall clock), and the search
//! takes fewer probes than a fixed grid of the same resolution. Every probe is a run file
//! that reads back with its place in the search; the search is `capacity.json` and an SVG.
//! `--search concurrency` likewise finds the largest cap whose TPOT the simulator keeps
//! under the SLO, every probe holding to its cap.
#![cfg(all(feature = "http", feature = "sim", feature = "cli", feature = "plot"))]

use std::process::Command;

use servebench::capacity::SloTarget;
use servebench::driver::Arrivals;
use servebench::driver::{run, workload, RunOptions};
use servebench::http::server;
use servebench::runfile::RunFile;
use servebench::sim::serve::{self as sim_serve, ServeArgs};
use servebench::sim::{Config, H200Sim};

const BIN: &str = env!("CARGO_BIN_EXE_servebench");

fn spawn_sim(speed: f64) -> server::ServerHandle {
    let config = Config::named("baseline").unwrap();
    let args = ServeArgs {
        speed,
        max_connections: 8192,
        ..ServeArgs::default()
    };
    let opts = sim_serve::options(&config, &args);
    server::spawn(H200Sim::new(config).warmed_up(), args.addr, speed, opts).unwrap()
}

/// The SLO's check on the simulator at `rate` (virtual requests/s), run in-process on a
/// fresh warmed-up simulator: its own timeline, no HTTP.
fn offline_check(
    work: &[workload::WorkItem],
    slo: &SloTarget,
    rate: f64,
) -> servebench::capacity::SloCheck {
    let mut sim = H200Sim::new(Config::named("baseline").unwrap()).warmed_up();
    let o = RunOptions {
        arrivals: Arrivals::Constant { rate },
        max_concurrency: Some(512),
        ..RunOptions::default()
    };
    slo.check(&run(&mut sim, work, &o).unwrap().records)
}

fn holds_offline(work: &[workload::WorkItem], slo: &SloTarget, rate: f64) -> bool {
    offline_check(work, slo, rate).held
}

/// The simulator's capacity under `slo` in virtual requests/s, by bisection to 0.01.
fn offline_capacity(work: &[workload::WorkItem], slo: &SloTarget) -> f64 {
    let (mut lo, mut hi) = (1.0, 40.0);
    assert!(holds_offline(work, slo, lo) && !holds_offline(work, slo, hi));
    while hi - lo > 0.01 {
        let mid = (lo + hi) / 2.0;
        if holds_offline(work, slo, mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (lo + hi) / 2.0
}

/// The new user's command (`--search rate --min 1 --max 400` on 1024/128 requests against
/// the example server at 2×), with 4-s probes instead of 20 to keep the test short
/// (`SERVEBENCH_FULL_PROBE=1` runs it with 20, as the user did): it
/// once answered "holds at least 400 req/s" from a probe that sent 100 requests in 0.25 s
/// while the server completed 40 req/s. Every probe above what the server carries fails
/// the sustained-load rule, the probe at the maximum among them, and the capacity lies
/// within 20 % of the simulator's own, found offline on its virtual timeline by bisection
/// with the same probes (rate × seconds requests) and the same rule.
#[test]
fn a_probe_that_does_not_carry_its_load_does_not_hold() {
    let speed = 2.0;
    // SERVEBENCH_FULL_PROBE=1: the command exactly as the user ran it (20-s probes).
    let probe_seconds: f64 = if std::env::var_os("SERVEBENCH_FULL_PROBE").is_some() {
        20.0
    } else {
        4.0
    };
    let seconds_flag = probe_seconds.to_string();
    let slo: SloTarget = "ttft:p99<=2000ms".parse().unwrap();
    let h = spawn_sim(speed);
    let target = format!("http://{}", h.local_addr());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("search");
    let o = Command::new(BIN)
        .args(["bench", "--quiet", "--target", &target])
        .args([
            "--input-tokens",
            "1024",
            "--output-tokens",
            "128",
            "--no-scrape",
        ])
        .args(["--slo", "ttft:p99<=2000ms", "--search", "rate"])
        .args(["--min", "1", "--max", "400", "--max-seconds", &seconds_flag])
        .arg("--result-dir")
        .arg(&out)
        .output()
        .unwrap();
    drop(h);
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(!stdout.contains("at least 400"), "{stdout}");
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("capacity.json")).unwrap()).unwrap();
    let estimate = json["capacity"]["estimate"].as_f64().unwrap();
    let mut max_probe_failed_to_carry = false;
    for p in json["probes"].as_array().unwrap() {
        let sustained = p["check"]["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["condition"] == "sustained>=0.95")
            .unwrap();
        let share = sustained["observed"].as_f64().unwrap_or(0.0);
        if p["load"].as_f64() == Some(400.0) {
            max_probe_failed_to_carry = share < 0.5 && p["check"]["held"] == false;
        }
        if share < 0.95 {
            assert_eq!(p["check"]["held"], false, "{p}");
        }
    }
    assert!(max_probe_failed_to_carry, "{json}");
    // Offline: the same probes on the simulator's own timeline (virtual rate = wall / 2,
    // virtual seconds = wall × 2: the same request count).
    let holds = |virtual_rate: f64| {
        let n = servebench::capacity::probe_requests(virtual_rate * speed, probe_seconds);
        let work = workload::random(n as usize, 1024, 128, 0.0, 0, false).unwrap();
        let mut sim = H200Sim::new(Config::named("baseline").unwrap()).warmed_up();
        let o = RunOptions {
            arrivals: Arrivals::Constant { rate: virtual_rate },
            max_concurrency: Some(512),
            ..RunOptions::default()
        };
        let records = run(&mut sim, &work, &o).unwrap().records;
        let virtual_slo: SloTarget = format!("ttft:p99<={}ms", 2000.0 * speed).parse().unwrap();
        virtual_slo
            .check_probe(&records, servebench::result::SearchKind::Rate, Some(n))
            .held
    };
    let (mut lo, mut hi) = (0.5, 200.0);
    assert!(holds(lo) && !holds(hi));
    while hi - lo > 0.25 {
        let mid = (lo + hi) / 2.0;
        if holds(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let offline = speed * (lo + hi) / 2.0;
    let _ = &slo;
    eprintln!(
        "{stdout}
offline capacity {offline:.2} req/s, search {estimate:.2}"
    );
    assert!(
        (estimate / offline - 1.0).abs() <= 0.2,
        "search {estimate:.2} req/s, the simulator's own {offline:.2}\n{stdout}"
    );
}

#[test]
fn the_search_finds_the_simulators_capacity_in_fewer_probes_than_a_grid() {
    let speed = 2.0;
    // Prefill-heavy requests (the server, not the debug-built client, is the bottleneck);
    // p90 TTFT rises from ~0.1 s to seconds within one request/s of the capacity.
    let work = workload::random(100, 4000, 20, 0.0, 5, false).unwrap();
    // The SLO on the wall clock of a server running 2× faster: p90 TTFT within 150 ms.
    let h = spawn_sim(speed);
    let target = format!("http://{}", h.local_addr());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("search");
    let (min, max, resolution) = (16.0, 40.0, 0.8);
    let o = Command::new(BIN)
        .args([
            "bench",
            "--quiet",
            "--target",
            &target,
            "--dataset",
            "random",
        ])
        .args([
            "--input-tokens",
            "4000",
            "--output-tokens",
            "20",
            "--range-ratio",
            "0",
        ])
        .args(["--max-requests", "100", "--seed", "5", "--no-scrape"])
        .args(["--slo", "ttft:p90<=150ms", "--search", "rate"])
        .args(["--min", "16", "--max", "40", "--resolution", "0.8"])
        .arg("--result-dir")
        .arg(&out)
        .output()
        .unwrap();
    drop(h);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    // What the client adds to every TTFT (request handling, the loopback, a debug build on a
    // loaded machine), measured where the server is idle most of the time: the first probe
    // (the minimum rate) against the simulator's own p90 TTFT at that rate.
    let p90: SloTarget = "ttft:p90<=1ms".parse().unwrap();
    let first = RunFile::read(out.join("probe-001.json")).unwrap();
    let client_ms = p90.check(&first.records).conditions[0].observed.unwrap()
        - offline_check(&work, &p90, min / speed).conditions[0]
            .observed
            .unwrap()
            / speed;
    assert!((0.0..50.0).contains(&client_ms), "{client_ms} ms");
    // The simulator's own capacity, offline on its virtual timeline, under the SLO's limit
    // less the client's share: the p90 TTFT the server itself must keep, in virtual ms.
    let virtual_slo: SloTarget = format!("ttft:p90<={}ms", speed * (150.0 - client_ms))
        .parse()
        .unwrap();
    let capacity = speed * offline_capacity(&work, &virtual_slo);
    eprintln!(
        "{stdout}\nthe client adds {client_ms:.1} ms; the simulator's own capacity under \
         {virtual_slo} (virtual): {capacity:.2} req/s (wall, at {speed}×)"
    );

    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("capacity.json")).unwrap()).unwrap();
    assert_eq!(json["format"], "servebench-capacity");
    let cap = &json["capacity"];
    let (lo, hi) = (
        cap["lower"].as_f64().unwrap(),
        cap["upper"].as_f64().unwrap(),
    );
    let estimate = cap["estimate"].as_f64().unwrap();
    // Within the search's interval, give or take its resolution: the client's share of the
    // TTFT, measured once, varies by a few ms from probe to probe on a loaded machine.
    let step = hi - lo;
    assert!(
        lo - step <= capacity && capacity <= hi + step,
        "[{lo:.2}, {hi:.2}] (± {step:.2}) misses the simulator's capacity {capacity:.2}\n{stdout}"
    );
    assert!(lo <= estimate && estimate <= hi);
    // Fewer probes than a fixed grid at the same resolution (31 points over [16, 40]): a
    // bisection's five or six, plus the repeats a noisy probe near the limit takes (on a
    // loaded machine up to three at several loads).
    let probes = cap["probes"].as_u64().unwrap() as usize;
    let grid = ((max - min) / resolution) as usize + 1;
    assert!(probes < grid, "{probes} probes, grid {grid}");
    let conclusion = stdout
        .lines()
        .find(|l| l.starts_with("capacity: holds "))
        .unwrap_or_else(|| panic!("no conclusion in\n{stdout}"));
    assert!(
        conclusion.contains(&format!("[{lo:.2}, {hi:.2}]")),
        "{conclusion}"
    );
    assert!(conclusion.contains("under ttft:p90<=150ms"), "{conclusion}");

    // Every probe is a run file with its place in the search.
    for i in 1..=probes {
        let f = RunFile::read(out.join(format!("probe-{i:03}.json"))).unwrap();
        let p = f.capacity_probe.expect("capacity_probe");
        assert_eq!(p.index as usize, i);
        assert_eq!(p.slo, "ttft:p90<=150ms");
        assert_eq!(f.records.len(), 100);
        assert_eq!(json["probes"][i - 1]["load"].as_f64(), Some(p.load));
        assert_eq!(p.held, p.worst_ratio <= 1.0);
        // The judged figure is the worse of the probe's p90 TTFT (vLLM's) over the limit
        // and the share of its load it did not carry over the share allowed.
        let slo: SloTarget = "ttft:p90<=150ms".parse().unwrap();
        let c = slo.check_probe(
            &f.records,
            servebench::result::SearchKind::Rate,
            Some(f.profile.total_requests),
        );
        assert_eq!((c.worst_ratio, c.held), (p.worst_ratio, p.held));
        assert_eq!(c.conditions[1].condition, "sustained>=0.95");
    }
    assert!(!out.join(format!("probe-{:03}.json", probes + 1)).exists());
    let svg = std::fs::read_to_string(out.join("capacity.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("ttft:p90"));
}

#[test]
fn bad_slo_text_is_a_usage_error_naming_the_token() {
    let o = Command::new(BIN)
        .args([
            "bench",
            "--target",
            "http://127.0.0.1:9",
            "--dataset",
            "random",
        ])
        .args([
            "--slo",
            "ttft:p99<=500ms tpot:p99<=50",
            "--search",
            "rate",
            "--max",
            "10",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--slo: `tpot:p99<=50`: give the limit's unit"),
        "{err}"
    );
    let o = Command::new(BIN)
        .args([
            "bench",
            "--target",
            "http://127.0.0.1:9",
            "--dataset",
            "random",
        ])
        .args(["--slo", "ttft:p99<=500ms", "--search", "rate"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("--search needs --max"), "{err}");
    // Flags the search would otherwise ignore are refused.
    for extra in [&["--rate", "5"][..], &["--ci"], &["--output", "x.json"]] {
        let o = Command::new(BIN)
            .args([
                "bench",
                "--target",
                "http://127.0.0.1:9",
                "--dataset",
                "random",
            ])
            .args([
                "--slo",
                "ttft:p99<=500ms",
                "--search",
                "rate",
                "--max",
                "10",
            ])
            .args(extra)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {err}");
        assert!(err.contains("cannot be used with"), "{extra:?}: {err}");
    }
    let o = Command::new(BIN)
        .args([
            "bench",
            "--target",
            "http://127.0.0.1:9",
            "--dataset",
            "random",
        ])
        .args([
            "--slo",
            "ttft:p99<=500ms",
            "--search",
            "concurrency",
            "--max",
            "64",
        ])
        .args(["--max-concurrency", "8"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("--search concurrency sets the cap"), "{err}");
}

/// The SLO's check on the simulator with every request at once under a cap of `cap` in
/// flight (the concurrency search's probe), in-process on its own timeline.
fn offline_check_capped(
    work: &[workload::WorkItem],
    slo: &SloTarget,
    cap: usize,
) -> servebench::capacity::SloCheck {
    let mut sim = H200Sim::new(Config::named("baseline").unwrap()).warmed_up();
    let o = RunOptions {
        arrivals: Arrivals::AllAtOnce,
        max_concurrency: Some(cap),
        ..RunOptions::default()
    };
    slo.check(&run(&mut sim, work, &o).unwrap().records)
}

#[test]
fn the_concurrency_search_finds_the_simulators_largest_batch_under_a_tpot_slo() {
    let speed = 2.0;
    // Decode-heavy requests: TPOT grows with the batch the cap lets in.
    let work = workload::random(96, 200, 32, 0.0, 7, false).unwrap();
    let h = spawn_sim(speed);
    let target = format!("http://{}", h.local_addr());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("search");
    let o = Command::new(BIN)
        .args([
            "bench",
            "--quiet",
            "--target",
            &target,
            "--dataset",
            "random",
        ])
        .args([
            "--input-tokens",
            "200",
            "--output-tokens",
            "32",
            "--range-ratio",
            "0",
        ])
        .args(["--max-requests", "96", "--seed", "7", "--no-scrape"])
        .args(["--slo", "tpot:p90<=7.5ms", "--search", "concurrency"])
        .args(["--min", "2", "--max", "96", "--resolution", "1"])
        .arg("--result-dir")
        .arg(&out)
        .output()
        .unwrap();
    drop(h);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    // The simulator's own TPOT p90 (virtual ms) at every cap, offline.
    let p90: SloTarget = "tpot:p90<=1ms".parse().unwrap();
    let virtual_p90 = |cap: usize| {
        offline_check_capped(&work, &p90, cap).conditions[0]
            .observed
            .unwrap()
    };
    // What the client adds to TPOT, from the first probe (the smallest cap).
    let first = RunFile::read(out.join("probe-001.json")).unwrap();
    let first_cap = first.capacity_probe.as_ref().unwrap().load.round() as usize;
    let client_ms =
        p90.check(&first.records).conditions[0].observed.unwrap() - virtual_p90(first_cap) / speed;
    assert!((-1.0..3.0).contains(&client_ms), "{client_ms} ms");
    // The largest cap whose TPOT p90 the server itself keeps under the SLO less the client's
    // share, and its TPOT curve around it.
    let limit_virtual = speed * (7.5 - client_ms);
    let mut largest = 0;
    let mut curve = String::new();
    for cap in 1..=96 {
        let v = virtual_p90(cap);
        curve += &format!(" {cap}:{v:.1}");
        if v <= limit_virtual {
            largest = cap;
        } else {
            break;
        }
    }
    eprintln!("{stdout}\nclient adds {client_ms:.2} ms; virtual limit {limit_virtual:.2} ms; curve{curve}");
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("capacity.json")).unwrap()).unwrap();
    let cap = &json["capacity"];
    let (lo, hi) = (
        cap["lower"].as_f64().unwrap(),
        cap["upper"].as_f64().unwrap(),
    );
    // Whole caps: the last that held and the first that did not, the simulator's own largest
    // cap within one either side (the client's share is measured, not exact).
    assert_eq!(lo.fract(), 0.0, "{lo}");
    assert_eq!(hi.fract(), 0.0, "{hi}");
    assert!(
        lo - 1.0 <= largest as f64 && largest as f64 <= hi,
        "[{lo}, {hi}] misses the simulator's largest cap {largest}\n{stdout}"
    );
    // Every probe ran its cap: never more requests in flight than the cap.
    let probes = cap["probes"].as_u64().unwrap() as usize;
    assert!(probes < 96 / 2, "{probes} probes");
    for i in 1..=probes {
        let f = RunFile::read(out.join(format!("probe-{i:03}.json"))).unwrap();
        let p = f.capacity_probe.expect("capacity_probe");
        let limit = p.load.round() as usize;
        assert_eq!(f.profile.max_concurrency, Some(limit as u64));
        let mut events: Vec<(std::time::Duration, i32)> = f
            .records
            .iter()
            .flat_map(|r| [(r.sent_at, 1), (r.ended_at.unwrap_or(r.sent_at), -1)])
            .collect();
        events.sort_by_key(|&(t, d)| (t, d));
        let mut in_flight = 0;
        for (_, d) in events {
            in_flight += d;
            assert!(
                in_flight as usize <= limit,
                "probe {i}: {in_flight} in flight, cap {limit}"
            );
        }
    }
}

/// Ctrl-C during a probe: the probe in flight is saved (marked interrupted) beside the
/// ones before it, and `bench` exits 130. Each probe's start is announced on stderr (the
/// README's search once ran for minutes without a line).
#[test]
fn an_interrupted_search_keeps_the_probe_in_flight() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    let h = spawn_sim(1.0);
    let target = format!("http://{}", h.local_addr());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("search");
    let mut child = Command::new(BIN)
        .args(["bench", "--target", &target, "--no-scrape"])
        .args(["--input-tokens", "64", "--output-tokens", "256"])
        .args(["--slo", "ttft:p99<=2000ms", "--search", "rate"])
        .args(["--min", "2", "--max", "8", "--probe-seconds", "30"])
        .arg("--result-dir")
        .arg(&out)
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    assert!(
        line.starts_with(
            "servebench: probe 1 at 2.00 req/s (repetition 1): 60 requests over about 30 s"
        ),
        "{line}"
    );
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let st = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut err, &mut rest).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{rest}");
    let probe = RunFile::read(out.join("probe-001.json")).unwrap();
    assert!(!probe.status.is_complete(), "{:?}", probe.status);
    assert!(!probe.records.is_empty() && probe.records.len() < 60);
    assert!(rest.contains("marked interrupted"), "{rest}");
}
