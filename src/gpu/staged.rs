//! gpu-strip on one large image held in ordinary (pageable) host memory, as the single-image command has it
//! after decoding: the pattern of a **software pipeline** with staging buffers.
//!
//! The copy engines reach the bus's speed (55 GB/s each way on the H200 machine) only from page-locked
//! (pinned) memory; from pageable memory the driver copies through its own small staging buffers, at
//! 9 GB/s. Page-locking the decoded image in place (`cuMemHostRegister`) cost more than it saved: 129 ms of
//! memory movement at 16384², 6.6× the PCIe bound (`docs/performance.md` v0.16). So the image goes through
//! a small ring of pinned buffers instead, one per stream: for band k, the host waits for the stream's
//! previous band, copies that band's edges out of the pinned output buffer, copies band k's RGB rows (with
//! halos, [`crate::bands`]) into the pinned input buffer — both on all cores — and enqueues upload, kernel
//! and download. Band k's host copies overlap the transfers and kernels of the bands before it.

use std::time::Instant;

use cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT;
use cudarc::driver::{CudaEvent, PinnedHostSlice};
use rayon::prelude::*;

use super::buffers::DeviceImage;
use super::patterns::Dims;
use super::{Gpu, GpuError};
use crate::bands::{bands, Band};
use crate::sobel::Filter;
use crate::variant::Variant;

/// Images with at least this many bytes of RGB are staged in the single-image command: 64 MB (≈ 4.6k ×
/// 4.6k pixels). Below it, the plain pageable copies of [`super::variants`] cost a few ms at most.
pub const STREAMED_FROM_BYTES: usize = 64 << 20;

/// Streams, each with its own pinned and device buffers: enough that a band's host copies, upload, kernel
/// and download can each be in flight for a different band.
const LANES: usize = 3;

/// What [`run_streamed`] measured, in milliseconds.
pub struct Streamed {
    /// The edge image.
    pub output: Vec<u8>,
    /// Allocating the pinned and device buffers, and the output's pages.
    pub setup_ms: f64,
    /// Host copies, transfers and kernels of every band, overlapped, wall clock.
    pub pipeline_ms: f64,
    /// The kernels' own time, summed over the bands (hidden under the copies).
    pub kernel_ms: f64,
}

/// One stream of the ring: its device buffers and its pinned staging buffers, and the band in flight.
struct Lane {
    gpu: Gpu,
    device: DeviceImage,
    pinned_in: PinnedHostSlice<u8>,
    pinned_out: PinnedHostSlice<u8>,
    in_flight: Option<(Band, CudaEvent, CudaEvent)>,
}

/// gpu-strip over `rgb` (`width × height`, pageable) in bands of about 8 MB of RGB, staged as the module
/// doc says.
pub fn run_streamed(gpu: &Gpu, rgb: &[u8], width: usize, height: usize, filter: Filter) -> Result<Streamed, GpuError> {
    let limit = super::variants::max_band_rows(gpu, Variant::GpuStrip, width)?;
    run_streamed_in_bands(gpu, rgb, width, height, filter, ((8 << 20) / (3 * width)).clamp(1, limit))
}

/// [`run_streamed`] with bands of `band_rows` output rows (tests use tiny ones, so that band edges land
/// everywhere).
pub fn run_streamed_in_bands(
    gpu: &Gpu,
    rgb: &[u8],
    width: usize,
    height: usize,
    filter: Filter,
    band_rows: usize,
) -> Result<Streamed, GpuError> {
    assert_eq!(rgb.len(), 3 * width * height);
    let started = Instant::now();
    let filtered = gpu.for_filter(filter)?;
    let in_rows = (band_rows + 2).min(height);
    let mut lanes = Vec::with_capacity(LANES);
    for _ in 0..LANES {
        let lane_gpu = filtered.on_stream(gpu.ctx.new_stream()?);
        let device = DeviceImage::alloc(&lane_gpu, Variant::GpuStrip, in_rows * width)?;
        // SAFETY (alloc): the host writes each staging buffer's bytes before the upload reads them, and the
        // download writes the output buffer's bytes before the host reads them. Write-combined memory is
        // fast for the host to write and the device to read: right for the input, wrong for the output.
        let (pinned_in, pinned_out) = unsafe {
            (
                gpu.ctx.alloc_pinned_with_flags::<u8>(
                    3 * in_rows * width,
                    cudarc::driver::sys::CU_MEMHOSTALLOC_WRITECOMBINED,
                )?,
                gpu.ctx.alloc_pinned_with_flags::<u8>(band_rows.min(height) * width, 0)?,
            )
        };
        lanes.push(Lane { gpu: lane_gpu, device, pinned_in, pinned_out, in_flight: None });
    }
    // The output's pages touched on all cores first: one thread faulting in 268 MB (16384²) as the copies
    // reach it took longer than the copies themselves.
    let mut output = vec![0u8; width * height];
    output.par_chunks_mut(1 << 20).for_each(|c| c.fill(0));
    let setup_ms = started.elapsed().as_secs_f64() * 1e3;

    let started = Instant::now();
    let mut kernel_ms = 0.0;
    let mut copy_in = std::time::Duration::ZERO;
    let result = (|| -> Result<(), GpuError> {
        for (k, band) in bands(height, band_rows).into_iter().enumerate() {
            let lane = &mut lanes[k % LANES];
            kernel_ms += finish(lane, &mut output, width)?;
            let Lane { gpu, device, pinned_in, pinned_out, in_flight } = lane;
            let src = &rgb[band.in_y0 * width * 3..(band.in_y0 + band.in_rows) * width * 3];
            let staged = &mut pinned_in.as_mut_slice()?[..src.len()];
            let t = Instant::now();
            parallel_copy(staged, src);
            copy_in += t.elapsed();
            let d = Dims::new(width as u32, band.in_rows as u32)?;
            // SAFETY: `staged` is pinned memory owned by this lane; it is not written again before
            // `finish` has synchronised this lane's stream.
            unsafe { device.upload_async(gpu, staged) }?;
            let before = gpu.stream.record_event(Some(CU_EVENT_DEFAULT))?;
            device.launch(gpu, d, filter.border)?;
            let after = gpu.stream.record_event(Some(CU_EVENT_DEFAULT))?;
            let dst = &mut pinned_out.as_mut_slice()?[..band.rows * width];
            // SAFETY: the band's own rows start `skip` rows into the device output; `dst` is pinned memory
            // owned by this lane, not read before `finish` has synchronised this lane's stream.
            unsafe { device.download_async(gpu, band.skip() * width, dst) }?;
            *in_flight = Some((band, before, after));
        }
        Ok(())
    })();
    // Always wait for every stream, error or not: no copy may outlive the lanes' buffers.
    for lane in &mut lanes {
        let finished = finish(lane, &mut output, width);
        if result.is_ok() {
            kernel_ms += finished?;
        }
    }
    result?;
    let pipeline_ms = started.elapsed().as_secs_f64() * 1e3;
    crate::trace::mark(&format!(
        "staged: setup {setup_ms:.1} ms, pipeline {pipeline_ms:.1} ms (host copies in {:.1} ms), kernels {kernel_ms:.2} ms",
        copy_in.as_secs_f64() * 1e3
    ));
    Ok(Streamed { output, setup_ms, pipeline_ms, kernel_ms })
}

/// Waits for the lane's band in flight, if any, copies its edges into `output`, and returns its kernel
/// time (ms).
fn finish(lane: &mut Lane, output: &mut [u8], width: usize) -> Result<f64, GpuError> {
    let Some((band, before, after)) = lane.in_flight.take() else { return Ok(0.0) };
    lane.gpu.stream.synchronize()?;
    let edges = &lane.pinned_out.as_slice()?[..band.rows * width];
    parallel_copy(&mut output[band.y0 * width..(band.y0 + band.rows) * width], edges);
    Ok(before.elapsed_ms(&after)? as f64)
}

/// `dst.copy_from_slice(src)` on all cores, in 1 MB pieces: one core copies ~10 GB/s, below the bus's 55.
fn parallel_copy(dst: &mut [u8], src: &[u8]) {
    dst.par_chunks_mut(1 << 20).zip(src.par_chunks(1 << 20)).for_each(|(d, s)| d.copy_from_slice(s));
}
