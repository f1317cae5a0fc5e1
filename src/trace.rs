//! `CUDA_SOBEL_TRACE=1`: one line on standard error at each phase of a command, with the milliseconds
//! since `main` began — to find where a whole command's wall clock goes beyond what the table reports
//! (process start is the command's wall clock less the first mark; exit is the remainder after the last).

use std::sync::OnceLock;
use std::time::Instant;

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
