//! `servebench bench --sweep` over the command line against the example server (the
//! simulator served in-process, as `h200_server --serve` serves it): the sweep file is read
//! back by every verb through the one loader, `report` prints the rate table and names the
//! saturation point, and that point lies within 15 % of the simulator's capacity for the
//! load (measured in-process from the simulator, not written down).
#![cfg(all(feature = "http", feature = "sim", feature = "cli"))]

use std::process::{Command, Output};
use std::time::Duration;

use servebench::driver::{run, workload, RunOptions};
use servebench::http::server;
use servebench::sim::serve::{self as sim_serve, ServeArgs};
use servebench::sim::{Config, H200Sim};

const BIN: &str = env!("CARGO_BIN_EXE_servebench");

fn spawn_sim(config: Config, speed: f64) -> server::ServerHandle {
    let args = ServeArgs {
        speed,
        max_connections: 8192,
        ..ServeArgs::default()
    };
    let opts = sim_serve::options(&config, &args);
    server::spawn(H200Sim::new(config).warmed_up(), args.addr, speed, opts).unwrap()
}

/// Steady completion rate of the simulator with every request sent at once: its capacity
/// for the load (requests ending between 25 % and 75 % of the run, per virtual second).
fn sim_capacity(work: &[workload::WorkItem]) -> f64 {
    let mut sim = H200Sim::new(Config::named("baseline").unwrap()).warmed_up();
    let out = run(&mut sim, work, &RunOptions::default()).unwrap();
    let mut ends: Vec<Duration> = out.records.iter().filter_map(|r| r.ended_at).collect();
    ends.sort();
    let (a, b) = (ends.len() / 4, 3 * ends.len() / 4);
    (b - a) as f64 / (ends[b] - ends[a]).as_secs_f64()
}

fn cli(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().unwrap()
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn a_sweep_file_reads_back_in_every_verb_and_finds_the_simulators_capacity() {
    // Prefill-heavy requests: the server, not the (debug-built) client, is the bottleneck.
    // Speed 5 leaves the client and server CPU to spare on a loaded 2-core machine.
    let speed = 5.0;
    // The simulator's capacity for this load, in wall-clock requests/s at that speed.
    let capacity = speed * sim_capacity(&workload::random(3000, 4000, 20, 0.0, 5, false).unwrap());
    let h = spawn_sim(Config::named("baseline").unwrap(), speed);
    let target = format!("http://{}", h.local_addr());
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("sweep.json");
    let file_s = file.to_str().unwrap();
    let o = cli(&[
        "bench",
        "--quiet",
        "--target",
        &target,
        "--dataset",
        "random",
        "--input-tokens",
        "4000",
        "--output-tokens",
        "20",
        "--range-ratio",
        "0",
        "--max-requests",
        "120",
        "--seed",
        "5",
        "--sweep",
        "8",
        "--output",
        file_s,
    ]);
    let (bench_out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    drop(h);

    // report: a block per run, then the rate table and the saturation point.
    let o = cli(&["report", file_s]);
    let (report, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    eprintln!("{report}\ncapacity (simulator in-process × speed): {capacity:.2} requests/s");
    assert_eq!(report.matches("Serving Benchmark Result").count(), 10);
    let table_at = report.find("strategy ").expect("the rate table");
    let table = &report[table_at..];
    // The same table `bench --sweep` printed, read back from the file.
    assert_eq!(table.trim_end(), bench_out.trim_end());
    let rows: Vec<&str> = table.lines().skip(1).take(10).collect();
    assert!(rows[0].starts_with("synchronous") && rows[1].starts_with("throughput"));
    assert!(
        rows[2..].iter().all(|r| r.starts_with("constant")),
        "{table}"
    );
    let sat: f64 = table
        .lines()
        .find_map(|l| l.strip_prefix("saturation: "))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no saturation point in\n{table}"));
    assert!(
        (sat - capacity).abs() <= 0.15 * capacity,
        "saturation {sat:.2} vs the simulator's capacity {capacity:.2} requests/s"
    );
    // The saturation rate is the highest constant row marked as kept up with.
    let kept: Vec<f64> = rows[2..]
        .iter()
        .filter(|r| r.trim_end().ends_with("yes"))
        .map(|r| r.split_whitespace().nth(1).unwrap().parse().unwrap())
        .collect();
    assert_eq!(kept.iter().cloned().fold(f64::NAN, f64::max), sat);

    // Every other verb reads it through the same loader.
    let o = cli(&["render", file_s]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    assert_eq!(text(&o).0.matches("Serving Benchmark Result").count(), 10);
    let o = cli(&["parse", file_s]);
    let (blocks, pe) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{pe}");
    assert_eq!(blocks.matches("\"result\"").count(), 10, "{blocks}");
    let o = cli(&["lint", file_s]);
    let (lo, le) = text(&o);
    assert!(matches!(o.status.code(), Some(0) | Some(3)), "{le}");
    // Read through the loader: any finding names its run of the sweep (which findings the
    // machine's load produces varies: a client-capped synchronous run, a throughput lint).
    if o.status.code() == Some(3) {
        assert!(
            lo.contains(&format!("{file_s}: synchronous"))
                || lo.contains(&format!("{file_s}: constant@"))
                || lo.contains(&format!("{file_s}: throughput"))
                || lo.contains("$.runs["),
            "{lo}"
        );
    }
    let o = cli(&[
        "compare",
        file_s,
        file_s,
        "--base-block",
        "1",
        "--candidate-block",
        "10",
    ]);
    let (co, ce) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{ce}");
    assert!(co.contains("TTFT"), "{co}");
    #[cfg(feature = "plot")]
    {
        let out = dir.path().join("plot");
        let o = cli(&["plot", file_s, "--out", out.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
        let html = std::fs::read_to_string(out.join("index.html")).unwrap();
        assert!(html.contains("sweep:constant@"), "plot labels each rate");
    }
}
