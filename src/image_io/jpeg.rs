//! Is a JPEG complete? The decoder (zune-jpeg through `image`) fills the rows of a truncated file with grey
//! and reports success, as browsers do; a tool that is asked for edges must say the file is cut instead.
//!
//! A JPEG is a sequence of segments: a marker (`FF xx`), most with a 2-byte length. After each start-of-scan
//! (`FF DA`) comes entropy-coded data in which `FF` is always followed by `00` (a stuffed byte) or a restart
//! marker (`FF D0`…`FF D7`), so the next real marker is the first other `FF xx`. The file is complete when
//! this walk reaches the end-of-image marker (`FF D9`) before the bytes run out.

const SOI: u8 = 0xD8;
const EOI: u8 = 0xD9;
const SOS: u8 = 0xDA;

/// True when the walk from start-of-image reaches end-of-image.
pub fn is_complete(bytes: &[u8]) -> bool {
    if bytes.len() < 4 || bytes[0] != 0xFF || bytes[1] != SOI {
        return false;
    }
    let mut i = 2;
    loop {
        // Fill bytes (FF FF …) may precede a marker.
        while i + 1 < bytes.len() && bytes[i] == 0xFF && bytes[i + 1] == 0xFF {
            i += 1;
        }
        if i + 1 >= bytes.len() || bytes[i] != 0xFF {
            return false;
        }
        let marker = bytes[i + 1];
        i += 2;
        match marker {
            EOI => return true,
            0x01 | 0xD0..=0xD7 => continue, // markers without a length
            _ => {}
        }
        if i + 2 > bytes.len() {
            return false;
        }
        let len = u16::from_be_bytes([bytes[i], bytes[i + 1]]) as usize;
        if len < 2 {
            return false;
        }
        i += len;
        if marker == SOS {
            // Entropy-coded data up to the next marker that is neither a stuffed byte nor a restart.
            loop {
                match bytes.get(i..i + 2) {
                    None => return false,
                    Some([0xFF, next]) if *next != 0x00 && !(0xD0..=0xD7).contains(next) && *next != 0xFF => break,
                    _ => i += 1,
                }
            }
        }
    }
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
        assert!(is_complete(&bytes));
        let mut trailing = bytes.clone();
        trailing.extend_from_slice(b"trailing bytes after EOI are tolerated");
        assert!(is_complete(&trailing));
        for cut in 0..bytes.len() - 1 {
            assert!(!is_complete(&bytes[..cut]), "cut at {cut} of {}", bytes.len());
        }
    }
}
