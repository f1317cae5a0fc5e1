//! Every row of the "Bad input" table in docs/cli.md, run: exit code 2, exactly one line on stderr naming the
//! file and containing the documented message, no panic, nothing written. And the formats that must work.

mod common;

use std::path::{Path, PathBuf};

use common::bin;
use image::{ImageEncoder, RgbImage};

/// Writes a PNG from raw chunks (for headers no encoder would produce).
fn png_from_chunks(path: &Path, chunks: &[(&[u8; 4], Vec<u8>)]) {
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    for (kind, data) in chunks {
        out.extend((data.len() as u32).to_be_bytes());
        let mut crc_input = kind.to_vec();
        crc_input.extend(data);
        out.extend(&crc_input);
        out.extend(common::crc32(&crc_input).to_be_bytes());
    }
    std::fs::write(path, out).unwrap();
}

fn ihdr(width: u32, height: u32) -> Vec<u8> {
    ihdr_of(width, height, 8, 2) // 8-bit RGB
}

fn ihdr_of(width: u32, height: u32, depth: u8, color: u8) -> Vec<u8> {
    let mut d = width.to_be_bytes().to_vec();
    d.extend(height.to_be_bytes());
    d.extend([depth, color, 0, 0, 0]);
    d
}

fn zlib(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    z.write_all(bytes).unwrap();
    z.finish().unwrap()
}

/// Files of a few dozen bytes whose headers claim huge canvases, one per format. Each is under the 2^32
/// pixel limit, so only the memory budget stands between it and an allocation of tens of gigabytes.
fn claims_huge(case: &str) -> Vec<u8> {
    let le16 = |v: u16| v.to_le_bytes();
    let le32 = |v: u32| v.to_le_bytes();
    match case {
        "gif" => {
            let mut b = b"GIF89a".to_vec();
            b.extend(le16(65535));
            b.extend(le16(65535));
            b.extend([0, 0, 0, 0x2c, 0, 0, 0, 0]);
            b.extend(le16(65535));
            b.extend(le16(65535));
            b.extend([0x80, 0, 0, 0, 255, 255, 255, 2, 2, 0x44, 1, 0, 0x3b]);
            b
        }
        "bmp" => {
            let mut b = b"BM".to_vec();
            b.extend(le32(100));
            b.extend(le32(0));
            b.extend(le32(54));
            for v in [40u32, 60000, 60000] {
                b.extend(le32(v));
            }
            b.extend(le16(1));
            b.extend(le16(24));
            b.extend([0u8; 24]);
            b.extend([0u8; 16]);
            b
        }
        "tiff" => {
            // One grey strip of 60000×60000 pixels, 16 bytes of it present.
            let entries: [(u16, u16, u32); 9] = [
                (256, 4, 60000),
                (257, 4, 60000),
                (258, 3, 8),
                (259, 3, 1),
                (262, 3, 1),
                (273, 4, 8 + 2 + 12 * 9 + 4),
                (277, 3, 1),
                (278, 4, 60000),
                (279, 4, 16),
            ];
            let mut b = b"II*\0".to_vec();
            b.extend(le32(8));
            b.extend(le16(entries.len() as u16));
            for (tag, kind, value) in entries {
                b.extend(le16(tag));
                b.extend(le16(kind));
                b.extend(le32(1));
                b.extend(le32(value));
            }
            b.extend(le32(0));
            b.extend([0u8; 16]);
            b
        }
        other => panic!("no crafted {other}"),
    }
}

/// Makes the input for one case of the table in `dir`; returns (input, output) paths.
fn fixture(case: &str, dir: &Path) -> (PathBuf, PathBuf) {
    let good = dir.join("good.png");
    std::fs::copy("imgs_in/512x512.png", &good).unwrap();
    let out = dir.join("out/edges.png");
    let input = match case {
        "missing file" => dir.join("no-such-file.png"),
        "directory instead of a file" => {
            std::fs::create_dir(dir.join("folder")).unwrap();
            dir.join("folder")
        }
        "empty file" => {
            std::fs::write(dir.join("empty.png"), b"").unwrap();
            dir.join("empty.png")
        }
        "not an image (text named .png)" => {
            std::fs::write(dir.join("notes.png"), "this is text\n").unwrap();
            dir.join("notes.png")
        }
        "truncated PNG" => {
            let bytes = std::fs::read(&good).unwrap();
            std::fs::write(dir.join("cut.png"), &bytes[..bytes.len() / 3]).unwrap();
            dir.join("cut.png")
        }
        "corrupt PNG (CRC mismatch)" => {
            let mut bytes = std::fs::read(&good).unwrap();
            let idat = bytes.windows(4).position(|w| w == b"IDAT").unwrap();
            let len = u32::from_be_bytes(bytes[idat - 4..idat].try_into().unwrap()) as usize;
            bytes[idat + 4 + len] ^= 0x55; // first byte of the chunk's CRC
            std::fs::write(dir.join("crc.png"), bytes).unwrap();
            dir.join("crc.png")
        }
        "unsupported format (QOI)" => {
            // A QOI header (magic, 1×1, RGB, sRGB) and its end marker: a format the decoder knows but is not built with.
            let mut qoi = b"qoif".to_vec();
            qoi.extend(1u32.to_be_bytes());
            qoi.extend(1u32.to_be_bytes());
            qoi.extend([3, 0, 0xfe, 1, 2, 3, 0, 0, 0, 0, 0, 0, 0, 1]);
            std::fs::write(dir.join("img.qoi"), qoi).unwrap();
            dir.join("img.qoi")
        }
        "zero width in the PNG header" => {
            png_from_chunks(&dir.join("zero.png"), &[(b"IHDR", ihdr(0, 5)), (b"IEND", vec![])]);
            dir.join("zero.png")
        }
        "PNG header claiming 100000×100000" => {
            // A header, then a tiny (empty) zlib stream as image data: the claim costs nothing to make.
            let idat = vec![0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01];
            png_from_chunks(
                &dir.join("huge.png"),
                &[(b"IHDR", ihdr(100_000, 100_000)), (b"IDAT", idat), (b"IEND", vec![])],
            );
            dir.join("huge.png")
        }
        "FIFO instead of a file" => {
            let p = dir.join("pipe.png");
            assert!(std::process::Command::new("mkfifo").arg(&p).status().unwrap().success());
            p
        }
        "GIF screen claiming 65535×65535" => write(dir, "huge.gif", claims_huge("gif")),
        "BMP claiming 60000×60000" => write(dir, "huge.bmp", claims_huge("bmp")),
        "TIFF claiming 60000×60000" => write(dir, "huge.tif", claims_huge("tiff")),
        "PNG claiming 60000×60000 RGBA16, almost no data" => {
            let idat = zlib(&[0; 10]);
            png_from_chunks(
                &dir.join("rgba16.png"),
                &[(b"IHDR", ihdr_of(60000, 60000, 16, 6)), (b"IDAT", idat), (b"IEND", vec![])],
            );
            dir.join("rgba16.png")
        }
        "truncated JPEG" => {
            let mut jpeg = Vec::new();
            let img = RgbImage::from_fn(64, 48, |x, y| image::Rgb([(x * 4) as u8, (y * 5) as u8, 60]));
            image::codecs::jpeg::JpegEncoder::new_with_quality(&mut jpeg, 90).encode_image(&img).unwrap();
            write(dir, "cut.jpg", jpeg[..jpeg.len() / 2].to_vec())
        }
        "JPEG claiming 20000×20000 in 600 bytes, end marker and all" => {
            let mut jpeg = Vec::new();
            let img = RgbImage::from_fn(16, 16, |x, y| image::Rgb([(x * 9) as u8, (y * 7) as u8, 60]));
            image::codecs::jpeg::JpegEncoder::new_with_quality(&mut jpeg, 90).encode_image(&img).unwrap();
            // The frame header (FF C0, length, precision, height, width) claims 20000×20000.
            let sof = jpeg.windows(2).position(|w| w == [0xFF, 0xC0]).expect("a baseline frame header");
            jpeg[sof + 5..sof + 9].copy_from_slice(&[0x4E, 0x20, 0x4E, 0x20]);
            write(dir, "claims.jpg", jpeg)
        }
        "output parent is a file" => return (good, dir.join("good.png/edges.png")),
        "output name too long" => return (good, dir.join(format!("{}.png", "a".repeat(300)))),
        "output format unknown (.gif)" => return (good, dir.join("edges.gif")),
        // sysfs refuses new files even to root, so this works however the tests are run.
        "output folder not writable" => return (good, PathBuf::from("/sys/cuda_sobel_test.png")),
        "output path is an existing directory" => {
            std::fs::create_dir_all(dir.join("out/edges.png")).unwrap();
            good
        }
        "input and output the same file" => return (good.clone(), good),
        // --intermediate's grey sibling of out/edges.png is out/edges_grey.png: here, the input.
        "intermediate image would be the input" => {
            std::fs::create_dir_all(dir.join("out")).unwrap();
            std::fs::copy(&good, dir.join("out/edges_grey.png")).unwrap();
            return (dir.join("out/edges_grey.png"), out);
        }
        "intermediate image's name is a folder" => {
            std::fs::create_dir_all(dir.join("out/edges_gx.png")).unwrap();
            good
        }
        other => panic!("docs/cli.md case '{other}' has no fixture in tests/bad_input.rs"),
    };
    (input, out)
}

fn write(dir: &Path, name: &str, bytes: Vec<u8>) -> PathBuf {
    std::fs::write(dir.join(name), bytes).unwrap();
    dir.join(name)
}

/// The table of docs/cli.md: (case, message fragment).
fn readme_cases() -> Vec<(String, String)> {
    let readme = std::fs::read_to_string("docs/cli.md").expect("docs/cli.md under the current directory");
    let section = readme.split("## Bad input").nth(1).expect("docs/cli.md has a Bad input section");
    section
        .lines()
        .skip_while(|l| !l.starts_with("| case"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            (cells[1].to_owned(), cells[2].trim_matches('`').to_owned())
        })
        .collect()
}

#[test]
fn every_readme_bad_input_row_holds() {
    let cases = readme_cases();
    assert!(cases.len() >= 22, "the table has its rows: {cases:?}");
    for (case, message) in cases {
        let dir = tempfile::tempdir().unwrap();
        let (input, out) = fixture(&case, dir.path());
        let before: Vec<_> = walk(dir.path());
        // A fixed budget, so that the refusals do not depend on this machine's memory.
        let mut cmd = bin();
        cmd.arg(&input).args(["--variant", "cpu-rayon", "--max-memory", "4G", "--out"]).arg(&out);
        if case.starts_with("intermediate") {
            cmd.arg("--intermediate");
        }
        let assert = cmd.timeout(std::time::Duration::from_secs(60)).assert().code(2);
        let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
        assert_eq!(stderr.lines().count(), 1, "{case}: exactly one line, got: {stderr}");
        assert!(stderr.contains(&message), "{case}: expected '{message}' in: {stderr}");
        let named = if case.starts_with("output") || case.starts_with("intermediate image's") { &out } else { &input };
        let named = if case.starts_with("intermediate image's") { out.parent().unwrap() } else { named };
        assert!(stderr.contains(&*named.to_string_lossy()), "{case}: names the file: {stderr}");
        assert!(!stderr.contains("panicked"), "{case}: {stderr}");
        assert_eq!(walk(dir.path()), before, "{case}: nothing written");
    }
}

/// The crafted files again, and a real image, under an address-space limit (`ulimit -v`, as a cluster's
/// job limit would set it) and no `--max-memory`: the default budget, derived from that limit, refuses the
/// claims; nothing aborts ("memory allocation of … failed", exit 134) or panics (exit 101).
#[test]
fn crafted_files_never_abort_under_an_address_space_limit() {
    let dir = tempfile::tempdir().unwrap();
    let mut inputs = vec![];
    for case in [
        "GIF screen claiming 65535×65535",
        "BMP claiming 60000×60000",
        "TIFF claiming 60000×60000",
        "PNG claiming 60000×60000 RGBA16, almost no data",
        "truncated JPEG",
        "PNG header claiming 100000×100000",
    ] {
        let sub = dir.path().join(inputs.len().to_string());
        std::fs::create_dir(&sub).unwrap();
        inputs.push(fixture(case, &sub).0);
    }
    let binary = bin().get_program().to_owned();
    let limited = |args: &[&std::ffi::OsStr]| {
        // 3 GB of address space: room for the process and the 512×512 image, not for any claim.
        std::process::Command::new("sh")
            .arg("-c")
            .arg("ulimit -v 3000000 && exec \"$0\" \"$@\"")
            .arg(&binary)
            .args(args)
            .output()
            .unwrap()
    };
    for input in &inputs {
        let out = dir.path().join("edges.png");
        let o = limited(&[
            input.as_os_str(),
            "--variant".as_ref(),
            "cpu-rayon".as_ref(),
            "--out".as_ref(),
            out.as_os_str(),
        ]);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{}: {stderr}", input.display());
        assert_eq!(stderr.lines().count(), 1, "{}: one line: {stderr}", input.display());
        assert!(!out.exists());
    }
    let out = dir.path().join("ok.png");
    let o = limited(&[
        "imgs_in/512x512.png".as_ref(),
        "--variant".as_ref(),
        "cpu-rayon".as_ref(),
        "--out".as_ref(),
        out.as_os_str(),
    ]);
    assert!(o.status.success(), "a real image runs under the limit: {}", String::from_utf8_lossy(&o.stderr));
    // generate obeys the same budget.
    let o = limited(&["generate".as_ref(), "40000x40000".as_ref(), "--out".as_ref(), out.as_os_str()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("over the memory budget"));
}

/// Every file under `dir` (sorted), to prove nothing was added.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p.clone());
            }
            files.push(p);
        }
    }
    files.sort();
    files
}

#[test]
fn usage_errors_name_the_value() {
    for (args, fragment) in [
        (vec!["imgs_in/512x512.png", "65"], "65"),
        (vec!["imgs_in/512x512.png", "abc"], "abc"),
        (vec!["imgs_in/512x512.png", "--variant", "gpu-nope"], "gpu-nope"),
        (vec!["imgs_in/512x512.png", "--border", "mirror"], "mirror"),
    ] {
        let assert = bin().args(&args).assert().code(2);
        let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
        assert!(stderr.contains(fragment) && !stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}

/// Runs the CLI on `path` (cpu-rayon) and returns the edge image.
fn run_ok(path: &Path) -> Vec<u8> {
    let out = path.with_extension("edges.png");
    bin().arg(path).args(["--variant", "cpu-rayon", "--quiet", "--out"]).arg(&out).assert().success();
    image::open(&out).unwrap().into_luma8().into_raw()
}

#[test]
fn formats_that_must_work() {
    let dir = tempfile::tempdir().unwrap();
    let (w, h) = (37u32, 23u32);
    let rgb = RgbImage::from_fn(w, h, |x, y| image::Rgb([(x * 7) as u8, (y * 11) as u8, ((x + y) * 5) as u8]));
    let expected = cuda_sobel::cpu::scalar::sobel(&rgb, cuda_sobel::sobel::Filter::default()).into_raw();
    let grey_values = image::GrayImage::from_fn(w, h, |x, y| image::Luma([((x * 13 + y * 3) % 256) as u8]));
    let grey_as_rgb = RgbImage::from_fn(w, h, |x, y| {
        let v = grey_values.get_pixel(x, y)[0];
        image::Rgb([v, v, v])
    });
    let expected_grey = cuda_sobel::cpu::scalar::sobel(&grey_as_rgb, cuda_sobel::sobel::Filter::default()).into_raw();

    // 16-bit RGB whose values are v·257: reduced to exactly v.
    let rgb16 = image::ImageBuffer::<image::Rgb<u16>, Vec<u16>>::from_fn(w, h, |x, y| {
        let p = rgb.get_pixel(x, y);
        image::Rgb([p[0] as u16 * 257, p[1] as u16 * 257, p[2] as u16 * 257])
    });
    let p = dir.path().join("rgb16.png");
    rgb16.save(&p).unwrap();
    assert_eq!(run_ok(&p), expected, "16-bit PNG");

    let p = dir.path().join("rgba.png");
    image::RgbaImage::from_fn(w, h, |x, y| {
        let q = rgb.get_pixel(x, y);
        image::Rgba([q[0], q[1], q[2], (x * 9) as u8])
    })
    .save(&p)
    .unwrap();
    assert_eq!(run_ok(&p), expected, "RGBA PNG: alpha dropped, not blended");

    let p = dir.path().join("grey.png");
    grey_values.save(&p).unwrap();
    assert_eq!(run_ok(&p), expected_grey, "grey PNG");

    let p = dir.path().join("grey_alpha.png");
    image::GrayAlphaImage::from_fn(w, h, |x, y| image::LumaA([grey_values.get_pixel(x, y)[0], 200])).save(&p).unwrap();
    assert_eq!(run_ok(&p), expected_grey, "grey+alpha PNG");

    let p = dir.path().join("rgb.bmp");
    rgb.save(&p).unwrap();
    assert_eq!(run_ok(&p), expected, "BMP");

    // Palette PNG: 256 entries of the grey ramp, indices = grey values.
    let p = dir.path().join("palette.png");
    {
        let file = std::io::BufWriter::new(std::fs::File::create(&p).unwrap());
        let mut enc = png::Encoder::new(file, w, h);
        enc.set_color(png::ColorType::Indexed);
        enc.set_depth(png::BitDepth::Eight);
        enc.set_palette((0..=255u8).flat_map(|v| [v, v, v]).collect::<Vec<u8>>());
        let mut writer = enc.write_header().unwrap();
        writer.write_image_data(grey_values.as_raw()).unwrap();
    }
    assert_eq!(run_ok(&p), expected_grey, "palette PNG");

    // JPEG is lossy: it must decode and run; its bytes follow the decoded image, not `rgb`.
    let p = dir.path().join("rgb.jpg");
    {
        let file = std::io::BufWriter::new(std::fs::File::create(&p).unwrap());
        image::codecs::jpeg::JpegEncoder::new_with_quality(file, 95)
            .write_image(rgb.as_raw(), w, h, image::ExtendedColorType::Rgb8)
            .unwrap();
    }
    let decoded = image::open(&p).unwrap().into_rgb8();
    let expected_jpeg = cuda_sobel::cpu::scalar::sobel(&decoded, cuda_sobel::sobel::Filter::default()).into_raw();
    assert_eq!(run_ok(&p), expected_jpeg, "JPEG");
}
