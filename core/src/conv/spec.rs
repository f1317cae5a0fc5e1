//! `--kernel SPEC`: the named kernels and the matrix-file format (see [`super::ConvKernel::parse`]).

use super::{ConvKernel, Kind, SpecError, MAX_SIZE};
use crate::sobel::Ksize;

fn odd_size(name: &str, value: &str, min: usize) -> Result<usize, SpecError> {
    match value.parse::<usize>() {
        Ok(d) if d % 2 == 1 && (min..=MAX_SIZE).contains(&d) => Ok(d),
        _ => Err(SpecError(format!("{name}:{value}: the size must be odd, from {min} to {MAX_SIZE}"))),
    }
}

pub(super) fn parse(spec: &str) -> Result<ConvKernel, SpecError> {
    let named = spec.split_once(':').filter(|(n, _)| ["box", "gaussian", "scharr", "sobel"].contains(n));
    match named {
        Some(("box", d)) => Ok(ConvKernel::boxed(odd_size("box", d, 1)?)),
        Some(("gaussian", d)) => Ok(ConvKernel::gaussian(odd_size("gaussian", d, 1)?)),
        Some(("scharr", d)) => Ok(ConvKernel::scharr(odd_size("scharr", d, 3)?)),
        Some((_, k)) => match Ksize::ALL.into_iter().find(|s| s.name() == k) {
            Some(ksize) => Ok(ConvKernel::sobel(ksize)),
            None => Err(SpecError(format!("sobel:{k}: the size must be 1, 3, 5 or 7"))),
        },
        None if std::path::Path::new(spec).is_file() => ConvKernel::from_file(std::path::Path::new(spec)),
        None => Err(SpecError(format!("{spec}: not a kernel (box:D, gaussian:D, scharr:D, sobel:K) and no such file"))),
    }
}

pub(super) fn from_text(name: &str, text: &str) -> Result<ConvKernel, SpecError> {
    let err = |line: usize, what: String| SpecError(format!("{name}:{line}: {what}"));
    let (mut rows, mut divisor, mut gradient) = (Vec::<Vec<i32>>::new(), None, false);
    for (n, line) in text.lines().enumerate().map(|(n, l)| (n + 1, l)) {
        let line = line.split('#').next().unwrap_or("").trim();
        let words: Vec<&str> = line.split(|c: char| c.is_whitespace() || c == ',').filter(|w| !w.is_empty()).collect();
        match words.as_slice() {
            [] => {}
            ["gradient"] => gradient = true,
            ["divisor", d] => match d.parse::<i64>() {
                Ok(d) if d > 0 && d <= i32::MAX as i64 => divisor = Some(d),
                _ => return Err(err(n, format!("the divisor must be a positive integer, not {d}"))),
            },
            taps => {
                let row = taps
                    .iter()
                    .map(|w| w.parse::<i32>().ok().filter(|t| t.unsigned_abs() <= 1 << 20))
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(|| err(n, format!("`{line}` is not a row of integers (each at most 2^20)")))?;
                if let Some(first) = rows.first() {
                    if first.len() != row.len() {
                        return Err(err(n, format!("{} taps where the first row has {}", row.len(), first.len())));
                    }
                }
                rows.push(row);
            }
        }
    }
    let (h, w) = (rows.len(), rows.first().map_or(0, Vec::len));
    if h == 0 {
        return Err(SpecError(format!("{name}: no rows of taps")));
    }
    if h % 2 == 0 || w % 2 == 0 || h > MAX_SIZE || w > MAX_SIZE {
        return Err(SpecError(format!("{name}: a {h}×{w} matrix; rows and columns must be odd, at most {MAX_SIZE}")));
    }
    // Pad to a square of the larger side, centred: zero taps change no output.
    let d = h.max(w);
    let (dy, dx) = ((d - h) / 2, (d - w) / 2);
    let mut taps = vec![0; d * d];
    for (i, row) in rows.iter().enumerate() {
        taps[(i + dy) * d + dx..(i + dy) * d + dx + w].copy_from_slice(row);
    }
    let kind = match (gradient, divisor) {
        (true, Some(_)) => return Err(SpecError(format!("{name}: a gradient kernel takes no divisor"))),
        (true, None) => Kind::Gradient,
        (false, Some(divisor)) => Kind::Smooth { divisor },
        (false, None) => match taps.iter().map(|&t| t as i64).sum::<i64>() {
            s if s > 0 => Kind::Smooth { divisor: s },
            s => {
                return Err(SpecError(format!(
                    "{name}: its taps sum to {s}; give a `divisor N` line, or a `gradient` line for a derivative"
                )))
            }
        },
    };
    Ok(ConvKernel { name: name.to_owned(), radius: d / 2, taps, kind })
}
