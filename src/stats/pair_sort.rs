//! Sorting `(value, weight)` pairs in [`pair_order`] (value, then weight, both by
//! `total_cmp`): a comparison sort for short lists, an MSD radix sort on the value's bits
//! for long ones (guidellm's rate distributions sort millions of pairs). Both give the
//! one sequence [`pair_order`] defines.
//!
//! The radix sort splits on the highest bits in which the keys of a range still differ
//! (at most [`MAX_BITS`] at a time, fewer for short ranges), so values bunched in a
//! narrow range cost no pass over the bits they share; ranges of at most [`LEAF`] pairs
//! are insertion-sorted, and ranges of one value are sorted by weight.

use super::order::order_key;

/// Lists shorter than this are comparison-sorted.
const RADIX_MIN: usize = 1 << 12;
/// Ranges this short are insertion-sorted.
const LEAF: usize = 32;
/// Most key bits one radix pass splits on.
const MAX_BITS: u32 = 11;

/// The order events and pairs are sorted in: by value (time), then by weight, both by
/// `total_cmp`. guidellm sorts by value alone (numpy's unstable sort), which leaves the
/// order of equal values, and so the rounding of their summed weights, unspecified; this
/// fixes it, so that any sort gives the same sequence and the same bits.
pub(crate) fn pair_order(a: &(f64, f64), b: &(f64, f64)) -> std::cmp::Ordering {
    a.0.total_cmp(&b.0).then_with(|| a.1.total_cmp(&b.1))
}

/// Sort `xs` by [`pair_order`].
pub(crate) fn sort_pairs(xs: &mut [(f64, f64)]) {
    if xs.len() < RADIX_MIN {
        xs.sort_unstable_by(pair_order);
        return;
    }
    let (mut lo, mut hi) = (u64::MAX, 0u64);
    for x in xs.iter() {
        let k = order_key(x.0);
        lo = lo.min(k);
        hi = hi.max(k);
    }
    let mut scratch = vec![(0.0, 0.0); xs.len()];
    radix(xs, &mut scratch, lo, hi, false);
}

/// Sort the pairs whose keys lie in `[lo, hi]` into `xs`; they are in `scratch` if
/// `in_scratch`, else in `xs` (the two are as long). Each pass scatters from the buffer
/// holding the pairs into the other, so no pass copies them back.
fn radix(xs: &mut [(f64, f64)], scratch: &mut [(f64, f64)], lo: u64, hi: u64, in_scratch: bool) {
    let n = xs.len();
    if n <= LEAF || lo == hi {
        if in_scratch {
            xs.copy_from_slice(scratch);
        }
        if lo == hi {
            // One value (the same bits): by weight.
            xs.sort_unstable_by(|a, b| a.1.total_cmp(&b.1));
        } else {
            insertion_sort(xs);
        }
        return;
    }
    // The keys share the bits above `varying`; split on the highest `bits` below.
    let varying = u64::BITS - (lo ^ hi).leading_zeros();
    let wanted = (usize::BITS - n.leading_zeros())
        .saturating_sub(3)
        .clamp(4, MAX_BITS);
    let bits = wanted.min(varying);
    let shift = varying - bits;
    let base = lo >> shift;
    let buckets = ((hi >> shift) - base + 1) as usize;
    let at = if in_scratch {
        scatter(scratch, xs, shift, base, buckets)
    } else {
        scatter(xs, scratch, shift, base, buckets)
    };
    let mut start = 0;
    for (b, &end) in at[..buckets].iter().enumerate() {
        if end > start {
            let blo = (base + b as u64) << shift;
            let bhi = blo | ((1u64 << shift) - 1);
            radix(
                &mut xs[start..end],
                &mut scratch[start..end],
                blo.max(lo),
                bhi.min(hi),
                !in_scratch,
            );
        }
        start = end;
    }
}

/// Scatter `src` into `dst` by the key bits from `shift` up (minus `base`, `buckets`
/// values); returns each bucket's end.
fn scatter(
    src: &[(f64, f64)],
    dst: &mut [(f64, f64)],
    shift: u32,
    base: u64,
    buckets: usize,
) -> [usize; 1 << MAX_BITS] {
    let bucket = |x: &(f64, f64)| ((order_key(x.0) >> shift) - base) as usize;
    // Counts, then each bucket's start, then (after the scatter) each bucket's end.
    let mut at = [0usize; 1 << MAX_BITS];
    for x in src {
        at[bucket(x)] += 1;
    }
    let mut acc = 0;
    for a in at[..buckets].iter_mut() {
        let c = *a;
        *a = acc;
        acc += c;
    }
    for x in src {
        let b = bucket(x);
        dst[at[b]] = *x;
        at[b] += 1;
    }
    at
}

/// Insertion sort by [`pair_order`] (for the few pairs of a leaf).
pub(crate) fn insertion_sort(xs: &mut [(f64, f64)]) {
    for i in 1..xs.len() {
        let x = xs[i];
        let mut j = i;
        while j > 0 && pair_order(&xs[j - 1], &x) == std::cmp::Ordering::Greater {
            xs[j] = xs[j - 1];
            j -= 1;
        }
        xs[j] = x;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn bits(xs: &[(f64, f64)]) -> Vec<(u64, u64)> {
        xs.iter().map(|x| (x.0.to_bits(), x.1.to_bits())).collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        #[test]
        fn radix_sort_equals_the_comparison_sort(
            seed in any::<u64>(),
            n in 0usize..12_000,
            distinct in 1u64..5000,
        ) {
            let special = [0.0, -0.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, 1e-300, -2.5];
            let mut rng = crate::record::synthetic::SplitMix64::new(seed);
            let mut xs: Vec<(f64, f64)> = (0..n)
                .map(|_| {
                    let v = match rng.range(0, 20) {
                        0 => special[rng.range(0, special.len() as u64) as usize],
                        1 => -(rng.range(0, distinct) as f64) / 7.0,
                        _ => rng.range(0, distinct) as f64 * 1.37e3 / 3.0,
                    };
                    (v, rng.range(0, 4) as f64 / 3.0)
                })
                .collect();
            let mut expected = xs.clone();
            expected.sort_unstable_by(pair_order);
            sort_pairs(&mut xs);
            prop_assert_eq!(bits(&xs), bits(&expected));
        }
    }

    /// Long lists of continuous values bunched in one octave plus outliers (like rate
    /// pairs), so that ranges split several times before their leaves.
    #[test]
    fn radix_sort_of_long_bunched_lists_equals_the_comparison_sort() {
        for (seed, n) in [(1u64, 300_000usize), (2, 70_001), (3, 5_000)] {
            let mut rng = crate::record::synthetic::SplitMix64::new(seed);
            let mut xs: Vec<(f64, f64)> = (0..n)
                .map(|i| {
                    let u = rng.range(0, 1 << 40) as f64 / (1u64 << 40) as f64;
                    let v = match i % 97 {
                        0 => 0.0,
                        1 => 1e9 * u,
                        2 => 1e5,
                        _ => 1e5 * (1.0 + u),
                    };
                    (v, rng.range(0, 3) as f64 * 1e-4)
                })
                .collect();
            let mut expected = xs.clone();
            expected.sort_unstable_by(pair_order);
            sort_pairs(&mut xs);
            assert_eq!(bits(&xs), bits(&expected), "seed {seed}, n {n}");
        }
    }
}
