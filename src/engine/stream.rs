//! One large PNG decoded, computed and encoded at the same time: the pattern of a **pipeline** — stages on
//! threads of their own, joined by queues of a bounded number of buffers.
//!
//! Done one after the other, a 16384² image waits for its decode (seconds, one core: PNG rows depend on
//! the row before), then for the edges, then for its encode (one core again). Here the image moves in
//! bands of about 4 MB of RGB ([`crate::bands`], one halo row each side):
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
//!   streams) or cpu-rayon on the band, and passes the band's own rows of edges on;
//! - the **encoder** feeds them, in order, to the PNG writer, into a temporary file that is renamed into
//!   place once the image is whole ([`Staged::png_rows`]).
//!
//! The user waits for the slowest stage instead of the sum; memory is the buffers, not the image (about
//! 25 MB on the CPU, 30 MB of pinned memory for the GPU, whatever its size; [`buffer_bytes`]). Where a stage fails the others stop, and nothing is left behind.

use std::path::Path;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::time::{Duration, Instant};

use crate::bands::{bands, Band};
use crate::error::{Error, Result};
use crate::gpu::staged::{self, Ring};
use crate::gpu::{Gpu, GpuError};
use crate::image_io::{PngCompression, PngRows, Staged, Target};
use crate::sobel::Filter;
use cudarc::driver::PinnedHostSlice;

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
    /// The whole pipeline, wall clock: what the user waits for.
    pub wall_ms: f64,
}

/// Input and output band buffers, the fewest that keep every stage able to move: the decoder holds up to
/// three input bands at once (a row lies in three bands' halos when bands are one row high), compute one
/// (CPU) or one per GPU lane plus the one it has received; compute needs an output buffer to start a band
/// while the encoder holds one. Fewer pinned bytes are less to allocate: 31 ms for the 70 MB of
/// `LANES + 4` and `LANES + 2` at 16384² (`docs/performance.md` v0.19).
fn buffer_counts(on_gpu: bool) -> (usize, usize) {
    if on_gpu {
        (staged::LANES + 3, staged::LANES + 1)
    } else {
        (4, 2)
    }
}

/// Host bytes the pipeline's buffers take for an image `width` pixels wide (whatever its height): what the
/// memory budget is checked against.
pub fn buffer_bytes(width: u32, on_gpu: bool) -> u64 {
    let width = width as u64;
    let in_rows = staged::band_rows_for(width as usize) as u64 + 2;
    let (inputs, outputs) = buffer_counts(on_gpu);
    inputs as u64 * 3 * in_rows * width + outputs as u64 * in_rows * width
}

/// Streams `rows` through `compute` into `target` (staged in `staged`, committed by the caller), in bands
/// of about 4 MB of RGB.
pub fn run(
    rows: PngRows,
    compute: Compute,
    filter: Filter,
    staged: &mut Staged,
    target: &Target,
    compression: PngCompression,
) -> Result<Times> {
    let width = rows.width as usize;
    let band_rows = match compute {
        Compute::Gpu(gpu) => staged::band_rows(gpu, width).map_err(|e| gpu_error(rows.path(), e))?,
        Compute::Cpu => staged::band_rows_for(width),
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
    let in_rows = (band_rows + 2).min(height);
    let out_rows = band_rows.min(height);
    let (inputs, outputs) = buffer_counts(matches!(compute, Compute::Gpu(_)));
    let mut owners = match compute {
        Compute::Cpu => Buffers::Cpu(
            (0..inputs).map(|_| vec![0; 3 * in_rows * width]).collect(),
            (0..outputs).map(|_| vec![0; in_rows * width]).collect(),
        ),
        Compute::Gpu(gpu) => {
            let (i, o) = staged::pinned_buffers(gpu, inputs, outputs, 3 * in_rows * width, out_rows * width)
                .map_err(|e| gpu_error(path, e))?;
            Buffers::Pinned(i, o)
        }
    };
    let (inputs, outputs) = owners.slices().map_err(|e| gpu_error(path, e))?;
    let ring = match compute {
        Compute::Gpu(gpu) => Some(Ring::new(gpu, filter, width, in_rows).map_err(|e| gpu_error(path, e))?),
        Compute::Cpu => None,
    };
    let setup_ms = started.elapsed().as_secs_f64() * 1e3;
    let plan = bands(height, band_rows);

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
    let ((decode_ms, rows), (compute_ms, memory_ms), encode_time) = match (decoded, computed, encoded) {
        (Ok(d), Ok(c), Ok(e)) => (d, c, e),
        (Err(Some(e)), ..) | (_, Err(Some(e)), _) | (.., Err(e)) => return Err(e),
        _ => return Err(stopped(path)),
    };
    rows.finish()?;
    Ok(Times {
        decode_ms,
        encode_ms: encode_time.as_secs_f64() * 1e3,
        compute_ms,
        memory_ms,
        setup_ms,
        wall_ms: started.elapsed().as_secs_f64() * 1e3,
    })
}

/// Buffers borrowed for the pipeline.
type Slices<'b> = Vec<&'b mut [u8]>;

/// The band buffers' owners: ordinary memory for the CPU, pinned memory for the GPU.
enum Buffers {
    Cpu(Vec<Vec<u8>>, Vec<Vec<u8>>),
    Pinned(Vec<PinnedHostSlice<u8>>, Vec<PinnedHostSlice<u8>>),
}

impl Buffers {
    /// The input and output buffers, borrowed for the pipeline.
    fn slices(&mut self) -> std::result::Result<(Slices<'_>, Slices<'_>), GpuError> {
        Ok(match self {
            Buffers::Cpu(i, o) => {
                (i.iter_mut().map(|b| &mut b[..]).collect(), o.iter_mut().map(|b| &mut b[..]).collect())
            }
            Buffers::Pinned(i, o) => (
                i.iter_mut().map(|p| p.as_mut_slice()).collect::<std::result::Result<_, _>>()?,
                o.iter_mut().map(|p| p.as_mut_slice()).collect::<std::result::Result<_, _>>()?,
            ),
        })
    }
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
    // The bands whose input rows are being read, oldest first (at most three).
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
/// back to the decoder. Returns the kernels' and the copies' summed times (ms).
fn compute_gpu<'b>(
    gpu: &Gpu,
    path: &Path,
    mut ring: Ring<'b>,
    filled: Receiver<(Band, &'b mut [u8])>,
    free_in: Sender<&'b mut [u8]>,
    free_out: Receiver<&'b mut [u8]>,
    edges: Sender<(Band, &'b mut [u8], usize)>,
) -> Stage<(f64, Option<f64>)> {
    let gpu_err = |e: GpuError| Some(gpu_error(path, e));
    gpu.ctx.bind_to_thread().map_err(|e| gpu_err(e.into()))?;
    let pass_on = |d: staged::Done<'b>| -> Stage<()> {
        // The decoder may be done already (the last bands); then nobody needs the buffer back.
        let _ = free_in.send(d.input);
        edges.send((d.band, d.output, 0)).map_err(|_| None)
    };
    for (band, input) in filled.iter() {
        let output = free_out.recv().map_err(|_| None)?;
        if let Some(done) = ring.submit(band, input, output).map_err(gpu_err)? {
            pass_on(done)?;
        }
    }
    for done in ring.drain().map_err(gpu_err)? {
        pass_on(done)?;
    }
    Ok((ring.kernel_ms, Some(ring.copy_ms)))
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
) -> Stage<(f64, Option<f64>)> {
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
    Ok((busy.as_secs_f64() * 1e3, None))
}
