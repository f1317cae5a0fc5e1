//! `--check`: the edges batch wrote are cpu-scalar's, and a PNG the GPU deflated decodes to them.

use std::path::Path;

use super::BatchOptions;
use crate::cpu;
use crate::variant::count_mismatches;

/// `--check`: fails the image when `edges` are not cpu-scalar's bytes for `rgb` (Canny's: the definition on its
/// gradients, with `--output canny`).
pub(super) fn check_against_scalar(
    path: &Path,
    rgb: &image::RgbImage,
    edges: &[u8],
    opts: &BatchOptions,
) -> Result<(), String> {
    let expected = match &opts.canny {
        None => cpu::scalar::sobel(rgb, opts.filter).into_raw(),
        Some(canny) => {
            let stages = cpu::scalar::sobel_stages(rgb, opts.filter);
            canny.edges(&stages.gx, &stages.gy, rgb.width() as usize, rgb.height() as usize)
        }
    };
    let differing = count_mismatches(edges, &expected);
    if differing > 0 {
        return Err(format!("{}: {differing} pixels differ from cpu-scalar", path.display()));
    }
    Ok(())
}

/// `--check` of a PNG whose data the GPU deflated: the file at `out` decodes (png crate) to `edges`.
pub(super) fn check_png(out: &Path, edges: &[u8]) -> Result<(), String> {
    let failed = |why: String| format!("{}: the GPU-deflated PNG {why}", out.display());
    let file = std::fs::File::open(out).map_err(|e| failed(format!("cannot be read back: {e}")))?;
    let mut reader = png::Decoder::new(std::io::BufReader::new(file)).read_info().map_err(|e| failed(e.to_string()))?;
    let mut decoded = vec![0; reader.output_buffer_size().unwrap_or(0)];
    reader.next_frame(&mut decoded).map_err(|e| failed(format!("does not decode: {e}")))?;
    let differing = count_mismatches(&decoded, edges);
    if decoded.len() != edges.len() || differing > 0 {
        return Err(failed(format!("decodes to other bytes ({differing} differ)")));
    }
    Ok(())
}
