//! The collector shared by async tasks on a multi-threaded tokio runtime: handles live
//! across `.await`s and move between worker threads, and a task aborted mid-stream (a
//! timeout, a cancelled future) still leaves an incomplete record behind.
#![cfg(feature = "http")]

use std::sync::Arc;
use std::time::Duration;

use servebench::engine::Usage;
use servebench::record::Outcome;
use servebench::Collector;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_share_one_collector_and_aborted_tasks_are_recorded() {
    let collector = Arc::new(Collector::new());
    let mut finished = Vec::new();
    for _ in 0..64 {
        let c = collector.clone();
        finished.push(tokio::spawn(async move {
            let mut h = c.begin();
            for _ in 0..10 {
                tokio::task::yield_now().await;
                h.chunk(2);
            }
            h.finish(Usage::default());
        }));
    }
    let mut stuck = Vec::new();
    for _ in 0..8 {
        let c = collector.clone();
        stuck.push(tokio::spawn(async move {
            let mut h = c.begin();
            h.chunk(1);
            // A stream that never ends: the task is aborted below.
            tokio::time::sleep(Duration::from_secs(3600)).await;
            h.finish(Usage::default());
        }));
    }
    for j in finished {
        j.await.unwrap();
    }
    tokio::time::sleep(Duration::from_millis(20)).await;
    for j in &stuck {
        j.abort();
    }
    for j in stuck {
        assert!(j.await.unwrap_err().is_cancelled());
    }
    let s = collector.snapshot();
    assert_eq!((s.started, s.in_flight), (72, 0));
    assert_eq!((s.succeeded, s.incomplete), (64, 8));
    assert_eq!(s.output_tokens, 64 * 20 + 8);
    let records = collector.records();
    assert_eq!(records.len(), 72);
    let incomplete: Vec<_> = records
        .iter()
        .filter(|r| matches!(r.outcome, Outcome::Incomplete { .. }))
        .collect();
    assert_eq!(incomplete.len(), 8);
    assert!(incomplete
        .iter()
        .all(|r| r.chunks.len() == 1 && r.ended_at.is_some()));
}
