//! `results.md`: the bench's tables in Markdown, one function per section, in the order they appear.

use std::fmt::Write as _;

use super::export::{categories_row, pm, sig, size_label};
use super::{n_label, BenchResults, Category};
use crate::stats::{ratio, Summary};
use crate::variant::{Variant, N1};

/// `results.md`: every section, in order.
pub fn markdown(r: &BenchResults) -> String {
    let mut s = String::new();
    header(&mut s, r);
    wait(&mut s, r);
    whole_pipeline(&mut s, r);
    if !r.ns().is_empty() {
        n_sweep(&mut s, r);
        report_mapping(&mut s, r);
        one_to_n(&mut s, r);
    }
    fusion(&mut s, r);
    peers(&mut s, r);
    student(&mut s, r);
    host_to_host(&mut s, r);
    batch(&mut s, r);
    computation(&mut s, r);
    super::report_tables::markdown(&mut s, r);
    s
}

/// The machine, the device and how the numbers were taken.
fn header(s: &mut String, r: &BenchResults) {
    let m = &r.meta;
    let gpu = m.gpu.as_ref().map_or("no GPU".to_string(), |g| {
        format!(
            "{} (compute capability {}, {} SMs, {})",
            g.name, g.compute_capability, g.multiprocessors, g.driver_version
        )
    });
    let _ = writeln!(s, "# cuda_sobel bench\n");
    let f = &m.filter;
    let _ = writeln!(
        s,
        "- cuda_sobel {} (commit {}), operator `{}`, border `{}`{}",
        m.tool_version,
        m.git_commit,
        f.operator.name(),
        f.border.name(),
        if f.compat == crate::sobel::Compat::Report { ", `--compat report`" } else { "" }
    );
    if let Some(canny) = &m.canny {
        let _ = writeln!(s, "- Every variant computes {canny} (checked against the definition), not the edges");
    }
    let _ = writeln!(s, "- GPU: {gpu}");
    let _ = writeln!(s, "- CPU: {} ({} threads), {}", m.host.cpu, m.host.threads, m.host.os);
    if let Some(bw) = m.copy_bandwidth_gbps {
        let _ = writeln!(s, "- Device-to-device copy bandwidth: {bw:.0} GB/s (bytes read + written): the roofline");
    }
    if let Some(us) = m.launch_overhead_us {
        let _ = writeln!(s, "- Launch overhead (empty kernel, GPU side, timed like the kernels): {us:.1} µs: the floor under any kernel");
    }
    if let (Some(init), Some(load)) = (m.context_init_ms, m.kernel_load_ms) {
        let _ = writeln!(s, "- Context init (dummy 1-byte allocation): {init:.1} ms; kernel compile/load {load:.1} ms — both excluded, as in the report");
    }
    let _ = writeln!(
        s,
        "- Whole pipeline: mean ± σ of {} runs (after one warm-up) in ms; computation alone: median of up to {} runs",
        m.runs, m.kernel_reps
    );
    for sk in &r.skipped {
        let _ = writeln!(s, "- Skipped {}: {}", sk.variant.name(), sk.reason);
    }
    for reason in &r.peers_skipped {
        let _ = writeln!(s, "- Peer skipped: {reason}");
    }
}

/// Report Tables 7 and 8: every variant's categories at every size.
fn whole_pipeline(s: &mut String, r: &BenchResults) {
    let sizes = r.sizes();
    let _ = writeln!(s, "\n## Whole pipeline by image size (report Tables 7 and 8)\n");
    for variant in r.variants() {
        let _ = writeln!(s, "### {}{}\n", variant.name(), n_label(variant));
        let _ = writeln!(s, "| image | I/O | GPU memory | computation | total |\n|---|---|---|---|---|");
        for &size in &sizes {
            if let Some(p) = r.series(size, variant) {
                let _ = writeln!(s, "| {} | {} |", size_label(size), categories_row(p));
            }
        }
        s.push('\n');
    }
}

/// Report Tables 11–14: gpu-n1 at every n.
fn n_sweep(s: &mut String, r: &BenchResults) {
    let (sizes, ns) = (r.sizes(), r.ns());
    let _ = writeln!(s, "## n:1 — gpu-n1 by pixels per thread (report Tables 11–14)\n");
    for &size in &sizes {
        let Some(base) = r.series(size, Variant::GpuN1(N1::new(ns[0]))) else { continue };
        let _ = writeln!(s, "### {}\n", size_label(size));
        let _ = writeln!(
            s,
            "| n | I/O | GPU memory | computation | total | speed-up vs n={} (computation) | (total) |\n|---|---|---|---|---|---|---|",
            ns[0]
        );
        for &n in &ns {
            let Some(p) = r.series(size, Variant::GpuN1(N1::new(n))) else { continue };
            let speedup = |c| match (base.summary(c), p.summary(c)) {
                (Some(b), Some(x)) => {
                    let (v, sd) = ratio(&b, &x);
                    format!("{v:.2} ± {sd:.2}")
                }
                _ => "–".into(),
            };
            let _ = writeln!(
                s,
                "| {n} | {} | {} | {} |",
                categories_row(p),
                speedup(Category::Computation),
                speedup(Category::Total)
            );
        }
        s.push('\n');
    }
}

/// The report's overlapping n:1 mapping against the coalesced one.
fn report_mapping(s: &mut String, r: &BenchResults) {
    let sizes = r.sizes();
    if !r.report_mapping.is_empty() {
        let _ = writeln!(s, "## The report's n:1 mapping against the coalesced one (computation alone, medians)\n");
        let _ = writeln!(
            s,
            "`--mapping report`: thread t computes the n pixels from |t − n|, overlapping its neighbours'; \
             coalesced: each thread owns n distinct pixels.\n"
        );
        for &size in &sizes {
            let points: Vec<_> = r.report_mapping.iter().filter(|k| (k.width, k.height) == size).collect();
            let Some(first) = points.first() else { continue };
            let _ = writeln!(s, "### {}\n", size_label(size));
            let _ = writeln!(
                s,
                "| n | coalesced | report mapping | report ÷ coalesced | report ÷ report at n={} |\n|---|---|---|---|---|",
                first.n.unwrap_or(1)
            );
            let base = first.summary().median;
            for k in points {
                let rep = k.summary().median;
                let coalesced = r.kernel(size, Variant::GpuN1(N1::new(k.n.unwrap_or(1)))).map(|c| c.summary().median);
                let _ = writeln!(
                    s,
                    "| {} | {} | {} | {} | {:.2} |",
                    k.n.unwrap_or(1),
                    coalesced.map_or("–".into(), |c| format!("{} ms", sig(c))),
                    format_args!("{} ms", sig(rep)),
                    coalesced.map_or("–".into(), |c| format!("{:.1}", rep / c)),
                    rep / base
                );
            }
            s.push('\n');
        }
    }
}

/// Report Table 15: 1:1 against n:1.
fn one_to_n(s: &mut String, r: &BenchResults) {
    let (sizes, ns) = (r.sizes(), r.ns());
    let _ = writeln!(s, "## 1:1 against n:1 (report Table 15)\n");
    let _ = writeln!(
        s,
        "GPU computation of gpu-map (1:1, four kernels) ÷ that of gpu-n1 at each n (whole-pipeline means).\n"
    );
    let _ = writeln!(
        s,
        "| image |{}\n|---|{}",
        ns.iter().map(|n| format!(" n={n} |")).collect::<String>(),
        "---|".repeat(ns.len())
    );
    for &size in &sizes {
        let Some(map) = r.series(size, Variant::GpuMap).and_then(|p| p.summary(Category::Computation)) else {
            continue;
        };
        let cells: String = ns
            .iter()
            .map(|&n| match r.series(size, Variant::GpuN1(N1::new(n))).and_then(|p| p.summary(Category::Computation)) {
                Some(x) => format!(" {:.2} |", ratio(&map, &x).0),
                None => " – |".into(),
            })
            .collect();
        let _ = writeln!(s, "| {} |{cells}", size_label(size));
    }
    s.push('\n');
}

/// Report Figure 13: map fusion against 1:1.
fn fusion(s: &mut String, r: &BenchResults) {
    let sizes = r.sizes();
    let has = |v| r.pipeline.iter().any(|p| p.variant == v);
    if has(Variant::GpuMap) && has(Variant::GpuFusedMap) {
        let _ = writeln!(s, "## Map fusion against 1:1 (report Figure 13)\n");
        let _ = writeln!(s, "| image | GPU memory, map | GPU memory, fused map | computation, map | computation, fused map | fusion speed-up (computation) |\n|---|---|---|---|---|---|");
    }
    for &size in &sizes {
        let (Some(map), Some(fused)) = (r.series(size, Variant::GpuMap), r.series(size, Variant::GpuFusedMap)) else {
            continue;
        };
        let speedup = match (map.summary(Category::Computation), fused.summary(Category::Computation)) {
            (Some(a), Some(b)) => {
                let (v, sd) = ratio(&a, &b);
                format!("{v:.2} ± {sd:.2}")
            }
            _ => "–".into(),
        };
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {speedup} |",
            size_label(size),
            pm(map.summary(Category::GpuMemory)),
            pm(fused.summary(Category::GpuMemory)),
            pm(map.summary(Category::Computation)),
            pm(fused.summary(Category::Computation))
        );
    }
}

/// NPP and other peers on the same images.
fn peers(s: &mut String, r: &BenchResults) {
    if !r.peers.is_empty() {
        let _ = writeln!(s, "\n## Peers, same images, same process (computation alone, median)\n");
        let _ = writeln!(s, "| image | peer | {BESIDE_OURS_COLUMNS}");
        for p in &r.peers {
            beside_ours(s, r, (p.width, p.height), &p.description, &p.samples_ms);
        }
    }
}

/// A student's kernel beside the fastest of ours.
fn student(s: &mut String, r: &BenchResults) {
    if !r.student.is_empty() {
        let _ = writeln!(s, "\n## Your kernel (--kernel-file), checked and timed like ours\n");
        let _ = writeln!(s, "| image | kernel | {BESIDE_OURS_COLUMNS}");
        for k in &r.student {
            beside_ours(s, r, (k.width, k.height), &k.label, &k.samples_ms);
        }
    }
}

/// The columns of [`beside_ours`]'s rows, after the image and the name, with the header rule.
const BESIDE_OURS_COLUMNS: &str =
    "median (ms) | runs | GB/s (at 4 B/px) | fastest of ours | ours × faster |\n|---|---|---|---|---|---|---|";

/// One row: `name`'s computation samples at `size` against the fastest of our GPU series there.
fn beside_ours(s: &mut String, r: &BenchResults, size: (u32, u32), name: &str, samples_ms: &[f64]) {
    let Some(st) = Summary::of(samples_ms) else { return };
    let gbps = 4.0 * size.0 as f64 * size.1 as f64 / (st.median * 1e6);
    let (best, speedup) = match r.fastest_gpu(size) {
        Some(b) => {
            (format!("{}{}", b.variant.name(), n_label(b.variant)), format!("{:.2}", st.median / b.summary().median))
        }
        None => ("–".into(), "–".into()),
    };
    let _ = writeln!(
        s,
        "| {} | {name} | {} | {} | {gbps:.0} | {best} | {speedup} |",
        size_label(size),
        sig(st.median),
        st.count
    );
}

/// What you wait for: whole commands, cold and warm.
fn wait(s: &mut String, r: &BenchResults) {
    let Some(first) = r.wait.first() else { return };
    let _ = writeln!(
        s,
        "\n## What you wait for\n\nWhole commands, `cuda_sobel {}x{}.png --variant V`, each a new process, wall clock from start to exit. Cold: empty kernel cache and `CUDA_CACHE_DISABLE=1` (a first run on a fresh machine); warm: after one run filled both.\n\n| --variant | start | mean ± σ (s) | min … max (s) | runs | note |\n|---|---|---|---|---|---|",
        first.width, first.height
    );
    for w in &r.wait {
        let Some(st) = Summary::of(&w.samples_s) else {
            let _ = writeln!(s, "| {} | {} | – | – | 0 | {} |", w.variant, w.start, w.note.as_deref().unwrap_or(""));
            continue;
        };
        let _ = writeln!(
            s,
            "| {} | {} | {:.3} ± {:.3} | {:.3} … {:.3} | {} | {} |",
            w.variant,
            w.start,
            st.mean,
            st.sd,
            st.min,
            st.max,
            st.count,
            w.note.as_deref().unwrap_or("")
        );
    }
}

/// Host → host against the PCIe bound.
fn host_to_host(s: &mut String, r: &BenchResults) {
    let m = &r.meta;
    if !r.host_to_host.is_empty() {
        let bw = |v: Option<f64>| v.map_or("–".into(), |g| format!("{g:.1}"));
        let _ = writeln!(
            s,
            "\n## Host → host (pinned buffers, bands on several streams)\n\nPinned copies measured in this run: {} GB/s up, {} GB/s down. The bound is the copies alone: 3 bytes a pixel up and 1 down at those rates.\n",
            bw(m.pinned_h2d_gbps),
            bw(m.pinned_d2h_gbps)
        );
        let _ = writeln!(
            s,
            "| image | streams | band rows | median (ms) | PCIe bound (ms) | bound ÷ time |\n|---|---|---|---|---|---|"
        );
        for h in &r.host_to_host {
            let median = crate::stats::median(&mut h.samples_ms.clone());
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} | {:.0} % |",
                size_label((h.width, h.height)),
                h.streams,
                h.band_rows,
                sig(median),
                sig(h.pcie_bound_ms),
                100.0 * h.pcie_bound_ms / median
            );
        }
    }
}

/// Batch mode against decode + encode alone.
fn batch(s: &mut String, r: &BenchResults) {
    if let Some(b) = &r.batch {
        let _ = writeln!(s, "\n## Batch mode\n\n{}", super::terminal::batch_line(b).trim_end());
        let _ = writeln!(
            s,
            "\nRuns (images/s): batch {:?}, decode + encode alone {:?}.",
            b.batch_images_per_s, b.baseline_images_per_s
        );
    }
}

/// Computation alone: every series' median against the copy bandwidth and the CPU variants.
fn computation(s: &mut String, r: &BenchResults) {
    let (m, sizes) = (&r.meta, r.sizes());
    let _ = writeln!(s, "\n## Computation alone\n");
    let _ = writeln!(s, "Median; GPU kernels between CUDA events on device-resident data, rotating over enough buffer copies to defeat the L2 cache. GB/s = 4 bytes per pixel (3 read + 1 written) / time.\n");
    let _ = writeln!(s, "| image | variant | median (ms) | runs | GB/s | % of copy bandwidth | × vs cpu-scalar (means) | × vs cpu-rayon (means) |\n|---|---|---|---|---|---|---|---|");
    for &size in &sizes {
        let cpu = |v| r.kernel(size, v).map(|k| k.summary());
        let (scalar, rayon) = (cpu(Variant::CpuScalar), cpu(Variant::CpuRayon));
        for k in r.kernels.iter().filter(|k| (k.width, k.height) == size) {
            let ks = k.summary();
            let (gbps, pct) = if k.variant.is_gpu() {
                let g = k.effective_gbps();
                (format!("{g:.0}"), m.copy_bandwidth_gbps.map_or("–".into(), |bw| format!("{:.1}", 100.0 * g / bw)))
            } else {
                ("–".into(), "–".into())
            };
            let vs = |base: Option<Summary>| base.map_or("–".into(), |b| sig(ratio(&b, &ks).0));
            let _ = writeln!(
                s,
                "| {} | {}{} | {} | {} | {gbps} | {pct} | {} | {} |",
                size_label(size),
                k.variant.name(),
                n_label(k.variant),
                sig(ks.median),
                ks.count,
                vs(scalar),
                vs(rayon)
            );
        }
    }
}
