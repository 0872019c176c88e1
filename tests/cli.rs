//! The `servebench` binary: subcommands, the parse | render pipeline on the seed, exit codes
//! and error messages.
#![cfg(feature = "cli")]

use std::io::Write as _;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use servebench::profile::Profile;

const BIN: &str = env!("CARGO_BIN_EXE_servebench");
const SEED: &str = "tests/fixtures/seed.txt";

fn run(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().unwrap()
}

fn run_stdin(args: &[&str], input: &[u8]) -> Output {
    let mut child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

fn stdout(o: &Output) -> String {
    assert!(
        o.status.success(),
        "exit {:?}: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

/// A scratch file under cargo's per-test temporary directory.
fn scratch(name: &str, contents: &str) -> PathBuf {
    let p = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("cli-{name}"));
    std::fs::write(&p, contents).unwrap();
    p
}

/// The seed's blocks as text, found by their title and closing lines.
fn seed_blocks() -> Vec<String> {
    let seed = std::fs::read_to_string(SEED).unwrap();
    let mut blocks = Vec::new();
    let mut cur: Option<Vec<&str>> = None;
    for l in seed.lines() {
        if l.contains("Serving Benchmark Result") {
            cur = Some(vec![l]);
        } else if let Some(c) = cur.as_mut() {
            c.push(l);
            if l.len() == 50 && l.chars().all(|ch| ch == '=') {
                blocks.push(c.join("\n"));
                cur = None;
            }
        }
    }
    blocks
}

#[test]
fn parse_then_render_reproduces_the_seed_blocks() {
    let json = stdout(&run(&["parse", SEED]));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(
        (&v["format"], &v["version"]),
        (&"servebench-blocks".into(), &1.into())
    );
    let arr = v["blocks"].as_array().unwrap();
    assert_eq!(arr.len(), 15);
    assert_eq!(
        arr[6]["result"]["meta"]["label"],
        "Speculative Decoding && Quantization"
    );
    assert_eq!(arr[6]["result"]["meta"]["profile"]["total_requests"], 1000);
    assert_eq!(arr[0]["result"]["meta"]["engine"], "vLLM");
    // `servebench parse seed.txt | servebench render /dev/stdin`
    let rendered = stdout(&run_stdin(&["render", "/dev/stdin"], json.as_bytes()));
    let expected = seed_blocks().join("\n\n") + "\n";
    assert_eq!(rendered, expected);
    // `-` is stdin too, and parse reads stdin the same way.
    let again = stdout(&run_stdin(
        &["parse", "-", "--compact"],
        rendered.as_bytes(),
    ));
    assert_eq!(again.lines().count(), 1);
    let rendered2 = stdout(&run_stdin(&["render", "-"], again.as_bytes()));
    assert_eq!(rendered2, expected);
}

#[test]
fn render_single_result_in_both_styles() {
    let json = stdout(&run(&["parse", SEED, "--compact"]));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let one = scratch("one.json", &v["blocks"][1]["result"].to_string());
    let gp = stdout(&run(&["render", one.to_str().unwrap()]));
    assert_eq!(gp, seed_blocks()[1].clone() + "\n");
    // GPUStack's numbers are guidellm's: vLLM's labels ("Time per Output Token (excl. 1st
    // token)") would misdescribe them, so the vLLM style refuses, naming the rows.
    let o = run(&["render", one.to_str().unwrap(), "--style", "vllm"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(o.stdout.is_empty());
    assert!(
        err.contains("TPOT, ITL, Peak output token throughput"),
        "{err}"
    );
    assert!(
        err.contains("guidellm's TPOT includes the first token"),
        "{err}"
    );
    // A vLLM-convention result renders in both styles.
    let mut vllm = v["blocks"][1]["result"].clone();
    vllm["meta"]["convention"] = serde_json::json!("vllm");
    let one = scratch("one-vllm.json", &vllm.to_string());
    let vl = stdout(&run(&["render", one.to_str().unwrap(), "--style", "vllm"]));
    assert!(
        vl.contains("\nTotal token throughput (tok/s):          4995.66   \n")
            || vl.contains("\nTotal Token throughput (tok/s):          4995.66   \n"),
        "{vl}"
    );
    assert_ne!(vl, gp);
    // Without --style, a vLLM-convention result gets vLLM's labels.
    assert_eq!(stdout(&run(&["render", one.to_str().unwrap()])), vl);
    // The vLLM rendering parses back to the same throughput.
    let back = stdout(&run_stdin(&["parse", "-", "--compact"], vl.as_bytes()));
    let b: serde_json::Value = serde_json::from_str(&back).unwrap();
    assert_eq!(
        b["blocks"][0]["result"]["total_token_throughput_per_s"],
        4995.66
    );
}

#[test]
fn compare_text_and_json_inputs() {
    let blocks = seed_blocks();
    let base = scratch("base.txt", &format!("ShareGPT\n\n{}\n", blocks[7]));
    let cand = scratch("cand.txt", &format!("ShareGPT\n\n{}\n", blocks[8]));
    let out = stdout(&run(&[
        "compare",
        base.to_str().unwrap(),
        cand.to_str().unwrap(),
    ]));
    assert!(
        out.ends_with("\tTotal TPS: 9632.01 Mean TPOT(ms): 25.89\tTotal TPS: 10570.88 (+9.75%) Mean TPOT(ms): 24.71\n"),
        "{out}"
    );
    assert!(out.contains("ShareGPT Profile\t"));
    assert!(out
        .lines()
        .any(|l| l.starts_with("Total Token throughput (tok/s)")
            && l.ends_with("+9.75%     noise unknown")));
    // The same from JSON, markdown output.
    let json = stdout(&run(&["parse", cand.to_str().unwrap(), "--compact"]));
    let cand_json = scratch("cand.json", &json);
    let md = stdout(&run(&[
        "compare",
        base.to_str().unwrap(),
        cand_json.to_str().unwrap(),
        "--format",
        "markdown",
    ]));
    assert!(md.contains(
        "| Total TPS: 9632.01<br>Mean TPOT(ms): 25.89 | Total TPS: 10570.88 <span style=\"background-color:lightgreen;\">(+9.75%)</span><br>Mean TPOT(ms): 24.71 |"
    ), "{md}");
}

#[test]
fn compare_success_rate_uses_the_profile() {
    // Without context the MTP block's total is the baseline's 1000 requests.
    let blocks = seed_blocks();
    let base = scratch("sr-base.txt", &blocks[0]);
    let mtp = scratch("sr-mtp.txt", &blocks[6]);
    let (b, m) = (base.to_str().unwrap(), mtp.to_str().unwrap());
    let out = stdout(&run(&["compare", b, m]));
    assert!(out.contains("Total TPS: 15514.15 (Success rate: 51.6%, optimization skipped)"));
    // --profile long-context says 100 requests were sent: 516 of 100 is not a failure.
    let out = stdout(&run(&["compare", b, m, "--profile", "long-context"]));
    assert!(out.contains("Total TPS: 15514.15 (+61.07%)"), "{out}");
    // Blocks picked out of the whole seed.
    let out = stdout(&run(&[
        "compare",
        SEED,
        SEED,
        "--base-block",
        "1",
        "--candidate-block",
        "7",
    ]));
    assert!(out.contains("(Success rate: 51.6%, optimization skipped)"));
    // The profile stored in a JSON result does what --profile does.
    let json = stdout(&run(&["parse", m, "--compact"]));
    let mut v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let profile = servebench::profile::Profile::preset("long-context").unwrap();
    v["blocks"][0]["result"]["meta"]["profile"] = serde_json::to_value(&profile).unwrap();
    let stored = scratch("sr-mtp-profile.json", &v.to_string());
    let out = stdout(&run(&["compare", b, stored.to_str().unwrap()]));
    assert!(out.contains("Total TPS: 15514.15 (+61.07%)"), "{out}");
}

#[test]
fn bad_input_exits_1_naming_file_and_line() {
    let blocks = seed_blocks();
    let broken = blocks[0].replace("Mean TPOT (ms):", "Mean TOPT (ms):");
    let f = scratch("broken.txt", &format!("intro\n\n{broken}\n"));
    let o = run(&["parse", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(e.contains("cli-broken.txt"), "{e}");
    assert!(e.contains("line 25"), "{e}");
    assert!(o.stdout.is_empty());

    let j = scratch(
        "broken.json",
        "[\n  {\"schema_version\": 1,\n   \"successful_requests\": \"many\"}\n]",
    );
    let o = run(&["render", j.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(
        e.contains("cli-broken.json: ") && e.contains("line 3, column"),
        "{e}"
    );

    // Version 2 (intervals) is current, 1 still read; a future version is refused.
    let v3 = scratch("v3.json", "{\"schema_version\": 3}");
    let o = run(&["render", v3.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("unsupported servebench schema: 3"));

    let o = run(&["parse", "no/such/file.txt"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("no/such/file.txt: cannot read"));

    let empty = scratch("empty.txt", "no blocks here\n");
    let o = run(&["render", empty.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));

    let o = run(&["compare", SEED, SEED]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("holds 15 results"));
    let o = run(&[
        "compare",
        SEED,
        SEED,
        "--base-block",
        "16",
        "--candidate-block",
        "1",
    ]);
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn bad_json_names_the_json_path_and_checks_the_version_first() {
    let j = scratch(
        "path.json",
        "[\n  {\"schema_version\": 1},\n  {\"schema_version\": 1, \"ttft\": {\"percentiles\": [{\"p\": 99, \"value\": \"x\"}]}}\n]",
    );
    let o = run(&["render", j.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(e.contains("cli-path.json: "), "{e}");
    assert!(e.contains("line 3, column"), "{e}");
    assert!(e.contains("$[1].ttft.percentiles[0].value"), "{e}");

    // A result from a future servebench: the version is what is wrong, not a field's type.
    let v9 = scratch(
        "v9.json",
        "{\"schema_version\": 9, \"successful_requests\": \"renamed\"}",
    );
    let o = run(&["parse", v9.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(e.contains("unsupported servebench schema: 9"), "{e}");
}

#[test]
fn binary_input_names_the_line_of_the_first_bad_byte() {
    let f = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli-binary.txt");
    std::fs::write(&f, b"first line\nsecond \xff\xfe line\n").unwrap();
    let o = run(&["parse", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(e.contains("line 2"), "{e}");
    assert!(e.contains("not UTF-8"), "{e}");
}

#[test]
fn usage_errors_exit_2() {
    for args in [
        &[][..],
        &["parse"][..],
        &["render", "x.json", "--style", "csv"][..],
        &["compare", SEED][..],
        &["compare", SEED, SEED, "--profile", "nope"][..],
        &["profiles", "--guidellm", "http://x"][..],
        &["profiles", "--syntax", "run"][..],
        &["frobnicate"][..],
    ] {
        let o = run(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
    }
    assert_eq!(run(&["--version"]).status.code(), Some(0));
}

#[test]
fn profiles_list_as_the_seed_prints_them() {
    let out = stdout(&run(&["profiles"]));
    let seed = std::fs::read_to_string(SEED).unwrap();
    // The seed's "Benchmark Profiles" section is the first four presets, verbatim.
    let four: Vec<&str> = out.split("\n\nLatency\n").collect();
    assert_eq!(four.len(), 2);
    assert!(seed.contains(&format!("Benchmark Profiles\n\n{}\n\nOpen-Source", four[0])));
    assert!(four[1].contains("request_rate: 1\ntotal_requests: 100"));

    let out = stdout(&run(&[
        "profiles",
        "throughput",
        "--guidellm",
        "http://h:8000",
        "/m",
    ]));
    let p = Profile::preset("throughput").unwrap();
    assert_eq!(
        out,
        format!(
            "Throughput\n\n{}\n",
            p.guidellm_command("http://h:8000", "/m")
        )
    );
    let out = stdout(&run(&[
        "profiles",
        "latency",
        "--guidellm",
        "http://h:8000",
        "/m",
        "--syntax",
        "run",
    ]));
    let p = Profile::preset("latency").unwrap();
    assert_eq!(
        out,
        format!(
            "Latency\n\n{}\n",
            p.guidellm_run_command("http://h:8000", "/m")
        )
    );
}

#[test]
fn compare_warns_when_conventions_differ() {
    let vllm = "tests/fixtures/vllm/vllm_bench_serve_2026-07_ascend_qwen3vl_report.txt";
    let out = stdout(&run(&["compare", vllm, SEED, "--candidate-block", "1"]));
    assert!(out.contains(
        "Note: the baseline follows the vllm convention and the candidate the guidellm convention"
    ));
    let same = stdout(&run(&["compare", vllm, vllm]));
    assert!(!same.contains("Note:"));
    assert!(same.contains("(+0.00%)"));
}

/// Files servebench writes (atomically, through a temporary file) get the mode the umask
/// gives any new file: under 022 a teammate, a CI step or a web server can read them
/// (0644); under 077 they stay private (0600). They were 0600 whatever the umask.
#[cfg(all(unix, feature = "plot"))]
#[test]
fn written_files_honour_the_umask() {
    use std::os::unix::fs::PermissionsExt as _;
    let run_file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/accuracy-clients/servebench-run.json"
    );
    for (umask, want) in [("022", 0o644), ("077", 0o600), ("002", 0o664)] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("charts");
        let o = Command::new("sh")
            .arg("-c")
            .arg(format!(
                "umask {umask} && exec \"$0\" plot \"$1\" --out \"$2\""
            ))
            .args([BIN, run_file, out.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let mut seen = 0;
        for e in std::fs::read_dir(&out).unwrap() {
            let p = e.unwrap().path();
            let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, want, "umask {umask}: {} is {mode:o}", p.display());
            seen += 1;
        }
        assert!(seen >= 2 && out.join("index.html").exists(), "{seen} files");
    }
}
