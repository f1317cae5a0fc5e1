//! How Canny's bands share the work ([`over_bands`]): every thread takes bands until none is left, each band
//! follows the hysteresis inside its own rows, then one thread follows it across the seams between them
//! ([`join_across`]), through the candidates the bands left open and the links that each seam's second band found.

use std::cell::RefCell;
use std::thread::LocalKey;

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
    use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
    use std::sync::{Mutex, OnceLock};
    if width * height == 0 {
        return;
    }
    // A whole number of bands a thread, up to four, each of at least `min_rows` rows (where the image has them): 22
    // bands on 16 threads end when the threads with two do, 1.08–1.12× the time of 16 (aperture 5, 2048×1024).
    let threads = rayon::current_num_threads();
    let rows = height.div_ceil(threads * (height / (threads * min_rows)).clamp(1, 4)).max(min_rows);
    // Each band writes all of its rows: 255 an edge, 0 not (its open candidates too, which a path through another
    // band may still reach). This thread wakes every thread of the pool at once (`broadcast`), and each takes the
    // next band from a counter until none is left. Split by a parallel iterator instead, the bands reached sleeping
    // threads as woken ones woke others (traced: most bands starting 0.17–0.2 ms into the call). On 16 cores at
    // 2048×1024, aperture 3, each library alone in its process, three runs in each of three leases on one H200 host:
    // 1.05–1.17 → 0.99–1.01 ms, 1.72–1.89 → 1.47–1.59, and 0.89–0.97 → 0.81–0.97. Waking the threads first and then
    // splitting (`spawn_broadcast`, then the iterator) gained nothing (1.70–1.98 ms in the second), and nor did keeping
    // every thread spinning for the next call 0.1 or 1 ms after each (0.66–0.74 ms without, 0.70–0.80 and 0.74–0.81
    // with, five runs alternating on another H200 host).
    let bands: Vec<Mutex<Option<&mut [u8]>>> = out.chunks_mut(rows * width).map(|b| Mutex::new(Some(b))).collect();
    let done: Vec<OnceLock<Open>> = bands.iter().map(|_| OnceLock::new()).collect();
    // Seam s lies between bands s and s + 1: whichever of the two threads finishes its band second joins the
    // seam's candidates there, both bands' lists still warm in some core's cache, while other bands run.
    let seams: Vec<(AtomicU8, OnceLock<Seam>)> =
        (1..bands.len()).map(|_| (AtomicU8::new(0), OnceLock::new())).collect();
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
                assert!(done[i].set(band(i * rows, out, room)).is_ok(), "each band is done once");
                // The seams above and below band i (seam i - 1 and seam i, where they exist).
                let near = i.saturating_sub(1)..(i + 1).min(seams.len());
                for (s, (count, seam)) in seams.iter().enumerate().take(near.end).skip(near.start) {
                    if count.fetch_add(1, Ordering::AcqRel) == 1 {
                        let open = |b: usize| done[b].get().expect("both bands of the seam done");
                        assert!(seam.set(Seam::between(open(s), open(s + 1), width)).is_ok(), "each seam once");
                    }
                }
            }
            if room.bytes() > KEPT_SCRATCH {
                *room = S::default();
            }
        })
    });
    drop(bands);
    let open: Vec<Open> = done.into_iter().map(|o| o.into_inner().expect("every band done")).collect();
    let seams: Vec<Seam> = seams.into_iter().map(|(_, s)| s.into_inner().expect("every seam joined")).collect();
    // Where a path crosses a seam, on this thread: a few bytes a link between two components, and the bands' rows,
    // written by other cores, written only where a set of components is reached. With the seams' pairs also found
    // here, they took 22 of this step's 31 µs (two cores, 32 bands at 2048×1024); found by the bands' threads instead,
    // Canny at aperture 3 on 16 threads of one H200 host took 0.95 ms against 1.00 (medians of five runs alternating).
    join_across(out, &open, &seams, (width, rows));
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

/// A band's open candidates (its weak ones that a path through another band may still reach), in components that
/// paths inside the band join, and its edge pixels on its first and last rows.
pub(super) struct Open {
    /// The open candidates as indices in the band's states (row r, column x at (r + 1) · `stride` + x + 1), component
    /// k at members[starts[k]..starts[k + 1]]. Turned into image positions only where a path across the bands reaches
    /// them: a division a member otherwise, 1 % of Canny's time on one thread in bands of 16 rows (perf).
    members: Vec<usize>,
    starts: Vec<usize>,
    /// The length of a row of the band's states: width + 2.
    stride: usize,
    /// The open candidates of its first row, (x, component), by column.
    first_open: Vec<(usize, usize)>,
    /// The same of its last row.
    last_open: Vec<(usize, usize)>,
    /// The edge pixels of its first row, by column.
    first_edges: Vec<bool>,
    /// The edge pixels of its last row, by column.
    last_edges: Vec<bool>,
}

impl Open {
    /// A band's open candidates from its states (`rows` rows of `width`, row r, column x at (r + 1) · (width + 2) + x +
    /// 1): `open` the state indices of its open candidates, component k at open[starts[k]..starts[k
    /// + 1]].
    pub(super) fn of_band(states: &[u8], (width, rows): (usize, usize), open: Vec<usize>, starts: Vec<usize>) -> Open {
        let stride = width + 2;
        let (first, last) = (stride + 1, rows * stride + 1); // the states of the first and last rows' column 0
        let (mut first_open, mut last_open) = (Vec::new(), Vec::new());
        for (k, c) in starts.windows(2).enumerate() {
            for &m in &open[c[0]..c[1]] {
                if (first..first + width).contains(&m) {
                    first_open.push((m - first, k));
                }
                if (last..last + width).contains(&m) {
                    last_open.push((m - last, k));
                }
            }
        }
        first_open.sort_unstable();
        last_open.sort_unstable();
        // A bool a column: as a bit set built one insert at a time, its growth alone took 2 % of Canny's time (one
        // thread, bands of 16 rows, perf).
        let edges = |at: usize| states[at..at + width].iter().map(|&s| s == super::EDGE).collect::<Vec<bool>>();
        let (first_edges, last_edges) = (edges(first), edges(last));
        Open { members: open, starts, stride, first_open, last_open, first_edges, last_edges }
    }

    fn components(&self) -> usize {
        self.starts.len() - 1
    }
}

/// What one seam joins: the pairs of components (the upper band's, the lower's) whose open candidates touch across
/// it, and the components of either band that an edge pixel of the other's row at the seam reaches.
pub(super) struct Seam {
    links: Vec<(usize, usize)>,
    up_reached: Vec<usize>,
    down_reached: Vec<usize>,
}

impl Seam {
    /// The seam between band `up` and the band `down` below it, rows of `width`.
    fn between(up: &Open, down: &Open, width: usize) -> Seam {
        let touches = |row: &[bool], x: usize| row[x.saturating_sub(1)..(x + 2).min(width)].contains(&true);
        let reached = |open: &[(usize, usize)], edges: &[bool]| {
            let mut ks: Vec<usize> = open.iter().filter(|&&(x, _)| touches(edges, x)).map(|&(_, k)| k).collect();
            ks.dedup();
            ks
        };
        // Every pair of open candidates across the seam within a column of each other, the two rows' lists walked
        // together by column; a run of pixels of the same two components gives one link.
        let (below, mut links) = (&down.first_open, Vec::new());
        let mut from = 0;
        for &(x, k) in &up.last_open {
            while from < below.len() && below[from].0 + 1 < x {
                from += 1;
            }
            for &(_, j) in below[from..].iter().take_while(|&&(bx, _)| bx <= x + 1) {
                if links.last() != Some(&(k, j)) {
                    links.push((k, j));
                }
            }
        }
        Seam {
            links,
            up_reached: reached(&up.last_open, &down.first_edges),
            down_reached: reached(&down.first_open, &up.last_edges),
        }
    }
}

/// The hysteresis across the bands (`bands[b]` the open candidates of rows b · `rows` …, `seams[b]` what joins bands
/// b and b + 1, `out` the image's): the bands' components are joined where a seam links them (union-find, a node a
/// component), a set is reached where a seam says one of its components is, and every candidate of a reached set
/// becomes an edge (255). The bands' own work keeps a component's candidates together, so this reads a few bytes a
/// link and writes only the edges it adds.
fn join_across(out: &mut [u8], bands: &[Open], seams: &[Seam], (width, rows): (usize, usize)) {
    let mut first = Vec::with_capacity(bands.len());
    let mut nodes = 0;
    for b in bands {
        first.push(nodes);
        nodes += b.components();
    }
    if nodes == 0 {
        return;
    }
    let mut parent: Vec<usize> = (0..nodes).collect();
    let root = |parent: &mut [usize], mut n: usize| {
        while parent[n] != n {
            parent[n] = parent[parent[n]];
            n = parent[n];
        }
        n
    };
    let mut reached = vec![false; nodes];
    for (b, seam) in seams.iter().enumerate() {
        seam.up_reached.iter().for_each(|&k| reached[first[b] + k] = true);
        seam.down_reached.iter().for_each(|&k| reached[first[b + 1] + k] = true);
        for &(k, j) in &seam.links {
            let (a, c) = (root(&mut parent, first[b] + k), root(&mut parent, first[b + 1] + j));
            parent[a.max(c)] = a.min(c);
        }
    }
    for n in 0..nodes {
        if reached[n] {
            let r = root(&mut parent, n);
            reached[r] = true;
        }
    }
    for (b, band) in bands.iter().enumerate() {
        let out = &mut out[b * rows * width..];
        for (k, c) in band.starts.windows(2).enumerate() {
            if reached[root(&mut parent, first[b] + k)] {
                let at = |m: usize| (m / band.stride - 1) * width + m % band.stride - 1;
                band.members[c[0]..c[1]].iter().for_each(|&m| out[at(m)] = 255);
            }
        }
    }
}
