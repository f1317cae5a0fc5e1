//! A PNG read row by row, as 8-bit RGB: what lets one large image be decoded, computed and encoded at the
//! same time ([`crate::engine::stream`]) instead of one after the other, in bounded memory.
//!
//! Only PNGs whose rows come out exactly as [`super::decode()`] would give them are read this way: not
//! interlaced (Adam7 passes are not rows), not animated (the notes about frames), 8 bits a channel after
//! expansion (16-bit channels are rounded, which the `png` crate does not do), and not turned by an EXIF
//! orientation (unless the stored orientation is kept). [`PngRows::open`] answers `None` for every other
//! file, which then takes the whole-image path. The conversion is the `image` crate's: palette and low bit depths expanded by the
//! same `png` transformation, grey copied to R = G = B, alpha dropped.

use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use png::{BitDepth, ColorType, Transformations};

use super::decode::DecodeOptions;
use crate::error::{Error, Result};

/// An open PNG whose rows can be read one at a time as RGB8.
pub struct PngRows {
    path: PathBuf,
    reader: png::Reader<BufReader<File>>,
    color: ColorType,
    /// The decoder's row for colour types other than RGB, before conversion.
    raw: Vec<u8>,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    rows_read: u32,
}

impl PngRows {
    /// Opens `path` for reading row by row: `Ok(None)` when it is not a PNG this module takes (see the
    /// module doc; standard input neither), an error when it is one and its header is unusable (zero or too
    /// many pixels). Reads only the chunks before the image data.
    pub fn open(path: &Path, opts: &DecodeOptions) -> Result<Option<PngRows>> {
        if path.as_os_str() == super::decode::STDIN {
            return Ok(None);
        }
        super::decode::check_input(path)?;
        let file = File::open(path).map_err(|source| Error::Read { path: path.to_owned(), source })?;
        let mut decoder = png::Decoder::new_with_limits(
            BufReader::new(file),
            png::Limits { bytes: (opts.budget.bytes as usize).min(super::decode::PNG_METADATA_LIMIT as usize) },
        );
        decoder.set_transformations(Transformations::EXPAND);
        // Anything the png crate cannot read here (not a PNG, a damaged header) goes to the whole-image path,
        // which reports it in the image crate's words, as before.
        let Ok(reader) = decoder.read_info() else { return Ok(None) };
        let info = reader.info();
        let (width, height) = (info.width, info.height);
        let streamable = rows_as_stored(info, opts);
        let (color, depth) = reader.output_color_type();
        if !streamable || depth != BitDepth::Eight || color == ColorType::Indexed {
            return Ok(None);
        }
        super::decode::check_dimensions(path, width, height)?;
        let raw = vec![0; reader.output_line_size(width).unwrap_or(0)];
        Ok(Some(PngRows { path: path.to_owned(), reader, color, raw, width, height, rows_read: 0 }))
    }

    /// The file being read.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Decodes the next row into `rgb` (`3 × width` bytes). A file that ends early or is damaged is an
    /// error naming it.
    pub fn next_into(&mut self, rgb: &mut [u8]) -> Result<()> {
        let err = |detail: String| Error::Decode { path: self.path.clone(), detail };
        assert_eq!(rgb.len(), 3 * self.width as usize);
        if self.rows_read == self.height {
            return Err(err("no rows left".into()));
        }
        let buf = if self.color == ColorType::Rgb { &mut rgb[..] } else { &mut self.raw[..] };
        match self.reader.read_row(buf) {
            Ok(Some(_)) => {}
            Ok(None) => {
                return Err(err(format!("the image data ends after {} of {} rows", self.rows_read, self.height)))
            }
            Err(e) => return Err(err(e.to_string())),
        }
        match self.color {
            ColorType::Rgb => {}
            ColorType::Rgba => {
                rgb.chunks_exact_mut(3).zip(self.raw.chunks_exact(4)).for_each(|(d, s)| d.copy_from_slice(&s[..3]))
            }
            ColorType::Grayscale => rgb.chunks_exact_mut(3).zip(&self.raw).for_each(|(d, &v)| d.fill(v)),
            ColorType::GrayscaleAlpha => {
                rgb.chunks_exact_mut(3).zip(self.raw.chunks_exact(2)).for_each(|(d, s)| d.fill(s[0]))
            }
            ColorType::Indexed => unreachable!("EXPAND turns a palette into RGB or RGBA"),
        }
        self.rows_read += 1;
        Ok(())
    }

    /// Ends the image as the whole-image decode does (`png::Reader::next_frame`): the rest of the image
    /// data is read and its checksum checked; chunks after it are not read.
    pub fn finish(mut self) -> Result<()> {
        match self.reader.read_row(&mut self.raw) {
            Ok(None) => Ok(()),
            Ok(Some(_)) => {
                Err(Error::Decode { path: self.path.clone(), detail: "more rows than the header says".into() })
            }
            Err(e) => Err(Error::Decode { path: self.path.clone(), detail: e.to_string() }),
        }
    }
}

/// Whether this PNG's stored rows, in order, are the image the whole-image decode gives (colour type and
/// depth aside): not interlaced (Adam7 passes are not rows), not animated (the notes about frames), and
/// not turned by an EXIF orientation. That is, by the `image` crate's rule: no EXIF before the image data,
/// or its orientation tag missing, unreadable or "normal" (as most cameras write it), or the stored
/// orientation kept. The row reader and [`super::filtered`] both take only such PNGs.
pub(super) fn rows_as_stored(info: &png::Info<'_>, opts: &DecodeOptions) -> bool {
    let reorients = !opts.keep_orientation
        && info
            .exif_metadata
            .as_deref()
            .and_then(image::metadata::Orientation::from_exif_chunk)
            .is_some_and(|o| o != image::metadata::Orientation::NoTransforms);
    !info.interlaced && info.animation_control.is_none() && !reorients
}
