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

/// Largest decoded image we allow, in bytes of the decoder's own buffer (16-bit RGBA counts 8 bytes a
/// pixel). The `image` crate's default (512 MiB) would refuse 16384×16384 RGB (805 MB).
pub const MAX_DECODE_BYTES: u64 = 8 << 30;

pub fn decode_rgb(path: &Path) -> Result<RgbImage> {
    let read_err = |source| Error::Read { path: path.to_owned(), source };
    let mut reader = ImageReader::open(path).map_err(read_err)?.with_guessed_format().map_err(read_err)?;
    let mut limits = Limits::default();
    limits.max_alloc = Some(MAX_DECODE_BYTES);
    reader.limits(limits);
    let image = reader.decode().map_err(|source| Error::Decode { path: path.to_owned(), source })?;
    Ok(image.to_rgb8())
}

/// Writes 8-bit pixels (`L8` or `Rgb8`) as a PNG at `path`, atomically: on any failure nothing is left behind.
pub fn write_png(path: &Path, width: u32, height: u32, pixels: &[u8], color: ExtendedColorType) -> Result<()> {
    let write_err = |source| Error::Write { path: path.to_owned(), source };
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    // tempfile creates its files with mode 0600; an output image should get the usual 0644 (less umask).
    let tmp = tempfile::Builder::new()
        .prefix(".cuda_sobel-")
        .suffix(".png.tmp")
        .permissions(std::fs::Permissions::from_mode(0o644))
        .tempfile_in(dir)
        .map_err(write_err)?;
    let mut out = BufWriter::new(tmp);
    image::codecs::png::PngEncoder::new(&mut out)
        .write_image(pixels, width, height, color)
        .map_err(|source| Error::Encode { path: path.to_owned(), source })?;
    out.flush().map_err(write_err)?;
    let tmp = out.into_inner().map_err(|e| write_err(e.into_error()))?;
    tmp.persist(path).map_err(|e| write_err(e.error))?;
    Ok(())
}
