//! The parallel guidellm parse (large files) gives exactly what the sequential one gives,
//! and falls back to it — with its errors — on anything unexpected.

use std::path::Path;

use serde_json::Value;
use servebench::import::guidellm::{self, GuidellmReport};
use servebench::import::{ImportError, JsonErrorKind};

fn fixture_bytes(rel: &str) -> Vec<u8> {
    std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(rel),
    )
    .expect("fixture")
}

fn fixture(rel: &str) -> Value {
    serde_json::from_slice(&fixture_bytes(rel)).expect("fixture parses")
}

fn same(a: &Result<GuidellmReport, ImportError>, b: &Result<GuidellmReport, ImportError>) {
    match (a, b) {
        (Ok(x), Ok(y)) => assert!(x == y, "reports differ"),
        (Err(x), Err(y)) => assert_eq!(format!("{x:?}"), format!("{y:?}")),
        (x, y) => panic!(
            "one side failed: {:?} vs {:?}",
            x.as_ref().err(),
            y.as_ref().err()
        ),
    }
}

/// Checks `from_slice` and the parallel parse (2 and 3 threads) against the sequential
/// parse; `true` when the parallel parse applied on 2 threads.
fn check(bytes: &[u8]) -> bool {
    let seq = guidellm::from_slice_sequential(bytes);
    same(&guidellm::from_slice(bytes), &seq);
    let mut applied = false;
    for threads in [3, 2] {
        let par = guidellm::from_slice_parallel(bytes, threads);
        if let Some(par) = &par {
            same(par, &seq);
        }
        applied = par.is_some();
    }
    applied
}

/// A report of `benchmarks` benchmarks, each the errors fixture's benchmark (successful,
/// errored and incomplete requests) with every list repeated `copies` times, after the
/// constant-rate fixture's benchmark with its list repeated likewise.
fn big_report(copies: usize, benchmarks: usize) -> Value {
    let mut doc = fixture("guidellm/constant_rate20.json");
    let errors = fixture("guidellm/errors.json")["benchmarks"][0].clone();
    let repeat = |b: &mut Value| {
        for key in ["successful", "errored", "incomplete"] {
            if let Some(list) = b["requests"][key].as_array_mut() {
                let one = list.clone();
                for _ in 1..copies {
                    list.extend(one.iter().cloned());
                }
            }
        }
    };
    let list = doc["benchmarks"].as_array_mut().expect("benchmarks");
    repeat(&mut list[0]);
    for _ in 0..benchmarks {
        let mut b = errors.clone();
        repeat(&mut b);
        list.push(b);
    }
    doc
}

/// `v` the way Python's `json.dumps` writes guidellm's reports: `", "` and `": "`
/// separators, `type_` first in every object.
fn python_json(v: &Value) -> String {
    fn write(v: &Value, out: &mut String) {
        match v {
            Value::Array(a) => {
                out.push('[');
                for (i, x) in a.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    write(x, out);
                }
                out.push(']');
            }
            Value::Object(o) => {
                out.push('{');
                let first = o.get_key_value("type_");
                let rest = o.iter().filter(|(k, _)| k.as_str() != "type_");
                for (i, (k, x)) in first.into_iter().chain(rest).enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    out.push_str(&serde_json::to_string(k).unwrap());
                    out.push_str(": ");
                    write(x, out);
                }
                out.push('}');
            }
            other => out.push_str(&serde_json::to_string(other).unwrap()),
        }
    }
    let mut out = String::new();
    write(v, &mut out);
    out
}

/// The three layouts of one document: compact, pretty-printed, Python's.
fn layouts(v: &Value) -> [Vec<u8>; 3] {
    [
        serde_json::to_vec(v).unwrap(),
        serde_json::to_vec_pretty(v).unwrap(),
        python_json(v).into_bytes(),
    ]
}

#[test]
fn fixtures_parse_the_same_in_parallel() {
    for rel in [
        "guidellm/constant_rate20.json",
        "guidellm/errors.json",
        "guidellm-legacy/benchmarks_stripped.json",
    ] {
        let bytes = fixture_bytes(rel);
        assert!(check(&bytes), "{rel}: the parallel parse applies");
        for layout in layouts(&fixture(rel)) {
            assert!(check(&layout), "{rel}: the parallel parse applies");
        }
    }
}

#[test]
fn multi_megabyte_reports_parse_the_same_in_parallel() {
    let doc = big_report(4, 2);
    for bytes in layouts(&doc) {
        assert!(bytes.len() > 3 << 20, "{} bytes", bytes.len());
        assert!(check(&bytes), "the parallel parse applies");
        let report = guidellm::from_slice(&bytes).unwrap();
        assert_eq!(report.benchmarks.len(), 3);
        assert_eq!(report.benchmarks[0].records.len(), 60 * 4);
        let c = report.benchmarks[2].counts.listed;
        assert_eq!(
            (c.successful, c.errored, c.incomplete),
            (48 * 4, 10 * 4, 23 * 4)
        );
    }
}

#[test]
fn empty_and_null_lists_parse_the_same_in_parallel() {
    let mut doc = big_report(2, 1);
    doc["benchmarks"][1]["requests"]["errored"] = Value::Array(Vec::new());
    doc["benchmarks"][1]["requests"]["incomplete"] = Value::Null;
    for bytes in layouts(&doc) {
        assert!(check(&bytes));
    }
}

/// The compact and the Python layout of `doc` after `edit` on its text.
fn edited(doc: &Value, edit: impl Fn(&str) -> String) -> Vec<Vec<u8>> {
    let compact = serde_json::to_string(doc).unwrap();
    let python = python_json(doc);
    [compact, python]
        .iter()
        .map(|t| {
            let e = edit(t);
            assert_ne!(&e, t, "the edit applies");
            e.into_bytes()
        })
        .collect()
}

#[test]
fn a_list_key_inside_a_request_is_not_a_list_start() {
    // A request with its own `"successful": [...]` member: the parallel parse still applies
    // (the inner match lies inside a list), and reads the same.
    let mut doc = big_report(2, 1);
    doc["benchmarks"][1]["requests"]["successful"][3]["extra"] =
        serde_json::json!({"successful": [{"type_": "generative_request_stats"}], "errored": []});
    for bytes in layouts(&doc) {
        assert!(check(&bytes));
    }
}

#[test]
fn a_list_key_outside_the_request_lists_falls_back() {
    let mut doc = big_report(2, 1);
    // Ignored by the importer: the placeholder would never be read.
    doc["config"]["successful"] = serde_json::json!([{"type_": "generative_request_stats"}]);
    for bytes in layouts(&doc) {
        assert!(!check(&bytes), "falls back");
    }
    // Read as a distribution: a type error, the same as the sequential one.
    let mut doc = big_report(2, 1);
    doc["benchmarks"][0]["metrics"]["request_latency"]["successful"] =
        serde_json::json!([{"mean": 1.0}]);
    for bytes in layouts(&doc) {
        assert!(!check(&bytes), "falls back");
        assert!(guidellm::from_slice(&bytes).is_err());
    }
}

#[test]
fn a_list_of_strings_falls_back() {
    // `["0"]` is what the placeholder looks like: a real one is not mistaken for it.
    let mut doc = big_report(2, 1);
    doc["benchmarks"][1]["requests"]["errored"] = serde_json::json!(["0"]);
    for bytes in layouts(&doc) {
        assert!(!check(&bytes), "falls back");
        assert!(guidellm::from_slice(&bytes).is_err());
    }
}

#[test]
fn truncated_files_fall_back_with_the_sequential_error() {
    let doc = big_report(3, 1);
    for bytes in layouts(&doc) {
        for cut in [bytes.len() / 3, bytes.len() / 2 + 7, bytes.len() - 2] {
            let part = &bytes[..cut];
            assert!(!check(part), "falls back");
            let err = guidellm::from_slice(part).unwrap_err();
            assert!(
                matches!(
                    err,
                    ImportError::Json {
                        kind: JsonErrorKind::Truncated,
                        ..
                    }
                ),
                "{err}"
            );
        }
    }
}

#[test]
fn bare_nan_falls_back_and_reads_as_absent() {
    let doc = big_report(2, 1);
    for bytes in edited(&doc, |t| {
        let at = t.len() / 2;
        let i = at + t[at..].find("\"prompt_tokens\":").unwrap();
        let j = i + t[i..].find([',', '}']).unwrap();
        format!("{}\"prompt_tokens\": NaN{}", &t[..i], &t[j..])
    }) {
        assert!(!check(&bytes), "falls back");
        assert!(guidellm::from_slice(&bytes).is_ok());
    }
    // Before the lists (where the benchmark's aggregates are).
    for bytes in edited(&doc, |t| {
        t.replacen("\"slo_attainment\":null", "\"slo_attainment\":NaN", 1)
            .replacen("\"slo_attainment\": null", "\"slo_attainment\": NaN", 1)
    }) {
        assert!(!check(&bytes), "falls back");
        assert!(guidellm::from_slice(&bytes).is_ok());
    }
}

#[test]
fn syntax_and_type_errors_in_requests_fall_back_with_the_sequential_error() {
    let doc = big_report(2, 1);
    // A doubled comma in the middle of a list, a trailing comma at the end of the file's
    // last list.
    for bytes in edited(&doc, |t| {
        let i = t.len() / 2;
        let i = i + t[i..].find("},").unwrap() + 1;
        format!("{},{}", &t[..i], &t[i..])
    })
    .into_iter()
    .chain(edited(&doc, |t| {
        let i = t.rfind("]").unwrap();
        let i = t[..i].rfind('}').unwrap() + 1;
        format!("{},{}", &t[..i], &t[i..])
    })) {
        assert!(!check(&bytes), "falls back");
        assert!(guidellm::from_slice(&bytes).is_err());
    }
    // A string where a count belongs, in the middle of a list.
    for bytes in edited(&doc, |t| {
        let at = t.len() / 2;
        let i = at + t[at..].find("\"output_tokens\":").unwrap();
        let j = i + t[i..].find([',', '}']).unwrap();
        format!("{}\"output_tokens\": \"many\"{}", &t[..i], &t[j..])
    }) {
        assert!(!check(&bytes), "falls back");
        let err = guidellm::from_slice(&bytes).unwrap_err().to_string();
        assert!(err.contains(".output_tokens"), "{err}");
    }
    // A duplicate list.
    for bytes in edited(&doc, |t| {
        let i = t
            .find("\"errored\":[")
            .or(t.find("\"errored\": ["))
            .unwrap();
        format!("{}\"successful\"{}", &t[..i], &t[i + "\"errored\"".len()..])
    }) {
        assert!(!check(&bytes), "falls back");
        assert!(guidellm::from_slice(&bytes).is_err());
    }
}

#[test]
fn conversion_errors_are_the_sequential_ones() {
    // Well-formed JSON, but a request that ends before it starts, late in a long list:
    // the parallel parse applies and the conversion reports the sequential error.
    let mut doc = big_report(35, 0);
    let list = doc["benchmarks"][0]["requests"]["successful"]
        .as_array_mut()
        .unwrap();
    let n = list.len();
    for k in [n - 5, n / 2 + 3] {
        let t = &mut list[k]["info"]["timings"];
        t["request_end"] = Value::from(t["request_start"].as_f64().unwrap() - 1.0);
    }
    for bytes in layouts(&doc) {
        assert!(check(&bytes));
        let err = guidellm::from_slice(&bytes).unwrap_err().to_string();
        assert!(err.contains(&format!("successful[{}]", n / 2 + 3)), "{err}");
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]
    /// Random damage to a report: the parallel parse either declines or agrees.
    #[test]
    fn damaged_reports_parse_the_same_or_fall_back(
        edits in proptest::collection::vec((0.0f64..1.0, 0usize..12), 1..4),
    ) {
        const BYTES: [&[u8]; 12] = [
            b"{", b"}", b"[", b"]", b",", b":", b"\"", b"\\", b"0", b"NaN", b"", b" ",
        ];
        let mut bytes = fixture_bytes("guidellm/errors.json");
        for (at, pick) in edits {
            let i = ((bytes.len() - 1) as f64 * at) as usize;
            bytes.splice(i..i + 1, BYTES[pick].iter().copied());
        }
        check(&bytes);
    }
}
