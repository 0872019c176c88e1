//! Order statistics without a full sort: successive selections for small inputs, a
//! two-pass radix selection on order-preserving bit patterns for large ones.

/// The values of the requested order statistics (0-based ranks into the sorted order) of
/// `values`, in O(n) without a full sort: small inputs use successive selections on a
/// shrinking slice (`values` is reordered); large ones (≥ 65 536 values) a two-pass radix
/// selection on the values' order-preserving bit patterns (a histogram of the top 16
/// varying bits, then an exact selection among the few values sharing each wanted bucket).
/// Ranks ≥ `values.len()` give `NaN`. Order is that of [`f64::total_cmp`].
pub fn order_statistics(values: &mut [f64], ranks: &[usize]) -> Vec<f64> {
    if values.len() >= RADIX_MIN {
        return radix_order_statistics(values, ranks);
    }
    let mut order: Vec<usize> = (0..ranks.len()).collect();
    order.sort_by_key(|&i| ranks[i]);
    let mut out = vec![f64::NAN; ranks.len()];
    let mut lo = 0usize;
    let mut last: Option<(usize, f64)> = None;
    for i in order {
        let r = ranks[i];
        if r >= values.len() {
            continue;
        }
        if let Some((lr, lv)) = last {
            if lr == r {
                out[i] = lv;
                continue;
            }
        }
        let (_, v, _) = values[lo..].select_nth_unstable_by(r - lo, f64::total_cmp);
        let v = *v;
        out[i] = v;
        last = Some((r, v));
        lo = r + 1;
    }
    out
}

const RADIX_MIN: usize = 1 << 16;
const RADIX_BITS: u32 = 16;

/// A u64 whose unsigned order is [`f64::total_cmp`]'s order (also the radix key of
/// `pair_sort`).
#[inline]
pub(super) fn order_key(x: f64) -> u64 {
    let b = x.to_bits();
    if b >> 63 == 1 {
        !b
    } else {
        b | (1 << 63)
    }
}

#[inline]
fn from_order_key(k: u64) -> f64 {
    f64::from_bits(if k >> 63 == 1 { k & !(1 << 63) } else { !k })
}

fn radix_order_statistics(values: &[f64], ranks: &[usize]) -> Vec<f64> {
    let n = values.len();
    let (mut lo, mut hi) = (u64::MAX, 0u64);
    for &v in values {
        let k = order_key(v);
        lo = lo.min(k);
        hi = hi.max(k);
    }
    let shift = (64 - (hi - lo).leading_zeros()).saturating_sub(RADIX_BITS);
    let bucket = |v: f64| ((order_key(v) - lo) >> shift) as usize;
    let mut hist = vec![0usize; 1 << RADIX_BITS];
    for &v in values {
        hist[bucket(v)] += 1;
    }
    // start[b] = number of values in buckets before b.
    let mut start = Vec::with_capacity(hist.len());
    let mut acc = 0usize;
    for &h in &hist {
        start.push(acc);
        acc += h;
    }
    // Where each rank falls: (bucket, rank within the bucket).
    let place: Vec<Option<(usize, usize)>> = ranks
        .iter()
        .map(|&r| {
            (r < n).then(|| {
                let b = start.partition_point(|&s| s <= r) - 1;
                (b, r - start[b])
            })
        })
        .collect();
    if shift == 0 {
        // Every bucket holds a single bit pattern: no second pass needed.
        return place
            .iter()
            .map(|p| p.map_or(f64::NAN, |(b, _)| from_order_key(lo + b as u64)))
            .collect();
    }
    let mut slot = vec![u32::MAX; 1 << RADIX_BITS];
    let mut gathered: Vec<Vec<f64>> = Vec::new();
    for &(b, _) in place.iter().flatten() {
        if slot[b] == u32::MAX {
            slot[b] = gathered.len() as u32;
            gathered.push(Vec::with_capacity(hist[b]));
        }
    }
    for &v in values {
        let s = slot[bucket(v)];
        if s != u32::MAX {
            gathered[s as usize].push(v);
        }
    }
    place
        .iter()
        .map(|p| match p {
            Some((b, local)) => {
                let g = &mut gathered[slot[*b] as usize];
                *g.select_nth_unstable_by(*local, f64::total_cmp).1
            }
            None => f64::NAN,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn radix_selection_equals_sorting() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for case in 0..4 {
            let n = RADIX_MIN + 1000 * case;
            let mut vals: Vec<f64> = (0..n)
                .map(|i| match case {
                    0 => (next() % 1_000_000) as f64 * 1e-9,
                    1 => (next() % 7) as f64, // few distinct values
                    2 => (next() as i64 >> 20) as f64 * 0.5, // negatives too
                    _ => {
                        if i % 2 == 0 {
                            1e-300
                        } else {
                            1e300
                        }
                    } // extreme spread
                })
                .collect();
            let mut sorted = vals.clone();
            sorted.sort_by(f64::total_cmp);
            let mut ranks = vec![0, 1, n / 2 - 1, n / 2, n * 99 / 100, n - 1, n];
            // More wanted buckets than a byte can index.
            ranks.extend((0..400).map(|i| i * (n / 400)));
            let got = order_statistics(&mut vals, &ranks);
            for (r, g) in ranks.iter().zip(got) {
                match sorted.get(*r) {
                    Some(want) => assert_eq!(g.to_bits(), want.to_bits(), "case {case} rank {r}"),
                    None => assert!(g.is_nan()),
                }
            }
        }
        for x in [0.0, -0.0, 1.5, -2.25, f64::MAX, f64::MIN_POSITIVE] {
            assert_eq!(from_order_key(order_key(x)).to_bits(), x.to_bits());
        }
    }
}
