//! Is a JPEG complete? The decoders (zune-jpeg through `image`, and nvJPEG) fill what a truncated file lacks
//! with grey and report success, as browsers do; a tool that is asked for edges must say the file is cut
//! instead. Both decoders' paths ask [`check`] first.
//!
//! A JPEG is a sequence of segments: a marker (`FF xx`), most with a 2-byte length. After each start-of-scan
//! (`FF DA`) comes entropy-coded data in which `FF` is always followed by `00` (a stuffed byte) or a restart
//! marker (`FF D0`…`FF D7`), so the next real marker is the first other `FF xx`. The file is complete when
//! this walk reaches the end-of-image marker (`FF D9`) before the bytes run out, and its scans hold enough
//! data for the image it claims: every 8×8 block of the luma plane has a DC coefficient, coded with a
//! Huffman code of at least one bit, so the scans together hold at least one bit per luma block. (A
//! 633-byte file that claims 20000×20000 and ends with an end-of-image marker passes the walk but needs
//! 6.25 million bits.)

const SOI: u8 = 0xD8;
const EOI: u8 = 0xD9;
const SOS: u8 = 0xDA;

/// Why `bytes`, a JPEG that claims `width × height` pixels, cannot be a whole image; `Ok` if it can.
pub fn check(bytes: &[u8], width: u32, height: u32) -> Result<(), String> {
    let scan = scan_bytes(bytes).ok_or("truncated JPEG: the data ends before the end-of-image marker")?;
    let blocks = (width as u64).div_ceil(8) * (height as u64).div_ceil(8);
    if 8 * scan < blocks {
        return Err(format!(
            "truncated JPEG: {scan} bytes of scan data cannot hold a {width}×{height} image (at least {} bytes: one \
             bit per 8×8 block)",
            blocks.div_ceil(8)
        ));
    }
    Ok(())
}

/// The entropy-coded bytes of all scans, when the walk from start-of-image reaches end-of-image.
fn scan_bytes(bytes: &[u8]) -> Option<u64> {
    if bytes.len() < 4 || bytes[0] != 0xFF || bytes[1] != SOI {
        return None;
    }
    let mut scan = 0u64;
    let mut i = 2;
    loop {
        // Fill bytes (FF FF …) may precede a marker.
        while i + 1 < bytes.len() && bytes[i] == 0xFF && bytes[i + 1] == 0xFF {
            i += 1;
        }
        if i + 1 >= bytes.len() || bytes[i] != 0xFF {
            return None;
        }
        let marker = bytes[i + 1];
        i += 2;
        match marker {
            EOI => return Some(scan),
            0x01 | 0xD0..=0xD7 => continue, // markers without a length
            _ => {}
        }
        if i + 2 > bytes.len() {
            return None;
        }
        let len = u16::from_be_bytes([bytes[i], bytes[i + 1]]) as usize;
        if len < 2 {
            return None;
        }
        i += len;
        if marker == SOS {
            // Entropy-coded data up to the next marker that is neither a stuffed byte nor a restart.
            let start = i;
            loop {
                match bytes.get(i..i + 2) {
                    None => return None,
                    Some([0xFF, next]) if *next != 0x00 && !(0xD0..=0xD7).contains(next) && *next != 0xFF => break,
                    _ => i += 1,
                }
            }
            scan += (i - start) as u64;
        }
    }
}

/// A JPEG file read whole for a decoder that takes its bytes (nvJPEG), with the size its header claims.
pub struct JpegFile {
    /// The file's bytes.
    pub bytes: Vec<u8>,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
}

/// Whether `path` is a file that starts like a JPEG (standard input: no, it cannot be looked at twice; a FIFO or
/// device: no, opened it could block forever — [`super::decode::check_input`]'s rule).
pub fn starts_like_jpeg(path: &std::path::Path) -> bool {
    use std::io::Read;
    let mut magic = [0u8; 3];
    path.as_os_str() != super::decode::STDIN
        && super::decode::check_input(path).is_ok()
        && std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut magic)).is_ok()
        && magic == [0xFF, SOI, 0xFF]
}

/// Reads `path` whole when it is a JPEG another decoder may take as bytes: `Ok(None)` when it is not a JPEG
/// (by its first bytes), is standard input, or needs its EXIF orientation applied (the CPU decoder does
/// that). Checked as [`super::decode()`] checks a JPEG — size limits, a cut file ([`check`]) — and `admit`
/// sees the header before anything the size of the image is allocated.
pub fn read<R>(
    path: &std::path::Path,
    opts: &super::DecodeOptions,
    admit: impl FnOnce(&super::Header) -> crate::error::Result<R>,
) -> crate::error::Result<Option<(JpegFile, R)>> {
    use crate::error::Error;
    use image::ImageDecoder;
    use std::io::Read;
    if path.as_os_str() == super::decode::STDIN {
        return Ok(None);
    }
    super::decode::check_input(path)?;
    let read_err = |source| Error::Read { path: path.to_owned(), source };
    let mut file = std::fs::File::open(path).map_err(read_err)?;
    let mut magic = [0u8; 3];
    if file.read_exact(&mut magic).is_err() || magic != [0xFF, SOI, 0xFF] {
        return Ok(None);
    }
    let mut bytes = magic.to_vec();
    file.read_to_end(&mut bytes).map_err(read_err)?;
    let decode_err = |e: image::ImageError| Error::Decode { path: path.to_owned(), detail: e.to_string() };
    let mut decoder = image::codecs::jpeg::JpegDecoder::new(std::io::Cursor::new(&bytes)).map_err(decode_err)?;
    let (width, height) = decoder.dimensions();
    super::decode::check_dimensions(path, width, height)?;
    let orientation = if opts.keep_orientation { None } else { decoder.orientation().ok() };
    if orientation.is_some_and(|o| o != image::metadata::Orientation::NoTransforms) {
        return Ok(None);
    }
    check(&bytes, width, height).map_err(|detail| Error::Decode { path: path.to_owned(), detail })?;
    let admitted = admit(&super::Header { width, height, stored_bytes_per_pixel: 3, reorients: false })?;
    Ok(Some((JpegFile { bytes, width, height }, admitted)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jpeg() -> Vec<u8> {
        let mut bytes = Vec::new();
        let img = image::RgbImage::from_fn(33, 17, |x, y| image::Rgb([(x * 7) as u8, (y * 13) as u8, 90]));
        image::codecs::jpeg::JpegEncoder::new_with_quality(&mut bytes, 90).encode_image(&img).unwrap();
        bytes
    }

    #[test]
    fn a_whole_jpeg_is_complete_and_every_cut_is_not() {
        let bytes = jpeg();
        assert!(scan_bytes(&bytes).is_some());
        let mut trailing = bytes.clone();
        trailing.extend_from_slice(b"trailing bytes after EOI are tolerated");
        assert!(scan_bytes(&trailing).is_some());
        for cut in 0..bytes.len() - 1 {
            assert!(scan_bytes(&bytes[..cut]).is_none(), "cut at {cut} of {}", bytes.len());
        }
    }

    #[test]
    fn a_file_whose_scans_are_too_short_for_its_size_is_cut() {
        let bytes = jpeg();
        assert_eq!(check(&bytes, 33, 17), Ok(()));
        // The same bytes claiming a far larger image: the walk passes, the scan data cannot hold it.
        let scan = scan_bytes(&bytes).unwrap();
        let side = 8 * (((8 * scan + 8) as f64).sqrt().ceil() as u32);
        let e = check(&bytes, side, side).unwrap_err();
        assert!(e.contains("cannot hold"), "{e}");
        assert_eq!(
            check(&bytes[..bytes.len() - 2], 33, 17).unwrap_err(),
            "truncated JPEG: the data ends before the end-of-image marker"
        );
    }
}
