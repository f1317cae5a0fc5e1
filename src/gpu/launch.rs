//! Every kernel launch — and so every `unsafe` block that launches — lives here.
//!
//! Safety contract, common to all: a kernel may touch exactly the bytes its buffers hold. Each function
//! below states what its kernel reads and writes for an image of `Dims`, checks that the buffers are at
//! least that large (a failed check is a bug in the caller, so it panics before anything is launched), and
//! passes the arguments in the order and types of the kernel's C signature, which is repeated above each
//! launch. `Dims` guarantees width, height > 0 and that they fit the kernels' `int` parameters.
//! Launch errors (bad configuration, too many resources) come back from `launch` as `DriverError`;
//! errors during execution surface at the next synchronisation, which every caller performs.

use cudarc::driver::{CudaSlice, DriverError, LaunchConfig, PushKernelArg};

use super::{Gpu, GpuError};
use crate::sobel::Border;
use crate::variant::{Mapping, N1};

/// Image dimensions as the kernels take them.
#[derive(Clone, Copy, Debug)]
pub struct Dims {
    pub width: i32,
    pub height: i32,
}

/// 16×16 = 256 threads: the map kernels' block (a square tile, as the report's 2D mapping suggests).
const MAP_BLOCK: (u32, u32) = (16, 16);
/// 32×8: a warp spans 32 consecutive pixels of one row, so its loads and stores are coalesced.
const FUSED_BLOCK: (u32, u32) = (32, 8);
/// Threads per block of the 1D n:1 kernel.
pub const N1_BLOCK: u32 = 256;
/// tiled.cu's TILE_W × TILE_H.
const TILE: (u32, u32) = (32, 8);
/// vec16.cu: 32 groups of 16 pixels across, 4 rows.
const VEC16_BLOCK: (u32, u32) = (32, 4);
/// strip.cu's STRIP_THREADS.
const STRIP_THREADS: u32 = 128;
/// Fewest rows a strip thread marches (see `launch_strip`).
const STRIP_MIN_ROWS: u64 = 4;
/// CUDA's limit on grid.y (grid.x allows 2^31 − 1).
const MAX_GRID_Y: u64 = 65_535;
/// The most rows one launch handles (grid.y × the shortest block); taller images run in bands.
pub const MAX_ROWS: usize = MAX_GRID_Y as usize * VEC16_BLOCK.1 as usize;

impl Dims {
    pub fn new(width: u32, height: u32) -> Result<Dims, GpuError> {
        let fits = |v: u32| v > 0 && v <= i32::MAX as u32;
        if !(fits(width) && fits(height)) {
            return Err(GpuError::Unsupported(format!("a {width}×{height} image")));
        }
        if height.div_ceil(VEC16_BLOCK.1) as u64 > MAX_GRID_Y {
            return Err(GpuError::Unsupported(format!("images over {} rows", MAX_GRID_Y * VEC16_BLOCK.1 as u64)));
        }
        Ok(Dims { width: width as i32, height: height as i32 })
    }

    pub fn pixels(self) -> usize {
        self.width as usize * self.height as usize
    }

    /// Whether rows can be read in aligned 16-pixel groups (the fast form of vec16 and strip).
    fn aligned16(self) -> bool {
        self.width % 16 == 0
    }

    /// The grid shape when each thread handles a group of 16 pixels of a row.
    fn groups16(self) -> Dims {
        Dims { width: (self.width as u32).div_ceil(16) as i32, height: self.height }
    }

    fn grid(self, block: (u32, u32)) -> LaunchConfig {
        LaunchConfig {
            grid_dim: ((self.width as u32).div_ceil(block.0), (self.height as u32).div_ceil(block.1), 1),
            block_dim: (block.0, block.1, 1),
            shared_mem_bytes: 0,
        }
    }
}

fn border_arg(border: Border) -> i32 {
    border as i32
}

impl Gpu {
    /// `grey_kernel(const u8* rgb, u8* grey, int width, int height)`: reads 3·w·h, writes w·h bytes.
    pub fn launch_grey(&self, rgb: &CudaSlice<u8>, grey: &mut CudaSlice<u8>, d: Dims) -> Result<(), DriverError> {
        assert!(rgb.len() >= 3 * d.pixels() && grey.len() >= d.pixels());
        let mut b = self.stream.launch_builder(&self.kernels.grey);
        b.arg(rgb).arg(grey).arg(&d.width).arg(&d.height);
        // SAFETY: see the module contract; sizes checked above, arguments match the C signature.
        unsafe { b.launch(d.grid(MAP_BLOCK)) }.map(drop)
    }

    /// `sobel_x_kernel(const u8* grey, short* gx, int width, int height, int border)` and its `sobel_y`
    /// twin: read w·h grey bytes, write w·h shorts.
    pub fn launch_gradient(
        &self,
        axis: Axis,
        grey: &CudaSlice<u8>,
        out: &mut CudaSlice<i16>,
        d: Dims,
        border: Border,
    ) -> Result<(), DriverError> {
        assert!(grey.len() >= d.pixels() && out.len() >= d.pixels());
        let f = match axis {
            Axis::X => &self.kernels.sobel_x,
            Axis::Y => &self.kernels.sobel_y,
        };
        let border = border_arg(border);
        let mut b = self.stream.launch_builder(f);
        b.arg(grey).arg(out).arg(&d.width).arg(&d.height).arg(&border);
        // SAFETY: see the module contract; sizes checked above, arguments match the C signature.
        unsafe { b.launch(d.grid(MAP_BLOCK)) }.map(drop)
    }

    /// `magnitude_kernel(const short* gx, const short* gy, u8* out, int width, int height)`:
    /// reads w·h shorts from each gradient, writes w·h bytes.
    pub fn launch_magnitude(
        &self,
        gx: &CudaSlice<i16>,
        gy: &CudaSlice<i16>,
        out: &mut CudaSlice<u8>,
        d: Dims,
    ) -> Result<(), DriverError> {
        assert!(gx.len() >= d.pixels() && gy.len() >= d.pixels() && out.len() >= d.pixels());
        let mut b = self.stream.launch_builder(&self.kernels.magnitude);
        b.arg(gx).arg(gy).arg(out).arg(&d.width).arg(&d.height);
        // SAFETY: see the module contract; sizes checked above, arguments match the C signature.
        unsafe { b.launch(d.grid(MAP_BLOCK)) }.map(drop)
    }

    /// `gradient_magnitude_kernel(const u8* grey, u8* out, int width, int height, int border)`:
    /// reads w·h grey bytes, writes w·h bytes.
    pub fn launch_gradient_magnitude(
        &self,
        grey: &CudaSlice<u8>,
        out: &mut CudaSlice<u8>,
        d: Dims,
        border: Border,
    ) -> Result<(), DriverError> {
        assert!(grey.len() >= d.pixels() && out.len() >= d.pixels());
        let border = border_arg(border);
        let mut b = self.stream.launch_builder(&self.kernels.gradient_magnitude);
        b.arg(grey).arg(out).arg(&d.width).arg(&d.height).arg(&border);
        // SAFETY: see the module contract; sizes checked above, arguments match the C signature.
        unsafe { b.launch(d.grid(MAP_BLOCK)) }.map(drop)
    }

    /// Kernels of the C signature `(const u8* rgb, u8* out, int width, int height, int border)` — see
    /// [`RgbKernel`]: each reads 3·w·h bytes and writes w·h bytes.
    pub fn launch_rgb_kernel(
        &self,
        kernel: RgbKernel,
        rgb: &CudaSlice<u8>,
        out: &mut CudaSlice<u8>,
        d: Dims,
        border: Border,
    ) -> Result<(), DriverError> {
        assert!(rgb.len() >= 3 * d.pixels() && out.len() >= d.pixels());
        let k = &self.kernels;
        let (f, cfg) = match kernel {
            RgbKernel::Fused => (&k.fused, d.grid(FUSED_BLOCK)),
            RgbKernel::ConstTaps => (&k.const_taps, d.grid(FUSED_BLOCK)),
            RgbKernel::Tiled => (&k.tiled, d.grid(TILE)),
            RgbKernel::Vec16 => (&k.vec16[d.aligned16() as usize], d.groups16().grid(VEC16_BLOCK)),
        };
        let border = border_arg(border);
        let mut b = self.stream.launch_builder(f);
        b.arg(rgb).arg(out).arg(&d.width).arg(&d.height).arg(&border);
        // SAFETY: see the module contract; sizes checked above, arguments match the C signature.
        unsafe { b.launch(cfg) }.map(drop)
    }

    /// `sobel_strip_{general,aligned}(const u8* rgb, u8* out, int width, int height, int border, int rows)`:
    /// reads 3·w·h bytes, writes w·h bytes; the aligned form needs width % 16 == 0.
    pub fn launch_strip(
        &self,
        rgb: &CudaSlice<u8>,
        out: &mut CudaSlice<u8>,
        d: Dims,
        border: Border,
    ) -> Result<(), DriverError> {
        assert!(rgb.len() >= 3 * d.pixels() && out.len() >= d.pixels());
        let f = &self.kernels.strip[d.aligned16() as usize];
        // One wave: as many threads as the GPU holds at once (occupancy of this kernel × SMs), each
        // marching down `rows` rows; bands as tall as that allows (the 2 halo rows per band are then
        // negligible for large images), and every block resident from start to end (no tail wave).
        let groups = (d.width as u64).div_ceil(16);
        let per_sm = f.occupancy_max_active_blocks_per_multiprocessor(STRIP_THREADS, 0, None)?.max(1) as u64;
        let resident = per_sm * STRIP_THREADS as u64 * self.multiprocessors.max(1) as u64;
        let bands = (resident / groups).clamp(1, d.height as u64);
        // At least STRIP_MIN_ROWS rows a thread even when that leaves the GPU part idle: measured on the
        // H200 at 2048×1024, rows 1/2/3/4/6/8 took 14.6/12.3/11.6/11.4/12.1/12.5 µs (docs/performance.md).
        let rows = (d.height as u64).div_ceil(bands).max(STRIP_MIN_ROWS);
        let threads = groups * (d.height as u64).div_ceil(rows);
        let cfg = LaunchConfig {
            grid_dim: (u32::try_from(threads.div_ceil(STRIP_THREADS as u64)).expect("fits a 1D grid"), 1, 1),
            block_dim: (STRIP_THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        let rows = rows as i32;
        let border = border_arg(border);
        let mut b = self.stream.launch_builder(f);
        b.arg(rgb).arg(out).arg(&d.width).arg(&d.height).arg(&border).arg(&rows);
        // SAFETY: see the module contract; sizes checked above, arguments match the C signature.
        unsafe { b.launch(cfg) }.map(drop)
    }

    /// `sobel_rows_pass(const u8* rgb, short2* he, int width, int height, int border)`, then
    /// `sobel_columns_pass(const short2* he, u8* out, int width, int height, int border)`: the first reads
    /// 3·w·h bytes and writes w·h short pairs (4 bytes each, held here as u32), the second reads those and
    /// writes w·h bytes.
    pub fn launch_separable(
        &self,
        rgb: &CudaSlice<u8>,
        he: &mut CudaSlice<u32>,
        out: &mut CudaSlice<u8>,
        d: Dims,
        border: Border,
    ) -> Result<(), DriverError> {
        assert!(rgb.len() >= 3 * d.pixels() && he.len() >= d.pixels() && out.len() >= d.pixels());
        let border = border_arg(border);
        let mut rows = self.stream.launch_builder(&self.kernels.rows_pass);
        rows.arg(rgb).arg(&mut *he).arg(&d.width).arg(&d.height).arg(&border);
        // SAFETY: see the module contract; sizes checked above, arguments match the C signature.
        unsafe { rows.launch(d.grid(FUSED_BLOCK)) }?;
        let mut cols = self.stream.launch_builder(&self.kernels.columns_pass);
        cols.arg(&*he).arg(out).arg(&d.width).arg(&d.height).arg(&border);
        // SAFETY: as above.
        unsafe { cols.launch(d.grid(FUSED_BLOCK)) }.map(drop)
    }

    /// `selftest_grey(u8* out)`: writes 2^24 bytes, the grey of every RGB triple (R << 16 | G << 8 | B).
    pub fn selftest_grey(&self) -> Result<Vec<u8>, GpuError> {
        let n = 1usize << 24;
        let mut out = self.stream.alloc_zeros::<u8>(n)?;
        let cfg = LaunchConfig {
            grid_dim: ((n as u32 / 4).div_ceil(256), 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut b = self.stream.launch_builder(&self.kernels.selftest_grey);
        b.arg(&mut out);
        // SAFETY: the kernel writes out[0 .. 2^24), which `out` holds.
        unsafe { b.launch(cfg) }?;
        Ok(self.stream.clone_dtoh(&out)?)
    }

    /// `spin(unsigned long long ns)`: keeps the GPU busy for `ns` nanoseconds; no memory touched.
    pub fn launch_spin(&self, ns: u64) -> Result<(), DriverError> {
        let cfg = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (1, 1, 1), shared_mem_bytes: 0 };
        let mut b = self.stream.launch_builder(&self.kernels.spin);
        b.arg(&ns);
        // SAFETY: the kernel reads a timer and touches no memory.
        unsafe { b.launch(cfg) }.map(drop)
    }

    /// Times `reps` runs of `enqueue` between CUDA events, milliseconds each. Runs go in batches behind a
    /// `spin` kernel that keeps the GPU busy while the host queues the batch, so each pair of events
    /// brackets device work only, not the host's launch overhead (see cuda/timing.cu).
    pub fn time_runs(
        &self,
        reps: usize,
        mut enqueue: impl FnMut(usize) -> Result<(), GpuError>,
    ) -> Result<Vec<f64>, GpuError> {
        use cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT;
        const BATCH: usize = 20;
        // Generous: queueing one run (two launches at most and an event) takes the host a few µs.
        const SPIN_NS_PER_RUN: u64 = 50_000;
        let mut samples = Vec::with_capacity(reps);
        let mut done = 0;
        while done < reps {
            let batch = BATCH.min(reps - done);
            self.launch_spin(SPIN_NS_PER_RUN * batch as u64)?;
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
        let cfg = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (32, 1, 1), shared_mem_bytes: 0 };
        let mut samples = self.time_runs(reps, |_| {
            // SAFETY: the kernel takes no arguments and touches no memory.
            unsafe { self.stream.launch_builder(&self.kernels.noop).launch(cfg) }?;
            Ok(())
        })?;
        Ok(crate::stats::median(&mut samples))
    }

    /// `selftest_magnitude(u8* out, unsigned n)`: writes n bytes, the magnitude of every square s < n.
    pub fn selftest_magnitude(&self, n: u32) -> Result<Vec<u8>, GpuError> {
        let mut out = self.stream.alloc_zeros::<u8>(n as usize)?;
        let cfg = LaunchConfig { grid_dim: (n.div_ceil(256), 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
        let mut b = self.stream.launch_builder(&self.kernels.selftest_magnitude);
        b.arg(&mut out).arg(&n);
        // SAFETY: the kernel writes out[0 .. n), which `out` holds.
        unsafe { b.launch(cfg) }?;
        Ok(self.stream.clone_dtoh(&out)?)
    }

    /// `sobel_n_per_thread(const u8* rgb, u8* out, int width, int height, int border, int n)`:
    /// reads 3·w·h bytes, writes w·h bytes; each of ⌈w·h / n⌉ threads writes up to n of them.
    /// `sobel_n_report_mapping` (same signature): each of w·h + n threads writes up to n bytes, all
    /// below w·h (the kernel checks every index).
    pub fn launch_n_per_thread(
        &self,
        rgb: &CudaSlice<u8>,
        out: &mut CudaSlice<u8>,
        d: Dims,
        border: Border,
        n1: N1,
    ) -> Result<(), DriverError> {
        assert!(rgb.len() >= 3 * d.pixels() && out.len() >= d.pixels());
        assert!((1..=64).contains(&n1.n), "n is 1..=64");
        let n = n1.n as u64;
        let (f, blocks) = match n1.mapping {
            Mapping::Coalesced => (&self.kernels.n_per_thread, (d.pixels() as u64).div_ceil(n * N1_BLOCK as u64)),
            Mapping::Report => (&self.kernels.n_report_mapping, (d.pixels() as u64 + n).div_ceil(N1_BLOCK as u64)),
        };
        let cfg = LaunchConfig {
            grid_dim: (u32::try_from(blocks).expect("at most 2^31 blocks for images under 2^39 pixels"), 1, 1),
            block_dim: (N1_BLOCK, 1, 1),
            shared_mem_bytes: 0,
        };
        let (border, n) = (border_arg(border), n as i32);
        let mut b = self.stream.launch_builder(f);
        b.arg(rgb).arg(out).arg(&d.width).arg(&d.height).arg(&border).arg(&n);
        // SAFETY: see the module contract; sizes checked above, arguments match the C signature.
        unsafe { b.launch(cfg) }.map(drop)
    }
}

/// The kernels that take `(rgb, out, width, height, border)`.
#[derive(Clone, Copy, Debug)]
pub enum RgbKernel {
    /// fused.cu: one thread per pixel.
    Fused,
    /// const_taps.cu: coefficients from constant memory.
    ConstTaps,
    /// tiled.cu: shared-memory tile with halo.
    Tiled,
    /// vec16.cu: 16 pixels per thread, wide loads.
    Vec16,
}

/// Which Sobel kernel of map.cu.
#[derive(Clone, Copy, Debug)]
pub enum Axis {
    X,
    Y,
}
