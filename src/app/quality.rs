//! Asking a server an eval set: every item as a greedy, non-streamed chat request, several
//! in flight, each scored by its item's scorer (`servebench quality` and a study's
//! `[quality]` gate).

use std::sync::atomic::{AtomicUsize, Ordering};

use crate::http::HttpEngine;
use crate::quality::eval::EvalItem;
use crate::quality::run::ItemOutcome;

/// Asks every item with `concurrency` requests in flight; the outcomes in item order (a
/// failed request is counted wrong, with its error).
pub fn ask_all(
    engine: &HttpEngine,
    items: &[EvalItem],
    max_tokens: u64,
    concurrency: usize,
) -> Vec<ItemOutcome> {
    let next = AtomicUsize::new(0);
    let mut slots: Vec<Option<ItemOutcome>> = vec![None; items.len()];
    let results = std::sync::Mutex::new(&mut slots);
    std::thread::scope(|s| {
        for _ in 0..concurrency.clamp(1, items.len().max(1)) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = items.get(i) else {
                    break;
                };
                let outcome = match engine.chat_answer(&item.prompt, max_tokens) {
                    Ok(text) => ItemOutcome {
                        id: item.id.clone(),
                        right: item.scorer.is_right(&text, &item.answer),
                        answer: item.scorer.extract(&text),
                        error: None,
                    },
                    Err(e) => ItemOutcome {
                        id: item.id.clone(),
                        right: false,
                        answer: None,
                        error: Some(e.to_string()),
                    },
                };
                if let Ok(mut r) = results.lock() {
                    r[i] = Some(outcome);
                }
            });
        }
    });
    slots.into_iter().flatten().collect()
}
