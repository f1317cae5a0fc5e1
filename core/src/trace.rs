//! `CUDA_SOBEL_TRACE=1`: one line on standard error at each phase of a command, with the milliseconds
//! since `main` began — to find where a whole command's wall clock goes beyond what the table reports
//! (process start is the command's wall clock less the first mark; exit is the remainder after the last).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

static START: OnceLock<Option<Instant>> = OnceLock::new();

/// Starts the clock (call first thing in `main`); marks are printed only when `CUDA_SOBEL_TRACE` is set.
pub fn start() {
    START.get_or_init(|| std::env::var_os("CUDA_SOBEL_TRACE").map(|_| Instant::now()));
}

/// Prints `label` with the milliseconds since [`start`], when tracing.
pub fn mark(label: &str) {
    if let Some(Some(t0)) = START.get() {
        eprintln!("cuda_sobel trace: {:8.1} ms  {label}", t0.elapsed().as_secs_f64() * 1e3);
    }
}

/// A sum of durations that many threads add to at once (thread-seconds): the accounts `CUDA_SOBEL_TRACE` prints at
/// the end of a batch (its workers' stages, its GPU slots' waits and holds).
#[derive(Debug, Default)]
pub struct TimeSum(AtomicU64);

impl TimeSum {
    /// Adds `d`.
    pub fn add(&self, d: Duration) {
        self.0.fetch_add(d.as_nanos() as u64, Ordering::Relaxed);
    }

    /// Runs `f`, adding the time it took.
    pub fn time<T>(&self, f: impl FnOnce() -> T) -> T {
        let t0 = Instant::now();
        let r = f();
        self.add(t0.elapsed());
        r
    }

    /// The sum so far, in seconds.
    pub fn seconds(&self) -> f64 {
        self.0.load(Ordering::Relaxed) as f64 * 1e-9
    }
}
