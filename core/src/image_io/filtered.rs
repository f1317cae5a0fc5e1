//! A PNG inflated but not unfiltered: its image data as the file stores it once decompressed — each row a
//! filter byte and the row's bytes less their prediction — for the GPU to finish (`cuda/unfilter.cu`).
//! Undoing the filters is half of a PNG decode on the CPU (the H200 host; 63 % on the development
//! machine), and decoding the largest cost of batch mode; inflating is the rest.
//!
//! The `png` crate does all the reading: chunks, their checksums, the zlib stream (its
//! [`png::StreamingDecoder`] hands out the inflated bytes). [`read`] takes only PNGs whose RGB the GPU gives
//! exactly as [`super::decode()`] would: 8-bit RGB or RGBA (alpha dropped; an RGB image's tRNS only adds
//! alpha), not interlaced, not animated, not turned by an EXIF orientation — the files [`super::PngRows`]
//! streams, less palette and grey. For any other file it answers `None`, and the caller decodes it whole.
//! [`Filtered::unfilter`] is the scalar reference the kernel is checked against.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use image::RgbImage;
use png::{chunk, BitDepth, ColorType, Decoded, StreamingDecoder, UnfilterRegion};

use super::decode::{check_dimensions, check_input, DecodeOptions, Header, STDIN};
use crate::error::{Error, Result};

/// Memory a PNG's stored rows are inflated into: plain memory (a `Vec`), or memory a GPU uploads from without a
/// copy first (batch's page-locked row buffers, `crate::gpu::rows`), which the slot recognises by its type.
pub trait RowStore: std::ops::DerefMut<Target = [u8]> + std::any::Any + Send + Sync {
    /// The memory as the png crate's streaming decoder takes it. Its length and capacity must not change (the
    /// decoder only writes into it): page-locked memory is known to the driver by its address.
    fn as_vec(&mut self) -> &mut Vec<u8>;
}

impl RowStore for Vec<u8> {
    fn as_vec(&mut self) -> &mut Vec<u8> {
        self
    }
}

/// A PNG's inflated image data, still filtered.
pub struct Filtered {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// 3 (RGB) or 4 (RGBA).
    pub bytes_per_pixel: usize,
    /// `height` rows of [`Filtered::row_bytes`] bytes: the filter type (0–4, checked), then the filtered
    /// bytes.
    pub rows: Box<dyn RowStore>,
}

impl std::fmt::Debug for Filtered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (w, h, b, n) = (self.width, self.height, self.bytes_per_pixel, self.rows.len());
        write!(f, "Filtered {{ {w}×{h}, {b} bytes a pixel, {n} bytes of rows }}")
    }
}

impl Filtered {
    /// Bytes of one stored row: the filter byte and `width · bytes_per_pixel` bytes.
    pub fn row_bytes(&self) -> usize {
        1 + self.width as usize * self.bytes_per_pixel
    }

    /// The image as [`super::decode()`] gives it, the filters undone on the CPU one byte after another, as
    /// the PNG specification writes them (section 9): the reference for `cuda/unfilter.cu`.
    pub fn unfilter(&self) -> RgbImage {
        let (bpp, stride) = (self.bytes_per_pixel, self.row_bytes());
        let mut raw = self.rows.to_vec();
        let mut rgb = Vec::with_capacity(3 * self.width as usize * self.height as usize);
        for r in 0..self.height as usize {
            let (done, rest) = raw.split_at_mut(r * stride);
            let up = (r > 0).then(|| &done[done.len() - stride + 1..]);
            let (filter, cur) = rest[..stride].split_first_mut().expect("a row has its filter byte");
            for x in 0..cur.len() {
                let a = if x >= bpp { cur[x - bpp] } else { 0 };
                let b = up.map_or(0, |u| u[x]);
                let c = if x >= bpp { up.map_or(0, |u| u[x - bpp]) } else { 0 };
                let predicted = match *filter {
                    0 => 0,
                    1 => a,
                    2 => b,
                    3 => ((a as u16 + b as u16) / 2) as u8,
                    4 => paeth(a, b, c),
                    other => unreachable!("filter {other} was refused by read"),
                };
                cur[x] = cur[x].wrapping_add(predicted);
            }
            rgb.extend(cur.chunks_exact(bpp).flat_map(|p| &p[..3]));
        }
        RgbImage::from_raw(self.width, self.height, rgb).expect("width × height RGB pixels")
    }
}

/// Paeth's predictor: of `a` (left), `b` (above) and `c` (above left), the one nearest to a + b − c; ties
/// go to a, then b.
fn paeth(a: u8, b: u8, c: u8) -> u8 {
    let p = a as i16 + b as i16 - c as i16;
    let (pa, pb, pc) = ((p - a as i16).abs(), (p - b as i16).abs(), (p - c as i16).abs());
    if pa <= pb && pa <= pc {
        a
    } else if pb <= pc {
        b
    } else {
        c
    }
}

/// A PNG opened up to its image data: the reader at the first IDAT chunk's data (`idat_len` bytes of it),
/// the decoder that read the chunks before it, and what the header says.
struct AtImageData {
    input: BufReader<File>,
    decoder: StreamingDecoder,
    idat_len: u32,
    width: u32,
    height: u32,
    bytes_per_pixel: usize,
}

/// Opens `path` and reads its chunks up to the image data: `Ok(None)` when it is not a PNG this module takes
/// (see the module doc; standard input neither), or when the png crate cannot read its chunks before the image
/// data (the whole-image decode then reports it in the image crate's words). `admit` sees the header before
/// anything image-sized is allocated, as in [`super::decode()`].
fn open_at_image_data<R>(
    path: &Path,
    opts: &DecodeOptions,
    admit: impl FnOnce(&Header) -> Result<R>,
) -> Result<Option<(AtImageData, R)>> {
    if path.as_os_str() == STDIN {
        return Ok(None);
    }
    check_input(path)?;
    let read_err = |source| Error::Read { path: path.to_owned(), source };
    let mut input = BufReader::with_capacity(1 << 16, File::open(path).map_err(read_err)?);
    // The png crate's limit on what metadata may allocate is its default (64 MiB); text and ICC profiles,
    // which the edges never use, are skipped.
    let mut decoder = StreamingDecoder::new();
    decoder.set_ignore_text_chunk(true);
    decoder.set_ignore_iccp_chunk(true);

    // The chunks before the image data.
    let idat_len = loop {
        let buf = input.fill_buf().map_err(read_err)?;
        if buf.is_empty() {
            return Ok(None);
        }
        let Ok((used, event)) = decoder.update(buf, None) else { return Ok(None) };
        input.consume(used);
        match event {
            Decoded::ChunkBegin(length, chunk::IDAT) => break length,
            Decoded::ChunkBegin(_, chunk::fdAT) | Decoded::ChunkComplete(chunk::IEND) => return Ok(None),
            _ => {}
        }
    };
    let info = decoder.info().expect("IHDR comes before the image data");
    let bytes_per_pixel = match (info.color_type, info.bit_depth) {
        (ColorType::Rgb, BitDepth::Eight) => 3,
        (ColorType::Rgba, BitDepth::Eight) => 4,
        _ => return Ok(None),
    };
    if !super::rows::rows_as_stored(info, opts) {
        return Ok(None);
    }
    let (width, height) = (info.width, info.height);
    check_dimensions(path, width, height)?;
    // As the whole-image decode sees it: an RGB image with a tRNS chunk decodes as RGBA.
    let stored_bytes_per_pixel = if info.trns.is_some() { 4 } else { bytes_per_pixel as u64 };
    let header = Header { width, height, stored_bytes_per_pixel, reorients: false };
    let admitted = admit(&header)?;
    Ok(Some((AtImageData { input, decoder, idat_len, width, height, bytes_per_pixel }, admitted)))
}

/// Reads `path` up to the end of its image data, inflating it: `Ok(None)` when it is not a PNG this
/// module takes (see the module doc; standard input neither), or when the png crate cannot read its
/// chunks before the image data (the whole-image decode then reports it in the image crate's words).
/// `admit` sees the header before the image data is allocated, as in [`super::decode()`]. A file whose
/// image data is damaged, ends early or names an unknown filter is an error naming it.
pub fn read<R>(
    path: &Path,
    opts: &DecodeOptions,
    admit: impl FnOnce(&Header) -> Result<R>,
) -> Result<Option<(Filtered, R)>> {
    read_if(path, opts, |header| admit(header).map(Some))
}

/// [`read`], where `admit` may also decline the file for now (`Ok(None)`) before its image data is allocated
/// or inflated: then `Ok(None)`, as for a file this module does not take (batch's reads ahead, which must not
/// wait for memory).
pub fn read_if<R>(
    path: &Path,
    opts: &DecodeOptions,
    admit: impl FnOnce(&Header) -> Result<Option<R>>,
) -> Result<Option<(Filtered, R)>> {
    read_into(path, opts, admit, |bytes| Box::new(vec![0; bytes]))
}

/// [`read_if`], inflating into the memory `store(bytes)` gives (whatever it holds is written over), taken once the
/// file is admitted.
pub fn read_into<R>(
    path: &Path,
    opts: &DecodeOptions,
    admit: impl FnOnce(&Header) -> Result<Option<R>>,
    store: impl FnOnce(usize) -> Box<dyn RowStore>,
) -> Result<Option<(Filtered, R)>> {
    let Some((at, Some(admitted))) = open_at_image_data(path, opts, admit)? else { return Ok(None) };
    let AtImageData { mut input, mut decoder, width, height, bytes_per_pixel, .. } = at;
    let read_err = |source| Error::Read { path: path.to_owned(), source };
    let decode_err = |detail: String| Error::Decode { path: path.to_owned(), detail };
    let row_bytes = 1 + width as usize * bytes_per_pixel;
    let mut rows = store(row_bytes * height as usize);
    let mut region = UnfilterRegion::default();
    loop {
        let buf = input.fill_buf().map_err(read_err)?;
        if buf.is_empty() {
            return Err(decode_err("the file ends inside the image data".into()));
        }
        // Once every row is in, what is left of the stream is skipped, as the png crate's own reader does.
        let full = region.filled == rows.len();
        let (used, event) =
            if full { decoder.update(buf, None) } else { decoder.update(buf, Some(&mut region.as_buf(rows.as_vec()))) }
                .map_err(|e| decode_err(e.to_string()))?;
        input.consume(used);
        if let Decoded::ImageDataFlushed = event {
            break;
        }
    }
    if region.filled < rows.len() {
        let complete = region.filled / row_bytes;
        return Err(decode_err(format!("the image data ends after {complete} of {height} rows")));
    }
    if let Some((r, f)) = rows.iter().step_by(row_bytes).enumerate().find(|(_, &f)| f > 4) {
        return Err(decode_err(format!("row {r} names filter type {f}, which PNG does not have")));
    }
    Ok(Some((Filtered { width, height, bytes_per_pixel, rows }, admitted)))
}

/// A PNG's image data still compressed: the raw deflate stream of its IDAT chunks (the zlib stream less its
/// 2-byte header and 4-byte checksum), for nvCOMP to inflate on the GPU with other files' (batch).
#[derive(Debug)]
pub struct Compressed {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// 3 (RGB) or 4 (RGBA).
    pub bytes_per_pixel: usize,
    /// The deflate stream.
    pub deflate: Vec<u8>,
}

impl Compressed {
    /// Bytes the stream inflates to: [`Filtered::rows`]' length.
    pub fn inflated_bytes(&self) -> usize {
        (1 + self.width as usize * self.bytes_per_pixel) * self.height as usize
    }
}

/// Reads `path`'s image data without inflating it, for the files [`read`] takes: `Ok(None)` for any other
/// file, and for a file whose IDAT chunks fail their checksums, end early or do not hold one zlib stream of
/// deflate data — [`read`] (or the whole decode) then says what is wrong in the png crate's words. The
/// chunks are checked as the png crate checks them (each one's CRC-32); whether the stream inflates to the
/// image's rows is for the inflater to say.
pub fn read_compressed<R>(
    path: &Path,
    opts: &DecodeOptions,
    admit: impl FnOnce(&Header) -> Result<R>,
) -> Result<Option<(Compressed, R)>> {
    let Some((at, admitted)) = open_at_image_data(path, opts, admit)? else { return Ok(None) };
    let AtImageData { mut input, width, height, bytes_per_pixel, mut idat_len, .. } = at;
    let mut data = Vec::new();
    loop {
        // A chunk's data, then its CRC-32 of the chunk type and data; then the next chunk's length and type.
        // (Read through `take`: a length the file does not hold allocates no more than the file.)
        let start = data.len();
        let (mut crc, mut next) = ([0u8; 4], [0u8; 8]);
        let got = (&mut input).take(idat_len as u64).read_to_end(&mut data);
        if !matches!(got, Ok(n) if n == idat_len as usize) || input.read_exact(&mut crc).is_err() {
            return Ok(None);
        }
        let mut hasher = crc32fast::Hasher::new();
        hasher.update(&chunk::IDAT.0);
        hasher.update(&data[start..]);
        if hasher.finalize() != u32::from_be_bytes(crc) || input.read_exact(&mut next).is_err() {
            return Ok(None);
        }
        // The image data ends at the first other chunk.
        if next[4..] != chunk::IDAT.0 {
            break;
        }
        idat_len = u32::from_be_bytes(next[..4].try_into().expect("4 bytes"));
    }
    // zlib's header (RFC 1950): deflate (8) with a window of at most 32 kB, a check that makes it a multiple of
    // 31, no preset dictionary; then the deflate data, then the Adler-32 of the inflated bytes.
    let zlib_header_ok = data.len() >= 6
        && data[0] & 0x0f == 8
        && data[0] >> 4 <= 7
        && u16::from_be_bytes([data[0], data[1]]) % 31 == 0
        && data[1] & 0x20 == 0;
    if !zlib_header_ok {
        return Ok(None);
    }
    data.truncate(data.len() - 4);
    data.drain(..2);
    Ok(Some((Compressed { width, height, bytes_per_pixel, deflate: data }, admitted)))
}
