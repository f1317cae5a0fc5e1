//! No input panics the decoder: small valid images of every format, with random bytes changed, cut or
//! inserted, go through `image_io::decode` under a small budget; each must come back as an image or as an
//! error, never a panic (proptest shrinks any that does to a minimal file).

use std::io::Cursor;

use cuda_sobel::image_io::{self, DecodeOptions};
use cuda_sobel::memory::{image_bytes, Budget};
use image::ImageFormat;
use proptest::prelude::*;

fn sample(format: ImageFormat) -> Vec<u8> {
    let img =
        image::RgbImage::from_fn(23, 17, |x, y| image::Rgb([(x * 11) as u8, (y * 15) as u8, ((x + y) * 7) as u8]));
    let mut bytes = Vec::new();
    image::DynamicImage::ImageRgb8(img).write_to(&mut Cursor::new(&mut bytes), format).unwrap();
    bytes
}

const FORMATS: [(ImageFormat, &str); 6] = [
    (ImageFormat::Png, "png"),
    (ImageFormat::Jpeg, "jpg"),
    (ImageFormat::Gif, "gif"),
    (ImageFormat::Bmp, "bmp"),
    (ImageFormat::Tiff, "tif"),
    (ImageFormat::WebP, "webp"),
];

#[derive(Clone, Debug)]
enum Change {
    Set(usize, u8),
    Cut(usize),
    Insert(usize, Vec<u8>),
}

fn change() -> impl Strategy<Value = Change> {
    prop_oneof![
        6 => (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Change::Set(i, b)),
        1 => any::<usize>().prop_map(Change::Cut),
        1 => (any::<usize>(), proptest::collection::vec(any::<u8>(), 1..8)).prop_map(|(i, b)| Change::Insert(i, b)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]
    #[test]
    fn damaged_files_never_panic(which in 0..FORMATS.len(), changes in proptest::collection::vec(change(), 1..6)) {
        let (format, ext) = FORMATS[which];
        let mut bytes = sample(format);
        for c in changes {
            match c {
                Change::Set(i, b) => { let n = bytes.len(); bytes[i % n] = b; }
                Change::Cut(i) => { let n = bytes.len(); bytes.truncate(1 + i % n); }
                Change::Insert(i, b) => { let n = bytes.len(); bytes.splice(i % n..i % n, b); }
            }
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(format!("damaged.{ext}"));
        std::fs::write(&path, &bytes).unwrap();
        let budget = Budget { bytes: 256 << 20 };
        let opts = DecodeOptions { budget, keep_orientation: false };
        let result = image_io::decode(&path, &opts, |h| {
            budget.check(&path, h.width, h.height, image_bytes(h.width, h.height, h.decode_peak_bytes_per_pixel() + 10))
        });
        // Either is fine; reaching this line without a panic is the property.
        if let Ok((d, ())) = result {
            prop_assert!(d.rgb.width() > 0 && d.rgb.height() > 0);
        }
    }
}
