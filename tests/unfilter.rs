//! A PNG read still filtered (`cuda_sobel::image_io::filtered`) and unfiltered — by the scalar reference on
//! the CPU, by `cuda/unfilter.cu` on the GPU through batch mode's slots — gives exactly the image the
//! whole-image decode gives, and so the same edges: random sizes (across the kernel's chunks and rounds),
//! RGB and RGBA, every PNG filter the encoder writes. Files the GPU path does not take are left to the
//! whole-image decode; damaged image data fails naming the file.

mod common;

use std::io::Write;
use std::path::Path;

use cuda_sobel::engine::{Device, Engine, Want};
use cuda_sobel::image_io::{self, filtered, DecodeOptions};
use cuda_sobel::memory::Budget;
use cuda_sobel::sobel::Filter;
use cuda_sobel::{cpu, generate};
use proptest::prelude::*;

const OPTS: DecodeOptions = DecodeOptions { budget: Budget { bytes: 1 << 34 }, keep_orientation: false };

/// Every filter choice of the png crate's encoder: one filter for every row, or a choice per row.
const FILTERS: [png::Filter; 7] = [
    png::Filter::NoFilter,
    png::Filter::Sub,
    png::Filter::Up,
    png::Filter::Avg,
    png::Filter::Paeth,
    png::Filter::Adaptive,
    png::Filter::MinEntropy,
];

/// Writes the `w × h` RGB `rgb` as an 8-bit PNG, RGBA when `alpha` (alpha varying, so that its bytes take
/// part in the filters), every row filtered by `filter`.
fn write_png(path: &Path, w: u32, h: u32, rgb: &[u8], alpha: bool, filter: png::Filter) {
    if alpha {
        let rgba: Vec<u8> = rgb.chunks_exact(3).flat_map(|p| [p[0], p[1], p[2], p[0] ^ p[2]]).collect();
        common::write_png_filtered(path, w, h, png::ColorType::Rgba, &rgba, filter);
    } else {
        common::write_png_filtered(path, w, h, png::ColorType::Rgb, rgb, filter);
    }
}

/// A smooth image with noise on it: the filters' predictions are near, but not equal to, the bytes.
fn picture(w: u32, h: u32, seed: u64) -> Vec<u8> {
    let noise = generate::noise(w, h, seed);
    let scene = generate::scene(w, h);
    scene.as_raw().iter().zip(noise.as_raw()).map(|(&s, &n)| s.wrapping_add(n >> 5)).collect()
}

fn read(path: &Path) -> filtered::Filtered {
    filtered::read(path, &OPTS, |_| Ok(())).unwrap().expect("the filtered reader takes this PNG").0
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn unfiltered_on_the_cpu_equals_the_whole_image_decode(
        w in 1u32..=80,
        h in 1u32..=40,
        seed in any::<u64>(),
        alpha in any::<bool>(),
        filter in prop::sample::select(FILTERS.to_vec()),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("in.png");
        write_png(&input, w, h, &picture(w, h, seed), alpha, filter);
        let png = read(&input);
        prop_assert_eq!(png.bytes_per_pixel, if alpha { 4 } else { 3 });
        prop_assert!(png.unfilter() == image_io::decode_rgb(&input).unwrap(), "{w}×{h} alpha {alpha} {filter:?}");
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with --include-ignored on a machine with one"]
fn unfiltered_on_the_gpu_gives_the_edges_of_the_whole_image_decode() {
    let engine = match Engine::new(Device::Cuda(0), Filter::default()).and_then(|e| e.with_slots(2)) {
        Ok(e) => e,
        Err(e) if std::env::var_os("CUDA_SOBEL_REQUIRE_GPU").is_some() => panic!("GPU required: {e}"),
        Err(e) => {
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED unfiltered_on_the_gpu_gives_the_edges_of_the_whole_image_decode: {e}"
            );
            return;
        }
    };
    assert!(engine.unfilters_on_gpu());
    let dir = tempfile::tempdir().unwrap();
    // Widths around the kernel's 8-pixel chunks and its block sizes (a thread per chunk, 32 to 512: 9000
    // pixels are 1125 chunks, more than one block's threads); heights across its rounds of rows.
    let sizes = [(1u32, 1u32), (1, 70), (7, 3), (8, 33), (9, 64), (255, 65), (257, 31), (2048, 300), (9000, 1100)];
    for (i, (w, h)) in sizes.into_iter().enumerate() {
        let rgb = picture(w, h, i as u64);
        for alpha in [false, true] {
            for png_filter in FILTERS {
                let input = dir.path().join(format!("in{i}_{alpha}_{png_filter:?}.png"));
                write_png(&input, w, h, &rgb, alpha, png_filter);
                let decoded = image_io::decode_rgb(&input).unwrap();
                let png = read(&input);
                // Every operator, border and arithmetic once per size; the default for the other encodings.
                let filters: Vec<Filter> = if png_filter == png::Filter::Adaptive && !alpha {
                    Filter::all().collect()
                } else {
                    vec![Filter::default()]
                };
                for filter in filters {
                    let edges = engine.sobel_filtered(&png, filter, Want::default()).unwrap().bytes.unwrap();
                    let expected = cpu::scalar::sobel(&decoded, filter);
                    assert!(edges == expected.into_raw(), "{w}×{h} alpha {alpha} {png_filter:?} {filter:?}");
                }
                std::fs::remove_file(&input).unwrap();
            }
        }
    }
    // A real photograph's file, as its encoder filtered it.
    let photo = Path::new("imgs_in/2048x1024.png");
    let expected = cpu::scalar::sobel(&image_io::decode_rgb(photo).unwrap(), Filter::default());
    let edges = engine.sobel_filtered(&read(photo), Filter::default(), Want::default()).unwrap().bytes.unwrap();
    assert!(edges == expected.into_raw(), "imgs_in/2048x1024.png");
}

#[test]
fn a_real_image_unfiltered_on_the_cpu_equals_its_decode() {
    for name in ["512x512", "1024x512", "2048x1024"] {
        let path = format!("imgs_in/{name}.png");
        let path = Path::new(&path);
        assert!(read(path).unfilter() == image_io::decode_rgb(path).unwrap(), "{}", path.display());
    }
}

#[test]
fn files_the_gpu_does_not_unfilter_are_left_to_the_whole_image_decode() {
    let dir = tempfile::tempdir().unwrap();
    let rgb = generate::noise(20, 10, 3);
    let grey = dir.path().join("grey.png");
    image::DynamicImage::ImageRgb8(rgb.clone()).into_luma8().save(&grey).unwrap();
    let sixteen = dir.path().join("sixteen.png");
    image::DynamicImage::ImageRgb8(rgb.clone()).into_rgb16().save(&sixteen).unwrap();
    let jpeg = dir.path().join("photo.jpg");
    rgb.save(&jpeg).unwrap();
    let apng = dir.path().join("animated.png");
    common::write_apng(&apng, &rgb);
    let turned = dir.path().join("turned.png");
    common::write_png_with_exif_orientation(&turned, &rgb, 6);
    let not_png = dir.path().join("text.png");
    std::fs::write(&not_png, "not an image").unwrap();
    for path in [&grey, &sixteen, &jpeg, &apng, &turned, &not_png] {
        assert!(filtered::read(path, &OPTS, |_| Ok(())).unwrap().is_none(), "{}", path.display());
    }
    let keep = DecodeOptions { keep_orientation: true, ..OPTS };
    assert!(filtered::read(&turned, &keep, |_| Ok(())).unwrap().is_some(), "--keep-orientation: as stored");
    assert!(filtered::read(Path::new("-"), &OPTS, |_| Ok(())).unwrap().is_none(), "standard input");
}

/// A 4×2 RGB PNG whose image data is `rows` (filter bytes included), zlib-compressed into one IDAT.
fn forged(path: &Path, rows: &[u8]) {
    common::forged_png(path, 4, 2, rows);
}

#[test]
fn damaged_image_data_fails_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let row = |f: u8| [[f].as_slice(), &[7; 12]].concat();
    let good = dir.path().join("good.png");
    forged(&good, &[row(1), row(4)].concat());
    assert!(read(&good).unfilter() == image_io::decode_rgb(&good).unwrap());

    let unknown = dir.path().join("unknown_filter.png");
    forged(&unknown, &[row(0), row(5)].concat());
    let err = filtered::read(&unknown, &OPTS, |_| Ok(())).unwrap_err().to_string();
    assert!(err.contains("unknown_filter.png") && err.contains("row 1 names filter type 5"), "{err}");
    image_io::decode_rgb(&unknown).expect_err("the whole-image decode refuses it too");

    let short = dir.path().join("short.png");
    forged(&short, &row(2));
    let err = filtered::read(&short, &OPTS, |_| Ok(())).unwrap_err().to_string();
    assert!(err.contains("short.png") && err.contains("after 1 of 2 rows"), "{err}");

    // Longer image data than the rows: the rest is ignored, as the png crate's reader ignores it.
    let long = dir.path().join("long.png");
    forged(&long, &[row(0), row(0), row(0)].concat());
    assert!(read(&long).unfilter() == image_io::decode_rgb(&long).unwrap());

    let truncated = dir.path().join("truncated.png");
    let bytes = std::fs::read(&good).unwrap();
    std::fs::write(&truncated, &bytes[..bytes.len() - 20]).unwrap();
    let err = filtered::read(&truncated, &OPTS, |_| Ok(())).unwrap_err().to_string();
    assert!(err.contains("truncated.png"), "{err}");
}

/// The stream [`filtered::read_compressed`] hands nvCOMP, inflated here by zlib (flate2), is the image data
/// [`filtered::read`] inflates: across sizes, RGB and RGBA, and image data split over many IDAT chunks.
fn inflated(c: &filtered::Compressed) -> Vec<u8> {
    use std::io::Read;
    let mut rows = Vec::new();
    flate2::read::DeflateDecoder::new(c.deflate.as_slice()).read_to_end(&mut rows).unwrap();
    rows
}

fn compressed(path: &Path) -> Option<filtered::Compressed> {
    filtered::read_compressed(path, &OPTS, |_| Ok(())).unwrap().map(|(c, ())| c)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn the_compressed_image_data_inflates_to_the_stored_rows(
        w in 1u32..=80,
        h in 1u32..=40,
        seed in any::<u64>(),
        alpha in any::<bool>(),
        chunk in prop::sample::select(vec![1usize, 7, 100, 1 << 20]),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("in.png");
        let rgb = picture(w, h, seed);
        let (color, data) = if alpha {
            (png::ColorType::Rgba, rgb.chunks_exact(3).flat_map(|p| [p[0], p[1], p[2], p[0] ^ p[2]]).collect())
        } else {
            (png::ColorType::Rgb, rgb)
        };
        // IDAT chunks of `chunk` bytes each.
        let mut enc = png::Encoder::new(std::fs::File::create(&input).unwrap(), w, h);
        enc.set_color(color);
        enc.set_depth(png::BitDepth::Eight);
        let mut writer = enc.write_header().unwrap();
        let mut stream = writer.stream_writer_with_size(chunk).unwrap();
        stream.write_all(&data).unwrap();
        stream.finish().unwrap();
        writer.finish().unwrap();
        let c = compressed(&input).expect("read_compressed takes what read takes");
        let stored = read(&input);
        prop_assert_eq!((c.width, c.height, c.bytes_per_pixel), (stored.width, stored.height, stored.bytes_per_pixel));
        prop_assert_eq!(c.inflated_bytes(), stored.rows.len());
        prop_assert!(inflated(&c)[..] == stored.rows[..], "{w}×{h} alpha {alpha}, IDAT chunks of {chunk}");
    }
}

#[test]
fn the_compressed_image_data_of_real_images_and_what_read_compressed_leaves_to_the_cpu() {
    for name in ["512x512", "2048x1024"] {
        let path = format!("imgs_in/{name}.png");
        let c = compressed(Path::new(&path)).unwrap();
        assert!(inflated(&c)[..] == read(Path::new(&path)).rows[..], "{path}");
    }
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.png");
    let row = |f: u8| [[f].as_slice(), &[7; 12]].concat();
    forged(&good, &[row(1), row(4)].concat());
    let bytes = std::fs::read(&good).unwrap();
    let idat = bytes.windows(4).position(|w| w == b"IDAT").unwrap();
    // A byte of the IDAT data changed (its CRC no longer matches), the file cut inside the IDAT chunk, and the
    // zlib header changed (a preset dictionary asked for): the CPU's reader is left to say what is wrong.
    let mut bad_crc = bytes.clone();
    bad_crc[idat + 6] ^= 1;
    let cut = bytes[..idat + 8].to_vec();
    let mut dictionary = bytes.clone();
    dictionary[idat + 5] |= 0x20;
    let len = u32::from_be_bytes(bytes[idat - 4..idat].try_into().unwrap()) as usize;
    let crc = common::crc32(&dictionary[idat..idat + 4 + len]).to_be_bytes();
    dictionary[idat + 4 + len..idat + 8 + len].copy_from_slice(&crc);
    for (name, content) in [("bad_crc.png", bad_crc), ("cut.png", cut), ("dictionary.png", dictionary)] {
        let path = dir.path().join(name);
        std::fs::write(&path, content).unwrap();
        assert!(compressed(&path).is_none(), "{name}");
    }
    // What read does not take, read_compressed does not take either.
    let grey = dir.path().join("grey.png");
    image::DynamicImage::ImageRgb8(generate::noise(20, 10, 3)).into_luma8().save(&grey).unwrap();
    assert!(compressed(&grey).is_none() && compressed(Path::new("-")).is_none());
}
