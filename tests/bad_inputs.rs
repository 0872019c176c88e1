//! Bad inputs, table-driven, through the built binaries (`servebench` and the
//! `h200_server` example): missing, empty, binary, truncated, wrong tool's file, BOM, CRLF,
//! nan, inf, negative, huge, out-of-range flags, unreachable and misbehaving servers.
//!
//! Each case states the documented exit status (0 success, 1 bad input, 2 usage, 3 lint
//! findings) and the words the message must hold (the file, the line, the JSON path, the
//! column or the flag). Every case also checks: no panic, and the input file unchanged.
//! Cases that must fail print nothing on stdout (nothing half-written passes for output);
//! the few that succeed on odd-but-valid input (a BOM, CRLF, a `nan` kept) check stdout.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_servebench");

fn fixture(rel: &str) -> Vec<u8> {
    std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(rel),
    )
    .unwrap()
}

fn scratch_dir() -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bad_inputs");
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// One row of the table.
struct Case {
    /// Also the scratch file's name.
    name: &'static str,
    /// The file's bytes (`None`: no file is written; `{f}` then names a missing one).
    file: Option<Vec<u8>>,
    /// Arguments; `{f}` is replaced by the file's path.
    args: Vec<String>,
    /// Expected exit status.
    code: i32,
    /// Words stderr must hold (`{f}` → the path).
    stderr_has: Vec<&'static str>,
    /// Words stdout must hold; empty: stdout must be empty.
    stdout_has: Vec<&'static str>,
}

fn case(name: &'static str, file: Option<Vec<u8>>, args: &[&str], code: i32) -> Case {
    Case {
        name,
        file,
        args: args.iter().map(|s| s.to_string()).collect(),
        code,
        stderr_has: Vec::new(),
        stdout_has: Vec::new(),
    }
}

impl Case {
    fn err(mut self, words: &[&'static str]) -> Self {
        self.stderr_has.extend(words);
        self
    }
    fn out(mut self, words: &[&'static str]) -> Self {
        self.stdout_has.extend(words);
        self
    }
}

fn replace(bytes: &[u8], from: &str, to: &str) -> Vec<u8> {
    let s = String::from_utf8(bytes.to_vec()).unwrap();
    assert!(s.contains(from), "fixture lacks {from:?}");
    s.replacen(from, to, 1).into_bytes()
}

/// The first "Serving Benchmark Result" block of the seed (with its line ending).
fn seed_block() -> String {
    let seed = String::from_utf8(fixture("seed.txt")).unwrap();
    let start = seed.find("============ Serving Benchmark Result").unwrap();
    let end = start
        + seed[start..]
            .find("\n==================================================")
            .unwrap();
    format!("{}\n", &seed[start..end + 51])
}

fn run_case(c: &Case, dir: &Path) -> Vec<String> {
    let path = dir.join(c.name);
    let _ = std::fs::remove_file(&path);
    if let Some(bytes) = &c.file {
        std::fs::write(&path, bytes).unwrap();
    }
    let p = path.to_str().unwrap();
    let args: Vec<String> = c.args.iter().map(|a| a.replace("{f}", p)).collect();
    let out = Command::new(BIN)
        .args(&args)
        .env_remove("OPENAI_API_KEY")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    let mut problems = Vec::new();
    let mut bad = |what: String| problems.push(format!("{}: {what}\n  stderr: {stderr}", c.name));
    if out.status.code() != Some(c.code) {
        bad(format!("exit {:?}, expected {}", out.status.code(), c.code));
    }
    if stderr.contains("panicked") || stderr.contains("RUST_BACKTRACE") {
        bad("panicked".into());
    }
    for w in &c.stderr_has {
        let w = w.replace("{f}", p);
        if !stderr.contains(&w) {
            bad(format!("stderr lacks {w:?}"));
        }
    }
    if c.stdout_has.is_empty() {
        if !stdout.is_empty() {
            bad(format!("stdout not empty: {stdout:.200}"));
        }
    } else {
        for w in &c.stdout_has {
            if !stdout.contains(w) {
                bad(format!("stdout lacks {w:?}: {stdout:.300}"));
            }
        }
    }
    if let Some(bytes) = &c.file {
        if std::fs::read(&path).ok().as_ref() != Some(bytes) {
            bad("the input file was changed".into());
        }
    }
    problems
}

/// A server that answers every request with `reply` (a misbehaving "OpenAI" server), for
/// `n` connections.
fn misbehaving_server(reply: &'static [u8], n: usize) -> String {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    std::thread::spawn(move || {
        for _ in 0..n {
            let Ok((mut c, _)) = l.accept() else { return };
            let mut buf = [0u8; 4096];
            let _ = c.read(&mut buf);
            let _ = c.write_all(reply);
        }
    });
    format!("http://{addr}")
}

/// A port with nothing listening (bound, then closed).
fn closed_port() -> String {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let a = l.local_addr().unwrap();
    drop(l);
    format!("http://{a}")
}

#[test]
fn every_bad_input_gets_a_typed_error_and_its_exit_status() {
    let dir = scratch_dir();
    let block = seed_block();
    let guidellm_csv = fixture("guidellm-0.8.1/benchmarks.csv");
    let guidellm_json = fixture("guidellm-0.8.1/benchmarks.json");
    let vllm = fixture("vllm-0.33/result.json");
    let sglang = fixture("sglang-0.5.23/results.jsonl");
    let aiperf_json = fixture("aiperf/profile_export_aiperf.json");
    let aiperf_csv = fixture("aiperf/profile_export_aiperf.csv");
    let aiperf_jsonl = fixture("aiperf/profile_export.jsonl");
    let small_vllm = |extra: &str| {
        format!(
            r#"{{"date": "20261203-000000", "backend": "vllm", "completed": 3, "failed": 0, "duration": 1.5, "median_ttft_ms": 12.0, {extra}}}"#
        )
        .into_bytes()
    };
    let cut_block: String = block.lines().take(10).collect::<Vec<_>>().join("\n") + "\n";
    let crlf = block.replace('\n', "\r\n");
    let servebench_json =
        br#"[{"schema_version": 1, "successful_requests": 3, "duration_ms": "fast"}]"#;
    let unreachable = closed_port();
    let garbage = misbehaving_server(b"HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\nnot json", 4);
    let cut_http = misbehaving_server(
        b"HTTP/1.1 200 OK\r\nContent-Length: 500\r\n\r\n{\"data\":",
        4,
    );
    let bench = |target: &str| {
        vec![
            "bench".to_string(),
            "--target".into(),
            target.to_string(),
            "--input-tokens".into(),
            "8".into(),
            "--output-tokens".into(),
            "4".into(),
            "--max-requests".into(),
            "2".into(),
        ]
    };

    // guidellm 0.8.1's real file as `--sample-requests 0` leaves it: every request list
    // empty, the aggregates kept.
    let unsampled_guidellm = {
        let mut v: serde_json::Value = serde_json::from_slice(&guidellm_json).unwrap();
        for b in v["benchmarks"].as_array_mut().unwrap() {
            for list in ["successful", "errored", "incomplete"] {
                b["requests"][list] = serde_json::json!([]);
            }
        }
        serde_json::to_vec(&v).unwrap()
    };
    let mut cases = vec![
        // A recomputation with nothing to recompute from: exit 1 naming why, no zeros.
        case(
            "unsampled-guidellm.json",
            Some(unsampled_guidellm.clone()),
            &["report", "{f}", "--convention", "vllm"],
            1,
        )
        .err(&["{f}", "no per-request records", "--sample-requests"]),
        case(
            "unsampled-guidellm.json",
            Some(unsampled_guidellm),
            &["report", "{f}", "--convention", "guidellm"],
            1,
        )
        .err(&["{f}", "no per-request records", "guidellm saved no samples"]),
        // Missing files: every verb.
        case("missing", None, &["parse", "{f}"], 1).err(&["{f}", "cannot read"]),
        case("missing", None, &["render", "{f}"], 1).err(&["{f}", "cannot read"]),
        case("missing", None, &["report", "{f}"], 1).err(&["{f}", "cannot read"]),
        case("missing", None, &["lint", "{f}"], 1).err(&["{f}", "cannot read"]),
        case("missing", None, &["compare", "{f}", "{f}"], 1).err(&["{f}", "cannot read"]),
        // Empty and blank.
        case("empty.txt", Some(Vec::new()), &["parse", "{f}"], 1).err(&["{f}", "empty input"]),
        case(
            "blank.json",
            Some(b"  \n\n".to_vec()),
            &["report", "{f}"],
            1,
        )
        .err(&["{f}", "empty input"]),
        case("empty.csv", Some(Vec::new()), &["lint", "{f}"], 1).err(&["{f}", "empty input"]),
        // Binary.
        case(
            "nul.bin",
            Some(b"\x00\x01\x02abc".to_vec()),
            &["render", "{f}"],
            1,
        )
        .err(&["{f}", "line 1", "binary data"]),
        case(
            "latin1.txt",
            Some(b"first line\nsecond \xe9t\xe9\n".to_vec()),
            &["report", "{f}"],
            1,
        )
        .err(&["{f}", "line 2", "not UTF-8"]),
        // Truncated files of each tool: the line (and JSON path) where it stops.
        case(
            "cut-guidellm.json",
            Some(guidellm_json[..guidellm_json.len() / 2].to_vec()),
            &["lint", "{f}"],
            1,
        )
        .err(&["{f}", "guidellm report (JSON)", "line ", "$.benchmarks[0]"]),
        case(
            "cut-vllm.json",
            Some(vllm[..vllm.len() - 40].to_vec()),
            &["report", "{f}"],
            1,
        )
        .err(&["{f}", "vLLM result", "line 1, column"]),
        case(
            "cut-aiperf.jsonl",
            Some(aiperf_jsonl[..aiperf_jsonl.len() - 100].to_vec()),
            &["report", "{f}"],
            1,
        )
        .err(&["{f}", "aiperf per-request export", "line 40"]),
        case(
            "cut-block.txt",
            Some(cut_block.into_bytes()),
            &["parse", "{f}"],
            1,
        )
        .err(&["{f}", "line 1: block has no closing", "reached line 10)"]),
        // Wrong tool's file, unknown formats.
        case(
            "config.json",
            Some(br#"{"foo": 1}"#.to_vec()),
            &["render", "{f}"],
            1,
        )
        .err(&["{f}", "not a format servebench reads", "{\"foo\": 1}"]),
        case(
            "table.csv",
            Some(b"a,b\n1,2\n".to_vec()),
            &["compare", "{f}", "{f}"],
            1,
        )
        .err(&["{f}", "not a format servebench reads"]),
        case(
            "notes.txt",
            Some(b"just some notes\n".to_vec()),
            &["parse", "{f}"],
            1,
        )
        .err(&["{f}", "not a format servebench reads"]),
        // Bad values, naming the field.
        case(
            "bad-cell.csv",
            Some(replace(
                &aiperf_csv,
                "Time to First Token (ms),18.38,",
                "Time to First Token (ms),abc,",
            )),
            &["report", "{f}"],
            1,
        )
        .err(&[
            "{f}",
            "aiperf aggregate export (CSV)",
            "line 42",
            "column `avg`",
            "abc",
        ]),
        case(
            "bad-guidellm.csv",
            // Time to First Token / Successful ms / Mean of the benchmark row.
            Some(csv_with_cell(&guidellm_csv, 3, 31, "fast")),
            &["lint", "{f}"],
            1,
        )
        .err(&[
            "{f}",
            "guidellm report (CSV)",
            "line 4",
            "Time to First Token / Successful ms / Mean",
            "`fast`",
        ]),
        case(
            "bad-yaml.yaml",
            Some(b"benchmarks:\n- config: [unclosed\nmetadata:\n  version: 2\n".to_vec()),
            &["report", "{f}"],
            1,
        )
        .err(&["{f}", "guidellm report (YAML)", "line "]),
        case(
            "bad-field.json",
            Some(servebench_json.to_vec()),
            &["render", "{f}"],
            1,
        )
        .err(&["{f}", "$[0].duration_ms", "fast"]),
        case(
            "future.json",
            Some(br#"{"schema_version": 9, "meta": {}}"#.to_vec()),
            &["parse", "{f}"],
            1,
        )
        .err(&["{f}", "unsupported servebench schema: 9"]),
        case(
            "aiperf-negative.jsonl",
            Some(replace(
                &aiperf_jsonl,
                r#""time_to_first_token":{"value":"#,
                r#""time_to_first_token":{"value":-"#,
            )),
            &["lint", "{f}"],
            1,
        )
        .err(&[
            "{f}",
            "line 1: $.metrics.time_to_first_token.value",
            "negative",
        ]),
        // nan / inf / negative / huge in vLLM files.
        case(
            "vllm-neg.json",
            Some(small_vllm(r#""mean_ttft_ms": -3.0"#)),
            &["lint", "{f}"],
            1,
        )
        .err(&["{f}", "$.mean_ttft_ms", "negative"]),
        case(
            "vllm-inf.json",
            Some(small_vllm(r#""p99_ttft_ms": Infinity"#)),
            &["report", "{f}"],
            1,
        )
        .err(&["{f}", "$.p99_ttft_ms", "non-finite"]),
        case(
            "vllm-huge.json",
            Some(small_vllm(r#""total_input_tokens": 1e300"#)),
            &["report", "{f}"],
            1,
        )
        .err(&["{f}", "$.total_input_tokens", "count"]),
        case(
            "vllm-nan.json",
            Some(small_vllm(r#""mean_ttft_ms": NaN"#)),
            &["report", "{f}"],
            0,
        )
        .out(&["Mean TTFT (ms):                          nan"]),
        case(
            "vllm-nan.json",
            Some(small_vllm(r#""mean_ttft_ms": NaN"#)),
            &["lint", "{f}"],
            3,
        )
        .out(&["error[invalid-value]: mean TTFT (ms) is NaN"]),
        // nan / inf / negative in a text report: kept, and lint flags them.
        case(
            "inf-ttft.txt",
            Some(replace_mean_ttft(&block, "inf").into_bytes()),
            &["lint", "{f}"],
            3,
        )
        .out(&["invalid-value", "TTFT (ms) is infinite"]),
        case(
            "neg-ttft.txt",
            Some(replace_mean_ttft(&block, "-5.00").into_bytes()),
            &["lint", "{f}"],
            3,
        )
        .out(&["invalid-value", "TTFT (ms) is negative"]),
        // BOM and CRLF: read, not hidden.
        case(
            "bom.txt",
            Some([b"\xEF\xBB\xBF".as_slice(), block.as_bytes()].concat()),
            &["parse", "{f}"],
            0,
        )
        .out(&["\"schema_version\": 2"]),
        case(
            "crlf.txt",
            Some(crlf.clone().into_bytes()),
            &["render", "{f}"],
            0,
        )
        .out(&["Serving Benchmark Result"]),
        // Not mistaken for another tool.
        case(
            "aiperf.json",
            Some(aiperf_json.clone()),
            &["report", "{f}"],
            0,
        )
        .out(&["aiperf", "Mean TTFT (ms):"]),
        // Recomputations the file cannot support.
        case(
            "sglang.jsonl",
            Some(sglang.clone()),
            &["report", "{f}", "--convention", "guidellm"],
            1,
        )
        .err(&[
            "{f} (line 1)",
            "cannot recompute",
            "send time",
            "{f} (line 2)",
            "--output-details",
        ]),
        case(
            "sglang.jsonl",
            Some(sglang.clone()),
            &["report", "{f}", "--convention", "vllm"],
            1,
        )
        .err(&[
            "1 of 2 runs not reported",
            "{f} (line 2)",
            "--output-details",
        ])
        .out(&["vllm-chat (line 1)", "Mean TPOT (ms):"]),
        case(
            "aiperf.csv",
            Some(aiperf_csv.clone()),
            &["report", "{f}", "--convention", "vllm"],
            1,
        )
        .err(&["{f}", "profile_export.jsonl"]),
        // Out-of-range and malformed flags: usage errors naming the flag.
        case(
            "vllm.json",
            Some(vllm.clone()),
            &[
                "report",
                "{f}",
                "--convention",
                "vllm",
                "--percentiles",
                "150",
            ],
            2,
        )
        .err(&["--percentiles"]),
        case(
            "vllm.json",
            Some(vllm.clone()),
            &[
                "report",
                "{f}",
                "--convention",
                "vllm",
                "--percentiles",
                "-1",
            ],
            2,
        )
        .err(&["--percentiles"]),
        // (`--percentiles` alone recomputes under the file's convention: not an error; a
        // bad SLO still is.)
        case(
            "vllm.json",
            Some(vllm.clone()),
            &["report", "{f}", "--goodput", "ttft"],
            2,
        )
        .err(&["--goodput"]),
        case(
            "vllm.json",
            Some(vllm.clone()),
            &["lint", "{f}", "--client-cap", "many"],
            2,
        )
        .err(&["--client-cap"]),
        case(
            "vllm.json",
            Some(vllm.clone()),
            &["compare", "{f}", "{f}", "--base-block", "0"],
            2,
        )
        .err(&["--base-block"]),
        case(
            "vllm.json",
            Some(vllm.clone()),
            &["compare", "{f}", "{f}", "--base-block", "9"],
            1,
        )
        .err(&["{f}", "block 9 requested, the input holds 1"]),
        case(
            "vllm.json",
            Some(vllm.clone()),
            &["render", "{f}", "--style", "xml"],
            2,
        )
        .err(&["--style"]),
    ];
    // bench: unreachable and misbehaving servers, out-of-range flags.
    let mut b = |name: &'static str, args: Vec<String>, code: i32, err: &[&'static str]| {
        cases.push(Case {
            name,
            file: None,
            args,
            code,
            stderr_has: err.to_vec(),
            stdout_has: Vec::new(),
        });
    };
    b(
        "bench-unreachable",
        bench(&unreachable),
        1,
        &["connect to 127.0.0.1:", "refused"],
    );
    b("bench-garbage", bench(&garbage), 1, &["/v1/models"]);
    b("bench-cut", bench(&cut_http), 1, &["/v1/models"]);
    let mut zero = bench(&unreachable);
    zero[8] = "0".into();
    b("bench-zero-requests", zero, 2, &["--max-requests"]);
    let mut neg = bench(&unreachable);
    neg.extend(["--rate".into(), "-1".into()]);
    b("bench-negative-rate", neg, 2, &["--rate"]);
    let mut bad_url = bench("not a url");
    bad_url.truncate(3);
    bad_url.extend([
        "--input-tokens".into(),
        "8".into(),
        "--output-tokens".into(),
        "4".into(),
    ]);
    b("bench-bad-url", bad_url, 1, &["not a url"]);

    assert!(cases.len() >= 40, "{} cases", cases.len());
    let problems: Vec<String> = cases.iter().flat_map(|c| run_case(c, &dir)).collect();
    assert!(
        problems.is_empty(),
        "{} of {} cases:\n{}",
        problems.len(),
        cases.len(),
        problems.join("\n")
    );
}

/// The example server's bad flags: usage errors (exit 2) on stderr naming the flag.
#[test]
fn example_server_rejects_bad_flags() {
    let bin = Path::new(BIN)
        .parent()
        .unwrap()
        .join("examples/h200_server");
    if !bin.exists() {
        // `cargo test` builds the example (test = true in Cargo.toml); a bare
        // `--test bad_inputs` may not.
        eprintln!("h200_server not built; skipped");
        return;
    }
    for (args, needle) in [
        (&["--serve", "nope"][..], "--serve"),
        (&["--serve", "127.0.0.1:0", "--speed", "-1"][..], "--speed"),
        (&["--serve", "127.0.0.1:0", "--speed", "inf"][..], "--speed"),
        (&["--bogus"][..], "unexpected argument '--bogus'"),
        (
            &["--serve", "127.0.0.1:0", "--fault", "500:x"][..],
            "--fault",
        ),
    ] {
        let o = Command::new(&bin).args(args).output().unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}

/// A text block with its mean TTFT value replaced (keeping the value column).
fn replace_mean_ttft(block: &str, value: &str) -> String {
    let line = block
        .lines()
        .find(|l| l.starts_with("Mean TTFT (ms):"))
        .unwrap();
    let label = &line[..41];
    block.replacen(line, &format!("{label}{value}"), 1)
}

/// `bytes` (a CSV file) with cell `col` of record `row` (0-based) replaced.
fn csv_with_cell(bytes: &[u8], row: usize, col: usize, value: &str) -> Vec<u8> {
    let mut r = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(bytes);
    let mut w = csv::Writer::from_writer(Vec::new());
    for (i, rec) in r.records().enumerate() {
        let mut cells: Vec<String> = rec.unwrap().iter().map(str::to_string).collect();
        if i == row {
            cells[col] = value.to_string();
        }
        w.write_record(&cells).unwrap();
    }
    w.into_inner().unwrap()
}
