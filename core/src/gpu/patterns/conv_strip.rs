//! `cuda/conv_strip.cu` — a rank-one kernel's row pass once per input row, kept in a ring of rows in registers
//! down a strip of columns. `filter --variant gpu-strip`.
//!
//! `conv_strip(const u8* in, u8* out, int width, int height, int border, int rows)` reads `planes·w·h` bytes and
//! writes `planes·w·h` bytes; each thread of plane z owns `columns` columns (a strip) of `rows` rows (a band), the
//! bands' strips at a row's ends numbered first and their interior strips after them (so that a warp runs one form);
//! [`threads`] a plane: one a strip, and for a box two more a warp of interior strips, which share their halo.

use cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT;
use cudarc::driver::{CudaFunction, CudaSlice, DevicePtr, DevicePtrMut, DriverError, LaunchConfig};

use super::{Arg, KernelSource};
use crate::gpu::conv::ConvJob;

/// The kernel file, embedded.
pub const SOURCE: KernelSource = KernelSource { name: "conv_strip", source: include_str!("../../../../cuda/conv_strip.cu") };

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

/// A box's columns a thread on images of fewer than [`WIDE_PIXELS`] pixels (all planes): twice the threads of 16.
pub const BOX_NARROW: u32 = 8;

/// A packed ring's columns a thread (the `.cu` file's RING_PACKED: a gradient whose every |G| fits 16 bits) on images
/// of [`WIDE_PIXELS`] pixels or more: its step's loads, addresses, loop and prefetch shared by 8 pixels instead of 4
/// (scharr:9's aligned step 24 → 20 instructions a pixel, 80 → 128 registers).
pub const RING_WIDE: u32 = 8;

/// From this many pixels (all planes) a box marches 16 columns a thread, below it [`BOX_NARROW`]; a packed ring
/// [`RING_WIDE`], below it 4. Measured on the H100: at 16384² (2^28 pixels) 16 columns
/// take box:15 in 0.319 ms against 0.350 with 8; at 4256×2832 RGB (36 Mpixel) and 1920×1080 RGB 8 columns are faster
/// at every diameter (box:15 0.134 ms against 0.171; box:3 at 1920×1080 0.025 against 0.045). Fewer threads than
/// about four waves of the GPU wait on their own march; the threshold lies between the two measured sizes (not
/// measured in between). The ring's 8 columns: scharr:9 at 16384² 60 → 65 % of the copy bandwidth; on the
/// filter study's pyramid (at most 16.7 Mpixel an image) slower at every size.
pub const WIDE_PIXELS: u64 = 1 << 27;

/// The builds a kernel is loaded in, by columns a thread, the one for large images first: a box's two (16, then
/// [`BOX_NARROW`]), a packed ring's two ([`RING_WIDE`], then 4), of which each image takes one ([`build_for`]);
/// another ring's one.
pub fn column_builds(flat: bool, packed: bool) -> &'static [u32] {
    match (flat, packed) {
        (true, _) => &[16, BOX_NARROW],
        (false, true) => &[RING_WIDE, 4],
        (false, false) => &[4],
    }
}

/// Which of `builds` ([`column_builds`], or a tuning's one build) an image of `pixels` pixels (all planes) takes:
/// the first from [`WIDE_PIXELS`], the second below.
pub fn build_for(builds: &[u32], pixels: u64) -> usize {
    usize::from(builds.len() > 1 && pixels < WIDE_PIXELS)
}

/// Strips a launch aims for: 64 rows a thread of 4 columns at 16384², measured fastest there on the H200 (box:15
/// 1.39 ms at 64 rows, 1.52 at 32, 1.45 at 256; scharr:9 0.84 / 0.93 / 0.94 ms) — the
/// kernel is latency-bound, so more strips in flight beat fewer priming rows.
const STRIPS: u64 = 1 << 20;

/// Strips a box's launch aims for on images of [`WIDE_PIXELS`] or more: 12 rows a band at 16384², shorter than its
/// window (15 rows for box:15), though each band then reads 14 rows before its first output. Measured on the H100
///: 0.2514 ms at 16 rows (the rule above),
/// 0.2399 at 14, 0.2369 at 12, 0.2365 at 11, 0.2355 at 10, 0.2489 at 8; at 24 and 32 rows 0.348 and 0.371. Why is
/// not profiled; likely L2: the image is much larger than it, and the rows a band reads before its first output are
/// the rows the band above reads last, closer together in time with shorter bands. Not used below [`WIDE_PIXELS`]:
/// 4256×2832 RGB (8 columns, 15 rows by the rule above) took 0.0795 ms at 8 rows against 0.0754.
const BOX_STRIPS: u64 = 1_400_000;

/// Strip-rows (strips × rows, all planes) from which a launch of 8-row bands makes about two waves of threads on
/// an H100 or H200 (132 SMs × 1024 threads at 64 registers).
const FILL: u64 = 1 << 21;

/// Threads in about two waves of such a GPU: what a smaller image's launch aims for.
const TWO_WAVES: u64 = 1 << 18;

/// Threads in about one wave of such a GPU: what a launch that overlaps the next ([`ConvJob::overlap`]) aims for,
/// whatever the image. Measured on the H100, the filter study's pyramid with its launches
/// overlapped, gpu-strip scharr:3 / 7 / 9: 0.150 / 0.231 / 0.292 ms aiming at 2^17 threads, 0.173 / 0.237 / 0.273 at
/// 2^16, 0.228 / 0.332 / 0.366 at 2^15, and 0.191 / 0.340 / 0.435 with the rule of launches that do not overlap.
const ONE_WAVE: u64 = 1 << 17;

/// Rows a thread of `columns` columns for `planes` planes of `w × h` and a kernel of radius `r` (a ring's radius in
/// the rows it keeps: the kernel's over [`ConvKernel::ring_stride`](crate::conv::ConvKernel::ring_stride)), a box
/// (`flat`) or not (at most the image).
/// An image of `FILL` strip-rows or more: enough strips to fill the GPU, but at least 2r + 1 rows, so that a
/// band's 2r priming rows are fewer than its output rows, and at least 8. Measured for a box of 16 columns at 16384²
///: box:3 0.315 ms at 16 rows (this rule's choice), 0.366 at 32; box:15 0.545 at 16,
/// 0.554 at 32. A smaller image lasts as long as one thread's march (priming rows and steps, each a memory round
/// trip), so its bands are as short as still gives about two waves of threads, down to one row — a map with a
/// window of rows: the filter study's 483×540 took 17 µs for scharr:3 with 8 rows, 65 blocks on 132 SMs
///. A launch that `overlap`s the next need not fill the GPU by itself (the next image's
/// blocks fill its tail), so its bands are as tall as still give about one wave of threads (`ONE_WAVE`): fewer
/// priming rows, and no launch shorter than one thread's march of them. A box on an image of [`WIDE_PIXELS`] or more
/// aims at `BOX_STRIPS` strips instead.
pub fn rows_for(w: u32, h: u32, planes: u32, columns: u32, r: u32, overlap: bool, flat: bool) -> u32 {
    let strip_rows = strip_rows(w, h, planes, columns);
    let pixels = u64::from(w) * u64::from(h) * u64::from(planes);
    let rows = if overlap {
        strip_rows.div_ceil(ONE_WAVE).max(1) as u32
    } else if flat && pixels >= WIDE_PIXELS {
        (strip_rows.div_ceil(BOX_STRIPS) as u32).max(8)
    } else if strip_rows >= FILL {
        (strip_rows.div_ceil(STRIPS) as u32).max(2 * r + 1).max(8)
    } else {
        (strip_rows / TWO_WAVES).max(1) as u32
    };
    rows.min(h.max(1))
}

/// A launch's strips of `columns` columns (every plane's) × its rows: what [`rows_for`]'s rules count.
fn strip_rows(w: u32, h: u32, planes: u32, columns: u32) -> u64 {
    u64::from(w.div_ceil(columns)) * u64::from(h) * u64::from(planes)
}

/// Rows a thread for a ring's launch on an image of `FILL` strip-rows or more, from `rule`'s ([`rows_for`]) down
/// to half of it (at least 8): the launch runs in waves of `wave` blocks (the SMs × the blocks of this build each
/// holds), every thread marching about as long — its rows and its ring's 2r priming rows, `r` the ring's radius in
/// the rows it keeps — so it lasts about ⌈blocks / wave⌉ × (rows + 2r); `blocks_of` counts a launch's blocks for a
/// number of rows. The rows that make that least, the most rows of those: a last wave nearly full, not a third full.
/// Measured on the H100, scharr:9 at 16384² (8 columns, 6 blocks an SM: waves of 792)
/// at 12 / 16 / 20 / 24 / 28 / 32 rows: 0.2333 / 0.2319 / 0.2294 / 0.2288 / 0.2272 / 0.2394 ms; this picks 28 (11.9
/// waves, where the rule's 32 make 10.3) and ranks the others 24, 20 and 32, 16, 12.
pub fn whole_waves(rule: u32, wave: u64, blocks_of: impl Fn(u32) -> u64, r: u32) -> u32 {
    let cost = |n: u32| blocks_of(n).div_ceil(wave.max(1)) * u64::from(n + 2 * r);
    (rule.div_ceil(2).max(8).min(rule)..=rule).min_by_key(|&n| (cost(n), u32::MAX - n)).unwrap_or(rule)
}

/// Interior strips a warp of a box writes: lanes 1 … 30, lanes 0 and 31 marching the strips either side of them for
/// their column sums only (the `.cu` file's SPAN; its `box_march_shared`).
pub const BOX_SPAN: u64 = 30;

/// Threads a plane for `w × h` in bands of `rows`, `columns` columns a thread, radius `r`, a ring that keeps every
/// `stride`-th row ([`ConvKernel::ring_stride`](crate::conv::ConvKernel::ring_stride)): the `.cu` file's
/// `layout_of(…).threads()`, its twin (the CPU emulation's driver launches that one; tests/filter.rs on the GPU
/// checks that every output byte is written). One a strip and band — `stride` a strip and band of `rows · stride`
/// rows, each marching one row of every `stride` —, the strips at a row's ends first; a box ([`is_box`](
/// crate::gpu::conv::is_box), `flat`, of radius 1 or more) then starts its interior strips on a whole warp and gives
/// each band's interior strips whole warps of [`BOX_SPAN`].
pub fn threads(w: u32, h: u32, (rows, stride): (u32, u32), columns: u32, r: u32, flat: bool) -> u64 {
    let tall = rows.max(1) * stride;
    let (groups, bands) = (u64::from(w.div_ceil(columns)), u64::from(h.div_ceil(tall) * stride));
    if !flat || r == 0 {
        return groups * bands; // (box:1 has no halo to share)
    }
    let (columns, unit) = (u64::from(columns), 8); // a box's load unit (UNIT)
    let ru = u64::from(r).div_ceil(unit) * unit; // the radius rounded up to units (RU)
    let left = ru.div_ceil(columns).min(groups); // strips starting before column RU
    let last = u64::from(w).checked_sub(columns + ru + unit).map(|room| room / columns); // the last interior strip
    let inner = last.filter(|&l| l >= left).map_or(0, |l| l - left + 1);
    (bands * (groups - inner)).next_multiple_of(32) + bands * inner.div_ceil(BOX_SPAN) * 32
}

/// `CUDA_SOBEL_STRIP_ROWS`, a measuring knob (docs/gpu.md): every launch's rows a band instead of [`rows_for`]'s.
fn rows_asked() -> Option<u32> {
    std::env::var("CUDA_SOBEL_STRIP_ROWS").ok()?.parse().ok()
}

/// Launches the kernel, built with `columns` columns a thread ([`build_for`]), with `rows` rows a thread (`None`:
/// [`rows_for`]; the tests set it, so that small images march bands of several rows too), for a box or not, its ring
/// keeping every `stride`-th row.
pub fn launch(
    job: &ConvJob,
    f: &CudaFunction,
    input: &CudaSlice<u8>,
    out: &mut CudaSlice<u8>,
    (columns, rows, (flat, stride)): (u32, Option<u32>, (bool, usize)),
) -> Result<(), DriverError> {
    job.check_io(input, out, &mut None);
    let (w, h, r, stride) = (job.d.width as u32, job.d.height as u32, (job.side as u32) / 2, stride as u32);
    let blocks_of = |rows| threads(w, h, (rows, stride), columns, r, flat).div_ceil(u64::from(BLOCK.0)) * u64::from(job.planes);
    let rows = match rows.or_else(rows_asked) {
        Some(rows) => rows,
        // A ring's priming rows are those it keeps: 2r / stride.
        None => {
            let rule = rows_for(w, h, job.planes, columns, r / stride, job.overlap, flat);
            if flat || job.overlap || strip_rows(w, h, job.planes, columns) < FILL {
                rule
            } else {
                let sms = job.stream.context().attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?;
                let wave = u64::from(f.occupancy_max_active_blocks_per_multiprocessor(BLOCK.0, 0, None)?) * sms as u64;
                whole_waves(rule, wave, blocks_of, r / stride)
            }
        }
    }
    .max(1);
    let threads = threads(w, h, (rows, stride), columns, r, flat);
    let cfg = LaunchConfig {
        grid_dim: (threads.div_ceil(u64::from(BLOCK.0)) as u32, 1, job.planes),
        block_dim: (BLOCK.0, 1, 1),
        shared_mem_bytes: 0,
    };
    let ((i, _read), (o, _written)) = (input.device_ptr(job.stream), out.device_ptr_mut(job.stream));
    let (d, border) = (job.d, job.border);
    let mut args = [Arg::Ptr(i), Arg::Ptr(o), Arg::Int(d.width), Arg::Int(d.height), Arg::Int(border), Arg::Int(rows as i32)];
    // SAFETY: see the module contract; `ConvJob::check_io` checked both buffers against the planes the kernel reads
    // and writes, the arguments follow its C signature, and the grid covers `threads` a plane (the kernel's own count
    // for this build) in 128-thread blocks, as the kernel's indexing assumes (threads past the last strip return).
    unsafe { super::launch_conv(job, f, cfg, &mut args, job.overlap) }
}

#[cfg(test)]
mod tests {
    #[test]
    fn launch_shape_matches_the_cu_file() {
        assert_eq!(super::super::launch_shape_in(super::SOURCE.source), super::BLOCK);
        let define = format!("#define STRIP_G (CONV_FLAT ? {} : {})\n", super::columns(true), super::columns(false));
        assert!(super::SOURCE.source.contains(&define), "conv_strip.cu: {define}");
        assert_eq!(super::column_builds(true, false)[0], super::columns(true), "the file's own count first");
        assert_eq!(super::column_builds(false, false), [super::columns(false)]);
        assert_eq!(super::column_builds(false, true)[1], super::columns(false), "the file's own count for small images");
        let packed = format!("CONV_BOUND <= {}", crate::conv::STRIP_PACKED_BOUND);
        assert!(super::SOURCE.source.contains(&packed), "conv_strip.cu's RING_PACKED: {packed}");
    }

    #[test]
    fn rows_fill_the_gpu_and_stay_within_the_image() {
        assert_eq!(super::rows_for(16384, 16384, 1, 4, 4, false, false), 64);
        assert_eq!(super::rows_for(16384, 16384, 1, 16, 7, false, false), 16);
        assert_eq!(super::rows_for(16384, 16384, 1, 16, 1, false, false), 16);
        assert_eq!(super::rows_for(16384, 16384, 1, 16, 7, false, true), 12, "a box on an image much larger than L2");
        assert_eq!(super::rows_for(4256, 2832, 3, 8, 7, false, true), 15, "a box below WIDE_PIXELS: the rule");
        assert_eq!(super::rows_for(1920, 1080, 3, 16, 7, false, false), 1, "0.4 M strip-rows: short of two waves of 8-row bands");
        assert_eq!(super::rows_for(1920, 1080, 3, 8, 7, false, false), 2);
        assert_eq!(super::rows_for(4256, 2832, 3, 8, 7, false, false), 15);
        assert_eq!(super::rows_for(3866, 4320, 1, 4, 1, false, false), 8);
        assert_eq!(super::rows_for(1933, 2160, 1, 4, 2, false, false), 3);
        assert_eq!(super::rows_for(483, 540, 1, 4, 1, false, false), 1);
        assert_eq!(super::rows_for(1, 1, 1, 4, 7, false, false), 1);
        assert_eq!(super::rows_for(40, 5, 1, 4, 7, false, false), 1);
        assert_eq!(super::rows_for(1_000_000, 10, 1, 4, 7, false, false), 10, "at most the image");
        // Launches that overlap: about one wave of threads, whatever the image (the pyramid's four octaves at 7×7).
        assert_eq!(super::rows_for(3866, 4320, 1, 4, 3, true, false), 32);
        assert_eq!(super::rows_for(1933, 2160, 1, 4, 3, true, false), 8);
        assert_eq!(super::rows_for(966, 1080, 1, 4, 3, true, false), 2);
        assert_eq!(super::rows_for(483, 540, 1, 4, 3, true, false), 1);
        assert_eq!(super::rows_for(1, 1, 1, 4, 7, true, false), 1);
    }

    #[test]
    fn a_ring_on_a_large_image_takes_the_rows_that_fill_its_last_wave() {
        use super::{threads, whole_waves};
        // scharr:9 at 16384², 8 columns, every 4th row kept: the rule's 32 rows make 10.3 waves of 792 blocks.
        let blocks = |rows| threads(16384, 16384, (rows, 4), 8, 4, false).div_ceil(128);
        assert_eq!(blocks(32), 8192);
        assert_eq!(whole_waves(32, 792, blocks, 1), 28, "11.9 waves");
        assert_eq!(whole_waves(8, 792, blocks, 1), 8, "never below 8 rows");
        assert_eq!(whole_waves(32, 8192, blocks, 1), 32, "one whole wave already");
    }

    #[test]
    fn a_box_gives_its_warps_of_interior_strips_two_lanes_of_halo() {
        use super::threads;
        // 16384² in bands of 16 rows, 16 columns: 1024 strips a row, of which 1 at the left and 1022 interior (the
        // last starts at 16352 = 16384 − 16 − 8 − 8); 2 edge strips × 1024 bands = 2048 threads, then 35 warps a band.
        assert_eq!(threads(16384, 16384, (16, 1), 16, 7, true), 2048 + 1024 * 35 * 32);
        assert_eq!(threads(16384, 16384, (16, 1), 16, 7, false), 1024 * 1024, "the ring: one a strip");
        assert_eq!(threads(16384, 16384, (16, 1), 16, 0, true), 1024 * 1024, "box:1: no halo");
        // 1920 wide, 8 columns: 240 strips, 1 at the left, the last interior at (1920 − 24) / 8 = 237: 237 interior
        // (8 warps of 30), 3 edge strips a band; 3 bands: 9 → 32, then 3 × 8 × 32.
        assert_eq!(threads(1920, 3, (1, 1), 8, 1, true), 32 + 3 * 8 * 32);
        // Narrower than a strip and its window: every strip an edge strip, a thread each, on a whole warp.
        assert_eq!(threads(20, 7, (1, 1), 16, 7, true), 32);
        assert_eq!(threads(1, 1, (1, 1), 16, 7, true), 32);
        assert_eq!(threads(20, 70, (1, 1), 16, 7, true), 2 * 70 + 20);
        // scharr:9's ring keeps every 4th row: 4 threads a strip and band of 4 × 32 rows, 128 bands of 128 rows.
        assert_eq!(threads(16384, 16384, (32, 4), 8, 4, false), 2048 * 128 * 4);
        // 130 rows in bands of 2 × 4: 17 bands (the last of 2 rows), 4 threads each (two of them with no row).
        assert_eq!(threads(8, 130, (2, 4), 8, 4, false), 17 * 4);
    }

    #[test]
    fn a_box_and_a_packed_ring_take_more_columns_only_on_large_images() {
        let (boxed, packed, ring) =
            (super::column_builds(true, false), super::column_builds(false, true), super::column_builds(false, false));
        assert_eq!(boxed[super::build_for(boxed, 16384 * 16384)], 16);
        assert_eq!(boxed[super::build_for(boxed, 4256 * 2832 * 3)], 8);
        assert_eq!(boxed[super::build_for(boxed, 1)], 8);
        assert_eq!(packed[super::build_for(packed, 16384 * 16384)], 8);
        assert_eq!(packed[super::build_for(packed, 3866 * 4320)], 4, "the filter study's largest image");
        assert_eq!(ring[super::build_for(ring, 16384 * 16384)], 4);
        assert_eq!(ring[super::build_for(ring, 1)], 4);
        assert_eq!(super::build_for(&[8], 16384 * 16384), 0, "a tuning's one build, whatever the image");
    }
}
