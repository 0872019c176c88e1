//! Unit tests of the block vocabulary, value parsing and rendering internals.

use super::layout::*;
use super::parse::*;
use super::values::*;
use super::vocabulary::*;
use super::*;
use crate::result::BenchmarkResult;

#[test]
fn headers_match_the_reference_literals() {
    assert_eq!(
        Section::Ttft.header(),
        "---------------Time to First Token----------------"
    );
    assert_eq!(
        Section::Tpot.header(),
        "-----Time per Output Token (excl. 1st token)------"
    );
    assert_eq!(
        Section::Itl.header(),
        "---------------Inter-token Latency----------------"
    );
    assert_eq!(
        Section::E2el.header(),
        "----------------End-to-end Latency----------------"
    );
    for s in Section::ALL {
        assert_eq!(s.header().len(), 50);
        if s != Section::Latency {
            // Python's and Rust's centring agree: odd pad character on the right.
            assert_eq!(s.header(), format!("{:-^50}", s.title()));
        }
    }
    // GPUStack's literal is NOT what centring gives (21 left / 22 right).
    assert_ne!(GPUSTACK_LATENCY_HEADER, format!("{:-^50}", "Latency"));
    assert_eq!(
        GPUSTACK_LATENCY_HEADER,
        format!("{}Latency{}", "-".repeat(22), "-".repeat(21))
    );
    assert_eq!(TITLE.len(), 50);
    assert_eq!(FOOTER.len(), 50);
}

#[test]
fn row_text_round_trips() {
    let rows = canonical_rows(&BenchmarkResult::default(), Style::Gpustack);
    for row in rows.iter().chain(Field::ALL.map(Row::Field).iter()) {
        assert_eq!(Row::from_text(&row.text()), Some(*row), "{}", row.text());
    }
    assert_eq!(Row::from_text("P99.90 TTFT (ms):"), None);
    assert_eq!(Row::from_text("P TTFT (ms):"), None);
    assert_eq!(Row::from_text("P1e5 TTFT (ms):"), None);
}

#[test]
fn decimal_shift_is_exact() {
    assert_eq!(parse_decimal("30.19", 3), Some(30190.0));
    assert_eq!(parse_decimal("70", 3), Some(70000.0));
    assert_eq!(parse_decimal("-0.00", 3), Some(-0.0));
    assert_eq!(parse_decimal("1.5", 0), Some(1.5));
    assert_eq!(parse_decimal("1.", 0), None);
    assert_eq!(parse_decimal(".5", 0), None);
    assert_eq!(parse_decimal("1e5", 0), None);
    assert_eq!(parse_decimal("+1", 0), None);
    assert!(parse_decimal("nan", 3).is_some_and(f64::is_nan));
}

#[test]
fn neighbours_walk_outwards_one_ulp_at_a_time() {
    let n: Vec<f64> = neighbours(1.0, 2).collect();
    assert_eq!(n[0], 1.0);
    assert_eq!(n[1], 1.0 + f64::EPSILON);
    assert_eq!(n[2], 1.0 - f64::EPSILON / 2.0);
    assert_eq!(n[3], 1.0 + 2.0 * f64::EPSILON);
    assert_eq!(next_toward(-1.0, false), -1.0 - f64::EPSILON);
    assert_eq!(next_toward(0.0, false), -f64::from_bits(1));
    assert_eq!(next_toward(f64::INFINITY, false), f64::INFINITY);
}

#[test]
fn huge_seconds_values_still_round_trip() {
    // A render of any ms value parses back to a value that renders the same text.
    // The first two need the neighbour search (the plain decimal shift misses them).
    for ms in [
        2.773_152_100_760_393_3e17,
        8.703_102_842_787_301e16,
        1.234_567_890_123_456_7e20,
        1e300,
        123.456,
    ] {
        let shown = ms_to_s(ms);
        let text = format_value(Value::Float(shown), false);
        let parsed = parse_value(&text, ValueKind::Float { seconds: true });
        let Ok(Some((Value::Float(back), false))) = parsed else {
            panic!("{text}: {parsed:?}");
        };
        assert_eq!(format_value(Value::Float(ms_to_s(back)), false), text);
    }
}

#[test]
fn values_must_print_back_identically() {
    let f = ValueKind::Float { seconds: false };
    assert!(parse_value("30.1", f).is_err());
    assert!(parse_value("030.10", f).is_err());
    assert!(parse_value("30.100", f).is_err());
    assert!(parse_value("NaN", f).is_err());
    assert_eq!(parse_value("512", f), Ok(Some((Value::Float(512.0), true))));
    assert!(parse_value("007", ValueKind::Int).is_err());
    assert!(parse_value("-1", ValueKind::Int).is_err());
    // More digits than an f64 keeps: would not print back.
    assert!(parse_value("12345678901234567890.12", f).is_err());
}
