//! Work over a module's functions on several threads, with results in a fixed
//! order: the output of a compile must not depend on the number of threads or
//! on which finishes first (tests/parallel.rs compares the bytes).

use std::sync::atomic::{AtomicUsize, Ordering};

/// The number of threads `jobs` asks for: 0 is one per core.
pub fn threads(jobs: usize) -> usize {
    match jobs {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
}

/// `work(0..count)` on up to `jobs` threads (0: one per core), the results in
/// index order. Threads take the next index when they finish one, so a slow
/// function does not hold up a whole share. A panic in `work` is passed on.
pub fn map_in_order<T: Send>(count: usize, jobs: usize, work: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let threads = threads(jobs).min(count);
    if threads <= 1 {
        return (0..count).map(work).collect();
    }
    let next = AtomicUsize::new(0);
    let mut done: Vec<(usize, T)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= count {
                            break;
                        }
                        mine.push((i, work(i)));
                    }
                    mine
                })
            })
            .collect();
        workers.into_iter().flat_map(|w| w.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))).collect()
    });
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, t)| t).collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn results_come_back_in_index_order() {
        for jobs in [0, 1, 2, 5, 64] {
            let out = super::map_in_order(100, jobs, |i| {
                // Uneven work, so that threads finish out of order.
                std::thread::sleep(std::time::Duration::from_micros(((i * 7919) % 13) as u64 * 20));
                i * 3
            });
            assert_eq!(out, (0..100).map(|i| i * 3).collect::<Vec<_>>(), "jobs {jobs}");
        }
    }
}
