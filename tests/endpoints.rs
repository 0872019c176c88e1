//! Every endpoint against the example server (the simulator served over HTTP), driven by the
//! real `servebench bench`: embeddings, rerank and score answer whole (request latency
//! only, one result per input, inputs counted); the Responses and Messages APIs stream
//! their own events (TTFT, ITL and usage from them); chat requests with images of two sizes
//! count their vision tokens, and the larger image costs more time to the first token.
#![cfg(all(feature = "http", feature = "cli", feature = "sim"))]

use std::path::{Path, PathBuf};
use std::process::Command;

use servebench::record::ResponseForm;
use servebench::runfile::RunFile;
use servebench::sim::serve::{self, ServeArgs};
use servebench::sim::Config;

fn server() -> servebench::http::ServerHandle {
    server_with(Config::named("baseline").unwrap())
}

fn server_with(config: Config) -> servebench::http::ServerHandle {
    let args = ServeArgs {
        max_connections: 256,
        ..ServeArgs::default()
    };
    serve::spawn(&config, &args).unwrap()
}

fn dir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("servebench-endpoints-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs `bench` with `args` against `target`; the run file it wrote.
fn bench(target: &str, out: &Path, args: &[&str]) -> RunFile {
    let o = Command::new(env!("CARGO_BIN_EXE_servebench"))
        .args(["bench", "--target", target, "--quiet", "--output"])
        .arg(out)
        .args(args)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    RunFile::read(out).unwrap()
}

fn median_ttft_ms(run: &RunFile) -> f64 {
    run.result.ttft.as_ref().and_then(|s| s.median).unwrap()
}

#[test]
fn pooling_endpoints_answer_whole_and_count_their_inputs() {
    let server = server();
    let target = format!("http://{}", server.local_addr());
    let d = dir();
    for (endpoint, shape, inputs, tokens_per_input) in [
        ("embeddings", ["--batch-size", "8"], 8, 64),
        // A rerank or score pair is read as one sequence: query + document.
        ("rerank", ["--documents", "4"], 4, 128),
        ("score", ["--documents", "3"], 3, 128),
    ] {
        let out = d.join(format!("{endpoint}.json"));
        let mut args = vec!["--endpoint", endpoint, "--input-tokens", "64"];
        args.extend(shape);
        args.extend(["--num-prompts", "12", "--request-rate", "8"]);
        let run = bench(&target, &out, &args);
        let r = &run.result;
        assert_eq!(r.successful_requests, Some(12), "{endpoint}");
        assert!(run.records.iter().all(|x| x.response == ResponseForm::Whole
            && x.inputs == Some(inputs)
            && x.chunks.is_empty()));
        // Only the request latency applies: nothing streamed, nothing invented.
        assert!(
            r.ttft.is_none() && r.tpot.is_none() && r.itl.is_none(),
            "{endpoint}"
        );
        assert!(r.e2el.as_ref().and_then(|s| s.median).unwrap() > 0.0);
        assert_eq!(r.meta.endpoint.as_deref(), Some(endpoint));
        // The server counted every input's tokens (its word tokenizer: one per word).
        assert_eq!(
            r.total_input_tokens,
            Some(12 * u64::from(inputs) * tokens_per_input),
            "{endpoint}"
        );
        let per_s = r.inputs_per_s.unwrap() / r.request_throughput_per_s.unwrap();
        assert!(
            (per_s - f64::from(inputs)).abs() < 1e-9,
            "{endpoint}: {per_s}"
        );
        // The report says which metrics apply.
        let report = Command::new(env!("CARGO_BIN_EXE_servebench"))
            .arg("report")
            .arg(&out)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&report.stdout).to_string()
            + &String::from_utf8_lossy(&report.stderr);
        assert!(
            text.contains(&format!("Endpoint: {endpoint}. Answers come whole")),
            "{text}"
        );
        assert!(!text.contains("TTFT (ms)"), "{text}");
    }
}

#[test]
fn responses_and_messages_stream_their_own_events() {
    let server = server();
    let target = format!("http://{}", server.local_addr());
    let d = dir();
    for endpoint in ["responses", "messages"] {
        let out = d.join(format!("{endpoint}.json"));
        let run = bench(
            &target,
            &out,
            &[
                "--endpoint",
                endpoint,
                "--input-tokens",
                "64",
                "--output-tokens",
                "24",
                "--num-prompts",
                "10",
                "--request-rate",
                "8",
            ],
        );
        let r = &run.result;
        assert_eq!(r.successful_requests, Some(10), "{endpoint}");
        assert!(median_ttft_ms(&run) > 0.0);
        assert!(r.itl.as_ref().and_then(|s| s.mean).unwrap() > 0.0);
        for rec in &run.records {
            // One chunk per delta event; usage from the API's own fields.
            assert_eq!(rec.chunks.len(), 24, "{endpoint}");
            assert_eq!(rec.usage_output_tokens, Some(24), "{endpoint}");
            assert!(rec.usage_prompt_tokens.unwrap() >= 64, "{endpoint}");
        }
    }
}

#[test]
fn images_count_their_vision_tokens_and_cost_their_prefill() {
    let server = server();
    let target = format!("http://{}", server.local_addr());
    let d = dir();
    let run = |name: &str, args: &[&str]| {
        let mut all = vec!["--endpoint", "chat", "--output-tokens", "4"];
        all.extend(args);
        all.extend(["--num-prompts", "12", "--request-rate", "3"]);
        bench(&target, &d.join(name), &all)
    };
    let small = run(
        "small.json",
        &[
            "--input-tokens",
            "64",
            "--images",
            "1",
            "--image-size",
            "512x512",
        ],
    );
    let big = run(
        "big.json",
        &[
            "--input-tokens",
            "64",
            "--images",
            "1",
            "--image-size",
            "1024x1024",
        ],
    );
    // Qwen3.5's preprocessor: 256 and 1024 vision tokens, each with its two markers.
    for (run, vision) in [(&small, 258), (&big, 1026)] {
        for r in &run.records {
            let images = r.images.unwrap();
            assert_eq!((images.count, images.vision_tokens), (1, vision));
            assert!(images.bytes > 10_000);
        }
        let f = run.result.images.unwrap();
        assert_eq!(f.vision_tokens, 12 * vision);
        // The server's usage counts the image's tokens beside the text's.
        let text = run.records[0].usage_prompt_tokens.unwrap() - vision;
        assert_eq!(f.prompt_tokens, 12 * (vision + text));
    }
    // The larger image costs more time to the first token (how much more is the
    // simulator's, checked without the HTTP path in `tests/sim_fidelity.rs`).
    assert!(
        median_ttft_ms(&big) > median_ttft_ms(&small),
        "{} vs {}",
        median_ttft_ms(&big),
        median_ttft_ms(&small)
    );
}

/// A rerank run whose query and documents do not fit the server's context: every request
/// is refused, and `lint` says why instead of leaving a run of refusals to be read as
/// figures.
#[test]
fn lint_names_documents_that_exceed_the_context() {
    let mut config = Config::named("baseline").unwrap();
    config.args.max_model_len = Some(512);
    let server = server_with(config);
    let target = format!("http://{}", server.local_addr());
    let out = dir().join("too-long.json");
    let o = Command::new(env!("CARGO_BIN_EXE_servebench"))
        .args(["bench", "--target", &target, "--quiet", "--output"])
        .arg(&out)
        .args([
            "--endpoint",
            "rerank",
            "--documents",
            "2",
            "--input-tokens",
            "200",
            "--document-tokens",
            "400",
            "--num-prompts",
            "6",
            "--request-rate",
            "10",
        ])
        .output()
        .unwrap();
    assert!(!o.status.success());
    let lint = Command::new(env!("CARGO_BIN_EXE_servebench"))
        .arg("lint")
        .arg(&out)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&lint.stdout);
    assert_eq!(lint.status.code(), Some(3), "{text}");
    assert!(
        text.contains("error[context-exceeded]: 6 requests (100.0%) were refused"),
        "{text}"
    );
}

/// Sharded load works for the new endpoints: two `--shard K/2` processes of an embeddings
/// run (4 inputs per request) and of an image chat run, merged with `servebench merge`,
/// hold the single process's requests — whole answers with their inputs, images with their
/// bytes and vision tokens — and the merged figures are those of the union (inputs/s, no
/// TTFT for embeddings; vision tokens for the images).
#[test]
fn sharded_runs_of_embeddings_and_images_merge_like_one_process() {
    let server = server();
    let target = format!("http://{}", server.local_addr());
    let d = dir();
    for (name, shape) in [
        (
            "emb",
            vec![
                "--endpoint",
                "embeddings",
                "--batch-size",
                "4",
                "--input-tokens",
                "64",
            ],
        ),
        (
            "img",
            vec![
                "--endpoint",
                "chat",
                "--images",
                "1",
                "--image-size",
                "512x512",
                "--input-tokens",
                "32",
                "--output-tokens",
                "8",
            ],
        ),
    ] {
        let common = |out: &Path| {
            let mut a: Vec<String> = shape.iter().map(|s| s.to_string()).collect();
            a.extend(
                ["--num-prompts", "16", "--request-rate", "16", "--seed", "3"].map(String::from),
            );
            a.extend(["--output".to_string(), out.display().to_string()]);
            a
        };
        let single = d.join(format!("{name}-single.json"));
        let o = Command::new(env!("CARGO_BIN_EXE_servebench"))
            .args(["bench", "--target", &target, "--quiet"])
            .args(common(&single))
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let barrier = format!("barrier:{}", d.join(format!("{name}-barrier")).display());
        let kids: Vec<_> = (1..=2)
            .map(|k| {
                Command::new(env!("CARGO_BIN_EXE_servebench"))
                    .args(["bench", "--target", &target, "--quiet"])
                    .args(common(&d.join(format!("{name}-{k}.json"))))
                    .args(["--shard", &format!("{k}/2"), "--start-at", &barrier])
                    .spawn()
                    .unwrap()
            })
            .collect();
        for mut k in kids {
            assert!(k.wait().unwrap().success());
        }
        let merged = d.join(format!("{name}-merged.json"));
        let o = Command::new(env!("CARGO_BIN_EXE_servebench"))
            .arg("merge")
            .arg(d.join(format!("{name}-1.json")))
            .arg(d.join(format!("{name}-2.json")))
            .arg("--out")
            .arg(&merged)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let (single, merged) = (
            RunFile::read(&single).unwrap(),
            RunFile::read(&merged).unwrap(),
        );
        // Each shard sent in its own trace; the merged run names both, in shard order.
        let traces: Vec<String> = (1..=2)
            .map(|k| {
                let f = RunFile::read(d.join(format!("{name}-{k}.json"))).unwrap();
                f.labels["trace_id"].clone()
            })
            .collect();
        assert_ne!(traces[0], traces[1]);
        assert_eq!(merged.labels["trace_id"], traces.join(","), "{name}");
        assert_eq!(merged.records.len(), 16, "{name}");
        let shape_of = |r: &RunFile| {
            let mut v: Vec<_> = r
                .records
                .iter()
                .map(|x| (x.id, x.response, x.inputs, x.images, x.prompt_tokens))
                .collect();
            v.sort_by_key(|x| x.0);
            v
        };
        assert_eq!(shape_of(&merged), shape_of(&single), "{name}");
        assert_eq!(merged.result.meta.endpoint, single.result.meta.endpoint);
        let want =
            servebench::metrics::compute(&merged.records, merged.metrics_options.clone().unwrap());
        assert_eq!(merged.result.inputs_per_s, want.inputs_per_s, "{name}");
        assert_eq!(merged.result.images, want.images, "{name}");
        if name == "emb" {
            assert!(merged.result.ttft.is_none() && merged.result.inputs_per_s.is_some());
        } else {
            assert_eq!(merged.result.images.as_ref().unwrap().images, 16);
        }
    }
}

/// Images from a dataset file (aiperf's single-turn JSON Lines, `image` / `images` fields)
/// of two sizes as base64 data URLs: each request carries the next ones in turn, the client
/// counts their vision tokens from their headers, and the server's prompt tokens agree
/// (text + vision); the report says so. A URL of another kind is refused with its line.
#[test]
fn images_from_a_dataset_file_are_sent_in_turn_and_counted() {
    use base64::Engine as _;
    use servebench::driver::images::{png_image, ImageSize, VisionPreprocessor};
    let server = server();
    let target = format!("http://{}", server.local_addr());
    let d = dir();
    let url = |w, h, seed| {
        format!(
            "data:image/png;base64,{}",
            base64::engine::general_purpose::STANDARD.encode(png_image(ImageSize::new(w, h), seed))
        )
    };
    let file = d.join("images.jsonl");
    std::fs::write(
        &file,
        format!(
            "{{\"text\": \"a\", \"image\": \"{}\"}}\n{{\"images\": [\"{}\"]}}\n",
            url(256, 256, 1),
            url(640, 480, 2)
        ),
    )
    .unwrap();
    let out = d.join("image-file.json");
    let run = bench(
        &target,
        &out,
        &[
            "--endpoint",
            "chat",
            "--images",
            "1",
            "--image-file",
            file.to_str().unwrap(),
            "--input-tokens",
            "32",
            "--output-tokens",
            "4",
            "--num-prompts",
            "6",
            "--request-rate",
            "20",
        ],
    );
    let q = VisionPreprocessor::QWEN3_5;
    let small = q.prompt_tokens(ImageSize::new(256, 256));
    let large = q.prompt_tokens(ImageSize::new(640, 480));
    for r in &run.records {
        let i = r.images.unwrap();
        // Request k carries entry k mod 2.
        let want = if r.id % 2 == 0 { small } else { large };
        assert_eq!(
            (i.count, i.vision_tokens, i.of_unknown_size),
            (1, want, 0),
            "{}",
            r.id
        );
    }
    // The server counted the same vision tokens: what it counted beyond them is the text,
    // of one length in every request.
    let text: std::collections::BTreeSet<u64> = run
        .records
        .iter()
        .map(|r| r.usage_prompt_tokens.unwrap() - r.images.unwrap().vision_tokens)
        .collect();
    assert_eq!(text.len(), 1, "{text:?}");
    assert!(*text.first().unwrap() >= 32);
    let f = run.result.images.as_ref().unwrap();
    assert_eq!(f.vision_tokens, 3 * (small + large));
    // A line of another URL kind is refused, naming its line.
    std::fs::write(&file, "{\"image\": \"ftp://host/x.png\"}\n").unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_servebench"))
        .args([
            "bench",
            "--target",
            &target,
            "--endpoint",
            "chat",
            "--images",
            "1",
        ])
        .arg("--image-file")
        .arg(&file)
        .args(["--input-tokens", "8", "--output-tokens", "2"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && err.contains("images.jsonl:1: image 0"),
        "{err}"
    );
}
