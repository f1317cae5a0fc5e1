//! The GPU variants, each a sequence of launches over device buffers, run with the report's timing
//! categories:
//! - **GPU memory movement** (wall clock, each call synchronised): allocate, copy host→device, and at the
//!   end copy device→host and free;
//! - **GPU computation** (CUDA events with timing enabled, around the variant's kernels): one warm-up
//!   run, then the median of `reps` timed runs.

use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{CudaSlice, CudaStream};
use image::RgbImage;

use super::launch::{Axis, Dims};
use super::{Gpu, GpuError};
use crate::pipeline::{timed, Variant};
use crate::sobel::Border;
use crate::stats::median;

/// What one GPU variant produced and how long each part took, in milliseconds.
pub struct GpuRun {
    pub output: Vec<u8>,
    pub memory_ms: f64,
    pub compute_ms: f64,
}

/// The device buffers of one variant: input, output, and the intermediates its pattern needs.
struct Buffers {
    rgb: CudaSlice<u8>,
    out: CudaSlice<u8>,
    /// gpu-map and gpu-fused-map: the grey image.
    grey: Option<CudaSlice<u8>>,
    /// gpu-map: the exact gradients.
    gradients: Option<(CudaSlice<i16>, CudaSlice<i16>)>,
}

impl Buffers {
    fn alloc(stream: &std::sync::Arc<CudaStream>, variant: Variant, pixels: usize) -> Result<Buffers, GpuError> {
        let grey = matches!(variant, Variant::GpuMap | Variant::GpuFusedMap);
        let gradients = variant == Variant::GpuMap;
        // SAFETY (alloc): uninitialised device memory is fine here — `rgb` is filled by the upload and every
        // other buffer is written in full by a kernel before anything reads it.
        unsafe {
            Ok(Buffers {
                rgb: stream.alloc(3 * pixels)?,
                out: stream.alloc(pixels)?,
                grey: if grey { Some(stream.alloc(pixels)?) } else { None },
                gradients: if gradients { Some((stream.alloc(pixels)?, stream.alloc(pixels)?)) } else { None },
            })
        }
    }
}

/// Enqueues the variant's kernels once.
fn enqueue(gpu: &Gpu, variant: Variant, b: &mut Buffers, d: Dims, border: Border, n: u32) -> Result<(), GpuError> {
    match variant {
        Variant::GpuMap => {
            let grey = b.grey.as_mut().expect("gpu-map allocates grey");
            gpu.launch_grey(&b.rgb, grey, d)?;
            let (gx, gy) = b.gradients.as_mut().expect("gpu-map allocates gradients");
            gpu.launch_gradient(Axis::X, grey, gx, d, border)?;
            gpu.launch_gradient(Axis::Y, grey, gy, d, border)?;
            gpu.launch_magnitude(gx, gy, &mut b.out, d)?;
        }
        Variant::GpuFusedMap => {
            let grey = b.grey.as_mut().expect("gpu-fused-map allocates grey");
            gpu.launch_grey(&b.rgb, grey, d)?;
            gpu.launch_gradient_magnitude(grey, &mut b.out, d, border)?;
        }
        Variant::GpuN1 => gpu.launch_n_per_thread(&b.rgb, &mut b.out, d, border, n)?,
        Variant::GpuFused => gpu.launch_fused(&b.rgb, &mut b.out, d, border)?,
        Variant::CpuScalar | Variant::CpuRayon => unreachable!("{} is not a GPU variant", variant.name()),
    }
    Ok(())
}

/// Runs one GPU variant on `rgb`: upload, warm-up, `reps` timed runs, download.
pub fn run(
    gpu: &Gpu,
    variant: Variant,
    rgb: &RgbImage,
    border: Border,
    n: u32,
    reps: usize,
) -> Result<GpuRun, GpuError> {
    let d = Dims::new(rgb.width(), rgb.height())?;
    let stream = &gpu.stream;

    let (uploaded, upload_ms) = timed(|| -> Result<Buffers, GpuError> {
        let mut b = Buffers::alloc(stream, variant, d.pixels())?;
        stream.memcpy_htod(rgb.as_raw().as_slice(), &mut b.rgb)?;
        stream.synchronize()?;
        Ok(b)
    });
    let mut bufs = uploaded?;

    enqueue(gpu, variant, &mut bufs, d, border, n)?;
    stream.synchronize()?;
    let mut samples = Vec::with_capacity(reps);
    for _ in 0..reps.max(1) {
        let start = stream.record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
        enqueue(gpu, variant, &mut bufs, d, border, n)?;
        let end = stream.record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
        samples.push(start.elapsed_ms(&end)? as f64);
    }

    let (downloaded, download_ms) = timed(|| -> Result<Vec<u8>, GpuError> {
        let out = stream.clone_dtoh(&bufs.out)?;
        drop(bufs);
        stream.synchronize()?;
        Ok(out)
    });
    Ok(GpuRun { output: downloaded?, memory_ms: upload_ms + download_ms, compute_ms: median(&mut samples) })
}
