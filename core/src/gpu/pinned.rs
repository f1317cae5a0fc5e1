//! Page-locked (pinned) host memory for the streamed paths' band buffers, made in one piece.
//!
//! The copy engines reach the bus's speed only from pinned memory. `cuMemHostAlloc` makes it one buffer a
//! call, each faulting its 4 KB pages on one core before the driver locks them: 64 MB in 8 buffers took 25–38
//! ms to make and 5–7 ms to free on the H200 machine. Here the same bytes are one ordinary allocation,
//! aligned to 2 MB and advised to use transparent huge pages, touched on all cores, and then locked by one
//! `cuMemHostRegister`: 2.1–2.9 ms and 1.3–1.6 ms (`examples/pinned_costs.rs`).
//! Copies from it run at the same speed. Where the kernel gives no huge pages, it takes 4.9–5.9 ms.

use std::alloc::{alloc, dealloc, Layout};
use std::sync::Arc;

use cudarc::driver::sys::{cuMemHostRegister_v2, cuMemHostUnregister, CUresult};
use cudarc::driver::{CudaContext, DriverError};
use rayon::prelude::*;

use super::GpuError;

/// A huge page (x86-64, aarch64 with 4 KB pages); also the unit the region is touched in.
const HUGE_PAGE: usize = 2 << 20;
/// Each buffer starts on a page.
const PAGE: usize = 4096;

/// Zeroed host memory, page-locked for `ctx`'s device, for buffers of the sizes it was made for
/// ([`PinnedRegion::buffers`]). Unlocked and freed when dropped.
///
/// The buffers are plain `&mut [u8]`, but a copy from or to them is asynchronous: cudarc's safe copies
/// (`memcpy_htod`, `memcpy_dtoh`, `clone_htod`) take a `[u8]` for pageable memory, which the driver has
/// finished reading or writing when the call returns, and do not wait for the stream; from page-locked
/// memory the copy is still running. So a buffer must not be touched again before its stream is
/// synchronised. The streamed paths copy them only through [`super::buffers::DeviceImage::upload_async`] and
/// [`super::buffers::DeviceImage::download_async`], whose safety contracts say so; a test found the
/// difference (`tests/gpu.rs`, the pinned region's round trip, failed without its synchronisation).
pub struct PinnedRegion {
    ptr: *mut u8,
    layout: Layout,
    ctx: Arc<CudaContext>,
    /// The buffers' sizes, each buffer starting on a page.
    sizes: Vec<usize>,
}

// SAFETY: the region is plain memory owned by this value; the raw pointer is only an address.
unsafe impl Send for PinnedRegion {}

impl PinnedRegion {
    /// Zeroed, page-locked memory for buffers of these sizes.
    pub fn new(ctx: &Arc<CudaContext>, sizes: &[usize]) -> Result<PinnedRegion, GpuError> {
        ctx.bind_to_thread()?;
        let size = bytes_for(sizes).max(1).next_multiple_of(HUGE_PAGE);
        let layout = Layout::from_size_align(size, HUGE_PAGE).expect("a size rounded to 2 MB fits a layout");
        // SAFETY: the layout's size is non-zero.
        let ptr = unsafe { alloc(layout) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        #[cfg(target_os = "linux")]
        // SAFETY: `ptr` is `size` bytes we own; the advice changes how pages are backed, not their contents.
        // A kernel without transparent huge pages refuses it; the region then has 4 KB pages.
        unsafe {
            libc::madvise(ptr.cast(), size, libc::MADV_HUGEPAGE);
        }
        // SAFETY: `ptr` is `size` bytes we own, written here before anything reads them.
        let zeroed = unsafe { std::slice::from_raw_parts_mut(ptr, size) };
        zeroed.par_chunks_mut(HUGE_PAGE).for_each(|c| c.fill(0));
        crate::trace::mark("pinned region: pages touched");
        // SAFETY: `ptr` is `size` bytes we own; once registered they are owned by the region returned, whose
        // `Drop` unregisters them before freeing.
        match unsafe { cuMemHostRegister_v2(ptr.cast(), size, 0) } {
            CUresult::CUDA_SUCCESS => {
                crate::trace::mark("pinned region: registered");
                Ok(PinnedRegion { ptr, layout, ctx: ctx.clone(), sizes: sizes.to_vec() })
            }
            e => {
                // SAFETY: allocated above with this layout, not registered.
                unsafe { dealloc(ptr, layout) };
                Err(DriverError(e).into())
            }
        }
    }

    /// The buffers, of the sizes given to [`PinnedRegion::new`] and in that order, each starting on a page,
    /// all borrowed from the region.
    pub fn buffers(&mut self) -> Vec<&mut [u8]> {
        // SAFETY: the region's bytes (at least `bytes_for(sizes)`), zeroed in `new`, borrowed mutably from
        // `self`.
        let mut rest = unsafe { std::slice::from_raw_parts_mut(self.ptr, self.layout.size()) };
        self.sizes
            .iter()
            .map(|&bytes| {
                let (piece, after) = std::mem::take(&mut rest).split_at_mut(bytes.next_multiple_of(PAGE));
                rest = after;
                &mut piece[..bytes]
            })
            .collect()
    }
}

/// The bytes buffers of these sizes take, each starting on a page ([`PinnedRegion::buffers`]).
fn bytes_for(sizes: &[usize]) -> usize {
    sizes.iter().map(|b| b.next_multiple_of(PAGE)).sum()
}

impl Drop for PinnedRegion {
    /// Unlocks and frees the region. The borrow checker guarantees that no buffer from
    /// [`PinnedRegion::buffers`] is alive; the streamed paths wait for their streams before their buffers go.
    fn drop(&mut self) {
        let _ = self.ctx.bind_to_thread();
        // SAFETY: registered in `new` (a region is only built registered); no copy is in flight (above).
        unsafe { cuMemHostUnregister(self.ptr.cast()) };
        // SAFETY: allocated in `new` with this layout.
        unsafe { dealloc(self.ptr, self.layout) };
    }
}

#[cfg(test)]
mod tests {
    use super::bytes_for;

    #[test]
    fn buffers_take_whole_pages() {
        assert_eq!(bytes_for(&[]), 0);
        assert_eq!(bytes_for(&[1]), 4096);
        assert_eq!(bytes_for(&[4096, 4097, 0]), 4096 + 8192);
    }
}
