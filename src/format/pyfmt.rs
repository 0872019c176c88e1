//! Python-exact number formatting: `f"{x:.Nf}"` and vLLM's percentile words.
//!
//! The reports servebench reproduces are printed by Python. Python's `.2f` rounds the exact
//! binary value of the float to the nearest decimal, ties to even (`0.125` → `0.12`, while
//! `2.675` is really `2.67499999…` → `2.67`). Rust's `format!("{:.2}")` does the same since
//! Rust 1.67, so [`fixed`] only has to spell the non-finite values the Python way (`nan`,
//! `inf`, `-inf` instead of `NaN`, `inf`, `-inf`). The unit tests pin the agreement on the
//! known tie cases, with expected strings produced by CPython 3.

/// `x` formatted like Python's `f"{x:.{decimals}f}"`.
pub fn fixed(x: f64, decimals: usize) -> String {
    if x.is_nan() {
        "nan".to_string()
    } else if x.is_infinite() {
        if x > 0.0 { "inf" } else { "-inf" }.to_string()
    } else {
        format!("{x:.decimals$}")
    }
}

/// vLLM's percentile word: `str(int(p)) if int(p) == p else str(p)` (`99` → `"99"`,
/// `99.9` → `"99.9"`).
///
/// Python's `str(float)` switches to exponent notation below `1e-4` (`1e-05`); this function
/// writes such tiny percentiles positionally (`0.00001`). No report uses them.
pub fn percentile_word(p: f64) -> String {
    int_or_repr(p)
}

/// Python's `str(int(x)) if int(x) == x else str(x)` for a float: integral values without
/// decimals (`1000`), others in their shortest form (`99.9`). vLLM's percentile words and
/// GPUStack's profile listings (`request_rate: 1000`) use it.
pub fn int_or_repr(x: f64) -> String {
    if x.is_finite() && x == x.trunc() && x.abs() < 1e15 {
        // `as` is exact here: an integral value below 1e15.
        format!("{}", x as i64)
    } else {
        format!("{x}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn examples() {
        assert_eq!(fixed(0.125, 2), "0.12"); // exact tie: half to even
        assert_eq!(fixed(2.675, 2), "2.67"); // the binary value is below the tie
        assert_eq!(fixed(342058.00000000006, 0), "342058");
        assert_eq!(fixed(f64::NAN, 2), "nan");
        assert_eq!(fixed(-0.0, 2), "-0.00");
        assert_eq!(percentile_word(99.0), "99");
        assert_eq!(percentile_word(99.9), "99.9");
        assert_eq!(percentile_word(0.1), "0.1");
        assert_eq!(int_or_repr(1000.0), "1000");
        assert_eq!(int_or_repr(2.5), "2.5");
    }

    /// (value, Python `'%.2f' % value`, Python `'%.0f' % value`), produced by CPython 3.
    const PYTHON: &[(f64, &str, &str)] = &[
        (0.125, "0.12", "0"),
        (0.375, "0.38", "0"),
        (2.675, "2.67", "3"),
        (1.005, "1.00", "1"),
        (0.045, "0.04", "0"),
        (0.015, "0.01", "0"),
        (0.025, "0.03", "0"),
        (1.125, "1.12", "1"),
        (2.5, "2.50", "2"),
        (0.5, "0.50", "0"),
        (-0.001, "-0.00", "-0"),
        (-0.0, "-0.00", "-0"),
        (342058.00000000006, "342058.00", "342058"),
        (30810010.855, "30810010.86", "30810011"),
        (
            1.0000000000000002e16,
            "10000000000000002.00",
            "10000000000000002",
        ),
        (4636.345, "4636.35", "4636"),
        (9.995, "9.99", "10"),
        (99.995, "100.00", "100"),
        (0.005, "0.01", "0"),
        (1234567.885, "1234567.89", "1234568"),
    ];

    #[test]
    fn fixed_matches_cpython_on_ties_and_near_ties() {
        for &(x, two, zero) in PYTHON {
            assert_eq!(fixed(x, 2), two, "{x:?} .2f");
            assert_eq!(fixed(x, 0), zero, "{x:?} .0f");
        }
    }

    #[test]
    fn fixed_spells_non_finite_like_python() {
        assert_eq!(fixed(f64::INFINITY, 2), "inf");
        assert_eq!(fixed(f64::NEG_INFINITY, 0), "-inf");
        assert_eq!(fixed(-f64::NAN, 2), "nan");
    }

    #[test]
    fn percentile_words_match_python_str() {
        // Python: str(int(p)) if int(p) == p else str(p)
        let cases = [
            (99.0, "99"),
            (99.9, "99.9"),
            (50.0, "50"),
            (0.1, "0.1"),
            (99.99, "99.99"),
            (25.5, "25.5"),
            (0.0001, "0.0001"),
            (100.0, "100"),
            (12.34, "12.34"),
            (-0.0, "0"),
        ];
        for (p, word) in cases {
            assert_eq!(percentile_word(p), word);
        }
    }
}
