//! Work over a module's functions on several threads, with results in a fixed
//! order: the output of a compile must not depend on the number of threads or
//! on which finishes first (tests/parallel.rs compares the bytes).

use std::sync::atomic::{AtomicUsize, Ordering};

/// The most threads a compile starts, whatever `-j` says.
pub const MAX_THREADS: usize = 64;

/// Stack of each worker thread: as much as the main thread's 8 MiB and more
/// (recursive walks over deep call chains and loop nests run on workers).
pub const STACK_BYTES: usize = 64 << 20;

/// The number of threads `jobs` asks for: 0 and 1 are one (the library's
/// default); the command line turns its `-j 0` into the number of cores.
pub fn threads(jobs: usize) -> usize {
    jobs.clamp(1, MAX_THREADS)
}

/// One per core (for the command line's default).
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// `work(0..count)` on up to `jobs` threads ([`threads`]), the results in
/// index order. The calling thread works too, and every thread takes the next
/// index when it finishes one, so a slow function does not hold up a share; a
/// thread the system refuses to start only means fewer workers. A panic in
/// `work` is passed on.
pub fn map_in_order<T: Send>(count: usize, jobs: usize, work: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let threads = threads(jobs).min(count);
    if threads <= 1 {
        return (0..count).map(work).collect();
    }
    let next = AtomicUsize::new(0);
    let worker = || {
        let mut mine = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= count {
                break;
            }
            mine.push((i, work(i)));
        }
        mine
    };
    let mut done: Vec<(usize, T)> = std::thread::scope(|scope| {
        let helpers: Vec<_> = (1..threads)
            .filter_map(|_| std::thread::Builder::new().stack_size(STACK_BYTES).spawn_scoped(scope, worker).ok())
            .collect();
        let mut all = worker();
        for h in helpers {
            all.extend(h.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)));
        }
        all
    });
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, t)| t).collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn results_come_back_in_index_order() {
        for jobs in [0, 1, 2, 5, 64, 10_000] {
            let out = super::map_in_order(100, jobs, |i| {
                // Uneven work, so that threads finish out of order.
                std::thread::sleep(std::time::Duration::from_micros(((i * 7919) % 13) as u64 * 20));
                i * 3
            });
            assert_eq!(out, (0..100).map(|i| i * 3).collect::<Vec<_>>(), "jobs {jobs}");
        }
    }
}
