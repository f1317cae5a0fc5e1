//! Output formats, chosen by the output's extension as OpenCV's `imwrite` does: `.png` (and a path with no
//! extension, such as `/dev/null`), `.jpg`/`.jpeg`, `.bmp`, `.tif`/`.tiff`, `.webp` (lossless), `.pgm` and
//! `.npy` (NumPy's array file), each through its ecosystem encoder (the `png` crate, the `image` crate's JPEG,
//! BMP, WebP and PNM encoders, the `tiff` crate, `ndarray-npy`). Any other extension is refused in one line
//! before any work, and so is a format that cannot hold the values written without loss ([`Format::holds`]):
//! 8 bits for the edges, 16-bit signed gradients, 32-bit ones, float directions.
//!
//! Every output carries the `Software: cuda_sobel` marker where its format has a place for one — a PNG text
//! chunk, an EXIF Software tag in JPEG and WebP, the TIFF Software tag, a PGM comment — so that `batch`
//! can tell its own outputs from a user's files when it lists a folder ([`is_own_output`]). BMP has no
//! such place: a BMP this tool wrote is taken as an input by a later batch over its folder.

use std::io::{BufRead, BufReader, Cursor, Read, Write};
use std::path::Path;

use super::PngCompression;

/// The marker's key (PNG text chunk) and value (every format).
pub(crate) const SOFTWARE_KEY: &str = "Software";
/// The marker's value.
pub(crate) const SOFTWARE: &str = "cuda_sobel";
/// JPEG quality of the outputs: OpenCV's `imwrite` default.
pub const JPEG_QUALITY: u8 = 95;

/// An image format the outputs can be written in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// PNG (the default), with the chosen `--png-compression`.
    #[default]
    Png,
    /// JPEG at quality 95 (lossy: the file's bytes are not the edges').
    Jpeg,
    /// BMP, 8-bit grey (no marker).
    Bmp,
    /// TIFF, Deflate-compressed.
    Tiff,
    /// WebP, lossless.
    Webp,
    /// Binary PGM (grey) or PPM (RGB).
    Pgm,
    /// NumPy's `.npy`: an H×W array of the values' own type.
    Npy,
}

impl Format {
    /// Every value, in the order the help lists them.
    pub const ALL: [Format; 7] =
        [Format::Png, Format::Jpeg, Format::Bmp, Format::Tiff, Format::Webp, Format::Pgm, Format::Npy];

    /// The name `batch --format` takes, which is also the extension batch writes.
    pub fn name(self) -> &'static str {
        self.extensions()[0]
    }

    /// The extensions (lower case, no dot) that choose this format.
    pub fn extensions(self) -> &'static [&'static str] {
        match self {
            Format::Png => &["png"],
            Format::Jpeg => &["jpg", "jpeg"],
            Format::Bmp => &["bmp"],
            Format::Tiff => &["tif", "tiff"],
            Format::Webp => &["webp"],
            Format::Pgm => &["pgm"],
            Format::Npy => &["npy"],
        }
    }

    /// The format `path`'s extension chooses (any case): PNG when it has none; `Err` with the extension
    /// when no format has it.
    pub fn of_path(path: &Path) -> Result<Format, String> {
        let Some(ext) = path.extension() else { return Ok(Format::Png) };
        let ext = ext.to_string_lossy().to_ascii_lowercase();
        Format::ALL.into_iter().find(|f| f.extensions().contains(&ext.as_str())).ok_or(ext)
    }

    /// Every extension written, for messages: ".png, .jpg, .jpeg, …".
    pub fn all_extensions() -> String {
        let all: Vec<String> = Format::ALL.iter().flat_map(|f| f.extensions()).map(|e| format!(".{e}")).collect();
        all.join(", ")
    }

    /// Whether a file of this format decodes to exactly the bytes written (all but JPEG).
    pub fn lossless(self) -> bool {
        self != Format::Jpeg
    }

    /// How this format stores values of `kind`, or `None` when it cannot without loss: 8 bits anywhere; 16-bit
    /// signed values as themselves in TIFF and NPY, or offset by 32 768 into unsigned 16 bits in PNG and PGM;
    /// 32-bit values and floats in TIFF and NPY.
    pub fn holds(self, kind: SampleKind) -> Option<Stored> {
        use Format::*;
        match (kind, self) {
            (SampleKind::U8, _) => Some(Stored::AsIs),
            (SampleKind::I16, Tiff | Npy) | (SampleKind::I32 | SampleKind::F32, Tiff | Npy) => Some(Stored::AsIs),
            (SampleKind::I16, Png | Pgm) => Some(Stored::Offset),
            _ => None,
        }
    }

    /// The formats that hold `kind`, for messages: ".npy, .tif, …".
    pub fn holding(kind: SampleKind) -> String {
        let ok: Vec<String> = Format::ALL
            .iter()
            .filter_map(|f| {
                f.holds(kind).map(|s| match s {
                    Stored::AsIs => format!(".{}", f.name()),
                    Stored::Offset => format!(".{} (16-bit, offset 32768)", f.name()),
                })
            })
            .collect();
        ok.join(", ")
    }
}

/// The type of the values an output holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SampleKind {
    /// Bytes: the edges, Canny's directions, grey and RGB images.
    U8,
    /// Signed 16-bit gradients.
    I16,
    /// Signed 32-bit gradients.
    I32,
    /// Floats: the direction.
    F32,
}

impl SampleKind {
    /// The name messages use.
    pub fn name(self) -> &'static str {
        match self {
            SampleKind::U8 => "8-bit",
            SampleKind::I16 => "int16",
            SampleKind::I32 => "int32",
            SampleKind::F32 => "float32",
        }
    }
}

/// How a format stores a kind of value ([`Format::holds`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stored {
    /// The values themselves.
    AsIs,
    /// Signed 16-bit values plus 32 768, as unsigned 16 bits (0 is 32 768).
    Offset,
}

/// The values of a [`Picture`], row-major.
#[derive(Clone, Copy, Debug)]
pub enum Samples<'a> {
    /// Bytes, 1 (grey) or 3 (RGB) a pixel.
    U8(&'a [u8]),
    /// Signed 16-bit values, one a pixel.
    I16(&'a [i16]),
    /// Signed 32-bit values, one a pixel.
    I32(&'a [i32]),
    /// Floats, one a pixel.
    F32(&'a [f32]),
}

impl Samples<'_> {
    /// Their type.
    pub fn kind(&self) -> SampleKind {
        match self {
            Samples::U8(_) => SampleKind::U8,
            Samples::I16(_) => SampleKind::I16,
            Samples::I32(_) => SampleKind::I32,
            Samples::F32(_) => SampleKind::F32,
        }
    }
}

/// An image to encode: grey (edges, intermediates, gradients, directions) or RGB (generated scenes).
#[derive(Clone, Copy, Debug)]
pub struct Picture<'a> {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Row-major values: 1 (grey) or 3 (RGB, bytes only) a pixel.
    pub samples: Samples<'a>,
    /// `Grayscale` or `Rgb` (bytes only).
    pub color: png::ColorType,
    /// PNG encoder effort (other formats have one setting).
    pub compression: PngCompression,
    /// The file format.
    pub format: Format,
}

impl Picture<'_> {
    fn extended_color(&self) -> image::ExtendedColorType {
        match self.color {
            png::ColorType::Rgb => image::ExtendedColorType::Rgb8,
            _ => image::ExtendedColorType::L8,
        }
    }
}

/// Why an encoder stopped: the writer failed (the operating system's cause), the codec refused (its words),
/// or whatever produced the rows failed (its error).
pub(crate) enum EncodeError {
    Io(std::io::Error),
    Codec(String),
    Source(crate::error::Error),
}

impl From<std::io::Error> for EncodeError {
    fn from(e: std::io::Error) -> Self {
        EncodeError::Io(e)
    }
}

impl From<png::EncodingError> for EncodeError {
    fn from(e: png::EncodingError) -> Self {
        match e {
            png::EncodingError::IoError(io) => EncodeError::Io(io),
            other => EncodeError::Codec(other.to_string()),
        }
    }
}

impl From<image::ImageError> for EncodeError {
    fn from(e: image::ImageError) -> Self {
        match e {
            image::ImageError::IoError(io) => EncodeError::Io(io),
            other => EncodeError::Codec(other.to_string()),
        }
    }
}

impl From<std::fmt::Error> for EncodeError {
    fn from(e: std::fmt::Error) -> Self {
        EncodeError::Codec(e.to_string())
    }
}

impl From<tiff::TiffError> for EncodeError {
    fn from(e: tiff::TiffError) -> Self {
        match e {
            tiff::TiffError::IoError(io) => EncodeError::Io(io),
            other => EncodeError::Codec(other.to_string()),
        }
    }
}

/// Encodes `img` in its format to `w`, with the marker where the format has a place for it. A kind of value the
/// format does not hold ([`Format::holds`]) is refused by [`super::output::check_holds`] before any work; here
/// it is a codec error.
pub(crate) fn encode(w: &mut dyn Write, img: &Picture) -> Result<(), EncodeError> {
    match img.samples {
        Samples::U8(pixels) => encode_bytes(w, img, pixels),
        _ if img.format == Format::Npy => encode_npy(w, img),
        Samples::I16(v) if img.format.holds(SampleKind::I16) == Some(Stored::Offset) => {
            let shifted: Vec<u16> = v.iter().map(|&g| (g as i32 + 32768) as u16).collect();
            encode_u16(w, img, &shifted)
        }
        _ if img.format == Format::Tiff => encode_tiff(w, img),
        other => Err(EncodeError::Codec(format!("{} cannot hold {} values", img.format.name(), other.kind().name()))),
    }
}

/// An image of bytes, in any format.
fn encode_bytes(w: &mut dyn Write, img: &Picture, pixels: &[u8]) -> Result<(), EncodeError> {
    use image::ImageEncoder as _;
    let (width, height, color) = (img.width, img.height, img.extended_color());
    match img.format {
        Format::Png => super::png_out::encode_png(w, img, pixels).map_err(EncodeError::from),
        Format::Jpeg => {
            let mut enc = image::codecs::jpeg::JpegEncoder::new_with_quality(w, JPEG_QUALITY);
            enc.set_exif_metadata(exif_marker()).map_err(|e| EncodeError::Codec(e.to_string()))?;
            Ok(enc.write_image(pixels, width, height, color)?)
        }
        Format::Webp => {
            let mut enc = image::codecs::webp::WebPEncoder::new_lossless(w);
            enc.set_exif_metadata(exif_marker()).map_err(|e| EncodeError::Codec(e.to_string()))?;
            Ok(enc.write_image(pixels, width, height, color)?)
        }
        Format::Bmp => {
            Ok(image::codecs::bmp::BmpEncoder::new(&mut BufWriterRef(w)).write_image(pixels, width, height, color)?)
        }
        Format::Pgm => encode_pnm(w, img, pixels, color),
        Format::Tiff => encode_tiff(w, img),
        Format::Npy => encode_npy(w, img),
    }
}

/// Unsigned 16-bit grey (gradients offset by 32 768) as PNG or PGM.
fn encode_u16(w: &mut dyn Write, img: &Picture, values: &[u16]) -> Result<(), EncodeError> {
    if img.format == Format::Png {
        return super::png_out::encode_png16(w, img, values).map_err(EncodeError::from);
    }
    // PNM stores 16-bit samples big-endian (maxval 65535).
    let be: Vec<u8> = values.iter().flat_map(|v| v.to_be_bytes()).collect();
    encode_pnm(w, img, &be, image::ExtendedColorType::L16)
}

fn encode_pnm(
    w: &mut dyn Write,
    img: &Picture,
    data: &[u8],
    color: image::ExtendedColorType,
) -> Result<(), EncodeError> {
    use image::codecs::pnm::{PnmEncoder, PnmSubtype, SampleEncoding};
    use image::ImageEncoder as _;
    // The PNM header is "P5\n<w> <h> <max>\n" ("P6" for RGB); a comment line after the magic number carries the
    // marker (PNM allows comments anywhere in the header).
    let subtype = match color {
        image::ExtendedColorType::Rgb8 => PnmSubtype::Pixmap(SampleEncoding::Binary),
        _ => PnmSubtype::Graymap(SampleEncoding::Binary),
    };
    let mut bytes = Vec::with_capacity(data.len() + 64);
    if color == image::ExtendedColorType::L16 {
        // The image crate takes 16-bit samples in native order and writes them big-endian.
        let native: Vec<u8> =
            data.chunks_exact(2).flat_map(|b| u16::from_be_bytes([b[0], b[1]]).to_ne_bytes()).collect();
        PnmEncoder::new(&mut bytes).with_subtype(subtype).write_image(&native, img.width, img.height, color)?;
    } else {
        PnmEncoder::new(&mut bytes).with_subtype(subtype).write_image(data, img.width, img.height, color)?;
    }
    w.write_all(&bytes[..2])?;
    write!(w, "\n# {SOFTWARE_KEY}: {SOFTWARE}")?;
    w.write_all(&bytes[2..])?;
    Ok(())
}

/// TIFF of any kind of value (grey, RGB bytes, signed 16 and 32 bits, floats), Deflate-compressed, with the
/// Software tag. The tiff crate seeks back to its directory: the file is made in memory, then written.
fn encode_tiff(w: &mut dyn Write, img: &Picture) -> Result<(), EncodeError> {
    use tiff::encoder::colortype;
    let (width, height) = (img.width, img.height);
    let mut file = Cursor::new(Vec::new());
    {
        let mut enc = tiff::encoder::TiffEncoder::new(&mut file)?
            .with_compression(tiff::encoder::Compression::Deflate(tiff::encoder::DeflateLevel::Balanced));
        macro_rules! write_as {
            ($t:ty, $data:expr) => {{
                let mut image = enc.new_image::<$t>(width, height)?;
                image.encoder().write_tag(tiff::tags::Tag::Software, SOFTWARE)?;
                image.write_data($data)?;
            }};
        }
        match img.samples {
            Samples::U8(p) if img.color == png::ColorType::Rgb => write_as!(colortype::RGB8, p),
            Samples::U8(p) => write_as!(colortype::Gray8, p),
            Samples::I16(v) => write_as!(colortype::GrayI16, v),
            Samples::I32(v) => write_as!(colortype::GrayI32, v),
            Samples::F32(v) => write_as!(colortype::Gray32Float, v),
        }
    }
    w.write_all(file.get_ref())?;
    Ok(())
}

/// An H×W NumPy array of the values' own type.
fn encode_npy(w: &mut dyn Write, img: &Picture) -> Result<(), EncodeError> {
    use ndarray_npy::WriteNpyExt as _;
    let shape = (img.height as usize, img.width as usize);
    let fail = |e: ndarray_npy::WriteNpyError| match e {
        ndarray_npy::WriteNpyError::Io(io) => EncodeError::Io(io),
        other => EncodeError::Codec(other.to_string()),
    };
    let bad_shape = |_| EncodeError::Codec("the values do not fill width × height".into());
    let w = BufWriterRef(w);
    match img.samples {
        Samples::U8(p) => ndarray::ArrayView2::from_shape(shape, p).map_err(bad_shape)?.write_npy(w).map_err(fail),
        Samples::I16(v) => ndarray::ArrayView2::from_shape(shape, v).map_err(bad_shape)?.write_npy(w).map_err(fail),
        Samples::I32(v) => ndarray::ArrayView2::from_shape(shape, v).map_err(bad_shape)?.write_npy(w).map_err(fail),
        Samples::F32(v) => ndarray::ArrayView2::from_shape(shape, v).map_err(bad_shape)?.write_npy(w).map_err(fail),
    }
}

/// `&mut dyn Write` as a sized writer (the BMP encoder takes `&mut W` of a sized `W`).
struct BufWriterRef<'a>(&'a mut dyn Write);

impl Write for BufWriterRef<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

/// An EXIF block (TIFF structure, little-endian) whose one field is Software = "cuda_sobel".
fn exif_marker() -> Vec<u8> {
    let field = exif::Field {
        tag: exif::Tag::Software,
        ifd_num: exif::In::PRIMARY,
        value: exif::Value::Ascii(vec![SOFTWARE.as_bytes().to_vec()]),
    };
    let mut writer = exif::experimental::Writer::new();
    writer.push_field(&field);
    let mut block = Cursor::new(Vec::new());
    writer.write(&mut block, true).expect("one ASCII field always encodes");
    block.into_inner()
}

/// True when `path` is an image this tool wrote: it carries the marker of its format. Reads the header only
/// (for a TIFF, its first directory).
pub fn is_own_output(path: &Path) -> bool {
    let Ok(file) = std::fs::File::open(path) else { return false };
    let mut reader = BufReader::new(file);
    let Ok(head) = reader.fill_buf() else { return false };
    match image::guess_format(head) {
        Ok(image::ImageFormat::Png) => super::png_out::png_has_marker(reader),
        Ok(image::ImageFormat::Jpeg | image::ImageFormat::WebP) => exif::Reader::new()
            .read_from_container(&mut reader)
            .ok()
            .and_then(|e| e.get_field(exif::Tag::Software, exif::In::PRIMARY).map(|f| f.display_value().to_string()))
            .is_some_and(|v| v.trim_matches('"') == SOFTWARE),
        Ok(image::ImageFormat::Tiff) => tiff::decoder::Decoder::new(reader)
            .ok()
            .and_then(|mut d| d.get_tag_ascii_string(tiff::tags::Tag::Software).ok())
            .is_some_and(|v| v.trim_end_matches('\0') == SOFTWARE),
        Ok(image::ImageFormat::Pnm) => {
            let mut header = [0u8; 64];
            let n = reader.read(&mut header).unwrap_or(0);
            let marker = format!("\n# {SOFTWARE_KEY}: {SOFTWARE}\n");
            header[..n].windows(marker.len()).any(|w| w == marker.as_bytes())
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_extension_chooses_the_format() {
        let of = |p: &str| Format::of_path(Path::new(p));
        assert_eq!(of("edges.png"), Ok(Format::Png));
        assert_eq!(of("edges"), Ok(Format::Png), "no extension (/dev/null too): PNG");
        assert_eq!(of("/dev/null"), Ok(Format::Png));
        assert_eq!(of("a/b.JPG"), Ok(Format::Jpeg));
        assert_eq!(of("b.jpeg"), Ok(Format::Jpeg));
        assert_eq!(of("b.tiff"), Ok(Format::Tiff));
        assert_eq!(of("b.Tif"), Ok(Format::Tiff));
        assert_eq!(of("b.webp"), Ok(Format::Webp));
        assert_eq!(of("b.pgm"), Ok(Format::Pgm));
        assert_eq!(of("b.bmp"), Ok(Format::Bmp));
        assert_eq!(of("b.gif"), Err("gif".to_string()));
        assert_eq!(of("b.npy"), Ok(Format::Npy));
        assert_eq!(Format::all_extensions(), ".png, .jpg, .jpeg, .bmp, .tif, .tiff, .webp, .pgm, .npy");
    }
}
