//! `bench --metrics-listen ADDR` serves the run's live metrics in Prometheus' text format
//! while it runs: scraped mid-run against the example server (the simulator served over
//! HTTP), the counters are those of a run under way, the TTFT quantiles those of the
//! requests finished so far, and the text parses as Prometheus exposition.
#![cfg(all(feature = "http", feature = "cli", feature = "sim"))]

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use servebench::sim::serve::{self, ServeArgs};
use servebench::sim::Config;

mod common;
use common::scrape::{scrape, value};

#[test]
fn live_metrics_are_scraped_mid_run() {
    let args = ServeArgs {
        speed: 10.0,
        max_connections: 256,
        ..ServeArgs::default()
    };
    let server = serve::spawn(&Config::named("baseline").unwrap(), &args).unwrap();
    let target = format!("http://{}", server.local_addr());
    let mut child = Command::new(env!("CARGO_BIN_EXE_servebench"))
        .args([
            "bench",
            "--target",
            &target,
            "--quiet",
            "--input-tokens",
            "64",
            "--output-tokens",
            "64",
            "--rate",
            "20",
            "--max-requests",
            "300",
            "--metrics-listen",
            "127.0.0.1:0",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let addr = loop {
        let line = lines
            .next()
            .expect("bench exited before listening")
            .unwrap();
        if let Some(rest) = line.strip_prefix("servebench: live metrics at http://") {
            break rest.trim_end_matches("/metrics").to_string();
        }
    };
    std::thread::spawn(move || for _ in lines {});
    // Mid-run: 300 requests at 20 req/s take 15 s; scrape after some have finished.
    let start = Instant::now();
    let text = loop {
        std::thread::sleep(Duration::from_millis(500));
        let t = scrape(&addr);
        if t.contains("servebench_time_to_first_token_seconds{quantile=\"0.5\"}")
            || start.elapsed() > Duration::from_secs(10)
        {
            break t;
        }
    };
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    assert!(
        text.contains("content-type: text/plain; version=0.0.4"),
        "{text}"
    );
    let body = text.split("\r\n\r\n").nth(1).unwrap();
    let sent = value(body, "servebench_requests_sent_total");
    let completed = value(body, "servebench_requests_completed_total");
    assert!(sent > 0.0 && sent < 300.0, "mid-run: {sent} sent");
    assert!(
        completed > 0.0 && completed <= sent,
        "{completed} of {sent}"
    );
    assert_eq!(value(body, "servebench_requests_failed_total"), 0.0);
    // Tokens are counted as chunks arrive (the progress counters, every 200 ms), ended
    // requests as their records do: both under way, neither ahead of the run.
    assert!(value(body, "servebench_output_tokens_total") > 0.0);
    let p50 = value(
        body,
        "servebench_time_to_first_token_seconds{quantile=\"0.5\"}",
    );
    assert!(p50 > 0.0 && p50 < 5.0, "{p50}");
    let count = value(body, "servebench_time_to_first_token_seconds_count");
    assert!(count >= 1.0 && count <= completed, "{count} vs {completed}");
    // Every sample line follows the exposition format: a name, optional labels, a number.
    for l in body
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let (name, v) = l.rsplit_once(' ').unwrap();
        assert!(name.starts_with("servebench_"), "{l}");
        assert!(v.parse::<f64>().is_ok(), "{l}");
    }
    let st = child.wait().unwrap();
    assert!(st.success());
}
