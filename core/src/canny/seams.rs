//! How Canny's bands share the work ([`over_bands`]): every thread takes bands until none is left, each band
//! follows the hysteresis inside its own rows, then one thread follows it across the seams between them
//! ([`follow_across`]), through the candidates the bands left open.

use std::cell::RefCell;
use std::thread::LocalKey;

use bit_set::BitSet;

/// What [`Canny::edges_rayon`](super::Canny::edges_rayon) and [`Canny::edges_of`](super::Canny::edges_of) share: bands of rows, four a thread (at least `min_rows` a
/// band), each done on some core by `band(top, its rows of the output, that thread's scratch)`, which returns its
/// open candidates; then the hysteresis across the bands' seams, through the open candidates alone. `scratch` is each
/// thread's own room, kept from one call to the next up to [`KEPT_SCRATCH`] bytes.
pub(super) fn over_bands<S: Scratch>(
    (width, height): (usize, usize),
    min_rows: usize,
    out: &mut [u8],
    scratch: &'static LocalKey<RefCell<S>>,
    band: impl Fn(usize, &mut [u8], &mut S) -> Open + Sync,
) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;
    if width * height == 0 {
        return;
    }
    let rows = height.div_ceil(4 * rayon::current_num_threads()).max(min_rows);
    // Each band writes all of its rows: 255 an edge, 0 not (its open candidates too, which a path through another
    // band may still reach). This thread wakes every thread of the pool at once (`broadcast`), and each takes the
    // next band from a counter until none is left. Split by a parallel iterator instead, the bands reached sleeping
    // threads as woken ones woke others (traced: most bands starting 0.17–0.2 ms into the call). On 16 cores at
    // 2048×1024, aperture 3, each library alone in its process, three runs in each of three leases on one H200 host:
    // 1.05–1.17 → 0.99–1.01 ms, 1.72–1.89 → 1.47–1.59, and 0.89–0.97 → 0.81–0.97. Waking the threads first and then
    // splitting (`spawn_broadcast`, then the iterator) gained nothing (1.70–1.98 ms in the second).
    let bands: Vec<Mutex<Option<&mut [u8]>>> = out.chunks_mut(rows * width).map(|b| Mutex::new(Some(b))).collect();
    let done: Vec<Mutex<Option<Open>>> = bands.iter().map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    rayon::broadcast(|_| {
        scratch.with(|kept| {
            // A band's own fresh room where this thread's is in use (a band run inside another: rayon never does).
            let (mut kept, mut fresh) = (kept.try_borrow_mut().ok(), S::default());
            let room = kept.as_deref_mut().unwrap_or(&mut fresh);
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(b) = bands.get(i) else { break };
                let out = b.lock().expect("no panic while locked").take().expect("each band is taken once");
                let open = band(i * rows, out, room);
                *done[i].lock().expect("no panic while locked") = Some(open);
            }
            if room.bytes() > KEPT_SCRATCH {
                *room = S::default();
            }
        })
    });
    drop(bands);
    let mut open: Vec<Open> =
        done.into_iter().map(|o| o.into_inner().expect("no panic while locked").expect("every band done")).collect();
    // Where a path crosses a seam: an open candidate on a band's first or last row next to an edge pixel of the other
    // band's last or first row, as that band's bits give them. Found and followed on this thread, through the bands'
    // bits of their open candidates: the bands' rows, written by other cores, are read only where a path goes. Read
    // from the output instead, the seams took 0.12–0.18 ms of a 0.9–1.2 ms Canny on 16 threads at 2048×1024, and a
    // parallel pass clearing every band's unreached candidates (marked in the output) 0.09–0.14 ms more, mostly
    // waking the threads; without them, that Canny took 0.87–0.94 ms against 0.88–0.95 at aperture 3, 0.73–0.85
    // against 0.87 at 5, 1.07 against 1.13–1.21 at 7 (three runs each, one lease).
    let touches = |row: &BitSet, x: usize| (x.saturating_sub(1)..(x + 2).min(width)).any(|x| row.contains(x));
    let crosses = |&(x, y): &(usize, usize)| {
        let b = y / rows;
        (y % rows == 0 && b > 0 && touches(&open[b - 1].last, x))
            || ((y + 1) % rows == 0 && y + 1 < height && touches(&open[b + 1].first, x))
    };
    let seeds: Vec<(usize, usize)> =
        open.iter().flat_map(|o| &o.seams).map(|&i| (i % width, i / width)).filter(crosses).collect();
    follow_across(out, seeds, &mut open, (width, height, rows));
}

/// The most room a thread keeps for its next call's bands (0.7 MB a thread at 2048×1024, 2.8 MB at 7680×4320). On 16
/// threads at 2048×1024, aperture 3, one H200 host, calls alternating in one process (median of 400 each): room
/// allocated afresh at every call took 1.093 ms (p25 1.034, p75 1.154), kept room 1.058 (1.015, 1.107).
const KEPT_SCRATCH: usize = 4 << 20;

/// A thread's room for its bands, and its size in bytes.
pub(super) trait Scratch: Default + 'static {
    fn bytes(&self) -> usize;
}

impl Scratch for Vec<u8> {
    fn bytes(&self) -> usize {
        self.capacity()
    }
}

impl Scratch for (Vec<i16>, Vec<i16>, Vec<u8>) {
    fn bytes(&self) -> usize {
        2 * (self.0.capacity() + self.1.capacity()) + self.2.capacity()
    }
}

/// A band's open candidates (its weak ones that a path through another band may still reach) and its edge pixels on
/// its first and last rows.
pub(super) struct Open {
    /// The open candidates on its first or last row, as indices in the image.
    pub(super) seams: Vec<usize>,
    /// All of them (the seams' included), as indices in the band's rows (r · width + x).
    pub(super) candidates: BitSet,
    /// The edge pixels of its first row, by column.
    pub(super) first: BitSet,
    /// The edge pixels of its last row, by column.
    pub(super) last: BitSet,
}

/// The hysteresis across the bands (of `rows` rows each): each of `stack`'s open candidates (x, y) becomes an edge
/// (255), and every open candidate an 8-connected path of them reaches; each leaves its band's set as it is reached.
fn follow_across(
    out: &mut [u8],
    mut stack: Vec<(usize, usize)>,
    bands: &mut [Open],
    (width, height, rows): (usize, usize, usize),
) {
    // Row y's open candidates: its band's set and the row's first bit there (one division a row, not a neighbour).
    let row = |y: usize| (y / rows, (y % rows) * width);
    stack.retain(|&(x, y)| {
        let (b, at) = row(y);
        bands[b].candidates.remove(at + x)
    });
    for &(x, y) in &stack {
        out[y * width + x] = 255;
    }
    while let Some((x, y)) = stack.pop() {
        for ny in y.saturating_sub(1)..(y + 2).min(height) {
            let (b, at) = row(ny);
            let candidates = &mut bands[b].candidates;
            for nx in x.saturating_sub(1)..(x + 2).min(width) {
                if candidates.remove(at + nx) {
                    out[ny * width + nx] = 255;
                    stack.push((nx, ny));
                }
            }
        }
    }
}
