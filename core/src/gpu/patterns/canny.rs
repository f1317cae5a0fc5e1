//! `cuda/canny.cu` — CONNECTED COMPONENTS BY UNION-FIND: Canny's non-maximum suppression (a 3×3 stencil on the
//! magnitude-and-sector words a gradient kernel writes, [`crate::sobel::Output::Sectors`]) and its hysteresis as the sets of a forest of parents, in three launches however long the chains of
//! weak pixels are. Runs after any variant's gradients ([`crate::gpu::variants::run_canny`]).

use std::ops::Range;
use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr, DevicePtrMut, DriverError};

use super::{Dims, KernelSource};

/// The kernel file, embedded.
pub const SOURCE: KernelSource = KernelSource { name: "canny", source: include_str!("../../../../cuda/canny.cu") };

/// 32×8 = 256 threads, a thread a 2×2 block of pixels (of the edges, [`EDGE_BLOCKS`] of a row): a warp covers 64
/// pixels of two rows, so the gradient and state reads are coalesced (canny.cu's "Launch shape").
pub const BLOCK: (u32, u32) = (32, 8);

/// The 2×2 blocks a thread of `canny_edges` takes, consecutive in a row (canny.cu's `EDGE_BLOCKS`): a warp covers
/// 128, its states one 4-byte load a thread and each row of edges one 8-byte store.
pub const EDGE_BLOCKS: u32 = 4;

/// The loaded kernels of this pattern.
#[derive(Clone)]
pub struct Canny {
    suppress: CudaFunction,
    link: CudaFunction,
    edges: CudaFunction,
    /// Each launch may start while the one before finishes (programmatic dependent launch, compute capability 9.0
    /// and later): (suppress, link, edges).
    overlap: (bool, bool, bool),
}

/// The thresholds as the kernels take them: `Canny::thresholds` clamped to `int`, which changes no comparison (every
/// magnitude is below 2^31). The norm is the words' (the build's).
#[derive(Clone, Copy, Debug)]
pub struct Thresholds {
    /// Candidates have a magnitude above this.
    pub low: i32,
    /// Strong candidates have a magnitude above this.
    pub high: i32,
}

impl Thresholds {
    /// From the CPU definition's thresholds.
    pub fn of(canny: &crate::canny::Canny) -> Thresholds {
        let (low, high) = canny.thresholds();
        let clamp = |t: i64| t.clamp(i32::MIN as i64, i32::MAX as i64) as i32;
        Thresholds { low: clamp(low), high: clamp(high) }
    }
}

/// The device memory Canny needs besides the words and the edges: a state byte and a parent a node (a 2×2 block
/// of pixels), plus node 0's parent.
pub struct Scratch {
    state: CudaSlice<u8>,
    parent: CudaSlice<i32>,
}

impl Scratch {
    /// Uninitialised room for `d`: `canny_suppress` writes every state byte and the parent of every block holding a
    /// candidate (and node 0) before the other kernels read them, and they read a parent only where the states say
    /// candidate.
    pub fn alloc(stream: &Arc<CudaStream>, d: Dims) -> Result<Scratch, DriverError> {
        // SAFETY (alloc): see above.
        unsafe { Ok(Scratch { state: stream.alloc(Canny::nodes(d))?, parent: stream.alloc(Canny::nodes(d) + 1)? }) }
    }
}

impl Canny {
    /// Loads the kernels from the compiled module; `overlap`: the GPU has programmatic dependent launch (compute
    /// capability 9.0 or later).
    pub fn load(m: &Arc<CudaModule>, overlap: bool) -> Result<Canny, DriverError> {
        Ok(Canny {
            suppress: m.load_function("canny_suppress")?,
            link: m.load_function("canny_link")?,
            edges: m.load_function("canny_edges")?,
            overlap: (overlap, overlap, overlap),
        })
    }

    /// These kernels with `link` — a kernel of `canny_link`'s signature, a student's (`--kernel-file` with `--output
    /// canny`, `cuda/exercises/06_hysteresis.cu`) — as the hysteresis' middle launch. A student's kernel need not
    /// wait for the suppression's writes (`wait_for_previous_launch`), so it starts only once the suppression has
    /// finished.
    pub fn with_link(&self, link: CudaFunction) -> Canny {
        Canny { link, overlap: (self.overlap.0, false, self.overlap.2), ..self.clone() }
    }

    /// The forest's nodes besides node 0: one a 2×2 block of pixels (the last row and column of blocks cut at an odd
    /// width or height).
    pub fn nodes(d: Dims) -> usize {
        (d.width as usize).div_ceil(2) * (d.height as usize).div_ceil(2)
    }

    /// Whether a `d`-sized image fits the kernels' `int` nodes and pixel coordinates.
    pub fn fits(d: Dims) -> bool {
        Canny::nodes(d) < i32::MAX as usize
    }

    /// Canny's edges (0 or 255 a byte) of a `d`-sized image from its words (one plane of `word_bytes` each, as
    /// [`crate::sobel::Output::Sectors`] writes them), on `stream`: three launches.
    pub fn enqueue(
        &self,
        stream: &Arc<CudaStream>,
        (words, word_bytes): (&CudaSlice<u8>, usize),
        scratch: &mut Scratch,
        out: &mut CudaSlice<u8>,
        d: Dims,
        t: Thresholds,
    ) -> Result<(), DriverError> {
        let n = d.pixels();
        assert!(Canny::fits(d), "{n} pixels: more nodes than an int holds");
        assert!(words.len() >= word_bytes * n && out.len() >= n);
        assert!(scratch.state.len() >= Canny::nodes(d) && scratch.parent.len() > Canny::nodes(d));
        let (g, _r) = words.device_ptr(stream);
        let (state, _s) = scratch.state.device_ptr_mut(stream);
        let (parent, _p) = scratch.parent.device_ptr_mut(stream);
        let (edges, _w) = out.device_ptr_mut(stream);
        // SAFETY: sizes checked above; the guards order these launches after the buffers' earlier uses and later
        // uses after them; the stream is this context's.
        unsafe { self.launch_raw(stream.cu_stream(), Pointers { g, state, parent, edges }, d, t, Canny::ALL) }
    }

    /// The three launches, `canny_suppress`, `canny_link` and `canny_edges`, as [`Canny::launch_raw`] numbers them.
    pub const ALL: Range<usize> = 0..3;
    /// Those before the edges: `p.edges` is not read then (the Python package launches these before it has
    /// allocated its result, and the edges once it has).
    pub const BEFORE_EDGES: Range<usize> = 0..2;
    /// The edges alone, after a [`Canny::BEFORE_EDGES`] launch on the same stream and memory.
    pub const EDGES: Range<usize> = 2..3;

    /// The one unsafe launch of this pattern: those of `canny_suppress`, `canny_link`, `canny_edges` in `which`
    /// ([`Canny::ALL`] or a part of it), in order on `stream`.
    ///
    /// # Safety
    /// `p.g` must hold `d.pixels()` words of the build's `sector_t` (the build's output: `Output::Sectors`); `p.state` `Canny::nodes(d)` bytes and `p.parent` `Canny::nodes(d) + 1` ints of scratch;
    /// `p.edges` `d.pixels()` writable bytes where `which` holds the edges — all device memory of this context not
    /// written by anything else until the launches have run on `stream`, a live stream of this context;
    /// `Canny::fits(d)`. Where `which` starts after the suppression, the launches before it must have been made on
    /// `stream` with the same memory, and nothing else written that memory since.
    pub unsafe fn launch_raw(
        &self,
        stream: cudarc::driver::sys::CUstream,
        p: Pointers,
        d: Dims,
        t: Thresholds,
        which: Range<usize>,
    ) -> Result<(), DriverError> {
        // A thread a 2×2 block of pixels; of the edges, EDGE_BLOCKS of a row.
        let blocks = ((d.width as u32).div_ceil(2), (d.height as u32).div_ceil(2));
        let shape = |across: u32| cudarc::driver::LaunchConfig {
            grid_dim: (across.div_ceil(BLOCK.0), blocks.1.div_ceil(BLOCK.1), 1),
            block_dim: (BLOCK.0, BLOCK.1, 1),
            shared_mem_bytes: 0,
        };
        let (cfg, edges_cfg) = (shape(blocks.0), shape(blocks.0.div_ceil(EDGE_BLOCKS)));
        let (mut w, mut h, mut low, mut high) = (d.width, d.height, t.low, t.high);
        let Pointers { mut g, mut state, mut parent, mut edges } = p;
        let ptr = |v: &mut u64| (v as *mut u64).cast::<std::ffi::c_void>();
        let int = |v: &mut i32| (v as *mut i32).cast::<std::ffi::c_void>();
        // Each list matches its kernel's C signature:
        // canny_suppress(const sector_t* words, u8* state, int* parent, int width, int height, int low, int high)
        let mut suppress_args =
            [ptr(&mut g), ptr(&mut state), ptr(&mut parent), int(&mut w), int(&mut h), int(&mut low), int(&mut high)];
        // canny_link(const u8* state, int* parent, int width, int height)
        let mut link_args = [ptr(&mut state), ptr(&mut parent), int(&mut w), int(&mut h)];
        // canny_edges(const u8* state, int* parent, u8* out, int width, int height)
        let mut edges_args = [ptr(&mut state), ptr(&mut parent), ptr(&mut edges), int(&mut w), int(&mut h)];
        // Each launch may start while the one before finishes, and waits for its writes before reading them
        // (`wait_for_previous_launch` in canny.cu's kernels); the launch after the edges waits for them as any does.
        let (suppress, link, edges) = self.overlap;
        let launches = [
            (&self.suppress, suppress_args.as_mut_slice(), suppress, cfg),
            (&self.link, link_args.as_mut_slice(), link, cfg),
            (&self.edges, edges_args.as_mut_slice(), edges, edges_cfg),
        ];
        for (f, args, overlap, cfg) in launches.into_iter().skip(which.start).take(which.len()) {
            // SAFETY: each argument list matches its kernel's C signature above (width and height fit an int: Dims
            // checks); the caller guarantees the memory and the stream; each kernel of canny.cu waits for the launch
            // before it ends before reading what that launch wrote.
            unsafe { super::launch_after(f, cfg, stream, args, overlap) }?;
        }
        Ok(())
    }
}

/// Device addresses for [`Canny::launch_raw`].
#[derive(Clone, Copy, Debug)]
pub struct Pointers {
    /// The words ([`crate::sobel::Output::Sectors`]), a pixel each.
    pub g: u64,
    /// A state byte a node (a 2×2 block of pixels).
    pub state: u64,
    /// A parent a node (a 2×2 block of pixels), plus node 0.
    pub parent: u64,
    /// The edges, a byte a pixel.
    pub edges: u64,
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_launch_shape_is_the_kernel_files() {
        assert!(super::SOURCE.source.contains("Launch shape: 2D grid of 32×8 blocks over the image's 2×2 blocks"));
        assert_eq!(super::BLOCK, (32, 8));
        let edge_blocks = format!("#define EDGE_BLOCKS {}\n", super::EDGE_BLOCKS);
        assert!(super::SOURCE.source.contains(&edge_blocks), "canny.cu's EDGE_BLOCKS is {}", super::EDGE_BLOCKS);
    }
}
