//! Images in and out: decoding any format the `image` crate reads into 8-bit RGB ([`decode()`]), checked
//! against the memory budget from its header first, and writing PNGs without ever touching what the user
//! owns ([`output`]). `jpeg` checks that a JPEG is complete; [`rows`] reads a large PNG row by row;
//! [`filtered`] inflates a PNG and leaves its filters for the GPU.

pub mod decode;
pub mod filtered;
pub mod format;
pub mod jpeg;
pub mod output;
pub mod png_out;
pub mod rows;

use std::path::{Path, PathBuf};

use image::RgbImage;

pub use decode::{decode, DecodeOptions, Decoded, Header, MAX_PIXELS};
pub use format::{is_own_output, Format, Picture};
pub use output::{Staged, Target};
pub use rows::PngRows;

use crate::error::Result;
use crate::memory::Budget;

/// PNG compression effort: `fast` trades file size for encoding time (batch mode measures the cost).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PngCompression {
    /// The image crate's and OpenCV's default level: 4–7× faster to encode; photos' edges 9 % smaller to
    /// 12 % larger, the synthetic scene's ~5× larger.
    Fast,
    /// Balanced (the default).
    #[default]
    Default,
    /// Smallest files, slowest.
    Best,
}

impl PngCompression {
    /// Every value, in the order the help lists them.
    pub const ALL: [PngCompression; 3] = [PngCompression::Fast, PngCompression::Default, PngCompression::Best];

    /// The name the command line uses.
    pub fn name(self) -> &'static str {
        match self {
            PngCompression::Fast => "fast",
            PngCompression::Default => "default",
            PngCompression::Best => "best",
        }
    }
}

/// Decodes `path` to RGB8 under the detected memory budget, applying the EXIF orientation: for tests, the
/// bench and callers that need no notes.
pub fn decode_rgb(path: &Path) -> Result<RgbImage> {
    let budget = Budget::detect();
    let opts = DecodeOptions { budget, keep_orientation: false };
    let (decoded, ()) = decode(path, &opts, |h| {
        budget.check(
            path,
            h.width,
            h.height,
            crate::memory::image_bytes(h.width, h.height, h.decode_peak_bytes_per_pixel()),
        )
    })?;
    Ok(decoded.rgb)
}

/// Writes 8-bit pixels (`L8` or `Rgb8`) at `path`, in the format its extension chooses, at the default
/// compression, atomically.
pub fn write_png(path: &Path, width: u32, height: u32, pixels: &[u8], color: image::ExtendedColorType) -> Result<()> {
    let color = match color {
        image::ExtendedColorType::Rgb8 => png::ColorType::Rgb,
        _ => png::ColorType::Grayscale,
    };
    let format = output::format_of(path)?;
    let samples = format::Samples::U8(pixels);
    output::write_image(path, &Picture { width, height, samples, color, compression: PngCompression::Default, format })
}

/// Where the edge image of `input` goes in `out_dir`: `<out_dir>/<stem>_sobel.<ext>`.
pub fn edge_path(out_dir: &Path, input: &Path, format: Format) -> PathBuf {
    output_path(out_dir, input, "sobel", format)
}

/// `<out_dir>/<stem>_<tag>.<ext>`: where batch writes what it computed of `input` (`sobel` for the edges, the
/// kernel's tag for `--kernel`, as `box5`).
pub fn output_path(out_dir: &Path, input: &Path, tag: &str, format: Format) -> PathBuf {
    let stem = input.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "image".into());
    out_dir.join(format!("{stem}_{tag}.{}", format.name()))
}
