//! The terminal view, shaped like hyperfine's: `Time (mean ± σ)`, `Range (min … max)`, and
//! "X ± σ times faster than …" summaries.

use std::fmt::Write as _;

use super::{n_label, BenchResults, Category, HostSeries, KernelSeries, Peer, PipelineSeries};
use crate::stats::{ratio, Summary};
use crate::variant::{Variant, N1};

/// A duration given in milliseconds, in the unit that suits it.
pub fn fmt_time(ms: f64) -> String {
    if ms >= 1000.0 {
        format!("{:.3} s", ms / 1000.0)
    } else if ms >= 1.0 {
        format!("{ms:.2} ms")
    } else {
        format!("{:.1} µs", ms * 1000.0)
    }
}

fn pm(s: &Summary) -> String {
    format!("{} ± {}", fmt_time(s.mean), fmt_time(s.sd))
}

/// The lines for one variant at one size.
pub fn series(p: &PipelineSeries, k: &KernelSeries, copy_gbps: Option<f64>) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{}x{} · {}{}", p.width, p.height, p.variant.name(), n_label(p.variant));
    let cat = |c| p.summary(c);
    if let (Some(total), Some(io), Some(comp)) = (cat(Category::Total), cat(Category::Io), cat(Category::Computation)) {
        let mem = cat(Category::GpuMemory).map(|m| format!(" · GPU memory {}", fmt_time(m.mean))).unwrap_or_default();
        let _ = writeln!(
            s,
            "  Time (mean ± σ):     {:>22}    [I/O {}{mem} · computation {}]",
            pm(&total),
            fmt_time(io.mean),
            fmt_time(comp.mean)
        );
        let _ = writeln!(
            s,
            "  Range (min … max):   {:>22}    {} runs",
            format!("{} … {}", fmt_time(total.min), fmt_time(total.max)),
            total.count
        );
    }
    let ks = k.summary();
    let mut line = format!("  Computation alone:   {:>22}    median of {}", fmt_time(ks.median), ks.count);
    if p.variant.is_gpu() {
        let gbps = k.effective_gbps();
        let _ = write!(line, " over {} buffer copies · {gbps:.0} GB/s", k.buffer_copies);
        if let Some(bw) = copy_gbps {
            let _ = write!(line, " = {:.1} % of copy bandwidth", 100.0 * gbps / bw);
        }
    }
    let _ = writeln!(s, "{line}\n");
    s
}

/// "Fastest ran X ± σ times faster than …" for one size, on computation-only means.
pub fn size_summary(r: &BenchResults, size: (u32, u32)) -> String {
    let mut ks: Vec<&KernelSeries> = r.kernels.iter().filter(|k| (k.width, k.height) == size).collect();
    if ks.is_empty() {
        return String::new();
    }
    ks.sort_by(|a, b| a.summary().mean.total_cmp(&b.summary().mean));
    let fastest = ks[0];
    let mut s = format!(
        "Summary {}x{} (computation alone, means)\n  {}{} ran\n",
        size.0,
        size.1,
        fastest.variant.name(),
        n_label(fastest.variant)
    );
    for other in &ks[1..] {
        let (x, sd) = ratio(&other.summary(), &fastest.summary());
        let _ =
            writeln!(s, "    {x:>10.2} ± {sd:.2} times faster than {}{}", other.variant.name(), n_label(other.variant));
    }
    if let (Some(npp), Some(best)) = (r.peer(size, Peer::Npp), r.fastest_gpu(size)) {
        if let (Some(n), Some(b)) = (Summary::of(&npp.samples_ms), Some(best.summary())) {
            let _ = writeln!(
                s,
                "  {}: median {} — {}{} is {:.2} times faster (medians)",
                npp.description,
                fmt_time(n.median),
                best.variant.name(),
                n_label(best.variant),
                n.median / b.median
            );
        }
    }
    let rayon = ks.iter().find(|k| k.variant == crate::variant::Variant::CpuRayon);
    if let (Some(cv), Some(rayon)) = (r.opencv.iter().find(|o| (o.width, o.height) == size), rayon) {
        let median = rayon.summary().median;
        let _ = writeln!(
            s,
            "  OpenCV (cvtColor, Sobel ×2, magnitude, convertScaleAbs; the same ksize and cores): median {} — \
             cpu-rayon is {:.2} times faster (medians)",
            fmt_time(cv.computation_median_ms),
            cv.computation_median_ms / median
        );
    }
    s.push('\n');
    s
}

/// The host → host line for one size.
pub fn host_line(h: &HostSeries) -> String {
    let median = crate::stats::median(&mut h.samples_ms.clone());
    format!(
        "{}x{} · host → host (pinned, {} streams, bands of {} rows): median {} — PCIe bound {} = {:.0} % of it\n\n",
        h.width,
        h.height,
        h.streams,
        h.band_rows,
        fmt_time(median),
        fmt_time(h.pcie_bound_ms),
        100.0 * h.pcie_bound_ms / median
    )
}

/// The batch line: medians of both and their ratio.
pub fn batch_line(b: &super::BatchRow) -> String {
    let (run, base) = (
        crate::stats::median(&mut b.batch_images_per_s.clone()),
        crate::stats::median(&mut b.baseline_images_per_s.clone()),
    );
    format!(
        "Batch, {} copies of {}x{}: {run:.1} images/s (median of 3) against {base:.1} for decode + encode alone = {:.0} % — {}\n",
        b.images,
        b.width,
        b.height,
        100.0 * run / base,
        b.engine
    )
}

/// One point of the report-mapping sweep, beside the coalesced mapping at the same n when measured.
pub fn mapping_line(k: &KernelSeries, r: &BenchResults) -> String {
    let n = k.n.unwrap_or(1);
    let median = k.summary().median;
    let mut line = format!(
        "{}x{} · gpu-n1 --mapping report n={n}: computation {} (median of {})",
        k.width,
        k.height,
        fmt_time(median),
        k.samples_ms.len()
    );
    if let Some(c) = r.kernel((k.width, k.height), Variant::GpuN1(N1::new(k.n.unwrap_or(1)))) {
        let c = c.summary().median;
        let _ = write!(line, " · coalesced n={n}: {} ({:.1}× faster)", fmt_time(c), median / c);
    }
    line.push('\n');
    line
}

/// A student's kernel at one size: its median and GB/s.
pub fn student_line(s: &super::StudentSeries) -> String {
    let median = crate::stats::median(&mut s.samples_ms.clone());
    let gbps = 4.0 * s.width as f64 * s.height as f64 / (median * 1e6);
    format!(
        "{}x{} · {}: identical; computation median {} = {gbps:.0} GB/s\n\n",
        s.width,
        s.height,
        s.label,
        fmt_time(median)
    )
}

/// "What you wait for", one line per command and start.
pub fn wait_lines(series: &[super::wait::WaitSeries]) -> String {
    let mut out = String::new();
    for w in series {
        let note = w.note.as_deref().map_or(String::new(), |n| format!(" ({n})"));
        let Some(s) = crate::stats::Summary::of(&w.samples_s) else {
            out.push_str(&format!("  --variant {:<9} {}: not run{note}\n", w.variant, w.start));
            continue;
        };
        out.push_str(&format!(
            "  --variant {:<9} {}: {:.3} s ± {:.3} (min {:.3} … max {:.3}, {} runs){note}\n",
            w.variant, w.start, s.mean, s.sd, s.min, s.max, s.count
        ));
    }
    out + "\n"
}
