//! Decoding any image the `image` crate reads into 8-bit RGB, and writing PNGs atomically
//! (a temporary file in the destination folder, renamed into place only once complete).
//!
//! Input normalisation, applied by `DynamicImage::to_rgb8`: alpha is dropped (not blended),
//! grey is expanded to R = G = B (so it passes through the grey formula unchanged), and 16-bit or float
//! channels are scaled to 8 bits.

use std::io::{BufWriter, Write};
#[cfg(unix)]
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use image::{ExtendedColorType, ImageEncoder, ImageReader, Limits, RgbImage};

use crate::error::{Error, Result};

/// Largest image we decode, in pixels (2^32: 12.9 GB as 8-bit RGB). Checked from the header before
/// anything is allocated, so a file that merely claims to be huge fails at once with a clear message.
pub const MAX_PIXELS: u64 = 1 << 32;

/// The decoder's own allocation limit: MAX_PIXELS at 16-bit RGBA would be 34 GB; this only backs up the
/// pixel check for formats whose header the check cannot see.
const MAX_DECODER_ALLOC: u64 = 40 << 30;

pub fn decode_rgb(path: &Path) -> Result<RgbImage> {
    let read_err = |source| Error::Read { path: path.to_owned(), source };
    let meta = std::fs::metadata(path).map_err(read_err)?;
    if meta.is_dir() {
        return Err(Error::IsDirectory { path: path.to_owned() });
    }
    if meta.len() == 0 {
        return Err(Error::Empty { path: path.to_owned() });
    }
    let decode_err = |e: image::ImageError| Error::Decode { path: path.to_owned(), detail: e.to_string() };
    let open = || -> Result<ImageReader<std::io::BufReader<std::fs::File>>> {
        let mut reader = ImageReader::open(path).map_err(read_err)?.with_guessed_format().map_err(read_err)?;
        let mut limits = Limits::default();
        limits.max_alloc = Some(MAX_DECODER_ALLOC);
        reader.limits(limits);
        Ok(reader)
    };
    let (width, height) = open()?.into_dimensions().map_err(decode_err)?;
    if width == 0 || height == 0 {
        return Err(Error::ZeroSize { path: path.to_owned(), width, height });
    }
    if width as u64 * height as u64 > MAX_PIXELS {
        return Err(Error::TooLarge { path: path.to_owned(), width, height, max_pixels: MAX_PIXELS });
    }
    let image = open()?.decode().map_err(decode_err)?;
    Ok(image.to_rgb8())
}

/// PNG compression effort: `fast` trades file size for encoding time (batch mode measures the cost).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum PngCompression {
    Fast,
    #[default]
    Default,
    Best,
}

/// Writes 8-bit pixels (`L8` or `Rgb8`) as a PNG at `path`, atomically: on any failure nothing is left behind.
/// Creates the folder if needed.
pub fn write_png(path: &Path, width: u32, height: u32, pixels: &[u8], color: ExtendedColorType) -> Result<()> {
    write_png_with(path, width, height, pixels, color, PngCompression::Default)
}

/// [`write_png`] with a chosen compression effort.
pub fn write_png_with(
    path: &Path,
    width: u32,
    height: u32,
    pixels: &[u8],
    color: ExtendedColorType,
    compression: PngCompression,
) -> Result<()> {
    let write_err = |source| Error::Write { path: path.to_owned(), source };
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if path.is_dir() {
        return Err(Error::OutputIsDirectory { path: path.to_owned() });
    }
    // tempfile creates its files with mode 0600; an output image should get the usual 0644 (less umask).
    std::fs::create_dir_all(dir).map_err(write_err)?;
    let tmp = tempfile::Builder::new()
        .prefix(".cuda_sobel-")
        .suffix(".png.tmp")
        .permissions(std::fs::Permissions::from_mode(0o644))
        .tempfile_in(dir)
        .map_err(write_err)?;
    let mut out = BufWriter::new(tmp);
    use image::codecs::png::{CompressionType, FilterType, PngEncoder};
    let level = match compression {
        PngCompression::Fast => CompressionType::Fast,
        PngCompression::Default => CompressionType::Default,
        PngCompression::Best => CompressionType::Best,
    };
    PngEncoder::new_with_quality(&mut out, level, FilterType::Adaptive)
        .write_image(pixels, width, height, color)
        .map_err(|e| Error::Encode { path: path.to_owned(), detail: e.to_string() })?;
    out.flush().map_err(write_err)?;
    let tmp = out.into_inner().map_err(|e| write_err(e.into_error()))?;
    tmp.persist(path).map_err(|e| write_err(e.error))?;
    Ok(())
}

/// Refuses an output path that is a directory or the input itself, before any work is done.
pub fn check_output(input: &Path, output: &Path) -> Result<()> {
    if output.is_dir() {
        return Err(Error::OutputIsDirectory { path: output.to_owned() });
    }
    if same_file::is_same_file(input, output).unwrap_or(false) {
        return Err(Error::SameFile { path: output.to_owned() });
    }
    Ok(())
}

/// Where the edge image of `input` goes in `out_dir`: `<out_dir>/<stem>_sobel.png`.
pub fn edge_path(out_dir: &Path, input: &Path) -> std::path::PathBuf {
    let stem = input.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "image".into());
    out_dir.join(format!("{stem}_sobel.png"))
}
