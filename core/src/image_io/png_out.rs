//! PNG encoding: our settings for each `--png-compression` level, the `Software` marker every output carries,
//! and the three ways image data arrives — whole ([`encode_png`]), row by row from the streamed pipeline
//! (`encode_png_rows`), or already deflated on the GPU ([`encode_png_zlib`]). Where files go and how they
//! appear whole or not at all is [`super::output`]'s.

use std::io::Write;

use super::format::{EncodeError, Picture, SOFTWARE, SOFTWARE_KEY};
use super::PngCompression;
use crate::error::Result;

/// Encodes `img`'s bytes `pixels` as PNG to `w`, with our `Software` marker.
pub fn encode_png(w: impl Write, img: &Picture, pixels: &[u8]) -> std::result::Result<(), png::EncodingError> {
    let mut writer = png_writer(w, img.width, img.height, img.color, img.compression)?;
    writer.write_image_data(pixels)?;
    writer.finish()
}

/// Encodes a grey `width × height` PNG whose image data `zlib` is already deflated (one zlib stream, as
/// `cuda/deflate.cu` makes it) to `w`: [`encode_png`]'s chunks around it, the data in IDAT chunks of 1 MB.
pub fn encode_png_zlib(
    w: impl Write,
    width: u32,
    height: u32,
    zlib: &[u8],
) -> std::result::Result<(), png::EncodingError> {
    let mut writer = png_writer(w, width, height, png::ColorType::Grayscale, PngCompression::Default)?;
    for chunk in zlib.chunks(1 << 20) {
        writer.write_chunk(png::chunk::IDAT, chunk)?;
    }
    writer.finish()
}

/// Encodes 16-bit grey `values` as PNG to `w` (big-endian, as PNG stores them), with our `Software` marker.
pub(crate) fn encode_png16(
    w: impl Write,
    img: &Picture,
    values: &[u16],
) -> std::result::Result<(), png::EncodingError> {
    let mut enc = png::Encoder::new(w, img.width, img.height);
    enc.set_color(png::ColorType::Grayscale);
    enc.set_depth(png::BitDepth::Sixteen);
    enc.set_compression(level(img.compression));
    enc.add_text_chunk(SOFTWARE_KEY.into(), SOFTWARE.into())?;
    enc.add_text_chunk("Comment".into(), "signed values + 32768".into())?;
    let mut writer = enc.write_header()?;
    let be: Vec<u8> = values.iter().flat_map(|v| v.to_be_bytes()).collect();
    writer.write_image_data(&be)?;
    writer.finish()
}

/// The png crate's level for ours (the `image` crate's mapping: default → Balanced, zlib level 6).
fn level(compression: PngCompression) -> png::Compression {
    match compression {
        PngCompression::Fast => png::Compression::Fast,
        PngCompression::Default => png::Compression::Balanced,
        PngCompression::Best => png::Compression::High,
    }
}

/// A PNG writer with its header and our `Software` marker written, ready for the image data.
fn png_writer<W: Write>(
    w: W,
    width: u32,
    height: u32,
    color: png::ColorType,
    compression: PngCompression,
) -> std::result::Result<png::Writer<W>, png::EncodingError> {
    let mut enc = png::Encoder::new(w, width, height);
    enc.set_color(color);
    enc.set_depth(png::BitDepth::Eight);
    // The settings `image`'s PngEncoder used (Default → Balanced = zlib level 6, adaptive filtering), except
    // for grey images at the default level: zlib-rs level 5 with every row Sub-filtered encodes an edge image
    // 1.4–1.6× faster than level 6 adaptive, and 9 % smaller to 1 % larger (512² … 3000×2000, the photo's
    // grey stage too). For RGB, Sub costs +32 %: those keep level 6 adaptive.
    let grey_default = compression == PngCompression::Default && color == png::ColorType::Grayscale;
    if grey_default {
        enc.set_deflate_compression(png::DeflateCompression::Level(5));
        enc.set_filter(png::Filter::Sub);
    } else {
        enc.set_compression(level(compression));
        enc.set_filter(png::Filter::Adaptive);
    }
    enc.add_text_chunk(SOFTWARE_KEY.into(), SOFTWARE.into())?;
    enc.write_header()
}

/// Encodes a grey `width × height` PNG whose rows `rows` writes, in order, to `w` as they come (the same
/// filters and deflate stream as [`encode_png`]; only the image data's chunking differs).
pub(super) fn encode_png_rows<W: Write>(
    w: W,
    width: u32,
    height: u32,
    compression: PngCompression,
    rows: impl FnOnce(&mut dyn Write) -> Result<()>,
) -> std::result::Result<(), EncodeError> {
    let mut writer = png_writer(w, width, height, png::ColorType::Grayscale, compression)?;
    // 1 MB image-data chunks: the default 4 kB ones add 12 bytes of chunk framing each (+0.3 % at 8192×6144).
    let mut stream = writer.stream_writer_with_size(1 << 20)?;
    rows(&mut stream).map_err(EncodeError::Source)?;
    stream.finish()?;
    Ok(writer.finish()?)
}

/// True when the PNG `reader` reads carries our `Software` text chunk (read from the chunks before the image
/// data only).
pub(crate) fn png_has_marker(reader: impl std::io::BufRead + std::io::Seek) -> bool {
    let decoder = png::Decoder::new_with_limits(reader, png::Limits { bytes: 1 << 20 });
    decoder.read_info().is_ok_and(|r| {
        r.info().uncompressed_latin1_text.iter().any(|t| t.keyword == SOFTWARE_KEY && t.text == SOFTWARE)
    })
}
