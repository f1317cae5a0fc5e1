//! Timing on the device with CUDA events: the loop every GPU measurement shares, the launch overhead, and
//! the device-to-device copy bandwidth that the bench holds every kernel against.

use cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT;

use super::{Gpu, GpuError};

/// Runs queued behind one `spin`: enough that the host's queueing never outruns it.
const BATCH: usize = 20;
/// Generous: queueing one run (two launches at most and an event) takes the host a few µs.
const SPIN_NS_PER_RUN: u64 = 50_000;

impl Gpu {
    /// Times `reps` runs of `enqueue` between CUDA events, milliseconds each. Runs go in batches behind a
    /// `spin` kernel that keeps the GPU busy while the host queues the batch, so each pair of events
    /// brackets device work only, not the host's launch overhead (see cuda/timing.cu). Events are made
    /// with timing enabled (`record_event(None)` would make them without, and `elapsed_ms` would fail).
    pub fn time_runs(
        &self,
        reps: usize,
        mut enqueue: impl FnMut(usize) -> Result<(), GpuError>,
    ) -> Result<Vec<f64>, GpuError> {
        let mut samples = Vec::with_capacity(reps);
        let mut done = 0;
        while done < reps {
            let batch = BATCH.min(reps - done);
            self.kernels.timing()?.spin(&self.stream, SPIN_NS_PER_RUN * batch as u64)?;
            let mut events = vec![self.stream.record_event(Some(CU_EVENT_DEFAULT))?];
            for k in 0..batch {
                enqueue(done + k)?;
                events.push(self.stream.record_event(Some(CU_EVENT_DEFAULT))?);
            }
            for pair in events.windows(2) {
                samples.push(pair[0].elapsed_ms(&pair[1])? as f64);
            }
            done += batch;
        }
        Ok(samples)
    }

    /// `noop()` timed as [`Gpu::time_runs`] times kernels: the GPU-side cost of one launch (median, ms).
    pub fn launch_overhead_ms(&self, reps: usize) -> Result<f64, GpuError> {
        let mut samples = self.time_runs(reps, |_| Ok(self.kernels.timing()?.noop(&self.stream)?))?;
        Ok(crate::stats::median(&mut samples))
    }

    /// The device-to-device copy bandwidth in GB/s, counting bytes read plus bytes written: the roofline
    /// for a kernel that reads its input once and writes its output once. A `bytes`-sized copy (choose it
    /// well above the L2 size), one warm-up, then the median of `reps` event-timed copies.
    pub fn copy_bandwidth_gbps(&self, bytes: usize, reps: usize) -> Result<f64, GpuError> {
        let src = self.stream.alloc_zeros::<u8>(bytes)?;
        let mut dst = self.stream.alloc_zeros::<u8>(bytes)?;
        self.stream.memcpy_dtod(&src, &mut dst)?;
        let mut samples = self.time_runs(reps.max(1), |_| Ok(self.stream.memcpy_dtod(&src, &mut dst)?))?;
        let ms = crate::stats::median(&mut samples);
        Ok(2.0 * bytes as f64 / (ms * 1e6))
    }
}
