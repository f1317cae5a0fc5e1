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
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use super::{peak_bytes_per_pixel, BatchOptions, Jobs};
use crate::image_io::{filtered, filtered::Filtered};
use crate::memory::{self, Budget, Pool, Reservation};
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

/// PNGs read ahead for runs that have not started, by path: what a resident engine ([`super::Resident::run`], a
/// Dask worker's) does with the cores while the rest of its process starts. The files batch reads while its GPU
/// opens, read the same way on a thread of its own, until the first run takes its files; each later run takes
/// those of its own jobs.
///
/// Its memory is a pool of its own, a quarter of the budget (reading stops when it is full), not the runs': a run
/// that waits for memory then never waits for a file held for a run that has not started (which could be waiting
/// for it). The pool is leaked — a few words a `ReadAhead`, made once a command — so that its reservations, like
/// the runs' own, borrow it for as long as the files are kept.
pub struct ReadAhead {
    stop: Arc<AtomicBool>,
    /// The reading thread, until the first run waits for it.
    reading: Mutex<Option<std::thread::JoinHandle<HashMap<PathBuf, Read>>>>,
    read: Mutex<HashMap<PathBuf, Read>>,
    /// Files the runs took.
    taken: AtomicUsize,
}

/// A file read ahead, with the memory it holds.
type Read = (Filtered, Reservation<'static>);

impl ReadAhead {
    /// Starts reading the PNGs of `jobs`, in order, for runs of `opts` (their memory estimates).
    pub fn start(opts: &BatchOptions, jobs: Jobs) -> ReadAhead {
        let pool: &'static Pool = Box::leak(Box::new(Pool::new(Budget { bytes: opts.budget.bytes / 4 })));
        let stop = Arc::new(AtomicBool::new(false));
        let (opts, stopped) = (opts.clone(), Arc::clone(&stop));
        let read = move || {
            let ahead = Ahead::read_while(&opts, &jobs, pool, || stopped.load(Ordering::Relaxed));
            crate::trace::mark(&format!("{} PNGs read ahead before the first run", ahead.len()));
            let by_path = jobs.into_iter().enumerate().filter_map(|(i, (path, _))| Some((path, ahead.take(i)?)));
            by_path.collect()
        };
        // Without a thread, nothing is read ahead: the runs read every file themselves.
        let reading = std::thread::Builder::new().name("cuda-sobel-read-ahead".into()).spawn(read).ok();
        ReadAhead { stop, reading: Mutex::new(reading), read: Mutex::default(), taken: AtomicUsize::new(0) }
    }

    /// The files of `jobs` read ahead, taken (once) as a run's [`Ahead`] by their index in `jobs`. The first call
    /// stops the reading, and waits for the files under way (a few milliseconds each).
    pub(super) fn take_for<'p>(&self, jobs: &[(PathBuf, PathBuf)]) -> Ahead<'p> {
        self.stop.store(true, Ordering::Relaxed);
        let mut read = self.read.lock().expect("no panic while locked");
        if let Some(reading) = self.reading.lock().expect("no panic while locked").take() {
            *read = reading.join().unwrap_or_default();
        }
        let taken: HashMap<_, _> =
            jobs.iter().enumerate().filter_map(|(i, (path, _))| Some((i, read.remove(path)?))).collect();
        self.taken.fetch_add(taken.len(), Ordering::Relaxed);
        Ahead { read: Mutex::new(taken), time: TimeSum::default() }
    }

    /// How many files the runs took.
    pub fn taken(&self) -> usize {
        self.taken.load(Ordering::Relaxed)
    }

    /// How many files are read ahead and not taken yet (once the reading stopped).
    pub fn untaken(&self) -> usize {
        self.read.lock().expect("no panic while locked").len()
    }
}

impl Drop for ReadAhead {
    /// Stops the reading (its thread then drops what it read).
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
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
    fn runs_take_their_own_files_read_ahead_once_each() {
        let dir = tempfile::tempdir().unwrap();
        let jobs = jobs(dir.path(), 6, 33, 17);
        let ahead = ReadAhead::start(&options(1 << 30), jobs.clone());
        // Every PNG is read before the first run comes (the files are small).
        while !ahead.reading.lock().unwrap().as_ref().is_none_or(|r| r.is_finished()) {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        let (first, second) = (&jobs[..4], &jobs[4..]); // two tasks' shares: 3 PNGs and the JPEG, 3 and the text
        let run = ahead.take_for(first);
        assert_eq!(run.order(first.len()), [0, 2, 3, 1], "its PNGs, by their index in the run's jobs, first");
        assert_eq!(ahead.untaken(), 3, "the other run's files wait for it");
        let decode_opts = DecodeOptions { budget: options(0).budget, keep_orientation: false };
        for (i, path) in [(0, &first[0].0), (3, &first[3].0)] {
            let (read, _) = run.take(i).expect("read ahead");
            let (fresh, ()) = filtered::read(path, &decode_opts, |_| Ok(())).unwrap().unwrap();
            assert_eq!((read.width, read.height, &read.rows[..]), (fresh.width, fresh.height, &fresh.rows[..]));
        }
        assert_eq!(ahead.take_for(first).len(), 0, "taken once");
        assert_eq!(ahead.take_for(second).order(second.len()), [0, 1, 2, 3]);
        assert_eq!((ahead.untaken(), ahead.taken()), (0, 6));
    }

    #[test]
    fn a_read_ahead_holds_at_most_a_quarter_of_the_budget_and_stops_at_the_first_run() {
        let dir = tempfile::tempdir().unwrap();
        let jobs = jobs(dir.path(), 8, 40, 30);
        let header = crate::image_io::Header { width: 40, height: 30, stored_bytes_per_pixel: 3, reorients: false };
        let one = memory::image_bytes(40, 30, peak_bytes_per_pixel(&header, &options(0), true));
        let ahead = ReadAhead::start(&options(4 * (2 * one + one / 2)), jobs.clone());
        while !ahead.reading.lock().unwrap().as_ref().is_none_or(|r| r.is_finished()) {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        assert_eq!(ahead.take_for(&[]).len(), 0);
        assert_eq!(ahead.untaken(), 2, "a quarter of the budget holds two");

        // A run that comes first stops the reading at once.
        let ahead = ReadAhead::start(&options(1 << 30), jobs.clone());
        let _ = ahead.take_for(&jobs[..1]);
        let left = ahead.untaken();
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert_eq!(ahead.untaken(), left, "nothing read after the first run");
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
