//! `cuda/conv_strip.cu` — a rank-one kernel's row pass once per input row, kept in a ring of rows in registers
//! down a strip of columns. `filter --variant gpu-strip`.
//!
//! `conv_strip(const u8* in, u8* out, int width, int height, int border, int rows)` reads `planes·w·h` bytes and
//! writes `planes·w·h` bytes; each thread of plane z owns `columns` columns (a strip) of `rows` rows (a band), the
//! bands' interior strips numbered first and their strips at a row's ends after them (so that a warp runs one form);
//! ⌈w / columns⌉ · ⌈h / rows⌉ threads a plane.

use cudarc::driver::{CudaFunction, CudaSlice, DriverError, LaunchConfig, PushKernelArg};

use super::KernelSource;
use crate::gpu::conv::ConvJob;

/// The kernel file, embedded.
pub const SOURCE: KernelSource = KernelSource { name: "conv_strip", source: include_str!("../../../cuda/conv_strip.cu") };

/// 128 threads a block, one strip each.
pub const BLOCK: (u32, u32) = (128, 1);

/// Columns a thread (STRIP_G in the `.cu` file): 4 for the ring of rows, 16 for a box (`flat`), which has none.
pub fn columns(flat: bool) -> u32 {
    if flat {
        16
    } else {
        4
    }
}

/// Strips a launch aims for: 64 rows a thread of 4 columns at 16384², measured fastest there on the H200 (box:15
/// 1.39 ms at 64 rows, 1.52 at 32, 1.45 at 256; scharr:9 0.84 / 0.93 / 0.94 ms: docs/performance.md v0.29) — the
/// kernel is latency-bound, so more strips in flight beat fewer priming rows.
const STRIPS: u64 = 1 << 20;

/// Rows a thread of `columns` columns for `planes` planes of `w × h` and a kernel of radius `r`: enough strips to
/// fill the GPU, but at least 2r + 1 rows, so that a band's 2r priming rows are fewer than its output rows (and at
/// least 8, at most the image). Measured for a box of 16 columns at 16384² (docs/performance.md v0.33): box:3 0.315 ms
/// at 16 rows (this rule's choice), 0.366 at 32; box:15 0.545 at 16, 0.554 at 32.
pub fn rows_for(w: u32, h: u32, planes: u32, columns: u32, r: u32) -> u32 {
    let strips = u64::from(w.div_ceil(columns)) * u64::from(h) * u64::from(planes);
    (strips.div_ceil(STRIPS) as u32).max(2 * r + 1).clamp(8, h.max(8))
}

/// Launches the kernel, built with `columns` columns a thread ([`columns`]).
pub fn launch(
    job: &ConvJob,
    f: &CudaFunction,
    input: &CudaSlice<u8>,
    out: &mut CudaSlice<u8>,
    columns: u32,
) -> Result<(), DriverError> {
    job.check_io(input, out, &mut None);
    let (w, h) = (job.d.width as u32, job.d.height as u32);
    let rows = rows_for(w, h, job.planes, columns, (job.side as u32) / 2);
    let threads = u64::from(w.div_ceil(columns)) * u64::from(h.div_ceil(rows));
    let cfg = LaunchConfig {
        grid_dim: (threads.div_ceil(u64::from(BLOCK.0)) as u32, 1, job.planes),
        block_dim: (BLOCK.0, 1, 1),
        shared_mem_bytes: 0,
    };
    let rows = rows as i32;
    let mut b = job.stream.launch_builder(f);
    b.arg(input).arg(out).arg(&job.d.width).arg(&job.d.height).arg(&job.border).arg(&rows);
    // SAFETY: see the module contract; `ConvJob::check_io` checked both buffers against the planes the kernel reads
    // and writes, the arguments follow its C signature, and the grid covers ⌈w / columns⌉ · ⌈h / rows⌉ strips a plane
    // in 128-thread blocks, as the kernel's indexing assumes (threads past the last strip return).
    unsafe { b.launch(cfg) }.map(drop)
}

#[cfg(test)]
mod tests {
    #[test]
    fn launch_shape_matches_the_cu_file() {
        assert_eq!(super::super::launch_shape_in(super::SOURCE.source), super::BLOCK);
        let define = format!("#define STRIP_G (CONV_FLAT ? {} : {})\n", super::columns(true), super::columns(false));
        assert!(super::SOURCE.source.contains(&define), "conv_strip.cu: {define}");
    }

    #[test]
    fn rows_fill_the_gpu_and_stay_within_the_image() {
        assert_eq!(super::rows_for(16384, 16384, 1, 4, 4), 64);
        assert_eq!(super::rows_for(16384, 16384, 1, 16, 7), 16);
        assert_eq!(super::rows_for(16384, 16384, 1, 16, 1), 16);
        assert_eq!(super::rows_for(1920, 1080, 3, 16, 7), 15);
        assert_eq!(super::rows_for(1920, 1080, 3, 4, 1), 8);
        assert_eq!(super::rows_for(1, 1, 1, 4, 7), 8);
    }
}
