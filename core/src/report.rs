//! Two views of one [`Report`]: the terminal table (the report's categories per variant) and JSON.

use std::fmt::Write as _;

use crate::pipeline::{GpuStatus, Outcome, Report};

/// The report as pretty JSON (`--json`).
pub fn json(report: &Report) -> String {
    serde_json::to_string_pretty(report).expect("a Report always serialises")
}

/// The report as the terminal table.
pub fn table(report: &Report) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{} ({}×{}, {}, border {}{}, n = {}{})",
        report.input.display(),
        report.width,
        report.height,
        report.filter.operator.name(),
        report.filter.border.name(),
        if report.filter.compat == crate::sobel::Compat::Report { ", --compat report" } else { "" },
        report.n1.n,
        if report.n1.mapping == crate::pipeline::Mapping::Report { ", --mapping report" } else { "" },
    );
    match &report.gpu {
        GpuStatus::Available { device, context_init_ms, kernel_load_ms, kernels } => {
            let _ = writeln!(s, "GPU: {device}");
            let _ = writeln!(
                s,
                "context init (driver init, context, dummy 1-byte cudaMalloc): {context_init_ms:.1} ms (excluded below, as in the report)"
            );
            let _ = writeln!(
                s,
                "kernels: {kernel_load_ms:.1} ms ({} compiled by NVRTC, {} from the kernel cache, {} built in; excluded below)",
                kernels.compiled, kernels.from_cache, kernels.prebuilt
            );
            let _ = writeln!(
                s,
                "GPU computation: median of {} event-timed runs after a warm-up; GB/s = 4 bytes per pixel / computation",
                report.gpu_reps
            );
        }
        GpuStatus::Unavailable { reason } => {
            let _ = writeln!(s, "GPU variants skipped: {reason}");
        }
        GpuStatus::NotRequested => {}
    }
    let _ = writeln!(
        s,
        "I/O: decode {:.2} ms + encode {:.2} ms → {}\n",
        report.decode_ms,
        report.encode_ms,
        report.output.display()
    );
    let _ = writeln!(
        s,
        "{:<14} {:>9} {:>11} {:>11} {:>10} {:>8} {:>13}  check",
        "variant", "I/O ms", "GPU mem ms", "compute ms", "total ms", "GB/s", "vs cpu-scalar"
    );
    let reference = report.reference_compute_ms();
    for row in &report.rows {
        let name = row.variant.name();
        match &row.outcome {
            Outcome::Ran { timings: t, mismatched_pixels } => {
                let mem = t.gpu_memory_ms.map_or("–".into(), |m| format!("{m:.3}"));
                let gbps = t.effective_gbps.map_or("–".into(), |g| format!("{g:.0}"));
                let speedup = reference.map_or("–".into(), |r| format!("{:.2}×", r / t.compute_ms));
                let check = match mismatched_pixels {
                    Some(0) => "identical".to_string(),
                    Some(n) => format!("DIFFERS in {n} pixels"),
                    None => "not checked (one variant; --check compares it with cpu-scalar)".to_string(),
                };
                let _ = writeln!(
                    s,
                    "{name:<14} {:>9.2} {mem:>11} {:>11.4} {:>10.2} {gbps:>8} {speedup:>13}  {check}",
                    t.io_ms, t.compute_ms, t.total_ms
                );
            }
            Outcome::Skipped { reason } => {
                let _ = writeln!(s, "{name:<14} skipped: {reason}");
            }
        }
    }
    s
}
