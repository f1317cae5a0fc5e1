//! SVG plots with `plotters` (SVG backend: no system fonts needed), shaped like the report's figures:
//! time against image size per variant (Figures 7 and 8), time against n (Figure 10), and 1:1 against
//! map fusion (Figure 13). All axes are logarithmic: times span five decades.

use std::path::{Path, PathBuf};

use plotters::prelude::*;

use super::{BenchResults, Category};
use crate::variant::{Variant, N1};

pub(crate) type Line = (String, Vec<(f64, f64)>);

/// Writes every SVG plot into `dir` and returns the paths written.
pub fn write_all(r: &BenchResults, dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let ns = r.ns();
    let megapixels = |(w, h): (u32, u32)| w as f64 * h as f64 / 1e6;
    let sizes = r.sizes();

    let pipeline: Vec<Line> = r
        .variants()
        .into_iter()
        .map(|v| {
            let pts = sizes
                .iter()
                .filter_map(|&s| Some((megapixels(s), r.series(s, v)?.summary(Category::Total)?.mean)))
                .collect();
            (format!("{}{}", v.name(), super::n_label(v)), pts)
        })
        .collect();

    let mut kernel: Vec<Line> = r
        .variants()
        .into_iter()
        .map(|v| {
            let pts = sizes.iter().filter_map(|&s| Some((megapixels(s), r.kernel(s, v)?.summary().median))).collect();
            (format!("{}{}", v.name(), super::n_label(v)), pts)
        })
        .collect();
    let npp: Vec<(f64, f64)> = sizes
        .iter()
        .filter_map(|&s| {
            let p = r.peer(s, super::Peer::Npp)?;
            Some((megapixels(s), crate::stats::Summary::of(&p.samples_ms)?.median))
        })
        .collect();
    if !npp.is_empty() {
        kernel.push(("NPP (peer)".into(), npp));
    }
    if let Some(bw) = r.meta.copy_bandwidth_gbps {
        // The roofline: 4 bytes per pixel at the copy bandwidth.
        let pts = sizes.iter().map(|&s| (megapixels(s), 4.0 * megapixels(s) * 1e6 / (bw * 1e6))).collect();
        kernel.push(("roofline (4 B/px at copy bandwidth)".into(), pts));
    }

    let mut n_sweep: Vec<Line> = sizes
        .iter()
        .map(|&s| {
            let pts = ns
                .iter()
                .filter_map(|&n| Some((n as f64, r.kernel(s, Variant::GpuN1(N1::new(n)))?.summary().median * 1e3)))
                .collect();
            (format!("{}x{}", s.0, s.1), pts)
        })
        .collect();
    for &s in &sizes {
        let pts: Vec<(f64, f64)> = r
            .report_mapping
            .iter()
            .filter(|k| (k.width, k.height) == s)
            .map(|k| (k.n.unwrap_or(1) as f64, k.summary().median * 1e3))
            .collect();
        if !pts.is_empty() {
            n_sweep.push((format!("{}x{}, report's mapping", s.0, s.1), pts));
        }
    }

    let mut fusion: Vec<Line> = Vec::new();
    for (v, label) in [(Variant::GpuMap, "1:1 (gpu-map)"), (Variant::GpuFusedMap, "map fusion (gpu-fused-map)")] {
        for (c, what) in [(Category::Computation, "computation"), (Category::GpuMemory, "memory movement")] {
            let pts = sizes.iter().filter_map(|&s| Some((megapixels(s), r.series(s, v)?.summary(c)?.mean))).collect();
            fusion.push((format!("{label}, {what}"), pts));
        }
    }
    // The report's side of its Figure 13: its 1:1 kernels on its two GPUs (Tables 7–8).
    fusion.extend(super::report_tables::report_one_to_one());

    let plots = [
        ("pipeline_vs_size.svg", "Whole pipeline, mean of runs (report Figures 7/8)", "megapixels", "ms", pipeline),
        ("computation_vs_size.svg", "Computation alone, median", "megapixels", "ms", kernel),
        (
            "fusion_vs_map.svg",
            "1:1 against map fusion, beside the report's 1:1 (report Figure 13)",
            "megapixels",
            "ms",
            fusion,
        ),
    ];
    let mut written = Vec::new();
    for (name, title, x, y, lines) in plots {
        let path = dir.join(name);
        log_log_chart(&path, title, x, y, &lines)
            .map_err(|e| anyhow::anyhow!("{}: cannot draw: {e}", path.display()))?;
        written.push(path);
    }
    // Figure 10: one panel per size, ours (both mappings) beside the report's MX150 where it measured the size.
    let report = super::report_tables::report_n_sweep();
    let panels: Vec<(String, Vec<Line>)> = sizes
        .iter()
        .map(|&s| {
            let mut lines: Vec<Line> = n_sweep
                .iter()
                .filter(|(name, _)| name.starts_with(&format!("{}x{}", s.0, s.1)))
                .map(|(name, pts)| (name.replace(&format!("{}x{}", s.0, s.1), "this run"), pts.clone()))
                .collect();
            if let Some((_, pts)) = report.iter().find(|(z, _)| *z == s) {
                lines.push(("report, MX150, its mapping".into(), pts.iter().map(|&(n, ms)| (n, ms * 1e3)).collect()));
            }
            (format!("{}x{}", s.0, s.1), lines)
        })
        .collect();
    let path = dir.join("n_sweep.svg");
    panel_chart(&path, "gpu-n1: computation (µs) against pixels per thread (report Figure 10)", &panels)
        .map_err(|e| anyhow::anyhow!("{}: cannot draw: {e}", path.display()))?;
    written.push(path);
    // The roofline picture, one per size: each GPU series' effective GB/s (4 bytes a pixel / its median time)
    // as a bar, against the device-to-device copy bandwidth measured in the same run.
    for &size in &sizes {
        let bars: Vec<(String, f64)> = r
            .kernels
            .iter()
            .filter(|k| (k.width, k.height) == size && k.variant.is_gpu())
            .map(|k| {
                let gbps = 4.0 * megapixels(size) * 1e6 / (k.summary().median * 1e6);
                (format!("{}{}", k.variant.name(), super::n_label(k.variant)), gbps)
            })
            .collect();
        let path = dir.join(format!("roofline_{}x{}.svg", size.0, size.1));
        roofline_chart(&path, size, &bars, r.meta.copy_bandwidth_gbps)
            .map_err(|e| anyhow::anyhow!("{}: cannot draw: {e}", path.display()))?;
        written.push(path);
    }
    Ok(written)
}

/// Bars of effective GB/s per series against the copy bandwidth (the roofline for a kernel that reads 3 and
/// writes 1 byte a pixel: at that rate it would take its floor time, 4 bytes a pixel / bandwidth).
fn roofline_chart(
    path: &Path,
    (w, h): (u32, u32),
    bars: &[(String, f64)],
    copy_gbps: Option<f64>,
) -> Result<(), Box<dyn std::error::Error>> {
    let root = SVGBackend::new(path, (960, 600)).into_drawing_area();
    root.fill(&WHITE)?;
    let title = format!("{w}x{h}: effective GB/s against the copy bandwidth (the roofline)");
    if bars.is_empty() {
        root.titled(&title, ("sans-serif", 22))?.draw(&Text::new(
            "no data (GPU variants skipped)",
            (300, 260),
            ("sans-serif", 18),
        ))?;
        root.present()?;
        return Ok(());
    }
    let top = bars.iter().map(|b| b.1).chain(copy_gbps).fold(0.0, f64::max) * 1.15;
    let mut chart = ChartBuilder::on(&root)
        .caption(&title, ("sans-serif", 20))
        .margin(16)
        .x_label_area_size(110)
        .y_label_area_size(72)
        .build_cartesian_2d(-0.5f64..bars.len() as f64 - 0.5, 0f64..top)?;
    let names: Vec<String> = bars.iter().map(|b| b.0.clone()).collect();
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(bars.len() * 2 + 1)
        .x_label_formatter(&|x| {
            let i = x.round();
            if (x - i).abs() < 0.01 && i >= 0.0 {
                names.get(i as usize).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        })
        .x_label_style(("sans-serif", 12).into_font().transform(FontTransform::Rotate90))
        .y_desc("GB/s (4 bytes a pixel / computation time)")
        .draw()?;
    let blue = Palette99::pick(0).to_rgba();
    chart.draw_series(
        bars.iter()
            .enumerate()
            .map(|(i, (_, gbps))| Rectangle::new([(i as f64 - 0.35, 0.0), (i as f64 + 0.35, *gbps)], blue.filled())),
    )?;
    if let Some(bw) = copy_gbps {
        let red = RED.stroke_width(2);
        chart
            .draw_series(LineSeries::new([(-0.5, bw), (bars.len() as f64 - 0.5, bw)], red))?
            .label(format!("copy bandwidth {bw:.0} GB/s: a kernel here takes its floor, 4 B/px at this rate"))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], red));
        chart.configure_series_labels().background_style(WHITE.mix(0.85)).border_style(BLACK).draw()?;
    }
    root.present()?;
    Ok(())
}

/// Log-log line charts side by side, two a row, one per (title, lines); the whole with one title.
fn panel_chart(path: &Path, title: &str, panels: &[(String, Vec<Line>)]) -> Result<(), Box<dyn std::error::Error>> {
    let rows = panels.len().div_ceil(2).max(1);
    let root = SVGBackend::new(path, (1200, 420 * rows as u32 + 40)).into_drawing_area();
    root.fill(&WHITE)?;
    let root = root.titled(title, ("sans-serif", 22))?;
    let areas = root.split_evenly((rows, 2));
    for (area, (name, lines)) in areas.iter().zip(panels) {
        // Middle right: the report's series runs along the top of each panel, ours along the bottom.
        draw_log_log(area, name, "n", "µs", lines, SeriesLabelPosition::MiddleRight)?;
    }
    root.present()?;
    Ok(())
}

/// A log-log line chart; a chart with no data says so instead of drawing axes.
pub(crate) fn log_log_chart(
    path: &Path,
    title: &str,
    x_desc: &str,
    y_desc: &str,
    lines: &[Line],
) -> Result<(), Box<dyn std::error::Error>> {
    let root = SVGBackend::new(path, (960, 600)).into_drawing_area();
    root.fill(&WHITE)?;
    draw_log_log(&root, title, x_desc, y_desc, lines, SeriesLabelPosition::UpperLeft)?;
    root.present()?;
    Ok(())
}

/// [`log_log_chart`] on a drawing area.
fn draw_log_log(
    root: &DrawingArea<SVGBackend, plotters::coord::Shift>,
    title: &str,
    x_desc: &str,
    y_desc: &str,
    lines: &[Line],
    legend: SeriesLabelPosition,
) -> Result<(), Box<dyn std::error::Error>> {
    let points: Vec<(f64, f64)> =
        lines.iter().flat_map(|(_, p)| p.iter().copied()).filter(|p| p.0 > 0.0 && p.1 > 0.0).collect();
    if points.is_empty() {
        root.titled(title, ("sans-serif", 22))?.draw(&Text::new(
            "no data (GPU variants skipped)",
            (300, 260),
            ("sans-serif", 18),
        ))?;
        return Ok(());
    }
    let span = |f: fn(&(f64, f64)) -> f64| {
        let lo = points.iter().map(f).fold(f64::INFINITY, f64::min);
        let hi = points.iter().map(f).fold(f64::NEG_INFINITY, f64::max);
        (lo / 1.5)..(hi * 1.5)
    };
    let mut chart = ChartBuilder::on(root)
        .caption(title, ("sans-serif", 22))
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(72)
        .build_cartesian_2d(span(|p| p.0).log_scale(), span(|p| p.1).log_scale())?;
    chart.configure_mesh().x_desc(x_desc).y_desc(y_desc).draw()?;
    for (i, (name, pts)) in lines.iter().enumerate().filter(|(_, (_, p))| !p.is_empty()) {
        let color = Palette99::pick(i).to_rgba();
        chart
            .draw_series(LineSeries::new(pts.iter().copied(), color.stroke_width(2)))?
            .label(name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
        chart.draw_series(pts.iter().map(|&p| Circle::new(p, 3, color.filled())))?;
    }
    chart.configure_series_labels().background_style(WHITE.mix(0.85)).border_style(BLACK).position(legend).draw()?;
    Ok(())
}
