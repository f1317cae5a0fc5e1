//! Decoding any image the `image` crate reads into 8-bit RGB, safely: a file is admitted from its header
//! (dimensions and stored pixel size) before anything image-sized is allocated, every decoder runs under
//! `image::Limits`, and what a decoder would quietly paper over (a truncated JPEG) is an error.
//!
//! Normalisation, in this order:
//! 1. the stored pixels are converted to 8-bit RGB: alpha is dropped (not blended), grey is expanded to
//!    R = G = B, and 16-bit channels are rounded to 8 bits: `round(v · 255 / 65535)` (OpenCV and Pillow
//!    truncate instead: `v >> 8`);
//! 2. the EXIF orientation, if any, is applied, as viewers and OpenCV's `imread` do (unless `keep_orientation`);
//! 3. of an animated GIF, PNG (APNG) or WebP, the first frame is taken, and a note says so.

use std::io::{BufRead, BufReader, Cursor, Read, Seek};
use std::path::{Path, PathBuf};

use image::{DynamicImage, ImageDecoder, ImageFormat, ImageReader, Limits, RgbImage};

use crate::error::{Error, Result};
use crate::memory::Budget;

/// Largest image we decode, in pixels (2^32: 12.9 GB as 8-bit RGB), whatever the memory budget.
pub const MAX_PIXELS: u64 = 1 << 32;

/// What a PNG's metadata (text, ICC profile) may inflate to beyond its pixels: the PNG decoder's allocation
/// limit is the image's own size plus this, so an 8×8 PNG whose iCCP chunk inflates to gigabytes costs at
/// most this much (the png crate then drops the profile, which we do not use anyway).
pub(crate) const PNG_METADATA_LIMIT: u64 = 64 << 20;

/// The path that means standard input.
pub const STDIN: &str = "-";

/// What decoding needs to know besides the file.
#[derive(Clone, Copy, Debug)]
pub struct DecodeOptions {
    /// The memory budget, passed to the decoders as their allocation limit.
    pub budget: Budget,
    /// Keep the stored orientation instead of applying the EXIF one.
    pub keep_orientation: bool,
}

/// The header, seen before anything image-sized is allocated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Bytes per pixel as stored (RGBA16: 8), the size of the decoder's own output buffer.
    pub stored_bytes_per_pixel: u64,
    /// Whether an EXIF orientation will be applied (turning the image takes a second RGB8 buffer).
    pub reorients: bool,
}

impl Header {
    /// Peak bytes per pixel of decoding to RGB8: the decoder's buffer beside the RGB8 copy (none when it
    /// is RGB8 already), or, when the orientation turns the image, two RGB8 buffers.
    pub fn decode_peak_bytes_per_pixel(&self) -> u64 {
        let convert = if self.stored_bytes_per_pixel == 3 { 3 } else { self.stored_bytes_per_pixel + 3 };
        if self.reorients {
            convert.max(6)
        } else {
            convert
        }
    }
}

/// A decoded image and what the user should be told about it (one line each).
#[derive(Debug)]
pub struct Decoded {
    /// The image, 8-bit RGB.
    pub rgb: RgbImage,
    /// One line each: orientation applied, frames of an animation.
    pub notes: Vec<String>,
}

/// Where the bytes come from: a file, or standard input read into memory.
enum Source {
    File(PathBuf),
    Bytes(Vec<u8>),
}

trait Input: BufRead + Seek {}
impl<T: BufRead + Seek> Input for T {}

impl Source {
    fn open(&self) -> std::io::Result<Box<dyn Input + '_>> {
        Ok(match self {
            Source::File(p) => Box::new(BufReader::new(std::fs::File::open(p)?)),
            Source::Bytes(b) => Box::new(Cursor::new(b.as_slice())),
        })
    }

    fn bytes(&self) -> std::io::Result<std::borrow::Cow<'_, [u8]>> {
        Ok(match self {
            Source::File(p) => std::fs::read(p)?.into(),
            Source::Bytes(b) => b.as_slice().into(),
        })
    }
}

/// Refuses what is not a regular file before opening it (a FIFO or device could block forever).
pub fn check_input(path: &Path) -> Result<()> {
    if path.as_os_str() == STDIN {
        return Ok(());
    }
    let meta = std::fs::metadata(path).map_err(|source| Error::Read { path: path.to_owned(), source })?;
    if meta.is_dir() {
        return Err(Error::IsDirectory { path: path.to_owned() });
    }
    if !meta.is_file() {
        return Err(Error::NotRegular { path: path.to_owned(), kind: file_kind(&meta) });
    }
    if meta.len() == 0 {
        return Err(Error::Empty { path: path.to_owned() });
    }
    Ok(())
}

/// "FIFO", "socket", "character device", "block device" or "special file".
pub fn file_kind(meta: &std::fs::Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = meta.file_type();
        if t.is_fifo() {
            return "FIFO";
        }
        if t.is_socket() {
            return "socket";
        }
        if t.is_char_device() {
            return "character device";
        }
        if t.is_block_device() {
            return "block device";
        }
    }
    let _ = meta;
    "special file"
}

/// Decodes `path` (`-`: standard input) to RGB8. `admit` sees the header first and may refuse it (the
/// memory budget) or return something to keep while the image lives (a batch reservation).
pub fn decode<R>(path: &Path, opts: &DecodeOptions, admit: impl FnOnce(&Header) -> Result<R>) -> Result<(Decoded, R)> {
    let read_err = |source| Error::Read { path: path.to_owned(), source };
    let decode_err = |e: image::ImageError| Error::Decode { path: path.to_owned(), detail: e.to_string() };
    check_input(path)?;
    let source = if path.as_os_str() == STDIN {
        let mut bytes = Vec::new();
        std::io::stdin().lock().read_to_end(&mut bytes).map_err(read_err)?;
        if bytes.is_empty() {
            return Err(Error::Empty { path: path.to_owned() });
        }
        Source::Bytes(bytes)
    } else {
        Source::File(path.to_owned())
    };

    let mut reader = ImageReader::new(source.open().map_err(read_err)?);
    // The extension first, as `ImageReader::open` does; the content overrides it when recognised.
    if let Ok(f) = ImageFormat::from_path(path) {
        reader.set_format(f);
    }
    let mut reader = reader.with_guessed_format().map_err(read_err)?;
    let format = reader.format();
    let mut frames = None;
    let mut max_alloc = opts.budget.bytes;
    if format == Some(ImageFormat::Png) {
        if let Some(png) = png_header(&source) {
            frames = png.frames;
            max_alloc = max_alloc.min(png.largest_output.saturating_add(PNG_METADATA_LIMIT));
        }
    }
    let mut limits = Limits::default();
    limits.max_alloc = Some(max_alloc);
    reader.limits(limits);
    let mut decoder = reader.into_decoder().map_err(decode_err)?;
    let (width, height) = decoder.dimensions();
    check_dimensions(path, width, height)?;
    let orientation = if opts.keep_orientation { None } else { decoder.orientation().ok() };
    let reorients = orientation.is_some_and(|o| o != image::metadata::Orientation::NoTransforms);
    let stored_bytes_per_pixel = decoder.color_type().bytes_per_pixel() as u64;
    // Before any pixel is allocated: a cut file claiming a huge size is refused at once.
    if format == Some(ImageFormat::Jpeg) {
        let bytes = source.bytes().map_err(read_err)?;
        super::jpeg::check(&bytes, width, height).map_err(|detail| Error::Decode { path: path.to_owned(), detail })?;
    }
    let admitted = admit(&Header { width, height, stored_bytes_per_pixel, reorients })?;

    let image = DynamicImage::from_decoder(decoder).map_err(decode_err)?;
    let mut rgb = image.into_rgb8();
    let mut notes = Vec::new();
    if let Some(o) = orientation.filter(|&o| o != image::metadata::Orientation::NoTransforms) {
        let mut oriented = DynamicImage::ImageRgb8(rgb);
        oriented.apply_orientation(o);
        rgb = oriented.into_rgb8();
        notes.push(format!(
            "{}: EXIF orientation applied ({o:?}); --keep-orientation keeps the stored one",
            path.display()
        ));
    }
    frames = match format {
        Some(ImageFormat::Gif) => gif_frames(&source),
        Some(ImageFormat::WebP) => webp_frames(&source),
        _ => frames,
    };
    if let Some(n) = frames.filter(|&n| n > 1) {
        notes.push(format!("{}: {n} frames; edges of the first", path.display()));
    }
    Ok((Decoded { rgb, notes }, admitted))
}

/// Refuses an image with no pixels or more than [`MAX_PIXELS`], from its header.
pub(super) fn check_dimensions(path: &Path, width: u32, height: u32) -> Result<()> {
    if width == 0 || height == 0 {
        return Err(Error::ZeroSize { path: path.to_owned(), width, height });
    }
    if width as u64 * height as u64 > MAX_PIXELS {
        return Err(Error::TooLarge { path: path.to_owned(), width, height, max_pixels: MAX_PIXELS });
    }
    Ok(())
}

/// What a PNG's chunks before its image data say.
struct PngHeader {
    /// Frames of an APNG; `None` for a still PNG.
    frames: Option<u32>,
    /// The largest buffer the image decoder can need for it: 8 bytes (RGBA16) a pixel.
    largest_output: u64,
}

/// Reads a PNG's chunks before the image data, its metadata bounded; `None` where the png crate cannot
/// (the image decoder then reports the problem in its own words).
fn png_header(source: &Source) -> Option<PngHeader> {
    let decoder =
        png::Decoder::new_with_limits(source.open().ok()?, png::Limits { bytes: PNG_METADATA_LIMIT as usize });
    let reader = decoder.read_info().ok()?;
    let info = reader.info();
    Some(PngHeader {
        frames: info.animation_control.map(|a| a.num_frames),
        largest_output: crate::memory::image_bytes(info.width, info.height, 8),
    })
}

/// Frames of a GIF, counted without keeping any (each frame's data is skipped).
fn gif_frames(source: &Source) -> Option<u32> {
    let mut options = gif::DecodeOptions::new();
    options.set_color_output(gif::ColorOutput::Indexed);
    let mut decoder = options.read_info(source.open().ok()?).ok()?;
    let mut n = 0;
    while let Ok(Some(_)) = decoder.next_frame_info() {
        n += 1;
    }
    Some(n)
}

fn webp_frames(source: &Source) -> Option<u32> {
    let decoder = image_webp::WebPDecoder::new(source.open().ok()?).ok()?;
    decoder.is_animated().then(|| decoder.num_frames())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sixteen_bit_channels_round() {
        // round(v · 255 / 65535): 128 → 0, 129 → 1, 32896 → 128 (127.998…), 65535 → 255.
        let values = [0u16, 128, 129, 32767, 32896, 65407, 65535];
        let img = image::ImageBuffer::<image::Luma<u16>, Vec<u16>>::from_raw(values.len() as u32, 1, values.to_vec())
            .unwrap();
        let rgb = DynamicImage::ImageLuma16(img).into_rgb8();
        let expected: Vec<u8> = values.iter().map(|&v| (v as f64 * 255.0 / 65535.0).round() as u8).collect();
        assert_eq!(rgb.pixels().map(|p| p[0]).collect::<Vec<_>>(), expected);
    }
}
