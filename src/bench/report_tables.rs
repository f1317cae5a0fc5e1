//! The report's tables (3–15) as published — parsed from `docs/report_figures.md`, every decimal kept — each
//! followed by the same rows measured in this run, at the report's sizes and at whatever sizes this run used
//! (`--quick`'s too), so a reader compares them line by line:
//! - Tables 3–6 (native C) ← cpu-scalar, the whole pipeline: I/O, computation, total (means);
//! - Tables 7–8 (CUDA 1:1) ← gpu-map: GPU memory movement, GPU computation, I/O, total (means);
//! - Tables 9–10 (OpenCV) ← not measured by the bench (OpenCV's whole process: `scripts/opencv_wait.py`);
//! - Tables 11–14 (CUDA n:1, by n) ← gpu-n1 with the report's mapping, computation alone (medians), and the
//!   relative speed-up T(n = 1) / T(n);
//! - Table 15 (T(1:1) / T(n:1)) ← gpu-map's computation over gpu-n1's (report mapping) at each n.

use std::fmt::Write as _;

use super::export::sig;
use super::{BenchResults, Category};
use crate::variant::{Mapping, Variant, N1};

/// The report's figures, as published (`docs/report_figures.md`).
pub const FIGURES: &str = include_str!("../../docs/report_figures.md");

/// The report's sizes, in its column order.
const REPORT_SIZES: [(u32, u32); 4] = [(512, 512), (1024, 512), (1024, 1024), (2048, 1024)];
const NS: [u32; 7] = [1, 2, 4, 8, 16, 32, 64];

/// The rows of the published Markdown table under `heading`: each row's cells, header and rule left out.
fn published(heading: &str) -> Vec<Vec<String>> {
    let Some(start) = FIGURES.find(heading) else { return Vec::new() };
    FIGURES[start..]
        .lines()
        .skip(1)
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2)
        .map(|l| l.trim_matches('|').split('|').map(|c| c.trim().to_owned()).collect())
        .collect()
}

fn size_label((w, h): (u32, u32)) -> String {
    format!("{w}×{h}")
}

/// `results.md`'s "The report's tables beside this run" section.
pub fn markdown(s: &mut String, r: &BenchResults) {
    let ours = r.sizes();
    let mut sizes: Vec<(u32, u32)> = REPORT_SIZES.to_vec();
    sizes.extend(ours.iter().filter(|s| !REPORT_SIZES.contains(s)));
    let header = |s: &mut String, first: &str| {
        let cols: Vec<String> = sizes.iter().map(|&z| size_label(z)).collect();
        let _ = writeln!(s, "| {first} | row | {} |\n|---|---|{}", cols.join(" | "), "---|".repeat(sizes.len()));
    };
    let _ = writeln!(
        s,
        "\n## The report's tables beside this run\n\nEach table as the report published it (ms, means of ten runs), then this run's same rows at the report's sizes and at the sizes this run used (– where not measured). Machine: {}; GPU: {}.\n",
        r.meta.host.cpu,
        r.meta.gpu.as_ref().map_or("none".into(), |g| g.name.clone())
    );
    for (title, heading, variant, rows) in [
        (
            "Tables 3–6: native C ↔ cpu-scalar",
            "## Native C (Tables 3–6)",
            Variant::CpuScalar,
            &[("I/O", Category::Io), ("Computation", Category::Computation), ("Total", Category::Total)][..],
        ),
        (
            "Tables 7–8: CUDA, one thread per pixel ↔ gpu-map",
            "## CUDA, one thread per pixel (Tables 7–8)",
            Variant::GpuMap,
            &[
                ("GPU memory movement", Category::GpuMemory),
                ("GPU computation", Category::Computation),
                ("I/O", Category::Io),
                ("Total", Category::Total),
            ][..],
        ),
    ] {
        let _ = writeln!(s, "### {title}\n");
        header(s, "table, machine");
        for row in published(heading) {
            let mut cells = row.clone();
            cells.resize(2 + REPORT_SIZES.len(), String::new());
            cells.resize(2 + sizes.len(), String::new());
            let _ = writeln!(s, "| {} |", cells.join(" | "));
        }
        for &(name, cat) in rows {
            let cells: Vec<String> = sizes
                .iter()
                .map(|&z| r.series(z, variant).and_then(|p| p.summary(cat)).map_or("–".into(), |v| sig(v.mean)))
                .collect();
            let _ = writeln!(s, "| this run, {} | {name} | {} |", variant.name(), cells.join(" | "));
        }
        s.push('\n');
    }

    let _ = writeln!(s, "### Tables 9–10: OpenCV 3.2 C++\n");
    header(s, "table, machine");
    for row in published("## OpenCV 3.2 C++ (Tables 9–10)") {
        let mut cells = row.clone();
        cells.resize(2 + sizes.len(), String::new());
        let _ = writeln!(s, "| {} |", cells.join(" | "));
    }
    if r.opencv.is_empty() {
        let why = r.opencv_skipped.as_deref().unwrap_or("no size measured");
        let _ = writeln!(s, "| this run, OpenCV | not measured: {why} |{}\n", " |".repeat(sizes.len()));
    } else {
        for (name, pick) in [("I/O", 0), ("Computation", 1), ("Total", 2)] {
            let cells: Vec<String> = sizes
                .iter()
                .map(|&z| {
                    r.opencv
                        .iter()
                        .find(|o| (o.width, o.height) == z)
                        .map_or("–".into(), |o| sig([o.io_ms, o.computation_ms, o.total_ms][pick]))
                })
                .collect();
            let _ = writeln!(s, "| this run, OpenCV (Python, all threads) | {name} | {} |", cells.join(" | "));
        }
        let _ = writeln!(s, "\n{}\n", r.opencv.first().map_or("", |o| o.line.as_str()));
    }

    let _ =
        writeln!(s, "### Tables 11–14: CUDA n:1 by n ↔ gpu-n1, the report's mapping (computation alone, medians)\n");
    let cols: Vec<String> = NS.iter().map(|n| n.to_string()).collect();
    let _ = writeln!(s, "| table, image | row | {} |\n|---|---|{}", cols.join(" | "), "---|".repeat(NS.len()));
    for row in published("## CUDA n:1, laptop (MX150) (Tables 11–14)") {
        let _ = writeln!(s, "| {} |", row.join(" | "));
    }
    let report_n = |z: (u32, u32), n: u32| {
        let v = Variant::GpuN1(N1 { n, mapping: Mapping::Report });
        r.report_mapping.iter().find(|k| (k.width, k.height) == z && k.variant == v).map(|k| k.summary().median)
    };
    for &z in &sizes {
        let times: Vec<Option<f64>> = NS.iter().map(|&n| report_n(z, n)).collect();
        if times.iter().all(Option::is_none) {
            continue;
        }
        let cells: Vec<String> = times.iter().map(|t| t.map_or("–".into(), sig)).collect();
        let _ = writeln!(s, "| this run, {} | GPU computation | {} |", size_label(z), cells.join(" | "));
        let speedups: Vec<String> = times
            .iter()
            .map(|t| match (times[0], t) {
                (Some(a), Some(b)) => format!("{:.2}", a / b),
                _ => "–".into(),
            })
            .collect();
        let _ = writeln!(s, "| this run, {} | Relative speedup | {} |", size_label(z), speedups.join(" | "));
    }

    let _ = writeln!(s, "\n### Table 15: T(1:1) / T(n:1), GPU computation ↔ gpu-map over gpu-n1 (report mapping)\n");
    let _ = writeln!(s, "| image | {} |\n|---|{}", cols.join(" | "), "---|".repeat(NS.len()));
    for row in published("## 1:1 against n:1 (Table 15)") {
        let _ = writeln!(s, "| report, {} |", row.join(" | "));
    }
    for &z in &sizes {
        let Some(map) = r.kernel(z, Variant::GpuMap).map(|k| k.summary().median) else { continue };
        let cells: Vec<String> =
            NS.iter().map(|&n| report_n(z, n).map_or("–".into(), |t| format!("{:.3}", map / t))).collect();
        if cells.iter().all(|c| c == "–") {
            continue;
        }
        let _ = writeln!(s, "| this run, {} | {} |", size_label(z), cells.join(" | "));
    }
    let _ = writeln!(s, "\n(The report printed 0.69 in its last cell; its neighbours suggest 0.069.)");
}

/// One size's points of an n sweep: (n, ms).
pub type Sweep = ((u32, u32), Vec<(f64, f64)>);

/// The report's GPU computation against n (its Figure 10: Tables 11–14, the MX150), per size: (n, ms).
pub fn report_n_sweep() -> Vec<Sweep> {
    published("## CUDA n:1, laptop (MX150) (Tables 11–14)")
        .into_iter()
        .filter(|row| row.get(1).map(String::as_str) == Some("GPU computation"))
        .zip(REPORT_SIZES)
        .map(|(row, size)| {
            let pts = NS.iter().zip(&row[2..]).filter_map(|(&n, v)| Some((n as f64, v.parse().ok()?))).collect();
            (size, pts)
        })
        .collect()
}

/// The report's 1:1 kernels against image size (Tables 7–8): (label, [(megapixels, ms)]) for GPU memory
/// movement and GPU computation on each of its two GPUs — its side of Figure 13.
pub fn report_one_to_one() -> Vec<(String, Vec<(f64, f64)>)> {
    published("## CUDA, one thread per pixel (Tables 7–8)")
        .into_iter()
        .filter(|row| matches!(row.get(1).map(String::as_str), Some("GPU computation" | "GPU memory movement")))
        .map(|row| {
            let pts = REPORT_SIZES
                .iter()
                .zip(&row[2..])
                .filter_map(|(&(w, h), v)| Some((w as f64 * h as f64 / 1e6, v.parse().ok()?)))
                .collect();
            (format!("report 1:1, {}: {}", row[0], row[1].to_lowercase()), pts)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_published_table_is_found_with_all_its_decimals() {
        let c = published("## Native C (Tables 3–6)");
        assert_eq!(c.len(), 12);
        assert_eq!(c[0], ["3, laptop", "I/O", "90.1806", "150.111", "281.3179", "638.868"]);
        assert_eq!(published("## CUDA, one thread per pixel (Tables 7–8)").len(), 8);
        assert_eq!(published("## OpenCV 3.2 C++ (Tables 9–10)").len(), 6);
        let n1 = published("## CUDA n:1, laptop (MX150) (Tables 11–14)");
        assert_eq!(n1.len(), 20);
        assert_eq!(n1[19][8], "0.41");
        let t15 = published("## 1:1 against n:1 (Table 15)");
        assert_eq!(t15.len(), 4);
        assert_eq!(t15[3][7], "0.69");
        let sweep = report_n_sweep();
        assert_eq!(sweep.len(), 4);
        assert_eq!(
            sweep[3],
            (
                (2048, 1024),
                vec![
                    (1.0, 817.3744),
                    (2.0, 798.4245),
                    (4.0, 848.9382),
                    (8.0, 949.0839),
                    (16.0, 1071.9428),
                    (32.0, 1407.4057),
                    (64.0, 2089.8141)
                ]
            )
        );
        assert_eq!(report_one_to_one().len(), 4);
    }
}
