//! One large PNG decoded, computed and encoded at the same time (`cuda_sobel::engine::stream`) gives exactly the
//! bytes of the whole-image path: every PNG colour type the row reader takes, random sizes, every filter,
//! bands down to one row (so that halo rows land in three bands), on the CPU and — when there is one — on
//! the GPU. A PNG the row reader does not take is left to the whole-image path; a damaged one fails with
//! the file's name and leaves nothing behind; the command streams a large PNG and says so.

mod common;

use std::path::{Path, PathBuf};

use cuda_sobel::engine::stream::{self, Compute};
use cuda_sobel::gpu::Gpu;
use cuda_sobel::image_io::{self, DecodeOptions, PngCompression, PngRows, Staged};
use cuda_sobel::memory::Budget;
use cuda_sobel::sobel::Filter;
use cuda_sobel::{cpu, generate};
use proptest::prelude::*;

const OPTS: DecodeOptions = DecodeOptions { budget: Budget { bytes: 1 << 34 }, keep_orientation: false };

/// The PNG encodings of an RGB image that the row reader takes.
#[derive(Clone, Copy, Debug)]
enum Kind {
    Rgb,
    Rgba,
    Grey,
    GreyAlpha,
    /// 256-entry palette with transparency (expands to RGBA).
    Palette,
    /// 1 bit a pixel (expands to 8-bit grey: 0 or 255).
    GreyOneBit,
}

const KINDS: [Kind; 6] = [Kind::Rgb, Kind::Rgba, Kind::Grey, Kind::GreyAlpha, Kind::Palette, Kind::GreyOneBit];

/// Writes `rgb` (`w × h`, packed RGB) as a PNG of `kind` to `path`.
fn write_png(path: &Path, w: u32, h: u32, rgb: &[u8], kind: Kind) {
    let mut enc = png::Encoder::new(std::io::BufWriter::new(std::fs::File::create(path).unwrap()), w, h);
    let px = rgb.chunks_exact(3);
    let (color, depth, data): (_, _, Vec<u8>) = match kind {
        Kind::Rgb => (png::ColorType::Rgb, png::BitDepth::Eight, rgb.to_vec()),
        Kind::Rgba => {
            (png::ColorType::Rgba, png::BitDepth::Eight, px.flat_map(|p| [p[0], p[1], p[2], p[0] ^ p[1]]).collect())
        }
        Kind::Grey => (png::ColorType::Grayscale, png::BitDepth::Eight, px.map(|p| p[1]).collect()),
        Kind::GreyAlpha => {
            (png::ColorType::GrayscaleAlpha, png::BitDepth::Eight, px.flat_map(|p| [p[1], p[2]]).collect())
        }
        Kind::Palette => {
            enc.set_palette((0..=255u8).flat_map(|i| [i, 255 - i, i / 2]).collect::<Vec<_>>());
            enc.set_trns((0..=255u8).map(|i| i.wrapping_mul(7)).collect::<Vec<_>>());
            (png::ColorType::Indexed, png::BitDepth::Eight, px.map(|p| p[0]).collect())
        }
        Kind::GreyOneBit => {
            let row_bytes = (w as usize).div_ceil(8);
            let mut bits = vec![0u8; row_bytes * h as usize];
            for (i, p) in px.enumerate() {
                let (y, x) = (i / w as usize, i % w as usize);
                if p[0] > 127 {
                    bits[y * row_bytes + x / 8] |= 0x80 >> (x % 8);
                }
            }
            (png::ColorType::Grayscale, png::BitDepth::One, bits)
        }
    };
    enc.set_color(color);
    enc.set_depth(depth);
    let mut writer = enc.write_header().unwrap();
    writer.write_image_data(&data).unwrap();
    writer.finish().unwrap();
}

/// The edge image of `input` by the whole-image path: decode, cpu-scalar.
fn reference(input: &Path, filter: Filter) -> Vec<u8> {
    cpu::scalar::sobel(&image_io::decode_rgb(input).unwrap(), filter).into_raw()
}

/// Streams `input` into `out` in bands of `band_rows`, and returns the edge image read back.
fn streamed(input: &Path, out: &Path, compute: Compute, filter: Filter, band_rows: usize) -> Vec<u8> {
    let rows = PngRows::open(input, &OPTS).unwrap().expect("the row reader takes this PNG");
    let target = image_io::output::plan(out, &[input.to_owned()]).unwrap();
    let mut staged = Staged::new();
    stream::run_in_bands(rows, compute, filter, &mut staged, &target, PngCompression::Fast, band_rows).unwrap();
    staged.commit().unwrap();
    read_grey(out)
}

fn read_grey(path: &Path) -> Vec<u8> {
    let mut reader =
        png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap())).read_info().unwrap();
    assert_eq!(reader.output_color_type(), (png::ColorType::Grayscale, png::BitDepth::Eight));
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    reader.next_frame(&mut buf).unwrap();
    buf
}

fn files_in(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    v.sort();
    v
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn streamed_on_the_cpu_equals_the_whole_image_path(
        w in 1u32..=70,
        h in 1u32..=50,
        seed in any::<u64>(),
        band_rows in 1usize..=9,
        kind in prop::sample::select(KINDS.to_vec()),
        filter in prop::sample::select(Filter::all().collect::<Vec<_>>()),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("in.png");
        write_png(&input, w, h, generate::noise(w, h, seed).as_raw(), kind);
        let out = streamed(&input, &dir.path().join("out.png"), Compute::Cpu, filter, band_rows);
        prop_assert!(out == reference(&input, filter), "{w}×{h} {kind:?} {filter:?} in bands of {band_rows}");
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU: run with --include-ignored on a machine with one"]
fn streamed_on_the_gpu_equals_the_whole_image_path() {
    let Some(gpu) = common::gpu_or_skip("streamed_on_the_gpu_equals_the_whole_image_path") else { return };
    let dir = tempfile::tempdir().unwrap();
    for (i, (w, h)) in [(97u32, 61u32), (33, 5), (1, 9), (640, 3), (513, 130)].into_iter().enumerate() {
        for kind in KINDS {
            let input = dir.path().join(format!("in{i}_{kind:?}.png"));
            write_png(&input, w, h, generate::noise(w, h, i as u64 + 11).as_raw(), kind);
            for filter in Filter::all() {
                let expected = reference(&input, filter);
                for band_rows in [1, 2, 3, 7, 64] {
                    let out = streamed(&input, &dir.path().join("out.png"), Compute::Gpu(&gpu), filter, band_rows);
                    assert!(out == expected, "{w}×{h} {kind:?} {filter:?} in bands of {band_rows}");
                }
            }
        }
    }
}

#[test]
fn the_row_reader_leaves_other_files_to_the_whole_image_path() {
    let dir = tempfile::tempdir().unwrap();
    let rgb = generate::noise(20, 10, 3);
    // The png crate writes no interlaced PNGs; a 1×1 image's Adam7 data is its one pixel, in pass 1, so
    // setting the header's interlace byte (and its checksum) makes one.
    let interlaced = dir.path().join("interlaced.png");
    write_png(&interlaced, 1, 1, &[10, 20, 30], Kind::Rgb);
    let mut bytes = std::fs::read(&interlaced).unwrap();
    bytes[28] = 1; // signature 8, length 4, "IHDR" 4, then width 4, height 4, depth, colour, method, filter
    let crc = common::crc32(&bytes[12..29]);
    bytes[29..33].copy_from_slice(&crc.to_be_bytes());
    std::fs::write(&interlaced, bytes).unwrap();
    let apng = dir.path().join("animated.png");
    common::write_apng(&apng, &rgb);
    let sixteen = dir.path().join("sixteen.png");
    image::DynamicImage::ImageRgb8(rgb.clone()).into_rgb16().save(&sixteen).unwrap();
    let jpeg = dir.path().join("photo.jpg");
    rgb.save(&jpeg).unwrap();
    // EXIF data before the image data: orientation 6 (turned 90°) takes the whole-image path, which turns
    // it; orientation 1 ("normal", as most cameras write it) streams.
    let with_exif = |name: &str, orientation: u8| {
        let path = dir.path().join(name);
        common::write_png_with_exif_orientation(&path, &rgb, orientation);
        path
    };
    let turned = with_exif("turned.png", 6);
    assert_eq!(image_io::decode_rgb(&turned).unwrap().dimensions(), (10, 20), "the whole-image path turns it");
    let keep = DecodeOptions { keep_orientation: true, ..OPTS };
    assert!(PngRows::open(&turned, &keep).unwrap().is_some(), "--keep-orientation: streamed as stored");
    assert!(PngRows::open(&with_exif("normal.png", 1), &OPTS).unwrap().is_some(), "orientation 1 streams");
    for path in [&interlaced, &sixteen, &jpeg, &apng, &turned] {
        assert!(PngRows::open(path, &OPTS).unwrap().is_none(), "{}", path.display());
        // and the whole-image path still takes it
        image_io::decode_rgb(path).unwrap();
    }
    let plain = dir.path().join("plain.png");
    write_png(&plain, 20, 10, rgb.as_raw(), Kind::Rgb);
    assert!(PngRows::open(&plain, &OPTS).unwrap().is_some());
    assert!(PngRows::open(Path::new("-"), &OPTS).unwrap().is_none(), "standard input is read whole");
}

#[test]
fn a_damaged_png_fails_naming_it_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("cut.png");
    write_png(&input, 300, 200, generate::noise(300, 200, 9).as_raw(), Kind::Rgb);
    // The image data cut in the middle: the header promises rows the file does not have.
    let bytes = std::fs::read(&input).unwrap();
    std::fs::write(&input, &bytes[..bytes.len() / 2]).unwrap();
    let out_dir = dir.path().join("out");
    std::fs::create_dir(&out_dir).unwrap();
    let out = out_dir.join("edges.png");
    // On the GPU too, where there is one: its ring must stop cleanly with bands in flight.
    let gpu = Gpu::open().ok();
    for compute in [Some(Compute::Cpu), gpu.as_ref().map(Compute::Gpu)].into_iter().flatten() {
        let rows = PngRows::open(&input, &OPTS).unwrap().unwrap();
        let target = image_io::output::plan(&out, std::slice::from_ref(&input)).unwrap();
        let mut staged = Staged::new();
        let e =
            stream::run_in_bands(rows, compute, Filter::default(), &mut staged, &target, PngCompression::Default, 7)
                .unwrap_err();
        drop(staged);
        assert!(e.to_string().starts_with(&format!("{}: ", input.display())), "{e}");
        assert_eq!(files_in(&out_dir), Vec::<PathBuf>::new(), "no output, no temporary file");
    }
}

/// The command streams a PNG of at least 64 MB of RGB when one variant, cpu-rayon, gpu-strip or auto's
/// choice, runs alone, and its output is the bytes `--check` (the whole-image path, compared with cpu-scalar)
/// writes. (Without a GPU, gpu-strip's run says so and writes cpu-rayon's edges.)
#[test]
fn the_command_streams_a_large_png() {
    let dir = tempfile::tempdir().unwrap();
    let (w, h) = (4700u32, 4800u32); // 67.7 MB of RGB
    assert!(3 * w as u64 * h as u64 >= cuda_sobel::engine::STREAMED_FROM_BYTES as u64);
    let input = dir.path().join("large.png");
    common::bin().args(["generate", &format!("{w}x{h}"), "--out"]).arg(&input).assert().success();
    for variant in ["cpu-rayon", "gpu-strip", "auto"] {
        let streamed = dir.path().join(format!("{variant}.png"));
        let out = common::bin()
            .arg(&input)
            .args(["--variant", variant, "--border", "reflect101", "--out"])
            .arg(&streamed)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert!(String::from_utf8_lossy(&out.stderr).contains("streamed: decode,"), "{variant}: says it streamed");
        let whole = dir.path().join("whole.png");
        common::bin()
            .arg(&input)
            .args(["--variant", "cpu-rayon", "--check", "--border", "reflect101", "--out"])
            .arg(&whole)
            .assert()
            .success();
        assert!(read_grey(&streamed) == read_grey(&whole), "{variant}: same edges as the whole-image path");
    }
}

/// A write that fails while the bands stream (here the file-size limit, `ulimit -f`, with SIGXFSZ ignored
/// so that the write returns EFBIG): one line naming the output and the cause, exit 2, and nothing left in
/// the folder — not the decoder's or compute's stop reported in its place.
#[cfg(unix)]
#[test]
fn a_write_that_fails_mid_stream_is_the_error_reported() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("large.png");
    common::bin().args(["generate", "4700x4800", "--out"]).arg(&input).assert().success();
    let out_dir = dir.path().join("out");
    std::fs::create_dir(&out_dir).unwrap();
    let out = out_dir.join("edges.png");
    let bin = std::env::var_os("CUDA_SOBEL_BIN").map(PathBuf::from).unwrap_or(env!("CARGO_BIN_EXE_cuda_sobel").into());
    // 64 blocks (32 or 64 kB, by the shell's unit) of file size.
    let done = std::process::Command::new("sh")
        .args(["-c", "ulimit -f 64 && trap '' XFSZ && exec \"$0\" \"$@\""])
        .arg(&bin)
        .arg(&input)
        // Fast compression: ~6 MB of output, written in 1 MB chunks while the bands stream.
        .args(["--variant", "cpu-rayon", "--png-compression", "fast", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert_eq!(done.status.code(), Some(2), "{stderr}");
    let last = stderr.lines().last().unwrap_or_default();
    assert!(last.contains(&format!("{}: cannot write", out.display())) && last.contains("too large"), "{stderr}");
    assert_eq!(files_in(&out_dir), Vec::<PathBuf>::new(), "no output, no temporary file");
}
