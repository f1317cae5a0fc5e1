//! Each study's published findings, one line each, confirmed or refuted by this run's numbers.

use super::{Row, Study};

/// The mean time of `label` at filter size `size` on the image set whose name starts with `set`.
fn t(rows: &[Row], set: &str, label: &str, size: usize) -> Option<f64> {
    rows.iter().find(|r| r.images.starts_with(set) && r.label == label && r.size == size).map(|r| r.ms.mean)
}

/// `num`'s mean time ÷ `den`'s at each of `sizes` on `set` (NaN where a row is missing).
fn ratios(rows: &[Row], set: &str, num: &str, den: &str, sizes: &[usize]) -> Vec<f64> {
    let ms = |label, d| t(rows, set, label, d).unwrap_or(f64::NAN);
    sizes.iter().map(|&d| ms(num, d) / ms(den, d)).collect()
}

/// Ratios as the findings print them: "1.23 / 0.98 / …".
fn joined(ratios: &[f64]) -> String {
    ratios.iter().map(|r| format!("{r:.2}")).collect::<Vec<_>>().join(" / ")
}

fn verdict(ok: bool) -> &'static str {
    if ok {
        "**confirmed**"
    } else {
        "**refuted**"
    }
}

/// The fastest strategy at `size` on `set`: (label, ms).
fn best<'a>(rows: &'a [Row], set: &str, size: usize) -> Option<(&'a str, f64)> {
    rows.iter()
        .filter(|r| r.images.starts_with(set) && r.size == size)
        .map(|r| (r.label.as_str(), r.ms.mean))
        .min_by(|a, b| a.1.total_cmp(&b.1))
}

/// The bandwidth target on the 16384² image: its fastest case as a share of the copy bandwidth.
fn roofline_at_16384(rows: &[Row], what: &str) -> Option<String> {
    let r = rows.iter().filter(|r| r.images.starts_with("16384")).max_by(|a, b| a.gbps.total_cmp(&b.gbps))?;
    Some(format!(
        "16384² {what}: the best is {}, {:.1} % of the copy bandwidth (target ≥ 80 %: {}).",
        r.label,
        r.percent_of_copy,
        if r.percent_of_copy >= 80.0 { "met" } else { "not met" }
    ))
}

/// The findings of `study` against `rows`.
pub fn of(study: Study, rows: &[Row]) -> Vec<String> {
    let mut out = Vec::new();
    if rows.iter().any(|r| !r.exact) {
        out.push(
            "**Some outputs differ from the CPU reference** (see the tables): the timings of those rows do not count."
                .into(),
        );
    }
    let f = |x: Option<f64>| x.unwrap_or(f64::NAN);
    match study {
        Study::FilterSizes => {
            let p = "pyramid";
            let gain = |d| f(t(rows, p, "single", d)) / f(t(rows, p, "local", d));
            out.push(format!(
                "Local memory pays more as the filter grows: single ÷ local = {:.2} at 3×3, {:.2} at 5×5, {:.2} at 7×7, {:.2} at 9×9 — {}.",
                gain(3), gain(5), gain(7), gain(9), verdict(gain(9) > gain(3))
            ));
            out.push(format!(
                "At 3×3 local memory is slightly worse than single: {:.3} ms against {:.3} ms — {}.",
                f(t(rows, p, "local", 3)),
                f(t(rows, p, "single", 3)),
                verdict(gain(3) < 1.0)
            ));
            let five = ["single", "local", "separation", "double", "predefined"];
            let worst3 = five.iter().max_by(|a, b| f(t(rows, p, a, 3)).total_cmp(&f(t(rows, p, b, 3)))).unwrap();
            out.push(format!(
                "Separation is the worst of the five at 3×3: the slowest is {worst3} ({:.3} ms; separation {:.3} ms) — {}.",
                f(t(rows, p, worst3, 3)), f(t(rows, p, "separation", 3)), verdict(*worst3 == "separation")
            ));
            let double_wins = [3, 5, 7, 9].iter().all(|&d| t(rows, p, "double", d) < t(rows, p, "single", d));
            out.push(format!(
                "Double beats single at every size: single ÷ double = {} — {}.",
                joined(&ratios(rows, p, "single", "double", &[3, 5, 7, 9])),
                verdict(double_wins)
            ));
            let growth = f(t(rows, p, "predefined", 9)) / f(t(rows, p, "predefined", 3));
            out.push(format!(
                "Predefined is almost independent of the size: 9×9 takes {growth:.2}× its 3×3 time — {}.",
                verdict(growth < 1.25)
            ));
            let no_help = [3, 5, 7, 9]
                .iter()
                .all(|&d| f(t(rows, p, "local + predefined", d)) >= 0.95 * f(t(rows, p, "predefined", d)));
            out.push(format!(
                "Local memory does not help predefined filters: predefined ÷ (local + predefined) = {} — {}.",
                joined(&ratios(rows, p, "predefined", "local + predefined", &[3, 5, 7, 9])),
                verdict(no_help)
            ));
            let r9 = [14.0, 15.7, 15.4, 24.0];
            for (i, d) in [3, 5, 7, 9].into_iter().enumerate() {
                if let Some((label, ms)) = best(rows, p, d) {
                    out.push(format!(
                        "{d}×{d}: the best here is {label}, {ms:.3} ms per pyramid: {:.0}× the R9 290's best ({} ms; target ≥ 50×: {}).",
                        r9[i] / ms, r9[i], if r9[i] / ms >= 50.0 { "met" } else { "not met" }
                    ));
                }
            }
            let q = "the same pyramid";
            let batched: Vec<String> = [3, 5, 7, 9]
                .into_iter()
                .enumerate()
                .filter_map(|(i, d)| {
                    best(rows, q, d).map(|(l, ms)| format!("{d}×{d} {l} {ms:.3} ms ({:.0}×)", r9[i] / ms))
                })
                .collect();
            if !batched.is_empty() {
                out.push(format!(
                    "With an octave's four images in one launch (four planes), the best per size: {} the R9 290's best.",
                    batched.join(", ")
                ));
            }
            let overlapped: Vec<(usize, &str, f64)> = [3, 5, 7, 9]
                .into_iter()
                .filter_map(|d| best(rows, super::OVERLAPPED, d).map(|(l, ms)| (d, l, ms)))
                .collect();
            if !overlapped.is_empty() {
                let each: Vec<String> = overlapped
                    .iter()
                    .map(|(d, l, ms)| format!("{d}×{d} {l} {ms:.3} ms ({:.0}×)", r9[d / 2 - 1] / ms))
                    .collect();
                let all = overlapped.len() == 4 && overlapped.iter().all(|(d, _, ms)| r9[d / 2 - 1] / ms >= 50.0);
                out.push(format!(
                    "A launch an image, in order on one stream, each launch's blocks starting as the one before finishes (programmatic dependent launch), the best per size: {} the R9 290's best (target ≥ 50× at every size: {}).",
                    each.join(", "),
                    if all { "met" } else { "not met" }
                ));
            }
            out.extend(roofline_at_16384(rows, "at 9×9"));
        }
        Study::ConstantLocal => {
            let p = "1818";
            let c = f(t(rows, p, "global", 7)) / f(t(rows, p, "constant", 7));
            out.push(format!(
                "Coefficients in constant memory are about 4 % faster (7×7): global ÷ constant = {c:.3} — {}.",
                verdict(c > 1.0)
            ));
            let local_best = [3, 5, 7].iter().all(|&d| {
                let l = f(t(rows, p, "local", d));
                l <= f(t(rows, p, "global", d)) / 1.10 && l <= f(t(rows, p, "constant", d)) / 1.10
            });
            out.push(format!(
                "The tile in local memory is at least 10 % faster than every other version at every size: constant ÷ local = {} — {}.",
                joined(&ratios(rows, p, "constant", "local", &[3, 5, 7])),
                verdict(local_best)
            ));
        }
        Study::BoxBlur => {
            for set in ["1920", "4256"] {
                let diameters: Vec<usize> = (3..=15).step_by(2).collect();
                let ratios = ratios(rows, set, "1 pixel per thread", "16 pixels per thread", &diameters);
                let all = ratios.iter().all(|&r| r > 1.0);
                let mean = ratios.iter().sum::<f64>() / ratios.len() as f64;
                out.push(format!(
                    "{set}: 16 pixels per thread with block reads is faster at every diameter (the article: 1.52× in kernel time): 1 pixel ÷ 16 pixels = {} (mean {mean:.2}×) — {}.",
                    joined(&ratios),
                    verdict(all)
                ));
            }
            out.extend(roofline_at_16384(rows, "box:15"));
        }
        Study::Prefetch => {
            let p = "1920";
            let none = f(t(rows, p, "no tile, 8×4", 3));
            let one = f(t(rows, p, "tile by 1 thread, 8×4", 3));
            let thirty = f(t(rows, p, "tile by 30 threads, 8×4", 3));
            out.push(format!(
                "Prefetching the 10×6 tile (60 loads a group instead of 288) makes the 8×4 groups faster: no tile {none:.4} ms, tile by 30 threads {thirty:.4} ms — {}.",
                verdict(thirty < none)
            ));
            out.push(format!(
                "Spreading the prefetch over 30 threads beats one thread loading all 60: {one:.4} ms against {thirty:.4} ms ({:.1}×) — {}.",
                one / thirty, verdict(thirty < one)
            ));
            let wide = f(t(rows, p, "no tile, 32×8", 3));
            let wide_tile = f(t(rows, p, "tile by all 256, 32×8", 3));
            out.push(format!(
                "At the 32×8 blocks that suit this GPU: no tile {wide:.4} ms, tile {wide_tile:.4} ms; the best 8×4 form {:.4} ms.",
                none.min(thirty).min(one)
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::{Row, Study};
    use crate::stats::Summary;

    /// The rows of a study's committed JSON.
    fn rows(json: &str) -> Vec<Row> {
        let v: Vec<serde_json::Value> = serde_json::from_str(json).unwrap();
        v.iter()
            .map(|r| {
                let ms = |k: &str| r["ms"][k].as_f64().unwrap();
                Row {
                    label: r["label"].as_str().unwrap().into(),
                    size: r["size"].as_u64().unwrap() as usize,
                    kernel: r["kernel"].as_str().unwrap().into(),
                    images: r["images"].as_str().unwrap().into(),
                    ms: Summary {
                        count: r["ms"]["count"].as_u64().unwrap() as usize,
                        mean: ms("mean"),
                        sd: ms("sd"),
                        min: ms("min"),
                        max: ms("max"),
                        median: ms("median"),
                    },
                    gbps: r["gbps"].as_f64().unwrap(),
                    percent_of_copy: r["percent_of_copy"].as_f64().unwrap(),
                    exact: r["exact"].as_bool().unwrap(),
                }
            })
            .collect()
    }

    #[test]
    fn the_h200_studies_findings_come_out_of_their_rows() {
        let files = [
            (
                Study::FilterSizes,
                include_str!("../../../bench/results/studies/study-filter-sizes.json"),
                include_str!("../../../bench/results/studies/study-filter-sizes.md"),
            ),
            (
                Study::ConstantLocal,
                include_str!("../../../bench/results/studies/study-constant-local.json"),
                include_str!("../../../bench/results/studies/study-constant-local.md"),
            ),
            (
                Study::BoxBlur,
                include_str!("../../../bench/results/studies/study-box-blur.json"),
                include_str!("../../../bench/results/studies/study-box-blur.md"),
            ),
            (
                Study::Prefetch,
                include_str!("../../../bench/results/studies/study-prefetch.json"),
                include_str!("../../../bench/results/studies/study-prefetch.md"),
            ),
        ];
        for (study, json, md) in files {
            let lines = super::of(study, &rows(json));
            assert!(lines.len() >= 2, "{study:?}");
            for line in lines {
                assert!(md.contains(&format!("- {line}\n")), "{study:?}: not in the committed results: {line}");
            }
        }
    }
}
