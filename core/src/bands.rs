//! Horizontal bands with halos of the stencil's radius r: how an image too large for one pass (device memory,
//! buffers over 2^31 bytes, grid limits) is processed in pieces that give exactly the bytes of one pass.
//!
//! A band of output rows `y0 .. y0 + rows` is computed from the input rows `y0 − r .. y0 + rows + r`
//! (clipped to the image) treated as an image of its own; only the band's own rows of that output are
//! kept. Why that is exact: an output row inside the band reads the r rows above and below it, which the
//! halo supplies, and never past the band image's edge; and where the band image's edge *is* the image's edge
//! (the first and last band), the border rule sees the same rows it sees in one pass — a row k ≤ r outside
//! mirrors (reflect101) to row k or `height − 1 − k`, inside the band image, which holds at least r + 1 rows
//! unless it is the whole image.

/// One band: output rows `y0 .. y0 + rows`, computed from input rows `in_y0 .. in_y0 + in_rows`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Band {
    /// First output row of the band.
    pub y0: usize,
    /// Output rows of the band.
    pub rows: usize,
    /// First input row (r halo rows above, fewer at the top).
    pub in_y0: usize,
    /// Input rows (the band and its halo rows).
    pub in_rows: usize,
}

impl Band {
    /// Rows of the band image's output to skip before the band's own rows.
    pub fn skip(&self) -> usize {
        self.y0 - self.in_y0
    }
}

/// The most input rows a band of `band_rows` output rows takes with halos of `radius` rows (the size of a
/// band's input buffer).
pub fn max_in_rows(band_rows: usize, radius: usize) -> usize {
    band_rows + 2 * radius
}

/// Bands of at most `band_rows` output rows covering `height` rows, with halos of `radius` rows.
pub fn bands(height: usize, band_rows: usize, radius: usize) -> Vec<Band> {
    let band_rows = band_rows.max(1);
    (0..height)
        .step_by(band_rows)
        .map(|y0| {
            let rows = band_rows.min(height - y0);
            let in_y0 = y0.saturating_sub(radius);
            let in_end = (y0 + rows + radius).min(height);
            Band { y0, rows, in_y0, in_rows: in_end - in_y0 }
        })
        .collect()
}

/// Runs `f(width, band_height, band_rgb)` on each band of the RGB image `rgb` (`width × height`, 3 bytes a
/// pixel; halos of `radius` rows) and stitches the band's own rows of each output into one `width × height`
/// output. An output is `planes` planes (Gx's, then Gy's) of `value_bytes` a pixel, each plane stitched on its own.
#[allow(clippy::too_many_arguments)]
pub fn banded<E>(
    width: usize,
    height: usize,
    rgb: &[u8],
    band_rows: usize,
    radius: usize,
    (planes, value_bytes): (usize, usize),
    mut f: impl FnMut(usize, usize, &[u8]) -> Result<Vec<u8>, E>,
) -> Result<Vec<u8>, E> {
    assert_eq!(rgb.len(), width * height * 3);
    let row = width * value_bytes;
    let mut out = vec![0u8; planes * row * height];
    for b in bands(height, band_rows, radius) {
        let input = &rgb[b.in_y0 * width * 3..(b.in_y0 + b.in_rows) * width * 3];
        let band_out = f(width, b.in_rows, input)?;
        for p in 0..planes {
            let from = &band_out[p * row * b.in_rows..][b.skip() * row..(b.skip() + b.rows) * row];
            out[p * row * height..][b.y0 * row..(b.y0 + b.rows) * row].copy_from_slice(from);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bands_cover_every_row_once_with_halos() {
        assert_eq!(
            bands(5, 2, 1),
            vec![
                Band { y0: 0, rows: 2, in_y0: 0, in_rows: 3 },
                Band { y0: 2, rows: 2, in_y0: 1, in_rows: 4 },
                Band { y0: 4, rows: 1, in_y0: 3, in_rows: 2 },
            ]
        );
        assert_eq!(
            bands(7, 3, 3),
            vec![
                Band { y0: 0, rows: 3, in_y0: 0, in_rows: 6 },
                Band { y0: 3, rows: 3, in_y0: 0, in_rows: 7 },
                Band { y0: 6, rows: 1, in_y0: 3, in_rows: 4 },
            ]
        );
        assert_eq!(bands(3, 10, 1), vec![Band { y0: 0, rows: 3, in_y0: 0, in_rows: 3 }]);
        assert_eq!(bands(1, 1, 3), vec![Band { y0: 0, rows: 1, in_y0: 0, in_rows: 1 }]);
        for h in 1..40 {
            for r in 1..9 {
                for radius in 1..=3 {
                    let b = bands(h, r, radius);
                    assert_eq!(b.iter().map(|b| b.rows).sum::<usize>(), h);
                    assert!(b.windows(2).all(|w| w[0].y0 + w[0].rows == w[1].y0));
                    assert!(b.iter().all(|b| b.skip() <= radius && b.in_y0 + b.in_rows <= h));
                }
            }
        }
    }
}
