//! One large PNG decoded, computed and encoded at the same time: the pattern of a **pipeline** — stages on
//! threads of their own, joined by queues of a bounded number of buffers.
//!
//! Done one after the other, a 16384² image waits for its decode (seconds, one core: PNG rows depend on
//! the row before), then for the edges, then for its encode (one core again). Here the image moves in
//! bands of about 4 MB of RGB ([`crate::bands`], halo rows of the stencil's radius each side):
//!
//! ```text
//!   decoder thread ──band of RGB rows──▶ compute thread ──band of edges──▶ encoder (this thread)
//!         ▲                                 │      ▲                            │
//!         └──────── free input buffer ──────┘      └──── free output buffer ────┘
//! ```
//!
//! - the **decoder** reads the PNG row by row ([`PngRows`]) straight into a free input buffer — for the
//!   GPU, pinned memory, so that no host copy stands between the decoder and the bus — copying a band's
//!   halo rows into the neighbouring band's buffer;
//! - **compute** runs gpu-strip through [`Ring`] (upload, kernel and download of a band on one of three
//!   streams) or cpu-rayon on the band, and passes the band's own rows of edges on; before it waits for a
//!   band or a buffer, it waits for the ring instead and passes on what it holds, so that it never holds
//!   buffers another stage waits for;
//! - the **encoder** feeds them, in order, to the PNG writer, into a temporary file that is renamed into
//!   place once the image is whole ([`Staged::png_rows`]).
//!
//! The user waits for the slowest stage instead of the sum; memory is the buffers, not the image: four input
//! bands of 4–8 MB of RGB ([`staged::band_rows_for`]) and two of edges, 20–40 MB whatever its size
//! ([`buffer_bytes`]); for the GPU, pinned in one piece ([`PinnedRegion`]). Where a stage fails the others
//! stop, and nothing is left behind.

use std::path::Path;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::time::{Duration, Instant};

use crate::bands::{bands, max_in_rows, Band};
use crate::error::{Error, Result};
use crate::gpu::pinned::PinnedRegion;
use crate::gpu::staged::{self, Ring};
use crate::gpu::{Gpu, GpuError};
use crate::image_io::{PngCompression, PngRows, Staged, Target};
use crate::sobel::Filter;

/// What computes the edges of each band.
#[derive(Clone, Copy)]
pub enum Compute<'a> {
    /// cpu-rayon, on every core, band by band.
    Cpu,
    /// gpu-strip on this device, through pinned buffers.
    Gpu(&'a Gpu),
}

/// What one streamed run measured, in milliseconds.
#[derive(Clone, Copy, Debug, Default)]
pub struct Times {
    /// The decoder's busy time: reading and converting rows, copying halo rows.
    pub decode_ms: f64,
    /// The encoder's busy time: filtering, compressing and writing rows.
    pub encode_ms: f64,
    /// The kernels (summed event times) or cpu-rayon's band computations.
    pub compute_ms: f64,
    /// GPU: host ↔ device copies, summed event times; `None` on the CPU.
    pub memory_ms: Option<f64>,
    /// Allocating the buffers (pinned memory, device buffers).
    pub setup_ms: f64,
    /// Freeing them.
    pub release_ms: f64,
    /// The whole pipeline, wall clock: what the user waits for.
    pub wall_ms: f64,
}

/// Input band buffers, the fewest that keep every stage able to move: the decoder holds every band whose
/// input rows the row it reads lies in (one band, and `⌈2r / band_rows⌉` more whose halos reach it: three for
/// one-row bands of a 3×3 stencil) and opens the next band before it sends the oldest; compute holds one while
/// it waits for an output buffer, and never more ([`compute_gpu`]). At least 4, the measured count for the
/// 4–8 MB bands of [`staged::band_rows_for`]: fewer pinned bytes are less to pin (the GPU once had
/// `LANES + 3` input and `LANES + 1` output buffers).
fn inputs(band_rows: usize, radius: usize) -> usize {
    (2 + (2 * radius).div_ceil(band_rows.max(1))).max(4)
}
/// Output band buffers: the encoder holds one while compute fills the other.
const OUTPUTS: usize = 2;

/// Host bytes the pipeline's buffers take for a `width × height` image and `filter`'s stencil: what the memory
/// budget is checked against.
pub fn buffer_bytes(width: u32, height: u32, filter: Filter) -> u64 {
    let (band_rows, r) = (staged::band_rows_for(width as usize, height as usize), filter.stencil().radius);
    let in_rows = max_in_rows(band_rows, r) as u64;
    (inputs(band_rows, r) as u64 * 3 + OUTPUTS as u64) * in_rows * width as u64
}

/// Streams `rows` through `compute` into `target` (staged in `staged`, committed by the caller), in bands
/// of 4–8 MB of RGB ([`staged::band_rows_for`]).
pub fn run(
    rows: PngRows,
    compute: Compute,
    filter: Filter,
    staged: &mut Staged,
    target: &Target,
    compression: PngCompression,
) -> Result<Times> {
    let (width, height) = (rows.width as usize, rows.height as usize);
    let band_rows = match compute {
        Compute::Gpu(gpu) => staged::band_rows(gpu, width, height).map_err(|e| gpu_error(rows.path(), e))?,
        Compute::Cpu => staged::band_rows_for(width, height),
    };
    run_in_bands(rows, compute, filter, staged, target, compression, band_rows)
}

fn gpu_error(path: &Path, e: GpuError) -> Error {
    Error::Gpu { path: path.to_owned(), detail: e.to_string() }
}

/// [`run`] with bands of `band_rows` output rows (tests use tiny ones).
pub fn run_in_bands(
    mut rows: PngRows,
    compute: Compute,
    filter: Filter,
    staged: &mut Staged,
    target: &Target,
    compression: PngCompression,
    band_rows: usize,
) -> Result<Times> {
    let started = Instant::now();
    let path = &rows.path().to_owned();
    let (width, height) = (rows.width as usize, rows.height as usize);
    let radius = filter.stencil().radius;
    let in_rows = max_in_rows(band_rows, radius).min(height);
    let out_rows = band_rows.min(height);
    let (in_bytes, out_bytes) = (3 * in_rows * width, out_rows * width);
    let count = inputs(band_rows, radius);
    let mut owners = match compute {
        Compute::Cpu => Buffers::Cpu(
            (0..count).map(|_| vec![0; in_bytes]).collect(),
            // cpu-rayon writes the band image's whole output, halo rows included.
            (0..OUTPUTS).map(|_| vec![0; in_rows * width]).collect(),
        ),
        Compute::Gpu(gpu) => {
            let sizes = [vec![in_bytes; count], vec![out_bytes; OUTPUTS]].concat();
            Buffers::Pinned(PinnedRegion::new(&gpu.ctx, &sizes).map_err(|e| gpu_error(path, e))?, count)
        }
    };
    let (inputs, outputs) = owners.slices();
    crate::trace::mark("streamed: band buffers made");
    let ring = match compute {
        Compute::Gpu(gpu) => Some(Ring::new(gpu, filter, width, in_rows).map_err(|e| gpu_error(path, e))?),
        Compute::Cpu => None,
    };
    crate::trace::mark("streamed: device buffers made");
    let setup_ms = started.elapsed().as_secs_f64() * 1e3;
    let plan = bands(height, band_rows, radius);

    let (free_in_tx, free_in) = channel();
    let (filled_tx, filled) = channel();
    let (free_out_tx, free_out) = channel();
    let (edges_tx, edges) = channel();
    inputs.into_iter().for_each(|b| free_in_tx.send(b).expect("receiver alive"));
    outputs.into_iter().for_each(|b| free_out_tx.send(b).expect("receiver alive"));

    let (decoded, computed, encoded) = std::thread::scope(|s| {
        let plan = &plan;
        let decoder = s.spawn(move || decode(&mut rows, plan, width, free_in, filled_tx).map(|ms| (ms, rows)));
        let computer = s.spawn(move || match (compute, ring) {
            (Compute::Gpu(gpu), Some(ring)) => compute_gpu(gpu, path, ring, filled, free_in_tx, free_out, edges_tx),
            _ => compute_cpu(filter, width, filled, free_in_tx, free_out, edges_tx),
        });
        let mut encode_time = Duration::ZERO;
        let encoded = staged.png_rows(target, width as u32, height as u32, compression, |w| {
            let mut written = 0;
            for (band, buf, skip) in edges {
                let t = Instant::now();
                w.write_all(&buf[skip * width..(skip + band.rows) * width])
                    .map_err(|source| Error::Write { path: target.display_path(), source })?;
                encode_time += t.elapsed();
                written += band.rows;
                // Compute may be done already (the last bands); then nobody needs the buffer back.
                let _ = free_out_tx.send(buf);
            }
            if written == height {
                Ok(())
            } else {
                // Another stage stopped; its error is the one reported.
                Err(stopped(path))
            }
        });
        drop(free_out_tx);
        let decoded = decoder.join().expect("the decoder does not panic");
        let computed = computer.join().expect("compute does not panic");
        (decoded, computed, encoded.map(|()| encode_time))
    });
    // The stage that failed says why; the others only stopped (the encoder then says "stopped" too, so a
    // decoder's or compute's own error comes first).
    let ((decode_ms, rows), computed, encode_time) = match (decoded, computed, encoded) {
        (Ok(d), Ok(c), Ok(e)) => (d, c, e),
        (Err(Some(e)), ..) | (_, Err(Some(e)), _) | (.., Err(e)) => return Err(e),
        _ => return Err(stopped(path)),
    };
    rows.finish()?;
    let freeing = Instant::now();
    drop(owners);
    crate::trace::mark("streamed: band buffers freed");
    let release_ms = computed.release_ms + freeing.elapsed().as_secs_f64() * 1e3;
    Ok(Times {
        decode_ms,
        encode_ms: encode_time.as_secs_f64() * 1e3,
        compute_ms: computed.compute_ms,
        memory_ms: computed.copies_ms,
        setup_ms,
        release_ms,
        wall_ms: started.elapsed().as_secs_f64() * 1e3,
    })
}

/// Buffers borrowed for the pipeline.
type Slices<'b> = Vec<&'b mut [u8]>;

/// The band buffers' owners: ordinary memory for the CPU, one pinned region for the GPU.
enum Buffers {
    Cpu(Vec<Vec<u8>>, Vec<Vec<u8>>),
    /// The input buffers (as many as the second field says), then [`OUTPUTS`] output buffers.
    Pinned(PinnedRegion, usize),
}

impl Buffers {
    /// The input and output buffers, borrowed for the pipeline.
    fn slices(&mut self) -> (Slices<'_>, Slices<'_>) {
        match self {
            Buffers::Cpu(i, o) => {
                (i.iter_mut().map(|b| &mut b[..]).collect(), o.iter_mut().map(|b| &mut b[..]).collect())
            }
            Buffers::Pinned(region, count) => {
                let mut inputs = region.buffers();
                let outputs = inputs.split_off(*count);
                (inputs, outputs)
            }
        }
    }
}

/// What compute measured (ms): its busy time (the kernels' summed event times on the GPU) and, on the GPU,
/// the copies' summed event times and the time to free its device buffers.
struct Computed {
    compute_ms: f64,
    copies_ms: Option<f64>,
    release_ms: f64,
}

fn stopped(path: &Path) -> Error {
    Error::Decode { path: path.to_owned(), detail: "the pipeline stopped".into() }
}

/// A stage's outcome: `Err(None)` when it stopped because another stage did (a queue closed).
type Stage<T> = std::result::Result<T, Option<Error>>;

/// The decoder: every row of the image into the input buffer of each band that holds it, each band sent on
/// once its last row is in. Returns its busy time (ms).
fn decode<'b>(
    rows: &mut PngRows,
    plan: &[Band],
    width: usize,
    free: Receiver<&'b mut [u8]>,
    filled: Sender<(Band, &'b mut [u8])>,
) -> Stage<f64> {
    let row_bytes = 3 * width;
    let mut busy = Duration::ZERO;
    // The bands whose input rows are being read, oldest first.
    let mut open: Vec<(Band, &'b mut [u8])> = Vec::with_capacity(3);
    let mut next = 0;
    for y in 0..rows.height as usize {
        while next < plan.len() && plan[next].in_y0 <= y {
            open.push((plan[next], free.recv().map_err(|_| None)?));
            next += 1;
        }
        let t = Instant::now();
        let ((first, buf), others) = open.split_first_mut().expect("every row lies in a band");
        let at = |band: &Band| (y - band.in_y0) * row_bytes;
        let row = &mut buf[at(first)..at(first) + row_bytes];
        rows.next_into(row).map_err(Some)?;
        // A halo row: the same bytes in the neighbouring band(s).
        for (band, other) in others {
            other[at(band)..at(band) + row_bytes].copy_from_slice(row);
        }
        busy += t.elapsed();
        while open.first().is_some_and(|(b, _)| b.in_y0 + b.in_rows == y + 1) {
            filled.send(open.remove(0)).map_err(|_| None)?;
        }
    }
    Ok(busy.as_secs_f64() * 1e3)
}

/// gpu-strip: each band through the ring; the band it hands back goes on to the encoder, its input buffer
/// back to the decoder. Before waiting for the next band or for an output buffer, it waits for the ring (a
/// band's copies and kernel take well under a millisecond, a band's decode many) and passes on every band it
/// held: a wait that held buffers could be the one the encoder or the decoder needed. Returns the kernels'
/// and the copies' summed times, and the time to free the ring's device buffers (ms).
fn compute_gpu<'b>(
    gpu: &Gpu,
    path: &Path,
    mut ring: Ring<'b>,
    filled: Receiver<(Band, &'b mut [u8])>,
    free_in: Sender<&'b mut [u8]>,
    free_out: Receiver<&'b mut [u8]>,
    edges: Sender<(Band, &'b mut [u8], usize)>,
) -> Stage<Computed> {
    let gpu_err = |e: GpuError| Some(gpu_error(path, e));
    gpu.ctx.bind_to_thread().map_err(|e| gpu_err(e.into()))?;
    let pass_on = |d: staged::Done<'b>| -> Stage<()> {
        // The decoder may be done already (the last bands); then nobody needs the buffer back.
        let _ = free_in.send(d.input);
        edges.send((d.band, d.output, 0)).map_err(|_| None)
    };
    let drain = |ring: &mut Ring<'b>| -> Stage<()> { ring.drain().map_err(gpu_err)?.into_iter().try_for_each(pass_on) };
    while let Some((band, input)) = next_after(&filled, || drain(&mut ring))? {
        let output = next_after(&free_out, || drain(&mut ring))?.ok_or(None)?;
        if let Some(done) = ring.submit(band, input, output).map_err(gpu_err)? {
            pass_on(done)?;
        }
    }
    drain(&mut ring)?;
    let (compute_ms, copies_ms) = (ring.kernel_ms, Some(ring.copy_ms));
    let freeing = Instant::now();
    drop(ring);
    crate::trace::mark("streamed: device buffers freed");
    Ok(Computed { compute_ms, copies_ms, release_ms: freeing.elapsed().as_secs_f64() * 1e3 })
}

/// The next value from `rx`: at once if one is there, otherwise after `drain` (the ring's bands passed on,
/// [`compute_gpu`]), waiting for it. `None` once its sender is gone.
fn next_after<T>(rx: &Receiver<T>, drain: impl FnOnce() -> Stage<()>) -> Stage<Option<T>> {
    if let Ok(value) = rx.try_recv() {
        return Ok(Some(value));
    }
    drain()?;
    Ok(rx.recv().ok())
}

/// cpu-rayon on each band image (its halo rows included); the band's own rows go on to the encoder.
/// Returns the computations' wall clock (ms).
fn compute_cpu<'b>(
    filter: Filter,
    width: usize,
    filled: Receiver<(Band, &'b mut [u8])>,
    free_in: Sender<&'b mut [u8]>,
    free_out: Receiver<&'b mut [u8]>,
    edges: Sender<(Band, &'b mut [u8], usize)>,
) -> Stage<Computed> {
    let mut busy = Duration::ZERO;
    for (band, input) in filled.iter() {
        let output = free_out.recv().map_err(|_| None)?;
        let t = Instant::now();
        crate::cpu::rayon::sobel_into(
            &input[..3 * band.in_rows * width],
            width,
            band.in_rows,
            filter,
            &mut output[..band.in_rows * width],
        );
        busy += t.elapsed();
        let _ = free_in.send(input); // as in `compute_gpu`
        edges.send((band, output, band.skip())).map_err(|_| None)?;
    }
    Ok(Computed { compute_ms: busy.as_secs_f64() * 1e3, copies_ms: None, release_ms: 0.0 })
}
