//! gpu-strip on one large image held in ordinary (pageable) host memory, as the single-image command has it
//! after decoding: the pattern of a **software pipeline** with staging buffers.
//!
//! The copy engines reach the bus's speed (55 GB/s each way on the H200 machine) only from page-locked
//! (pinned) memory; from pageable memory the driver copies through its own small staging buffers, at
//! 9 GB/s. Page-locking the decoded image in place (`cuMemHostRegister`) cost more than it saved: 129 ms of
//! memory movement at 16384², 6.6× the PCIe bound. So the image goes through
//! a small ring of pinned buffers instead ([`Ring`], one stream per lane): for band k, the host copies band
//! k's RGB rows (with halos, [`crate::bands`]) into a free pinned input buffer and enqueues upload, kernel and
//! download; the ring hands back the lane's previous band, whose edges the host copies out of its pinned
//! output buffer — both copies on all cores. Band k's host copies overlap the transfers and kernels of the
//! bands before it. [`crate::engine::stream`] feeds the same ring straight from the PNG decoder, with no host copy.

use std::time::Instant;

use cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT;
use cudarc::driver::CudaEvent;
use rayon::prelude::*;

use super::buffers::DeviceImage;
use super::patterns::Dims;
use super::pinned::PinnedRegion;
use super::{Gpu, GpuError};
use crate::bands::{bands, Band};
use crate::sobel::Filter;
use crate::variant::Variant;

/// Images with at least this many bytes of RGB are staged in the single-image command: 64 MB (≈ 4.6k ×
/// 4.6k pixels). Below it, the plain pageable copies of [`super::variants`] cost a few ms at most.
pub const STREAMED_FROM_BYTES: usize = 64 << 20;

/// Streams, each with its own pinned and device buffers: enough that a band's host copies, upload, kernel
/// and download can each be in flight for a different band.
pub const LANES: usize = 3;

/// What [`run_streamed`] measured, in milliseconds.
pub struct Streamed {
    /// The edge image.
    pub output: Vec<u8>,
    /// Allocating the pinned and device buffers, and the output's pages.
    pub setup_ms: f64,
    /// Freeing the pinned and device buffers.
    pub release_ms: f64,
    /// Host copies, transfers and kernels of every band, overlapped, wall clock.
    pub pipeline_ms: f64,
    /// The kernels' own time, summed over the bands (hidden under the copies).
    pub kernel_ms: f64,
}

/// A band handed back by the [`Ring`] once its lane's stream has finished it: its input and output host
/// buffers are free again, and `output` holds the band's own rows of edges.
pub struct Done<'b> {
    /// Which band.
    pub band: Band,
    /// The buffer its RGB rows (with halos) were uploaded from.
    pub input: &'b mut [u8],
    /// The buffer whose first `band.rows` rows hold its edges.
    pub output: &'b mut [u8],
}

/// One stream of the ring: its device buffers and the band in flight, with events around its upload,
/// kernel and download.
struct Lane<'b> {
    gpu: Gpu,
    device: DeviceImage,
    in_flight: Option<(Done<'b>, [CudaEvent; 4])>,
}

/// gpu-strip over bands on [`LANES`] streams, each with its own device buffers: band k goes to lane
/// k mod [`LANES`], whose previous band is finished (and handed back) first, so bands come back in order.
/// Upload, kernel and download of band k overlap those of the bands on the other lanes. The host buffers
/// are the caller's, borrowed until handed back; for the copies to run at the bus's speed and overlap,
/// they should be pinned. This is the one place the streamed paths ([`run_streamed`], [`crate::engine::stream`])
/// enqueue copies that outlive the call.
pub struct Ring<'b> {
    lanes: Vec<Lane<'b>>,
    filter: Filter,
    width: usize,
    next: usize,
    /// Summed event times of the finished bands: host ↔ device copies, and kernels (ms).
    pub copy_ms: f64,
    /// See `copy_ms`.
    pub kernel_ms: f64,
}

impl<'b> Ring<'b> {
    /// Lanes for bands of up to `in_rows` input rows of `width` pixels.
    pub fn new(gpu: &Gpu, filter: Filter, width: usize, in_rows: usize) -> Result<Ring<'b>, GpuError> {
        let filtered = gpu.for_filter(filter)?;
        let mut lanes = Vec::with_capacity(LANES);
        for _ in 0..LANES {
            let lane_gpu = filtered.on_stream(gpu.ctx.new_stream()?);
            let device = DeviceImage::alloc(&lane_gpu, Variant::GpuStrip, in_rows * width)?;
            lanes.push(Lane { gpu: lane_gpu, device, in_flight: None });
        }
        Ok(Ring { lanes, filter, width, next: 0, copy_ms: 0.0, kernel_ms: 0.0 })
    }

    /// Enqueues `band` (its `in_rows` RGB rows in `input`, its edges to go into `output`, `band.rows` rows)
    /// on the next lane, and hands back the band that lane finished, if it had one.
    pub fn submit(
        &mut self,
        band: Band,
        input: &'b mut [u8],
        output: &'b mut [u8],
    ) -> Result<Option<Done<'b>>, GpuError> {
        let width = self.width;
        let k = self.next % LANES;
        self.next += 1;
        let done = self.finish(k)?;
        let Lane { gpu, device, in_flight } = &mut self.lanes[k];
        let d = Dims::new(width as u32, band.in_rows as u32)?;
        let event = || gpu.stream.record_event(Some(CU_EVENT_DEFAULT));
        let before_upload = event()?;
        // SAFETY: `input` and `output` are borrowed for 'b and held (whole: they go back to the caller
        // whole) in `in_flight` until this lane's stream is synchronised (`finish`, or `Drop`), so no copy
        // outlives them or races a host access.
        unsafe { device.upload_async(gpu, &input[..band.in_rows * width * 3]) }?;
        let before_kernel = event()?;
        device.launch(gpu, d, self.filter.border)?;
        let after_kernel = event()?;
        // SAFETY: as above; the band's own rows start `skip` rows into the device output.
        unsafe { device.download_async(gpu, band.skip() * width, &mut output[..band.rows * width]) }?;
        let after_download = event()?;
        *in_flight = Some((Done { band, input, output }, [before_upload, before_kernel, after_kernel, after_download]));
        Ok(done)
    }

    /// Waits for every lane and hands back their bands, in order.
    pub fn drain(&mut self) -> Result<Vec<Done<'b>>, GpuError> {
        let mut done = Vec::new();
        for i in 0..LANES {
            if let Some(d) = self.finish((self.next + i) % LANES)? {
                done.push(d);
            }
        }
        Ok(done)
    }

    /// Waits for lane `k`'s band, if any, and hands it back with its times added.
    fn finish(&mut self, k: usize) -> Result<Option<Done<'b>>, GpuError> {
        let lane = &mut self.lanes[k];
        let Some((done, [up, kernel, after, down])) = lane.in_flight.take() else { return Ok(None) };
        lane.gpu.stream.synchronize()?;
        self.copy_ms += (up.elapsed_ms(&kernel)? + after.elapsed_ms(&down)?) as f64;
        self.kernel_ms += kernel.elapsed_ms(&after)? as f64;
        Ok(Some(done))
    }
}

impl Drop for Ring<'_> {
    /// No copy may outlive the borrowed buffers, whatever went wrong: every lane's stream is waited for.
    fn drop(&mut self) {
        for lane in &self.lanes {
            if lane.in_flight.is_some() {
                let _ = lane.gpu.stream.synchronize();
            }
        }
    }
}

/// gpu-strip over `rgb` (`width × height`, pageable) in bands of 4–8 MB of RGB ([`band_rows_for`]), staged
/// as the module doc says.
pub fn run_streamed(gpu: &Gpu, rgb: &[u8], width: usize, height: usize, filter: Filter) -> Result<Streamed, GpuError> {
    run_streamed_in_bands(gpu, rgb, width, height, filter, band_rows(gpu, width, height)?)
}

/// Output rows of a band (at least one) of a `width × height` image: a 64th of its RGB, but at least 4 MB
/// and at most 8 MB. Each copy costs ~20 µs beyond its bytes (the GPU idles between bands: 4 MB up and
/// 1.3 MB down take 117–123 µs where the bytes alone take 102), and each MB of band costs ~0.3 ms of
/// pinning and unpinning (a stream holds about five bands' worth, [`super::pinned`]); at 16384² the sum is
/// least near 8 MB. Smaller images keep 4 MB bands, so that their buffers
/// stay small beside the image (a 6000² gpu-strip run peaked at 4.6 bytes a pixel with 4 MB bands and 5.4
/// with 8 MB).
pub fn band_rows_for(width: usize, height: usize) -> usize {
    let bytes = (3 * width * height / 64).clamp(4 << 20, 8 << 20);
    (bytes / (3 * width)).max(1)
}

/// [`band_rows_for`], within what the device takes.
pub fn band_rows(gpu: &Gpu, width: usize, height: usize) -> Result<usize, GpuError> {
    let limit = super::variants::max_band_rows(gpu, Variant::GpuStrip, crate::sobel::Output::Edges, width)?;
    Ok(band_rows_for(width, height).min(limit))
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
    let radius = filter.stencil().radius;
    let in_rows = crate::bands::max_in_rows(band_rows, radius).min(height);
    let out_rows = band_rows.min(height);
    // One pair more than lanes: a band's buffers are filled before `submit` frees its lane's previous pair.
    let sizes = [3 * in_rows * width, out_rows * width].repeat(LANES + 1);
    let mut pinned = PinnedRegion::new(&gpu.ctx, &sizes)?;
    let mut buffers = pinned.buffers().into_iter();
    let mut free: Vec<(&mut [u8], &mut [u8])> = Vec::with_capacity(LANES + 1);
    while let (Some(input), Some(output)) = (buffers.next(), buffers.next()) {
        free.push((input, output));
    }
    let mut ring = Ring::new(gpu, filter, width, in_rows)?;
    // The output's pages touched on all cores first: one thread faulting in 268 MB (16384²) as the copies
    // reach it took longer than the copies themselves.
    let mut output = vec![0u8; width * height];
    output.par_chunks_mut(1 << 20).for_each(|c| c.fill(0));
    let setup_ms = started.elapsed().as_secs_f64() * 1e3;

    let started = Instant::now();
    let mut copy_in = std::time::Duration::ZERO;
    fn collect<'b>(d: Done<'b>, free: &mut Vec<(&'b mut [u8], &'b mut [u8])>, output: &mut [u8], width: usize) {
        let rows = d.band.y0 * width..(d.band.y0 + d.band.rows) * width;
        parallel_copy(&mut output[rows.clone()], &d.output[..rows.len()]);
        free.push((d.input, d.output));
    }
    for band in bands(height, band_rows, radius) {
        let (input, out) = free.pop().expect("a lane's buffers are free before it is reused");
        let src = &rgb[band.in_y0 * width * 3..(band.in_y0 + band.in_rows) * width * 3];
        let t = Instant::now();
        parallel_copy(&mut input[..src.len()], src);
        copy_in += t.elapsed();
        if let Some(d) = ring.submit(band, input, out)? {
            collect(d, &mut free, &mut output, width);
        }
    }
    for d in ring.drain()? {
        collect(d, &mut free, &mut output, width);
    }
    let pipeline_ms = started.elapsed().as_secs_f64() * 1e3;
    let kernel_ms = ring.kernel_ms;
    let started = Instant::now();
    drop((ring, free));
    drop(pinned);
    let release_ms = started.elapsed().as_secs_f64() * 1e3;
    crate::trace::mark(&format!(
        "staged: setup {setup_ms:.1} ms, pipeline {pipeline_ms:.1} ms (host copies in {:.1} ms), kernels {kernel_ms:.2} ms, \
         release {release_ms:.1} ms",
        copy_in.as_secs_f64() * 1e3
    ));
    Ok(Streamed { output, setup_ms, pipeline_ms, kernel_ms, release_ms })
}

/// `dst.copy_from_slice(src)` on all cores, in 1 MB pieces: one core copies ~10 GB/s, below the bus's 55.
fn parallel_copy(dst: &mut [u8], src: &[u8]) {
    dst.par_chunks_mut(1 << 20).zip(src.par_chunks(1 << 20)).for_each(|(d, s)| d.copy_from_slice(s));
}

#[cfg(test)]
mod tests {
    use super::band_rows_for;

    #[test]
    fn bands_are_a_64th_of_the_image_between_4_and_8_mb() {
        let mb = |w: usize, h: usize| 3 * w * band_rows_for(w, h);
        assert_eq!(band_rows_for(6000, 6000), (4 << 20) / 18000); // 108 MB of RGB: 4 MB
        assert_eq!(band_rows_for(16384, 16384), (8 << 20) / (3 * 16384)); // 805 MB: 8 MB
        let (w, h) = (10000, 10000); // 300 MB: a 64th, 4.7 MB
        assert!(mb(w, h) <= 3 * w * h / 64 && mb(w, h) > 3 * w * h / 64 - 3 * w);
        assert_eq!(band_rows_for(5_000_000, 2), 1); // a row over 8 MB: one row a band
        assert_eq!(band_rows_for(1, 1), (4 << 20) / 3);
    }
}
