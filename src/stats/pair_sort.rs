//! Sorting `(value, weight)` pairs in [`pair_order`] (value, then weight, both by
//! `total_cmp`): a comparison sort for short lists, an LSD radix sort on the value's bits
//! for long ones (guidellm's rate distributions sort millions of pairs). Both give the
//! one sequence [`pair_order`] defines.

use super::weighted::pair_order;

/// Lists shorter than this are comparison-sorted.
const RADIX_MIN: usize = 1 << 12;

/// `f64::total_cmp` as an unsigned integer order.
#[inline]
fn key(x: f64) -> u64 {
    let b = x.to_bits();
    if b >> 63 == 1 {
        !b
    } else {
        b | 1 << 63
    }
}

/// Sort `xs` by [`pair_order`].
pub(crate) fn sort_pairs(xs: &mut Vec<(f64, f64)>) {
    if xs.len() < RADIX_MIN {
        xs.sort_unstable_by(pair_order);
        return;
    }
    let n = xs.len();
    let mut hist = vec![[0usize; 256]; 8];
    for x in xs.iter() {
        let k = key(x.0);
        for (d, h) in hist.iter_mut().enumerate() {
            h[((k >> (8 * d)) & 255) as usize] += 1;
        }
    }
    let mut src = std::mem::take(xs);
    let mut dst = vec![(0.0, 0.0); n];
    for (d, h) in hist.iter().enumerate() {
        // A digit every value shares orders nothing.
        if h.contains(&n) {
            continue;
        }
        let mut pos = [0usize; 256];
        let mut acc = 0;
        for (p, &c) in pos.iter_mut().zip(h.iter()) {
            *p = acc;
            acc += c;
        }
        for x in &src {
            let b = ((key(x.0) >> (8 * d)) & 255) as usize;
            dst[pos[b]] = *x;
            pos[b] += 1;
        }
        std::mem::swap(&mut src, &mut dst);
    }
    // Equal values (equal bits): by weight.
    let mut i = 0;
    while i < n {
        let mut j = i + 1;
        while j < n && src[j].0.to_bits() == src[i].0.to_bits() {
            j += 1;
        }
        if j - i > 1 {
            src[i..j].sort_unstable_by(pair_order);
        }
        i = j;
    }
    *xs = src;
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
}
