//! Scraping a real server process's `/metrics`: the simulator served over HTTP speaks
//! vLLM's metrics, `bench` scrapes them during the run and the summary agrees with what the
//! client received; a server without `/metrics` is noted, not an error.
#![cfg(all(feature = "http", feature = "sim"))]

use std::io::{Read, Write};
use std::net::TcpListener;
use std::time::{Duration, Instant};

use servebench::app::bench::{self, BenchArgs};
use servebench::observe::Known;
use servebench::observe::{scrape_once, Scraper};
use servebench::profile::{Dataset, Profile};
use servebench::sim::serve::{self, ServeArgs};
use servebench::sim::Config;

fn args(speed: f64) -> ServeArgs {
    ServeArgs {
        speed,
        ..ServeArgs::default()
    }
}

#[test]
fn bench_scrapes_the_served_simulator_and_the_counts_agree() {
    let server = serve::spawn(&Config::named("baseline").unwrap(), &args(20.0)).unwrap();
    let base = format!("http://{}", server.local_addr());
    // One scrape before any traffic: vLLM's families, with their labels, and ours.
    let samples = scrape_once(&base, Duration::from_secs(5)).unwrap();
    let running = samples
        .iter()
        .find(|s| s.name == "vllm:num_requests_running")
        .unwrap();
    assert_eq!(running.label("model_name"), Some("Qwen/Qwen3.5-35B-A3B"));
    assert_eq!(running.value, 0.0);
    for name in [
        "vllm:kv_cache_usage_perc",
        "vllm:num_preemptions_total",
        "vllm:prefix_cache_hits_total",
        "vllm:time_to_first_token_seconds_bucket",
        "servebench_requests",
    ] {
        assert!(samples.iter().any(|s| s.name == name), "{name} missing");
    }

    let profile = Profile {
        name: None,
        dataset: Dataset::Random {
            input_tokens: 512,
            output_tokens: 64,
            seed: 1,
        },
        request_rate: 20.0,
        total_requests: 40,
        max_concurrency: None,
    };
    let mut a = BenchArgs::new(base.clone(), profile);
    a.scrape_interval = Some(Duration::from_millis(100));
    let run = bench::run(&a, &mut |_| {}).unwrap();
    let s = run.file.server_metrics.as_ref().unwrap();
    assert!(s.notes.is_empty(), "{:?}", s.notes);
    assert!(s.len() >= 5, "{} scrapes", s.len());
    assert!(s.times_s.windows(2).all(|w| w[0] <= w[1]));
    let received: u64 = run
        .file
        .records
        .iter()
        .map(|r| r.client_output_tokens())
        .sum();
    assert_eq!(received, 40 * 64);
    assert_eq!(
        s.increase(Known::GenerationTokens.names()),
        Some(received as f64)
    );
    assert_eq!(
        s.increase(&["vllm:request_success_total"]),
        Some(run.file.records.len() as f64)
    );
    let sum = s.summary();
    assert!(sum.running_mean.unwrap() > 0.0);
    assert_eq!(sum.preemptions, Some(0.0));
    assert!(sum.histogram_means_s["vllm:time_to_first_token_seconds"] > 0.0);
    // The series survives the saved run.
    let dir = std::env::temp_dir().join(format!("observe_scrape_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("run.json");
    bench::save(&path, &run).unwrap();
    let back = servebench::runfile::RunFile::read(&path).unwrap();
    assert_eq!(back.server_metrics.as_ref(), Some(s));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_server_without_metrics_is_noted_not_an_error() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let t = std::thread::spawn(move || {
        // Answer every connection with a 404 until the scraper stops (at most a few).
        listener.set_nonblocking(false).unwrap();
        for stream in listener.incoming().take(1) {
            let mut s = stream.unwrap();
            // Read the whole request head first: closing with unread bytes would reset the
            // connection instead of answering.
            let mut head = Vec::new();
            let mut buf = [0u8; 1024];
            while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                match s.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => head.extend_from_slice(&buf[..n]),
                }
            }
            let _ = s.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
            let _ = s.shutdown(std::net::Shutdown::Write);
            let _ = s.set_read_timeout(Some(Duration::from_millis(500)));
            while matches!(s.read(&mut buf), Ok(n) if n > 0) {}
        }
    });
    let scraper = Scraper::start(
        &format!("http://{addr}"),
        Duration::from_millis(50),
        Instant::now(),
    );
    std::thread::sleep(Duration::from_millis(200));
    let series = scraper.stop();
    t.join().unwrap();
    assert!(series.is_empty());
    assert!(
        series.notes.iter().any(|n| n.contains("HTTP 404"))
            && series.notes.iter().any(|n| n.contains("no /metrics")),
        "{:?}",
        series.notes
    );
}
