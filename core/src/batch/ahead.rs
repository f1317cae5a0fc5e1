//! PNGs inflated while the GPU opens.
//!
//! Opening a device — the driver, a context, the kernels — takes ~0.2 s, and batch's workers waited for it
//! with every core idle: 2000 PNG scenes on the H100 host, the context made at 223–242 ms of a 2.2 s command
//!. A PNG batch inflates every file on the CPU whichever way it goes on (the GPU
//! only undoes the filters), so the cores start at once: [`Ahead::read_while`] reads the first files, still
//! filtered, exactly as a worker would ([`filtered::read`]), until the devices are open or the memory budget
//! has no room left now; the workers then take those files first ([`Ahead::order`]).
//!
//! If the engines that open cannot take filtered rows (no GPU), what was read ahead is dropped and read again
//! the usual way: the cost is what the cores did while the GPU failed to open.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

use super::{peak_bytes_per_pixel, BatchOptions, Jobs};
use crate::image_io::{filtered, filtered::Filtered};
use crate::memory::{self, Pool, Reservation};
use crate::trace::TimeSum;

/// The largest image read ahead, in pixels. Once the devices are open the batch waits for the reads under
/// way, so each is kept short: 16 Mpixel of RGB is ~65 ms of inflate at the ~0.74 GB/s measured;
/// larger files wait for the workers.
const MAX_PIXELS: u64 = 16 << 20;

/// Threads that read ahead: the cores less two, left to the driver. With every core reading, the context
/// was made at 381–458 ms instead of 213–233, and later still with more hardware queues or slots (1.1–1.2 s
/// at 32 queues or 24 slots); with two cores left, at 237–238 ms (2000 PNG scenes, H100 host, 16 cores).
fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().saturating_sub(2).max(1))
}

/// Files read ahead, by their job's index, each with its share of the memory budget.
#[derive(Default)]
pub(super) struct Ahead<'p> {
    read: Mutex<HashMap<usize, (Filtered, Reservation<'p>)>>,
    /// Thread-seconds the reads took (for `CUDA_SOBEL_TRACE`'s account), those dropped included.
    time: TimeSum,
}

impl<'p> Ahead<'p> {
    /// Reads the PNGs of `jobs`, in order, on [`threads`] threads, until `done()` says the devices
    /// are open, the budget of `pool` has no room now, or every file is read. A file that is not a PNG
    /// [`filtered::read`] takes, larger than [`MAX_PIXELS`], or that fails to read, is left to its worker
    /// (which reports what failed).
    pub fn read_while(opts: &BatchOptions, jobs: &Jobs, pool: &'p Pool, done: impl Fn() -> bool + Sync) -> Self {
        let ahead = Ahead::default();
        let decode_opts = opts.decode_options();
        let (next, full) = (AtomicUsize::new(0), AtomicBool::new(false));
        let read_one = |path: &std::path::Path| {
            filtered::read_if(path, &decode_opts, |h| {
                if u64::from(h.width) * u64::from(h.height) > MAX_PIXELS {
                    return Ok(None);
                }
                let needed = memory::image_bytes(h.width, h.height, peak_bytes_per_pixel(h, opts, true));
                let reservation = pool.try_reserve(path, h.width, h.height, needed)?;
                if reservation.is_none() {
                    full.store(true, Ordering::Relaxed);
                }
                Ok(reservation)
            })
        };
        std::thread::scope(|s| {
            for _ in 0..threads() {
                s.spawn(|| {
                    while !done() && !full.load(Ordering::Relaxed) {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some((path, _)) = jobs.get(i) else { break };
                        if let Ok(Some(read)) = ahead.time.time(|| read_one(path)) {
                            ahead.read.lock().expect("no panic while locked").insert(i, read);
                        }
                    }
                });
            }
        });
        ahead
    }

    /// The thread time the reads took.
    pub fn time(&self) -> std::time::Duration {
        std::time::Duration::from_secs_f64(self.time.seconds())
    }

    /// How many files are read ahead.
    pub fn len(&self) -> usize {
        self.read.lock().expect("no panic while locked").len()
    }

    /// Job `i`'s file, if it was read ahead (once).
    pub fn take(&self, i: usize) -> Option<(Filtered, Reservation<'p>)> {
        self.read.lock().expect("no panic while locked").remove(&i)
    }

    /// Drops what was read ahead, and its memory.
    pub fn clear(&self) {
        self.read.lock().expect("no panic while locked").clear();
    }

    /// The jobs `0..jobs` with those read ahead first. The workers take jobs in this order, so a worker waiting
    /// for memory has every file read ahead already in some worker's hands, on its way to being written and giving
    /// its memory back: waiting cannot deadlock, as without reading ahead (a worker holds one reservation at a
    /// time, and those it handed to the GPU threads are given back by threads that never wait for memory).
    pub fn order(&self, jobs: usize) -> Vec<usize> {
        let read = self.read.lock().expect("no panic while locked");
        let (mut first, rest): (Vec<usize>, Vec<usize>) = (0..jobs).partition(|i| read.contains_key(i));
        first.extend(rest);
        first
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::image_io::DecodeOptions;
    use crate::memory::Budget;
    use std::path::PathBuf;

    /// A folder of PNGs (`w × h` RGB, each different), a JPEG and a file that is no image, as batch plans them.
    fn jobs(dir: &std::path::Path, pngs: usize, w: u32, h: u32) -> Jobs {
        let mut jobs: Jobs = (0..pngs)
            .map(|k| {
                let path = dir.join(format!("{k}.png"));
                image::RgbImage::from_fn(w, h, |x, y| image::Rgb([(x * 7 + y + k as u32) as u8, y as u8, k as u8]))
                    .save(&path)
                    .unwrap();
                (path, PathBuf::from(format!("out{k}.png")))
            })
            .collect();
        let jpeg = dir.join("photo.jpg");
        image::RgbImage::from_pixel(16, 8, image::Rgb([9, 99, 199])).save(&jpeg).unwrap();
        let text = dir.join("notes.png");
        std::fs::write(&text, b"not a PNG at all").unwrap();
        jobs.insert(1, (jpeg, "outj.png".into()));
        jobs.push((text, "outt.png".into()));
        jobs
    }

    fn options(budget: u64) -> BatchOptions {
        BatchOptions {
            inputs: Vec::new(),
            recursive: false,
            out_dir: PathBuf::new(),
            format: crate::image_io::Format::Png,
            filter: crate::sobel::Filter::default(),
            compression: crate::image_io::PngCompression::Default,
            slots: None,
            devices: None,
            check: false,
            baseline: false,
            budget: Budget { bytes: budget },
            keep_orientation: false,
            jpeg_decoder: super::super::JpegDecoder::Auto,
            png_encoder: super::super::PngEncoder::Auto,
            png_inflate: super::super::PngInflate::Cpu,
            kernel: None,
            canny: None,
        }
    }

    #[test]
    fn reads_the_pngs_it_takes_as_a_worker_would_and_orders_them_first() {
        let dir = tempfile::tempdir().unwrap();
        let jobs = jobs(dir.path(), 6, 33, 17);
        let opts = options(1 << 30);
        let pool = Pool::new(opts.budget);
        let ahead = Ahead::read_while(&opts, &jobs, &pool, || false);
        assert_eq!(ahead.len(), 6, "every PNG, not the JPEG or the file that is no image");
        let order = ahead.order(jobs.len());
        assert_eq!(order, [0, 2, 3, 4, 5, 6, 1, 7], "read ahead first, then the rest in their order");
        let decode_opts = DecodeOptions { budget: opts.budget, keep_orientation: false };
        for i in [0, 2, 6] {
            let (read, _) = ahead.take(i).expect("read ahead");
            let (fresh, ()) = filtered::read(&jobs[i].0, &decode_opts, |_| Ok(())).unwrap().unwrap();
            assert_eq!((read.width, read.height, &read.rows[..]), (fresh.width, fresh.height, &fresh.rows[..]));
            assert!(ahead.take(i).is_none(), "taken once");
        }
        ahead.clear();
        assert_eq!(ahead.len(), 0);
        let all = pool.try_reserve(&jobs[0].0, 1, 1, 1 << 30).unwrap();
        assert!(all.is_some(), "clearing gave every reservation back");
    }

    #[test]
    fn stops_when_the_devices_are_open_or_the_budget_has_no_room() {
        let dir = tempfile::tempdir().unwrap();
        let jobs = jobs(dir.path(), 8, 40, 30);
        let opts = options(1 << 30);
        let pool = Pool::new(opts.budget);
        assert_eq!(Ahead::read_while(&opts, &jobs, &pool, || true).len(), 0, "open already: nothing read");

        // Room for three images' estimate: the reads stop at the first that does not fit now, without waiting.
        let header = crate::image_io::Header { width: 40, height: 30, stored_bytes_per_pixel: 3, reorients: false };
        let one = memory::image_bytes(40, 30, peak_bytes_per_pixel(&header, &options(0), true));
        let small = options(3 * one + one / 2);
        let pool = Pool::new(small.budget);
        let ahead = Ahead::read_while(&small, &jobs, &pool, || false);
        assert_eq!(ahead.len(), 3);
        assert!(pool.try_reserve(&jobs[0].0, 40, 30, one).unwrap().is_none(), "the three hold the budget");
    }
}
