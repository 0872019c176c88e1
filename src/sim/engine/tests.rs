//! Tests of `engine`.

//! Scheduler behaviour under block pressure; the invariants of `check_invariants` are
//! asserted after every step of every test (debug builds).

use super::*;
use crate::driver::arrivals::Arrivals;
use crate::driver::{run, workload, RunOptions};
use crate::record::Outcome;
use crate::sim::model::BLOCK_BYTES;

fn run_with_pool(blocks: u64, n: usize) -> (H200Sim, Vec<crate::record::RequestRecord>) {
    run_config_with_pool("baseline", blocks, n)
}

fn run_config_with_pool(
    name: &str,
    blocks: u64,
    n: usize,
) -> (H200Sim, Vec<crate::record::RequestRecord>) {
    let config = Config::named(name).unwrap();
    let mut params = Params::for_config(&config);
    params.kv_pool_bytes = blocks as f64 * BLOCK_BYTES;
    let mut sim = H200Sim::with_params(config, params).warmed_up();
    // 1000 + 10 template prompt tokens (2 blocks) growing to 1610 tokens (3 blocks):
    // 8 requests fit at admission, and they outgrow the pool while decoding.
    let work = workload::random(n, 1000, 600, 0.0, 1, false).unwrap();
    let opts = RunOptions {
        arrivals: Arrivals::AllAtOnce,
        ..RunOptions::default()
    };
    let out = run(&mut sim, &work, &opts).unwrap();
    (sim, out.records)
}

#[test]
fn preempted_requests_are_recomputed_and_lose_no_token() {
    let (sim, records) = run_with_pool(40, 32);
    assert!(
        sim.preemptions() > 0,
        "the small pool must force preemption"
    );
    assert_eq!(records.len(), 32);
    for r in &records {
        assert_eq!(r.outcome, Outcome::Success, "request {}", r.id);
        assert_eq!(r.chunks.len(), 600, "request {}: one chunk per token", r.id);
        assert_eq!(r.usage_output_tokens, Some(600));
        assert_eq!(r.usage_prompt_tokens, Some(1010));
        assert!(r.chunks.windows(2).all(|w| w[0].at <= w[1].at));
    }
    assert_eq!(sim.in_flight(), 0);
    assert_eq!(sim.free_blocks, sim.total_blocks, "every block returned");
}

#[test]
fn a_pool_that_fits_everyone_never_preempts_and_is_faster() {
    let (small, tight) = run_with_pool(40, 32);
    let (big, roomy) = run_with_pool(32 * 6, 32);
    assert_eq!(big.preemptions(), 0);
    let end =
        |rs: &[crate::record::RequestRecord]| rs.iter().filter_map(|r| r.ended_at).max().unwrap();
    assert!(
        end(&roomy) < end(&tight),
        "{:?} vs {:?}",
        end(&roomy),
        end(&tight)
    );
    assert!(small.preemptions() > 0);
}

#[test]
fn a_request_larger_than_the_pool_is_rejected_not_stuck() {
    // 1610 tokens need 3 + 3 blocks; a 5-block pool can never hold one.
    let (_, records) = run_with_pool(5, 2);
    for r in &records {
        assert!(
            matches!(&r.outcome, Outcome::Error { message, .. } if message.contains("KV blocks")),
            "{:?}",
            r.outcome
        );
    }
}

#[test]
fn an_fp8_kv_cache_holds_twice_the_tokens_per_block() {
    // Same pool, same load: performance-mode (BF16 KV) preempts, kv-fp8 needs half the
    // attention blocks per request (1610 tokens: 2 blocks of 1088 instead of 3 of 544).
    let (bf16, _) = run_config_with_pool("performance-mode", 40, 32);
    let (fp8, records) = run_config_with_pool("kv-fp8", 40, 32);
    assert!(bf16.preemptions() > 0);
    assert!(
        fp8.preemptions() < bf16.preemptions(),
        "{} vs {}",
        fp8.preemptions(),
        bf16.preemptions()
    );
    assert!(records.iter().all(|r| r.chunks.len() == 600));
}
