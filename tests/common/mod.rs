//! Helpers shared by the integration tests. Paths are relative to the current directory (the repo root)
//! so that test binaries also run on the GPU machine, away from cargo; `CUDA_SOBEL_BIN` overrides the
//! path of the binary built here.
#![allow(dead_code)]

use std::io::Write;
use std::path::PathBuf;

use image::RgbImage;

/// An RGB image whose every pixel is grey `v` (R = G = B, so the grey pass returns `v` unchanged).
pub fn grey_rgb(width: u32, height: u32, values: &[u8]) -> RgbImage {
    assert_eq!(values.len(), (width * height) as usize);
    RgbImage::from_fn(width, height, |x, y| {
        let v = values[(y * width + x) as usize];
        image::Rgb([v, v, v])
    })
}

/// The GPU, or `None` with a line saying why the test is skipped; with `CUDA_SOBEL_REQUIRE_GPU` set (the GPU
/// machine), no GPU fails the test instead.
pub fn gpu_or_skip(test: &str) -> Option<cuda_sobel::gpu::Gpu> {
    match cuda_sobel::gpu::Gpu::open() {
        Ok(gpu) => Some(gpu),
        Err(e) if std::env::var_os("CUDA_SOBEL_REQUIRE_GPU").is_some() => panic!("{test}: GPU required: {e}"),
        Err(e) => {
            // Written to the real stderr (not the test harness's capture) so CI logs show the reason.
            let _ = writeln!(std::io::stderr(), "SKIPPED {test}: {e}");
            None
        }
    }
}

/// The `cuda_sobel` binary under test.
pub fn bin() -> assert_cmd::Command {
    let path = std::env::var_os("CUDA_SOBEL_BIN").map(PathBuf::from).unwrap_or(env!("CARGO_BIN_EXE_cuda_sobel").into());
    assert_cmd::Command::new(path)
}

/// Runs one of `scripts/emulate`'s checks (a kernel file compiled for the CPU with g++, its output compared with
/// `--variant cpu-scalar`): `python SCRIPT ARGS…` with the binary under test, and asserts it ends "all exact".
/// Skipped, with a line saying why, without g++ or a Python (`CUDA_SOBEL_PYTHON`, default python3) with numpy and
/// Pillow.
pub fn emulation_check(test: &str, script_and_args: &[&std::ffi::OsStr]) {
    use std::process::Command;
    let python = std::env::var("CUDA_SOBEL_PYTHON").unwrap_or_else(|_| "python3".into());
    let works = |cmd: &str, args: &[&str]| Command::new(cmd).args(args).output().is_ok_and(|o| o.status.success());
    if !works("g++", &["--version"]) || !works(&python, &["-c", "import numpy, PIL"]) {
        let _ = writeln!(std::io::stderr(), "SKIPPED {test}: needs g++ and numpy + Pillow in {python}");
        return;
    }
    let bin = std::env::var_os("CUDA_SOBEL_BIN").unwrap_or(env!("CARGO_BIN_EXE_cuda_sobel").into());
    let run =
        Command::new(&python).args(script_and_args).env("CUDA_SOBEL_BIN", bin).output().expect("the check starts");
    let out = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "{out}{}", String::from_utf8_lossy(&run.stderr));
    assert!(out.contains("all exact"), "{out}");
}

/// A low-contrast 4×3 grey image, so that Scharr's larger taps do not saturate everything:
/// ```text
///  10 12 15 11
///   9 10 14 20
///   8  8  9 12
/// ```
pub const SCHARR_GREY: [u8; 12] = [10, 12, 15, 11, 9, 10, 14, 20, 8, 8, 9, 12];

/// A 7×5 grey image for the larger stencils (tests/ksize.rs works its values out by hand):
/// ```text
///   0   0   0   0   0   0   0
///   0   0   0  10   0   0   0
///   0   0  20  40  20   0   0
///   0   0   0  10   0   0   0
///   0   0   0   0   0   0   0
/// ```
pub const KSIZE_GREY: [u8; 35] = [
    0, 0, 0, 0, 0, 0, 0, //
    0, 0, 0, 10, 0, 0, 0, //
    0, 0, 20, 40, 20, 0, 0, //
    0, 0, 0, 10, 0, 0, 0, //
    0, 0, 0, 0, 0, 0, 0,
];

/// 4×2 colours chosen so that the report's arithmetic differs from the exact one at every step.
pub fn report_colours() -> image::RgbImage {
    let px: [[u8; 3]; 8] =
        [[255, 0, 0], [2, 2, 2], [255, 255, 255], [0, 0, 0], [0, 255, 0], [100, 100, 100], [0, 0, 255], [200, 10, 50]];
    image::RgbImage::from_fn(4, 2, |x, y| image::Rgb(px[(y * 4 + x) as usize]))
}

/// The PNG chunk checksum (CRC-32, ISO 3309), for tests that forge or mend chunks.
pub fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= b as u32;
        for _ in 0..8 {
            crc = if crc & 1 == 1 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
        }
    }
    !crc
}

/// Writes `data` (`w × h` pixels of 8-bit `color`) as a PNG whose every row `filter` chose.
pub fn write_png_filtered(
    path: &std::path::Path,
    w: u32,
    h: u32,
    color: png::ColorType,
    data: &[u8],
    filter: png::Filter,
) {
    let mut enc = png::Encoder::new(std::io::BufWriter::new(std::fs::File::create(path).unwrap()), w, h);
    enc.set_color(color);
    enc.set_depth(png::BitDepth::Eight);
    enc.set_filter(filter);
    let mut writer = enc.write_header().unwrap();
    writer.write_image_data(data).unwrap();
    writer.finish().unwrap();
}

/// Writes `rgb` as an animated PNG (APNG) of two equal frames.
pub fn write_apng(path: &std::path::Path, rgb: &RgbImage) {
    let mut enc =
        png::Encoder::new(std::io::BufWriter::new(std::fs::File::create(path).unwrap()), rgb.width(), rgb.height());
    enc.set_color(png::ColorType::Rgb);
    enc.set_animated(2, 0).unwrap();
    let mut writer = enc.write_header().unwrap();
    writer.write_image_data(rgb.as_raw()).unwrap();
    writer.write_image_data(rgb.as_raw()).unwrap();
    writer.finish().unwrap();
}

/// Writes `rgb` as a PNG with EXIF data before the image data: one orientation tag, `orientation` (1:
/// "normal", 6: turned 90°).
pub fn write_png_with_exif_orientation(path: &std::path::Path, rgb: &RgbImage, orientation: u8) {
    let mut enc =
        png::Encoder::new(std::io::BufWriter::new(std::fs::File::create(path).unwrap()), rgb.width(), rgb.height());
    enc.set_color(png::ColorType::Rgb);
    let mut writer = enc.write_header().unwrap();
    // Little-endian TIFF header, one IFD entry: tag 0x0112 (orientation), SHORT, 1 value.
    let exif = [b'I', b'I', 42, 0, 8, 0, 0, 0, 1, 0, 0x12, 1, 3, 0, 1, 0, 0, 0, orientation, 0, 0, 0, 0, 0, 0, 0];
    writer.write_chunk(png::chunk::ChunkType(*b"eXIf"), &exif).unwrap();
    writer.write_image_data(rgb.as_raw()).unwrap();
    writer.finish().unwrap();
}

/// A PNG of `w × h` RGB pixels whose image data is `rows` (filter bytes included), zlib-compressed into one IDAT:
/// image data the encoders would never write.
pub fn forged_png(path: &std::path::Path, w: u32, h: u32, rows: &[u8]) {
    let mut file = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut chunk = |kind: &[u8; 4], data: &[u8]| {
        file.extend((data.len() as u32).to_be_bytes());
        let typed = [kind.as_slice(), data].concat();
        file.extend(&typed);
        file.extend(crc32(&typed).to_be_bytes());
    };
    chunk(b"IHDR", &[w.to_be_bytes().as_slice(), &h.to_be_bytes(), &[8, 2, 0, 0, 0]].concat());
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    z.write_all(rows).unwrap();
    chunk(b"IDAT", &z.finish().unwrap());
    chunk(b"IEND", &[]);
    std::fs::write(path, file).unwrap();
}
