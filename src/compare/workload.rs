//! Did the two sides of a comparison run the same experiment? [`workload_differences`]
//! lists what differs between two results' stored workloads (dataset and token lengths,
//! request rate, request count, concurrency cap) and metric conventions: a difference there
//! is not the effect of the configuration under test. A random dataset's seed is not a
//! difference (repetitions draw new prompts on purpose), nor is a profile's name. What is
//! unknown on either side (a plain text report stores no profile) is not compared.
//! [`crate::format::comparison`] writes the differences as text.
//!
//! ```
//! use servebench::compare::{workload_differences, WorkloadDifference};
//! use servebench::profile::Profile;
//! use servebench::BenchmarkResult;
//! let with = |rate: f64| {
//!     let mut p = Profile::preset("throughput").unwrap();
//!     p.request_rate = rate;
//!     let mut r = BenchmarkResult::default();
//!     r.meta.profile = Some(p);
//!     r
//! };
//! assert!(workload_differences(&with(10.0), &with(10.0)).is_empty());
//! assert_eq!(
//!     workload_differences(&with(10.0), &with(20.0)),
//!     vec![WorkloadDifference::RequestRate { base: 10.0, candidate: 20.0 }]
//! );
//! ```

use crate::profile::{Dataset, Profile};
use crate::result::{BenchmarkResult, Convention};

/// One way in which two results' workloads differ.
#[derive(Debug, Clone, PartialEq)]
pub enum WorkloadDifference {
    /// Different prompts (dataset kind, file, or fixed token lengths).
    Dataset {
        /// The baseline's dataset.
        base: Dataset,
        /// The candidate's dataset.
        candidate: Dataset,
    },
    /// Different scheduled request rates, requests/s.
    RequestRate {
        /// The baseline's rate.
        base: f64,
        /// The candidate's rate.
        candidate: f64,
    },
    /// Different numbers of requests sent.
    TotalRequests {
        /// The baseline's count.
        base: u64,
        /// The candidate's count.
        candidate: u64,
    },
    /// Different client concurrency caps (`None`: no cap).
    MaxConcurrency {
        /// The baseline's cap.
        base: Option<u64>,
        /// The candidate's cap.
        candidate: Option<u64>,
    },
    /// Different metric conventions (TPOT and ITL are defined differently).
    Convention {
        /// The baseline's convention.
        base: Convention,
        /// The candidate's convention.
        candidate: Convention,
    },
}

/// `d` with a random dataset's seed cleared (a new draw of the same workload).
fn without_seed(d: &Dataset) -> Dataset {
    match d {
        Dataset::Random {
            input_tokens,
            output_tokens,
            ..
        } => Dataset::Random {
            input_tokens: *input_tokens,
            output_tokens: *output_tokens,
            seed: 0,
        },
        other => other.clone(),
    }
}

fn profile_differences(a: &Profile, b: &Profile, out: &mut Vec<WorkloadDifference>) {
    if without_seed(&a.dataset) != without_seed(&b.dataset) {
        out.push(WorkloadDifference::Dataset {
            base: a.dataset.clone(),
            candidate: b.dataset.clone(),
        });
    }
    let same_rate = a.request_rate == b.request_rate
        || (a.request_rate.is_infinite() && b.request_rate.is_infinite());
    if !same_rate {
        out.push(WorkloadDifference::RequestRate {
            base: a.request_rate,
            candidate: b.request_rate,
        });
    }
    if a.total_requests != b.total_requests {
        out.push(WorkloadDifference::TotalRequests {
            base: a.total_requests,
            candidate: b.total_requests,
        });
    }
    if a.max_concurrency != b.max_concurrency {
        out.push(WorkloadDifference::MaxConcurrency {
            base: a.max_concurrency,
            candidate: b.max_concurrency,
        });
    }
}

/// The request rate a run was asked to send at: the file's configured rate, else its
/// stored profile's.
fn configured_rate(r: &BenchmarkResult) -> Option<f64> {
    r.request_rate_configured
        .or_else(|| r.meta.profile.as_ref().map(|p| p.request_rate))
}

/// What differs between the workloads and conventions of `base` and `candidate` (see the
/// module docs); empty when nothing known differs.
pub fn workload_differences(
    base: &BenchmarkResult,
    candidate: &BenchmarkResult,
) -> Vec<WorkloadDifference> {
    let mut out = Vec::new();
    if let (Some(a), Some(b)) = (&base.meta.profile, &candidate.meta.profile) {
        profile_differences(a, b, &mut out);
    } else if let (Some(a), Some(b)) = (configured_rate(base), configured_rate(candidate)) {
        // One side without a stored profile (another tool's file): the rates each side
        // was asked to send at, wherever it keeps it.
        if a != b {
            out.push(WorkloadDifference::RequestRate {
                base: a,
                candidate: b,
            });
        }
    }
    if let (Some(a), Some(b)) = (base.meta.convention, candidate.meta.convention) {
        if a != b {
            out.push(WorkloadDifference::Convention {
                base: a,
                candidate: b,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(p: Profile) -> BenchmarkResult {
        let mut r = BenchmarkResult::default();
        r.meta.profile = Some(p);
        r
    }

    #[test]
    fn seeds_and_names_are_not_differences_lengths_and_caps_are() {
        let random = |i: u64, o: u64, seed: u64| Profile {
            name: Some(format!("run {seed}")),
            dataset: Dataset::Random {
                input_tokens: i,
                output_tokens: o,
                seed,
            },
            request_rate: 30.0,
            total_requests: 300,
            max_concurrency: None,
        };
        assert!(
            workload_differences(&run(random(1024, 128, 1)), &run(random(1024, 128, 2))).is_empty()
        );
        let d = workload_differences(&run(random(1024, 128, 1)), &run(random(1024, 256, 1)));
        assert!(
            matches!(d[..], [WorkloadDifference::Dataset { .. }]),
            "{d:?}"
        );
        let mut capped = random(1024, 128, 1);
        capped.max_concurrency = Some(8);
        capped.total_requests = 100;
        let d = workload_differences(&run(random(1024, 128, 1)), &run(capped));
        assert_eq!(
            d,
            vec![
                WorkloadDifference::TotalRequests {
                    base: 300,
                    candidate: 100
                },
                WorkloadDifference::MaxConcurrency {
                    base: None,
                    candidate: Some(8)
                }
            ]
        );
        // Unknown on one side: nothing to compare.
        assert!(
            workload_differences(&run(random(1, 1, 1)), &BenchmarkResult::default()).is_empty()
        );
    }
}
