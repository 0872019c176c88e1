//! Running the walk on several threads: contiguous record ranges, one result per worker.

use super::*;

/// Run `f` on every item, the first here and each other on a thread of its own (here too,
/// after the first, when a thread cannot be started); results in item order.
pub(super) fn run_all<T: Send, R: Send>(items: Vec<T>, f: impl Fn(T) -> R + Sync) -> Vec<R> {
    let f = &f;
    std::thread::scope(|s| {
        let mut items = items.into_iter();
        let first = items.next();
        // Items whose thread could not be started come back here.
        let mut handles = Vec::new();
        for item in items {
            let cell = std::sync::Mutex::new(Some(item));
            let cell = std::sync::Arc::new(cell);
            let theirs = std::sync::Arc::clone(&cell);
            let spawned = std::thread::Builder::new().spawn_scoped(s, move || {
                let item = theirs.lock().ok().and_then(|mut g| g.take());
                item.map(f)
            });
            handles.push((spawned.ok(), cell));
        }
        let mut out: Vec<R> = first.into_iter().map(f).collect();
        for (h, cell) in handles {
            let done = match h {
                Some(h) => h
                    .join()
                    .unwrap_or_else(|payload| std::panic::resume_unwind(payload)),
                None => None,
            };
            let r = match done {
                Some(r) => r,
                None => match cell.lock().ok().and_then(|mut g| g.take()) {
                    Some(item) => f(item),
                    None => unreachable!("every item runs exactly once"),
                },
            };
            out.push(r);
        }
        out
    })
}

/// `f` of each worker, on a thread each when `parallel`.
pub(super) fn per_worker<R: Send>(
    workers: &[&Worker],
    parallel: bool,
    f: impl Fn(&Worker) -> R + Sync,
) -> Vec<R> {
    if parallel {
        run_all(workers.to_vec(), &f)
    } else {
        workers.iter().map(|w| f(w)).collect()
    }
}

/// Run `a` here and `b` on a second thread (or both here when `parallel` is false or no
/// thread can be started).
pub(super) fn join<A: Send, B: Send>(
    parallel: bool,
    a: impl FnOnce() -> A + Send,
    b: impl FnOnce() -> B + Send,
) -> (A, B) {
    if !parallel {
        return (a(), b());
    }
    // `b` is taken by the thread, or back here when the thread cannot be started.
    let b = std::sync::Mutex::new(Some(b));
    let take = || b.lock().ok().and_then(|mut g| g.take());
    std::thread::scope(|s| {
        let spawned = std::thread::Builder::new().spawn_scoped(s, || take().map(|f| f()));
        let ra = a();
        let rb = match spawned {
            Ok(h) => h
                .join()
                .unwrap_or_else(|payload| std::panic::resume_unwind(payload)),
            Err(_) => take().map(|f| f()),
        };
        match rb {
            Some(rb) => (ra, rb),
            None => unreachable!("`b` runs exactly once, on the thread or here"),
        }
    })
}
