//! What page-locked (pinned) host memory costs, to choose how the streamed path gets its band buffers:
//!
//! 1. **Allocating** `total` bytes as `pieces` buffers, four ways — `cuMemHostAlloc` (plain and
//!    write-combined, one call a buffer), and one ordinary allocation touched on all cores and then
//!    page-locked with one `cuMemHostRegister` (with and without transparent huge pages) — and freeing them.
//! 2. **One copy** of `size` bytes each way from pinned memory, CUDA events around it: back to back (the
//!    bus's speed) and after the GPU has idled for 5 ms, as the streamed path's copies do between bands.
//!
//! Medians of 7 (allocation) and 25 (copies) after a warm-up.
//! `cargo run --release --example pinned_costs`
use std::alloc::{alloc, dealloc, Layout};
use std::time::{Duration, Instant};

use cuda_sobel::gpu::Gpu;
use cuda_sobel::stats::median;
use cudarc::driver::result as cu;
use cudarc::driver::sys::{self, CUevent_flags::CU_EVENT_DEFAULT};
use rayon::prelude::*;

const MB: usize = 1 << 20;
const HUGE: usize = 2 * MB;

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// `(allocate, free)` ms of `pieces` buffers of `total / pieces` bytes by `cuMemHostAlloc` with `flags`.
fn host_alloc(total: usize, pieces: usize, flags: u32) -> (f64, f64) {
    let t = Instant::now();
    // SAFETY: the buffers are only allocated and freed.
    let ptrs: Vec<_> = (0..pieces).map(|_| unsafe { cu::malloc_host(total / pieces, flags) }.unwrap()).collect();
    // Touched, as the decoder will: the driver hands over pages already there.
    for &p in &ptrs {
        // SAFETY: `p` is `total / pieces` writable bytes.
        unsafe { std::ptr::write_bytes(p as *mut u8, 1, total / pieces) };
    }
    let allocated = ms(t.elapsed());
    let t = Instant::now();
    for p in ptrs {
        // SAFETY: allocated above, freed once.
        unsafe { cu::free_host(p) }.unwrap();
    }
    (allocated, ms(t.elapsed()))
}

/// How [`registered`] faults the pages in before locking them.
#[derive(Clone, Copy, PartialEq)]
enum Touch {
    /// Not at all: `cuMemHostRegister` faults them itself.
    No,
    /// On this thread.
    One,
    /// On all cores (rayon).
    All,
}

/// `(allocate, free)` ms of one `total`-byte allocation, 2 MB-aligned, touched as `touch` says, page-locked
/// with one `cuMemHostRegister`; `huge`: `madvise(MADV_HUGEPAGE)` before it is touched.
fn registered(total: usize, huge: bool, touch: Touch) -> (f64, f64) {
    let layout = Layout::from_size_align(total, HUGE).unwrap();
    let t = Instant::now();
    // SAFETY: non-zero size.
    let p = unsafe { alloc(layout) };
    assert!(!p.is_null());
    if huge {
        // SAFETY: `p` is `total` bytes we own.
        unsafe { libc::madvise(p as *mut libc::c_void, total, libc::MADV_HUGEPAGE) };
    }
    // SAFETY: `p` is `total` writable bytes, each chunk written by one thread.
    let slice = unsafe { std::slice::from_raw_parts_mut(p, total) };
    match touch {
        Touch::No => {}
        Touch::One => slice.chunks_mut(HUGE).for_each(|c| c.fill(1)),
        Touch::All => slice.par_chunks_mut(HUGE).for_each(|c| c.fill(1)),
    }
    // SAFETY: `p` is `total` bytes we own, unregistered below before they are freed.
    let r = unsafe { sys::cuMemHostRegister_v2(p as *mut _, total, 0) };
    assert_eq!(r, sys::CUresult::CUDA_SUCCESS);
    let allocated = ms(t.elapsed());
    let t = Instant::now();
    // SAFETY: registered above.
    let r = unsafe { sys::cuMemHostUnregister(p as *mut _) };
    assert_eq!(r, sys::CUresult::CUDA_SUCCESS);
    // SAFETY: allocated above with this layout.
    unsafe { dealloc(p, layout) };
    (allocated, ms(t.elapsed()))
}

fn main() -> anyhow::Result<()> {
    let gpu = Gpu::open()?;
    // What starting rayon's pool costs (the first parallel touch in a command pays it).
    let t = Instant::now();
    rayon::broadcast(|_| ());
    println!("rayon's pool started in {:.2} ms", ms(t.elapsed()));
    gpu.ctx.bind_to_thread()?;
    println!("{}; {} cores", gpu.device, rayon::current_num_threads());
    let thp = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").unwrap_or_default();
    println!("transparent huge pages: {}", thp.trim());

    println!("\n## allocate + touch / free, ms (median of 7)");
    println!("| total | pieces | cuMemHostAlloc | cuMemHostAlloc WC | register | register + THP | THP, one thread touches | THP, untouched |");
    println!("|---|---|---|---|---|---|---|---|");
    for total in [16 * MB, 32 * MB, 64 * MB] {
        for pieces in [1, 8] {
            let mut cols = Vec::new();
            let mut run = |f: &dyn Fn() -> (f64, f64)| {
                f();
                let (mut a, mut b): (Vec<f64>, Vec<f64>) = (0..7).map(|_| f()).unzip();
                cols.push(format!("{:.2} / {:.2}", median(&mut a), median(&mut b)));
            };
            run(&|| host_alloc(total, pieces, 0));
            run(&|| host_alloc(total, pieces, sys::CU_MEMHOSTALLOC_WRITECOMBINED));
            if pieces == 1 {
                run(&|| registered(total, false, Touch::All));
                run(&|| registered(total, true, Touch::All));
                run(&|| registered(total, true, Touch::One));
                run(&|| registered(total, true, Touch::No));
            } else {
                cols.extend(["–".to_string(), "–".to_string(), "–".to_string(), "–".to_string()]);
            }
            println!("| {} MB | {pieces} | {} |", total / MB, cols.join(" | "));
        }
    }

    println!("\n## one copy from/to pinned memory, µs (median of 25): back to back, and after 5 ms idle");
    println!("| size | up | up after idle | down | down after idle | up GB/s (back to back) |");
    println!("|---|---|---|---|---|---|");
    let biggest = 32 * MB;
    // SAFETY (alloc): only copied to and from.
    let mut host = unsafe { gpu.ctx.alloc_pinned_with_flags::<u8>(biggest, 0) }?;
    let mut dev = gpu.stream.alloc_zeros::<u8>(biggest)?;
    for size in [MB, 2 * MB, 4 * MB, 8 * MB, 16 * MB, 32 * MB] {
        let mut time = |up: bool, idle: bool| -> anyhow::Result<f64> {
            let mut samples = Vec::new();
            for rep in 0..26 {
                if idle {
                    std::thread::sleep(Duration::from_millis(5));
                }
                let a = gpu.stream.record_event(Some(CU_EVENT_DEFAULT))?;
                if up {
                    gpu.stream.memcpy_htod(&host.as_slice()?[..size], &mut dev.slice_mut(..size))?;
                } else {
                    gpu.stream.memcpy_dtoh(&dev.slice(..size), &mut host.as_mut_slice()?[..size])?;
                }
                let b = gpu.stream.record_event(Some(CU_EVENT_DEFAULT))?;
                b.synchronize()?;
                if rep > 0 {
                    samples.push(a.elapsed_ms(&b)? as f64 * 1e3);
                }
            }
            Ok(median(&mut samples))
        };
        let (up, up_idle, down, down_idle) =
            (time(true, false)?, time(true, true)?, time(false, false)?, time(false, true)?);
        println!(
            "| {} MB | {up:.1} | {up_idle:.1} | {down:.1} | {down_idle:.1} | {:.1} |",
            size / MB,
            size as f64 / (up * 1e3)
        );
    }

    // A band as the streamed path moves it (up `size`, down `size / 3`) after 5 ms idle: events and copies
    // enqueued one by one as the stream runs them (the host's API calls between them land inside the events),
    // or enqueued behind a gate (`cuStreamWaitValue32` on a pinned flag) that the host opens once all are in.
    println!("\n## a band after 5 ms idle, up size + down size/3, µs (median of 25): ungated / gated; from cuMemHostAlloc / registered THP memory");
    println!("| size | ungated | gated | registered, ungated | registered, gated |");
    println!("|---|---|---|---|---|");
    // SAFETY (alloc): a 4-byte flag the host writes and the GPU reads.
    let flag = unsafe { cu::malloc_host(4, sys::CU_MEMHOSTALLOC_DEVICEMAP) }.unwrap() as *mut u32;
    // SAFETY: `flag` is 4 bytes we own.
    unsafe { flag.write_volatile(0) };
    let mut flag_dev: sys::CUdeviceptr = 0;
    // SAFETY: `flag` was allocated with DEVICEMAP.
    assert_eq!(
        unsafe { sys::cuMemHostGetDevicePointer_v2(&mut flag_dev, flag as *mut _, 0) },
        sys::CUresult::CUDA_SUCCESS
    );
    let layout = Layout::from_size_align(biggest, HUGE).unwrap();
    // SAFETY: non-zero size; registered below, unregistered before it is freed.
    let reg = unsafe { alloc(layout) };
    unsafe { libc::madvise(reg as *mut libc::c_void, biggest, libc::MADV_HUGEPAGE) };
    let reg_slice = unsafe { std::slice::from_raw_parts_mut(reg, biggest) };
    reg_slice.par_chunks_mut(HUGE).for_each(|c| c.fill(1));
    assert_eq!(unsafe { sys::cuMemHostRegister_v2(reg as *mut _, biggest, 0) }, sys::CUresult::CUDA_SUCCESS);
    let mut opened = 0u32;
    for size in [4 * MB, 8 * MB, 16 * MB] {
        let mut cols = Vec::new();
        for registered_mem in [false, true] {
            for gated in [false, true] {
                let mut samples = Vec::new();
                for rep in 0..26 {
                    std::thread::sleep(Duration::from_millis(5));
                    if gated {
                        opened += 1;
                        // SAFETY: the stream waits until the flag reaches `opened`.
                        let r = unsafe { sys::cuStreamWaitValue32_v2(gpu.stream.cu_stream(), flag_dev, opened, 0) };
                        assert_eq!(r, sys::CUresult::CUDA_SUCCESS);
                    }
                    let host_buf: &mut [u8] = if registered_mem { &mut reg_slice[..] } else { host.as_mut_slice()? };
                    let a = gpu.stream.record_event(Some(CU_EVENT_DEFAULT))?;
                    gpu.stream.memcpy_htod(&host_buf[..size], &mut dev.slice_mut(..size))?;
                    gpu.stream.memcpy_dtoh(&dev.slice(..size / 3), &mut host_buf[size..size + size / 3])?;
                    let b = gpu.stream.record_event(Some(CU_EVENT_DEFAULT))?;
                    if gated {
                        // SAFETY: the flag is ours; the GPU only reads it.
                        unsafe { flag.write_volatile(opened) };
                    }
                    b.synchronize()?;
                    if rep > 0 {
                        samples.push(a.elapsed_ms(&b)? as f64 * 1e3);
                    }
                }
                cols.push(format!("{:.1}", median(&mut samples)));
            }
        }
        println!("| {} MB | {} |", size / MB, cols.join(" | "));
    }
    // SAFETY: registered above; no copy in flight.
    unsafe { sys::cuMemHostUnregister(reg as *mut _) };
    unsafe { dealloc(reg, layout) };
    Ok(())
}
