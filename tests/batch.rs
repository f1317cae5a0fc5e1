//! Batch mode: a folder with broken files finishes, lists each failure with its reason (exit 2), and
//! writes every good image — byte-identical to cpu-scalar (`--check`) — whatever engine ran it.

mod common;

use common::bin;

#[test]
fn a_folder_with_broken_files_finishes_and_lists_them() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    std::fs::create_dir(&input).unwrap();
    for name in ["a.png", "b.png"] {
        std::fs::copy("imgs_in/512x512.png", input.join(name)).unwrap();
    }
    std::fs::copy("imgs_in/1024x512.png", input.join("c.png")).unwrap();
    std::fs::write(input.join("notes.txt"), "not an image").unwrap();
    let png = std::fs::read("imgs_in/512x512.png").unwrap();
    std::fs::write(input.join("cut.png"), &png[..png.len() / 2]).unwrap();
    std::fs::write(input.join(".hidden.png"), "ignored").unwrap();

    let out = dir.path().join("out");
    let assert =
        bin().arg("batch").arg(&input).arg("--out").arg(&out).args(["--check", "--slots", "2"]).assert().code(2);
    let stdout = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
    assert!(stdout.contains("batch: 3 of 4 images"), "{stdout}");
    assert!(stdout.contains("failed (1):"), "{stdout}");
    assert!(stdout.contains("cut.png: not a decodable image"), "{stdout}");
    // A text file in a folder is not an image: skipped and counted, not a failure.
    assert!(stdout.contains("skipped 1 file(s) that are not images") && stdout.contains("notes.txt"), "{stdout}");
    assert!(stdout.contains("skipped 1 hidden file(s)"), "{stdout}");
    for name in ["a_sobel.png", "b_sobel.png", "c_sobel.png"] {
        assert!(image::open(out.join(name)).is_ok(), "{name} written and decodable");
    }
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 3, "nothing else written (no temporary files left)");
}

/// Every compression level, on either encoder, writes the golden pixels; on the CPU's encoder `fast` is no smaller
/// than `best`. (The GPU's encoder, where it runs, writes one stream whatever the level but `best`, which is always
/// the CPU's: on the tiled scene it comes out smaller than the CPU's `best`.)
#[test]
fn baseline_and_compression_levels_write_the_same_pixels() {
    let dir = tempfile::tempdir().unwrap();
    for encoder in ["auto", "cpu"] {
        let mut sizes = Vec::new();
        for level in ["fast", "default", "best"] {
            let out = dir.path().join(format!("out-{encoder}-{level}"));
            bin()
                .args(["batch", "imgs_in/512x512.png", "--png-compression", level, "--png-encoder", encoder, "--out"])
                .arg(&out)
                .assert()
                .success();
            let path = out.join("512x512_sobel.png");
            sizes.push(std::fs::metadata(&path).unwrap().len());
            assert_eq!(
                image::open(&path).unwrap().into_luma8().into_raw(),
                image::open("tests/data/512x512_sobel.png").unwrap().into_luma8().into_raw(),
                "{encoder} {level}: same pixels as the golden output"
            );
        }
        if encoder == "cpu" {
            assert!(sizes[0] >= sizes[2], "fast is not smaller than best: {sizes:?}");
        }
    }
    let out = dir.path().join("baseline");
    bin().args(["batch", "imgs_in/512x512.png", "--baseline", "--out"]).arg(&out).assert().success();
}

#[test]
fn batch_honours_the_operator_and_the_report_arithmetic() {
    // On the GPU machine this runs gpu-strip in the Scharr / report builds; elsewhere cpu-rayon. Either
    // way `--check` holds every image to cpu-scalar, and the files equal the golden outputs.
    let dir = tempfile::tempdir().unwrap();
    for (args, golden) in [
        (["--operator", "scharr"], "tests/data/512x512_scharr.png"),
        (["--compat", "report"], "tests/data/512x512_report.png"),
    ] {
        let out = dir.path().join(args[1]);
        bin().args(["batch", "imgs_in/512x512.png", "--check", "--out"]).arg(&out).args(args).assert().success();
        assert_eq!(
            image::open(out.join("512x512_sobel.png")).unwrap().into_luma8().into_raw(),
            image::open(golden).unwrap().into_luma8().into_raw(),
            "{args:?}"
        );
    }
}

#[test]
fn every_kind_of_png_comes_out_as_cpu_scalar_computes_it() {
    // On the GPU machine, 8-bit RGB and RGBA PNGs are only inflated on the CPU, and their filters undone on
    // the GPU (cuda/unfilter.cu); other files are decoded whole. `--check` holds each to cpu-scalar of the
    // whole decode, and so does this test, reading the files back. The JPEG goes through the CPU decoder here
    // (`--jpeg-decoder cpu`), whose RGB `decode_rgb` reproduces; nvJPEG's is tested in
    // `jpegs_are_exact_for_the_rgb_their_decoder_produced`.
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    std::fs::create_dir(&input).unwrap();
    let rgb = cuda_sobel::generate::scene(301, 97);
    let save = |name: &str, color: png::ColorType, data: Vec<u8>, filter: png::Filter| {
        common::write_png_filtered(&input.join(name), rgb.width(), rgb.height(), color, &data, filter);
    };
    let rgba: Vec<u8> = rgb.pixels().flat_map(|p| [p[0], p[1], p[2], p[1] ^ 0x55]).collect();
    save("rgb_paeth.png", png::ColorType::Rgb, rgb.as_raw().clone(), png::Filter::Paeth);
    save("rgb_adaptive.png", png::ColorType::Rgb, rgb.as_raw().clone(), png::Filter::Adaptive);
    save("rgba_avg.png", png::ColorType::Rgba, rgba, png::Filter::Avg);
    let grey: Vec<u8> = rgb.pixels().map(|p| p[1]).collect();
    save("grey_sub.png", png::ColorType::Grayscale, grey, png::Filter::Sub);
    rgb.save(input.join("photo.jpg")).unwrap();

    let out = dir.path().join("out");
    let assert = bin()
        .arg("batch")
        .arg(&input)
        .arg("--out")
        .arg(&out)
        .args(["--check", "--slots", "2", "--jpeg-decoder", "cpu"])
        .assert();
    let stdout = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
    assert.success();
    assert!(stdout.contains("batch: 5 of 5 images"), "{stdout}");
    for entry in std::fs::read_dir(&input).unwrap() {
        let path = entry.unwrap().path();
        let expected = cuda_sobel::cpu::scalar::sobel(
            &cuda_sobel::image_io::decode_rgb(&path).unwrap(),
            cuda_sobel::sobel::Filter::default(),
        );
        let written = out.join(format!("{}_sobel.png", path.file_stem().unwrap().to_string_lossy()));
        assert!(image::open(&written).unwrap().into_luma8() == expected, "{}", written.display());
    }
}

/// A real folder: files that are not images are skipped by their content (a PNG named `.dat` is taken, a text
/// named `.jpg` fails), sub-folders are skipped and named unless `--recursive`, which mirrors them into the
/// output folder; a second run over its own outputs takes none of them, in every format that carries the
/// marker.
#[test]
fn real_folders_skip_what_is_not_an_image_and_recurse_on_request() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("photos");
    std::fs::create_dir_all(input.join("2024/summer")).unwrap();
    std::fs::copy("imgs_in/512x512.png", input.join("a.png")).unwrap();
    std::fs::copy("imgs_in/512x512.png", input.join("b.dat")).unwrap(); // a PNG by its content
    std::fs::copy("imgs_in/1024x512.png", input.join("2024/c.png")).unwrap();
    std::fs::copy("imgs_in/1024x512.png", input.join("2024/summer/d.png")).unwrap();
    std::fs::write(input.join("README.md"), "# my photos\n").unwrap();
    std::fs::write(input.join("2024/Thumbs.db"), [0u8, 1, 2, 3]).unwrap();
    std::fs::write(input.join("broken.jpg"), "not a JPEG").unwrap();

    let flat = dir.path().join("flat");
    let run = bin().arg("batch").arg(&input).arg("--out").arg(&flat).output().unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert_eq!(run.status.code(), Some(2), "broken.jpg fails: {stdout}");
    assert!(stdout.contains("batch: 2 of 3 images"), "{stdout}");
    assert!(stdout.contains("skipped 1 file(s) that are not images") && stdout.contains("README.md"), "{stdout}");
    assert!(stdout.contains("skipped 1 sub-folder(s) (--recursive takes them") && stdout.contains("2024"), "{stdout}");
    assert!(stdout.contains("broken.jpg: not a decodable image"), "{stdout}");
    assert!(flat.join("a_sobel.png").is_file() && flat.join("b_sobel.png").is_file());

    for format in ["png", "jpg", "tif", "webp", "pgm"] {
        let tree = dir.path().join(format!("tree-{format}"));
        let run =
            bin().arg("batch").arg(&input).arg("--out").arg(&tree).args(["-r", "--format", format]).output().unwrap();
        let stdout = String::from_utf8_lossy(&run.stdout);
        assert!(stdout.contains("batch: 4 of 5 images"), "{stdout}");
        assert!(stdout.contains("skipped 2 file(s) that are not images") && stdout.contains("Thumbs.db"), "{stdout}");
        for name in ["a_sobel", "b_sobel", "2024/c_sobel", "2024/summer/d_sobel"] {
            let path = tree.join(format!("{name}.{format}"));
            let edges = image::open(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())).to_luma8();
            let reference = image::open(flat.join("a_sobel.png")).unwrap().to_luma8();
            if name == "b_sobel" && format != "jpg" {
                assert_eq!(edges, reference, "{format}: lossless, the same edges as PNG");
            }
        }
        // The outputs carry the marker: a batch over the tree takes none of them.
        let again =
            bin().arg("batch").arg(&tree).arg("--out").arg(dir.path().join("again")).arg("-r").output().unwrap();
        let stdout = String::from_utf8_lossy(&again.stdout);
        assert!(
            stdout.contains("batch: 0 of 0 images") && stdout.contains("skipped 4 image(s) this tool wrote"),
            "{format}: {stdout}"
        );
    }
}

/// JPEGs through whichever decoder the machine has — nvJPEG on the GPU machine (required there), the CPU
/// decoder elsewhere — each exact against cpu-scalar on the RGB that decoder produced (`--check`); a grey
/// JPEG, an odd size and a progressive one among them; a cut file fails with its one line and the batch goes
/// on; `--jpeg-decoder cpu` is always the CPU's, and `--jpeg-decoder gpu` without nvJPEG refuses to start.
#[test]
fn jpegs_are_exact_for_the_rgb_their_decoder_produced() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    std::fs::create_dir(&input).unwrap();
    let rgb = image::open("imgs_in/512x512.png").unwrap().into_rgb8();
    let encode = |img: &image::DynamicImage, name: &str| {
        let mut bytes = Vec::new();
        image::codecs::jpeg::JpegEncoder::new_with_quality(&mut bytes, 90).encode_image(img).unwrap();
        std::fs::write(input.join(name), &bytes).unwrap();
        bytes
    };
    encode(&image::DynamicImage::ImageRgb8(rgb.clone()), "photo.jpg");
    encode(&image::DynamicImage::ImageRgb8(image::imageops::crop_imm(&rgb, 3, 5, 301, 77).to_image()), "odd.jpg");
    encode(&image::DynamicImage::ImageLuma8(image::DynamicImage::ImageRgb8(rgb.clone()).into_luma8()), "grey.jpg");
    let whole = encode(&image::DynamicImage::ImageRgb8(rgb), "whole.jpg");
    std::fs::write(input.join("cut.jpg"), &whole[..whole.len() / 2]).unwrap();

    let gpu_required = std::env::var_os("CUDA_SOBEL_REQUIRE_GPU").is_some();
    let run = |decoder: &str| {
        let out = dir.path().join(format!("out-{decoder}"));
        let a =
            bin().arg("batch").arg(&input).arg("--out").arg(&out).args(["--check", "--jpeg-decoder", decoder]).assert();
        (a.get_output().status.code(), String::from_utf8_lossy(&a.get_output().stdout).into_owned(), out)
    };
    for decoder in ["auto", "cpu"] {
        let (code, stdout, out) = run(decoder);
        assert_eq!(code, Some(2), "{decoder}: the cut file fails the batch: {stdout}");
        assert!(stdout.contains("batch: 4 of 5 images"), "{decoder}: {stdout}");
        assert!(stdout.contains("cut.jpg: not a decodable image: truncated JPEG"), "{decoder}: {stdout}");
        let on_gpu = stdout.contains("JPEGs decoded by nvJPEG");
        assert_eq!(on_gpu, decoder == "auto" && gpu_required, "{decoder}: which decoder ran: {stdout}");
        assert!(on_gpu || stdout.contains("JPEGs decoded on the CPU"), "{decoder}: the line says which: {stdout}");
        if on_gpu {
            // The four good files on the GPU; on a GPU with a JPEG engine, the baseline ones on the engine (the
            // cut file may fail the engine's call for the others: they are then decoded alone, as counted).
            let line = stdout.lines().find(|l| l.contains("JPEGs decoded by nvJPEG on the GPU")).expect(&stdout);
            assert!(line.starts_with("4 JPEGs decoded by nvJPEG on the GPU, "), "{line}");
            // The engine's width: "on the GPU's JPEG engine (7 at once), batched" on an H100.
            let width = stdout
                .split("on the GPU's JPEG engine (")
                .nth(1)
                .and_then(|rest| rest.split(" at once), batched").next()?.parse::<usize>().ok());
            assert!(width.is_some() || stdout.contains("default backend: "), "which backend, and why: {stdout}");
            // The engine's calls need JPEGs waiting: more slots by default where it decodes (two calls' worth).
            let slots = width.map_or(cuda_sobel::batch::JPEG_BACKEND_SLOTS, cuda_sobel::batch::jpeg_engine_slots);
            assert!(stdout.contains(&format!("{slots} slots each")), "{slots}: {stdout}");
            println!("{decoder}: {line}");
        }
        for name in ["photo", "odd", "grey", "whole"] {
            assert!(image::open(out.join(format!("{name}_sobel.png"))).is_ok(), "{decoder}: {name} written");
        }
    }
    if gpu_required {
        let (code, stdout, _) = run("gpu");
        assert_eq!(code, Some(2), "only the cut file fails: {stdout}");
    } else {
        let out = dir.path().join("out-gpu");
        let a = bin().arg("batch").arg(&input).arg("--out").arg(&out).args(["--jpeg-decoder", "gpu"]).assert().code(2);
        let stderr = String::from_utf8_lossy(&a.get_output().stderr).into_owned();
        assert!(stderr.starts_with("cuda_sobel: --jpeg-decoder gpu: ") && stderr.lines().count() == 1, "{stderr}");
        assert!(!out.exists(), "refused before any work");
    }
}

/// nvJPEG (and the GPU's JPEG engine: 0.9 s of start-up on the H100) is loaded only for inputs among which is a
/// JPEG, known by its first bytes, not its name; a folder of PNGs says so and keeps the default slots.
#[test]
fn nvjpeg_is_loaded_only_where_an_input_is_a_jpeg() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    std::fs::create_dir(&input).unwrap();
    let scene = cuda_sobel::generate::scene(64, 48);
    scene.save(input.join("a.png")).unwrap();
    scene.save(input.join("b.png")).unwrap();
    let gpu_required = std::env::var_os("CUDA_SOBEL_REQUIRE_GPU").is_some();
    let run = |out: &str| {
        let a = bin().arg("batch").arg(&input).arg("--out").arg(dir.path().join(out)).assert().success();
        String::from_utf8_lossy(&a.get_output().stdout).into_owned()
    };
    let stdout = run("pngs");
    assert!(stdout.contains("batch: 2 of 2 images"), "{stdout}");
    assert!(stdout.contains("no JPEG among the inputs (nvJPEG not loaded)"), "{stdout}");
    if gpu_required {
        assert!(stdout.contains(&format!("{} slots each", cuda_sobel::batch::DEFAULT_SLOTS)), "{stdout}");
        // Beside the slots the workers are the cores and half as many more as the slots (each asleep while its
        // slot's GPU work runs), and a thread a slot takes the PNGs they inflated; the trace counts them all.
        let a = bin()
            .env("CUDA_SOBEL_TRACE", "1")
            .env_remove("RAYON_NUM_THREADS")
            .arg("batch")
            .arg(&input)
            .args(["--devices", "0"]) // one device's slots, on a host of any number of GPUs
            .arg("--out")
            .arg(dir.path().join("traced"))
            .assert()
            .success();
        let stderr = String::from_utf8_lossy(&a.get_output().stderr).into_owned();
        let cores = std::thread::available_parallelism().unwrap().get();
        let slots = cuda_sobel::batch::DEFAULT_SLOTS;
        let threads = cores + slots.div_ceil(2) + slots;
        assert!(stderr.contains(&format!("; {threads} threads")), "{threads} threads: {stderr}");
    }
    // A JPEG named .png: its bytes make the batch ready for JPEGs.
    let mut jpeg = Vec::new();
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut jpeg, 90).encode_image(&scene).unwrap();
    std::fs::write(input.join("c.png"), &jpeg).unwrap();
    let stdout = run("mixed");
    assert!(stdout.contains("batch: 3 of 3 images"), "{stdout}");
    assert!(!stdout.contains("nvJPEG not loaded"), "{stdout}");
    assert!(stdout.contains("JPEGs decoded by nvJPEG") || stdout.contains("JPEGs decoded on the CPU"), "{stdout}");
    assert_eq!(stdout.contains("JPEGs decoded by nvJPEG"), gpu_required, "{stdout}");
}

/// `--devices` shows the driver those devices alone (`cuInit` starts every visible one), and the summary still
/// names each by the ordinal given: one that is not there is skipped by its name, the others compute. A
/// `CUDA_VISIBLE_DEVICES` of the user's stands.
#[test]
fn devices_are_shown_to_the_driver_alone_and_named_as_given() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    std::fs::create_dir(&input).unwrap();
    cuda_sobel::generate::scene(64, 48).save(input.join("a.png")).unwrap();
    let run = |devices: &str, visible: Option<&str>, out: &str| {
        let mut cmd = bin();
        match visible {
            Some(v) => cmd.env("CUDA_VISIBLE_DEVICES", v),
            None => cmd.env_remove("CUDA_VISIBLE_DEVICES"),
        };
        let a = cmd.env("CUDA_SOBEL_TRACE", "1").arg("batch").arg(&input).args(["--devices", devices]);
        let a = a.arg("--out").arg(dir.path().join(out)).assert().success();
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        (text(&a.get_output().stdout), text(&a.get_output().stderr))
    };
    let (stdout, stderr) = run("9,0", None, "narrowed");
    assert!(stderr.contains("the driver shown CUDA_VISIBLE_DEVICES=0,9"), "{stderr}");
    assert!(stdout.contains("batch: 1 of 1 images"), "{stdout}");
    assert!(stdout.contains("device 9: "), "device 9 skipped by its name: {stdout}");
    if std::env::var_os("CUDA_SOBEL_REQUIRE_GPU").is_some() {
        assert!(stdout.contains("(1 device(s))") && !stdout.contains("device 0: "), "{stdout}");
    }
    let visible = std::env::var("CUDA_VISIBLE_DEVICES").unwrap_or_else(|_| "0".into());
    let (_, stderr) = run("0", Some(&visible), "as set");
    assert!(!stderr.contains("the driver shown"), "the user's CUDA_VISIBLE_DEVICES stands: {stderr}");
    assert_eq!(
        std::fs::read(dir.path().join("narrowed/a_sobel.png")).unwrap(),
        std::fs::read(dir.path().join("as set/a_sobel.png")).unwrap()
    );
}

/// A noisy photo-like `width × height` image (a smooth gradient and noise from a fixed seed): edges with no
/// repeated strings, where `cuda/deflate.cu`'s codes do all the work.
fn noisy(width: u32, height: u32, seed: u32) -> image::RgbImage {
    let mut state = seed.wrapping_mul(2_654_435_761) | 1;
    image::RgbImage::from_fn(width, height, |x, y| {
        let mut noise = || {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            (state % 24) as i32 - 12
        };
        let base = ((x * 255) / width.max(1) + (y * 128) / height.max(1)) as i32 / 2;
        image::Rgb([0, 40, 80].map(|o| (base + o + noise()).clamp(0, 255) as u8))
    })
}

/// PNG outputs whose data the GPU deflated (`--png-encoder auto`, the default, on the GPU machine) decode —
/// with the png crate here, and `--check` reads each back too — to exactly cpu-scalar's edges of the decoded
/// input, at sizes from 1×1 to rows longer than a segment, from PNG and JPEG inputs; each file is within 10 % of
/// the CPU encoder's size (`--png-encoder cpu`), the tiled test scene (long repeats, found by deflate.cu's string
/// matching) included. Without a GPU, every output is the CPU's and the line counting GPU-deflated PNGs is absent.
#[test]
fn pngs_deflated_on_the_gpu_decode_to_the_exact_edges() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    std::fs::create_dir(&input).unwrap();
    let sizes = [(1, 1), (3, 2), (17, 5), (301, 77), (1001, 777), (70_000, 3), (640, 480)];
    for (i, &(w, h)) in sizes.iter().enumerate() {
        noisy(w, h, i as u32).save(input.join(format!("noisy{i}.png"))).unwrap();
    }
    let mut jpeg = Vec::new();
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut jpeg, 90).encode_image(&noisy(1000, 750, 99)).unwrap();
    std::fs::write(input.join("photo.jpg"), &jpeg).unwrap();
    std::fs::copy("imgs_in/512x512.png", input.join("scene.png")).unwrap();

    let run = |encoder: &str, check: bool| {
        let out = dir.path().join(format!("out-{encoder}-{check}"));
        let mut cmd = bin();
        cmd.arg("batch").arg(&input).arg("--out").arg(&out).args(["--png-encoder", encoder]);
        if check {
            cmd.arg("--check");
        }
        let a = cmd.assert().success();
        (String::from_utf8_lossy(&a.get_output().stdout).into_owned(), out)
    };
    let (stdout, gpu) = run("auto", true);
    let (_, gpu_unchecked) = run("auto", false);
    let (cpu_stdout, cpu) = run("cpu", false);
    assert!(!cpu_stdout.contains("deflated on the GPU"), "{cpu_stdout}");
    let gpu_required = std::env::var_os("CUDA_SOBEL_REQUIRE_GPU").is_some();
    if gpu_required {
        // At least the four large noisy ones, the photo and the scene; the tiniest may go to the CPU (a stream's
        // header alone is larger than their pixels).
        let count: usize = stdout
            .lines()
            .find_map(|l| l.strip_suffix(" PNGs deflated on the GPU (--png-encoder auto), the others on the CPU"))
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("a line counts them: {stdout}"));
        assert!((6..=sizes.len() + 2).contains(&count), "{stdout}");
    } else {
        assert!(!stdout.contains("deflated on the GPU"), "{stdout}");
    }
    let names: Vec<String> =
        (0..sizes.len()).map(|i| format!("noisy{i}")).chain(["photo".into(), "scene".into()]).collect();
    for name in &names {
        let file = format!("{name}_sobel.png");
        let edges = image::open(gpu.join(&file)).unwrap().into_luma8();
        let by_cpu = image::open(cpu.join(&file)).unwrap().into_luma8();
        // The JPEG's RGB depends on the decoder (nvJPEG's on the GPU machine): exact there by --check alone.
        if name != "photo" {
            let source = input.join(if name == "scene" { "scene.png".to_string() } else { format!("{name}.png") });
            let rgb = image::open(source).unwrap().into_rgb8();
            let expected = cuda_sobel::cpu::scalar::sobel(&rgb, cuda_sobel::sobel::Filter::default());
            assert_eq!(edges.as_raw(), expected.as_raw(), "{name}: the GPU-deflated PNG decodes to the edges");
            assert_eq!(by_cpu.as_raw(), expected.as_raw(), "{name}: the CPU's PNG too");
        }
        assert_eq!(std::fs::read(gpu.join(&file)).unwrap(), std::fs::read(gpu_unchecked.join(&file)).unwrap());
        let (g, c) =
            (std::fs::metadata(gpu.join(&file)).unwrap().len(), std::fs::metadata(cpu.join(&file)).unwrap().len());
        assert!(g as f64 <= 1.10 * c as f64, "{name}: {g} bytes against the CPU encoder's {c}");
    }
}

/// `cuda/deflate.cu` run on the CPU (`scripts/emulate/deflate_check.py`: g++, a block's threads as CPU threads,
/// AddressSanitizer): its streams inflate with zlib and decode with Pillow to exactly the edges — 1×1, a row, a
/// column, rows longer than a segment, zeros, noise, the tiled scene — and the scene's stays within 10 % of the CPU
/// encoder's. The GPU encoder checked where no GPU is at hand, CI included. Skipped, saying why, without g++ or a
/// Python with numpy and Pillow.
#[test]
fn the_deflate_kernel_file_run_on_the_cpu_makes_streams_that_decode_to_the_edges() {
    common::emulation_check(
        "the_deflate_kernel_file_run_on_the_cpu_makes_streams_that_decode_to_the_edges",
        &[std::ffi::OsStr::new("scripts/emulate/deflate_check.py")],
    );
}

/// The single-image command deflates its PNG on the GPU too (a note says so, on the GPU machine, where it is
/// required): the file decodes to cpu-scalar's edges and is no more than 10 % larger than the CPU encoder's
/// (`--png-compression best` always encodes on the CPU).
#[test]
fn the_single_image_command_deflates_its_png_on_the_gpu_too() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("noisy.png");
    let rgb = noisy(1200, 900, 7);
    rgb.save(&input).unwrap();
    let run = |variant: &str, compression: &str, name: &str| {
        let out = dir.path().join(name);
        let a = bin()
            .arg(&input)
            .args(["--variant", variant, "--png-compression", compression, "--out"])
            .arg(&out)
            .assert()
            .success();
        // Notes go to standard error, the table to standard output: both, as a user sees them.
        let o = a.get_output();
        (format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr)), out)
    };
    let (stdout, gpu) = run("gpu-strip", "default", "gpu.png");
    let (best_stdout, best) = run("gpu-strip", "best", "best.png");
    assert!(!best_stdout.contains("deflated on the GPU"), "{best_stdout}");
    let on_gpu = stdout.contains("PNG data deflated on the GPU");
    assert_eq!(on_gpu, std::env::var_os("CUDA_SOBEL_REQUIRE_GPU").is_some(), "{stdout}");
    let expected = cuda_sobel::cpu::scalar::sobel(&rgb, cuda_sobel::sobel::Filter::default());
    for out in [&gpu, &best] {
        assert_eq!(image::open(out).unwrap().into_luma8().as_raw(), expected.as_raw(), "{}", out.display());
    }
    let (_, cpu) = run("cpu-rayon", "default", "cpu.png");
    let size = |p: &std::path::Path| std::fs::metadata(p).unwrap().len() as f64;
    assert!(size(&gpu) <= 1.10 * size(&cpu), "{} against {}", size(&gpu), size(&cpu));
}

/// The image command's JPEG decoders: by default the CPU's (it runs while the GPU opens; for one image nvJPEG's
/// start-up costs more than it saves), exact for the image crate's RGB; `--jpeg-decoder gpu` asks for nvJPEG, the
/// decoder batch uses — on the GPU machine (required there) it decodes, a line says so, and the edges are batch's
/// bytes for the same JPEG; every variant reads that RGB (the teaching run compares them all, exit 0); elsewhere
/// it is one line naming the file, exit 2, nothing written. A cut file is one line naming it, exit 2, nothing
/// written, whichever decoder was to read it.
#[test]
fn the_image_command_decodes_jpegs_on_the_cpu_or_as_batch_does() {
    let dir = tempfile::tempdir().unwrap();
    let gpu_required = std::env::var_os("CUDA_SOBEL_REQUIRE_GPU").is_some();
    let mut bytes = Vec::new();
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut bytes, 90).encode_image(&noisy(333, 211, 5)).unwrap();
    let photo = dir.path().join("photo.jpg");
    std::fs::write(&photo, &bytes).unwrap();
    let cut = dir.path().join("cut.jpg");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let run = |file: &std::path::Path, args: &[&str], out: &str| {
        let out = dir.path().join(out);
        let a = bin().arg(file).args(args).arg("--out").arg(&out).assert();
        let o = a.get_output();
        (o.status.code(), String::from_utf8_lossy(&o.stderr).into_owned(), out)
    };
    let edges = |p: &std::path::Path| image::open(p).unwrap().into_luma8().into_raw();
    let rgb = image::open(&photo).unwrap().into_rgb8();
    let cpu_edges = cuda_sobel::cpu::scalar::sobel(&rgb, Default::default()).into_raw();

    // The default and cpu: the image crate's RGB, cpu-scalar's edges, no line about nvJPEG.
    for decoder in ["auto", "cpu"] {
        let (code, stderr, out) = run(&photo, &["--variant", "gpu-strip", "--jpeg-decoder", decoder], "cpu.png");
        assert_eq!(code, Some(0), "{decoder}: {stderr}");
        assert!(!stderr.contains("nvJPEG"), "{decoder}: {stderr}");
        assert_eq!(edges(&out), cpu_edges, "{decoder}");
    }

    // nvJPEG asked for: batch's decoder, so batch's bytes; gpu-strip checked against cpu-scalar on its RGB.
    let batch_out = dir.path().join("batch");
    bin().arg("batch").arg(&photo).arg("--out").arg(&batch_out).assert().success();
    let batch_edges = edges(&batch_out.join("photo_sobel.png"));
    let (code, stderr, gpu) = run(&photo, &["--variant", "gpu-strip", "--check", "--jpeg-decoder", "gpu"], "gpu.png");
    if gpu_required {
        assert_eq!(code, Some(0), "{stderr}");
        assert!(stderr.contains("photo.jpg: decoded by nvJPEG on the GPU"), "{stderr}");
        assert_eq!(edges(&gpu), batch_edges, "the same edges as batch's");
        // Every variant, the CPU's included, on the RGB nvJPEG produced: all identical to cpu-scalar's.
        let (code, stderr, _) = run(&photo, &["--reps", "1", "--quiet", "--jpeg-decoder", "gpu"], "all.png");
        assert_eq!(code, Some(0), "{stderr}");
    } else {
        assert_eq!(batch_edges, cpu_edges, "batch decodes on the CPU here too");
        assert_eq!(code, Some(2), "{stderr}");
        assert!(stderr.starts_with("cuda_sobel: ") && stderr.lines().count() == 1, "{stderr}");
        assert!(stderr.contains("photo.jpg: --jpeg-decoder gpu: "), "{stderr}");
        assert!(!gpu.exists(), "nothing written");
    }

    // A cut file: one line naming it, exit 2, nothing written, whichever decoder was to read it.
    for decoder in ["auto", "gpu", "cpu"] {
        let (code, stderr, out) = run(&cut, &["--variant", "gpu-strip", "--jpeg-decoder", decoder], "cut.png");
        assert_eq!(code, Some(2), "{decoder}: {stderr}");
        assert!(stderr.starts_with("cuda_sobel: ") && stderr.lines().count() == 1, "{decoder}: {stderr}");
        assert!(stderr.contains("cut.jpg: not a decodable image: truncated JPEG"), "{decoder}: {stderr}");
        assert!(!out.exists(), "{decoder}: nothing written");
    }
}

/// `CUDA_SOBEL_TRACE=1`: batch ends with where its workers' time went. On the GPU path (PNGs unfiltered on the GPU)
/// every stage took some time; elsewhere the line is there with the CPU's stages uncounted.
#[test]
fn the_trace_accounts_for_the_workers_time() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let assert = bin()
        .env("CUDA_SOBEL_TRACE", "1")
        .args(["batch", "imgs_in/512x512.png", "imgs_in/1024x512.png", "--out"])
        .arg(&out)
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&assert.get_output().stdout).into_owned();
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    let line = stderr.lines().find(|l| l.contains("batch: 2 images in")).unwrap_or_else(|| panic!("{stderr}"));
    // Each stage's ms an image (in brackets after its thread-seconds, which print to 0.1 s: two small images on a
    // 16-core GPU machine read and inflated in under 0.05 s, and the test read 0.0).
    let ms_an_image = |stage: &str| -> f64 {
        let rest = &line[line.find(stage).unwrap_or_else(|| panic!("{stage} in {line}")) + stage.len()..];
        let bracketed = rest.split('(').nth(1).unwrap_or_else(|| panic!("({stage}'s ms an image) in {line}"));
        bracketed.split([')', ':']).next().unwrap().trim().parse().unwrap_or_else(|e| panic!("{e}: {line}"))
    };
    let stages = [ms_an_image("read + inflate"), ms_an_image("GPU"), ms_an_image("encode + write")];
    assert!(line.contains("waiting for a slot") && line.contains("threads"), "{line}");
    if stdout.contains("gpu-strip") {
        assert!(stages.iter().all(|&s| s > 0.0), "every stage timed on the GPU path: {line}");
    }
}

/// `--png-inflate gpu`: PNGs inflated by nvCOMP in waves give byte for byte the outputs of `--png-inflate cpu`
/// (each checked against cpu-scalar by `--check`) — sizes from 1×1 up, RGBA, image data in many IDAT chunks, the
/// test scene — and the files nvCOMP or the wave cannot take fail or pass exactly as on the CPU: a row naming
/// filter type 7, image data that ends early, longer image data than the rows, a cut file, a grey PNG. Without
/// nvCOMP (no GPU, or the library not on the loader path) the option refuses to start with one line; with
/// `CUDA_SOBEL_REQUIRE_NVCOMP` set (the GPU machine, scripts/gpu-check.sh) that fails the test.
#[test]
fn pngs_inflated_by_nvcomp_give_the_outputs_of_the_cpu_inflate() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    std::fs::create_dir(&input).unwrap();
    for (i, &(w, h)) in [(1, 1), (3, 2), (17, 5), (301, 77), (1001, 777), (640, 480)].iter().enumerate() {
        noisy(w, h, i as u32).save(input.join(format!("noisy{i}.png"))).unwrap();
    }
    image::DynamicImage::ImageRgb8(noisy(200, 100, 9)).into_rgba8().save(input.join("rgba.png")).unwrap();
    image::DynamicImage::ImageRgb8(noisy(200, 100, 10)).into_luma8().save(input.join("grey.png")).unwrap();
    let rgb = noisy(123, 45, 11);
    common::write_png_filtered(&input.join("sub.png"), 123, 45, png::ColorType::Rgb, rgb.as_raw(), png::Filter::Sub);
    for i in 0..3 {
        std::fs::copy("imgs_in/512x512.png", input.join(format!("scene{i}.png"))).unwrap();
    }
    let row = |f: u8| [[f].as_slice(), &[7; 12]].concat();
    common::forged_png(&input.join("filter7.png"), 4, 2, &[row(0), row(7)].concat());
    common::forged_png(&input.join("short.png"), 4, 2, &row(2));
    common::forged_png(&input.join("long.png"), 4, 2, &[row(1), row(4), row(0)].concat());
    let scene = std::fs::read("imgs_in/512x512.png").unwrap();
    std::fs::write(input.join("cut.png"), &scene[..scene.len() / 2]).unwrap();

    let run = |inflate: &str, extra: &[&str]| {
        let out = dir.path().join(format!("out-{inflate}-{}", extra.len()));
        // (The waves alone, no PNG left to the workers: every PNG the waves take goes to nvCOMP, so that the count below
        // is exact.)
        let a = bin()
            .env("CUDA_SOBEL_CPU_LANE", "0")
            .arg("batch")
            .arg(&input)
            .arg("--out")
            .arg(&out)
            .args(["--png-inflate", inflate])
            .args(extra)
            .assert();
        let o = a.get_output();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
            out,
        )
    };
    let (cpu_code, cpu_stdout, _, cpu) = run("cpu", &["--check"]);
    assert_eq!(cpu_code, Some(2), "three files fail: {cpu_stdout}");
    let (code, stdout, stderr, gpu) = run("gpu", &["--check"]);
    if stderr.contains("--png-inflate gpu:") {
        assert!(stdout.is_empty() && code != Some(0), "refused before any work: {stdout}");
        assert!(std::env::var_os("CUDA_SOBEL_REQUIRE_NVCOMP").is_none(), "nvCOMP required: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
        eprintln!("skipping the nvCOMP half of pngs_inflated_by_nvcomp_give_the_outputs_of_the_cpu_inflate: {stderr}");
        return;
    }
    assert_eq!(code, Some(2), "{stdout}{stderr}");
    let failed = |s: &str| -> Vec<String> {
        let mut f: Vec<String> = s.lines().skip_while(|l| !l.starts_with("failed")).skip(1).map(String::from).collect();
        f.sort();
        f
    };
    assert_eq!(failed(&stdout), failed(&cpu_stdout), "the same failures, in the same words");
    assert_eq!(failed(&stdout).len(), 3, "{stdout}");
    for name in ["filter7.png", "short.png", "cut.png"] {
        assert!(failed(&stdout).iter().any(|l| l.contains(name)), "{name}: {stdout}");
    }
    let count: usize = stdout
        .lines()
        .find_map(|l| l.strip_suffix(" PNGs inflated by nvCOMP on the GPU (--png-inflate), the others on the CPU"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("a line counts them: {stdout}"));
    // Every RGB/RGBA PNG that succeeds but long.png (more image data than rows: nvCOMP says the output is too
    // small, and the CPU inflates it, ignoring the rest as the png crate does); not grey.png.
    assert_eq!(count, 11, "{stdout}");
    let mut names: Vec<_> = std::fs::read_dir(&cpu).unwrap().map(|e| e.unwrap().file_name()).collect();
    names.sort();
    assert_eq!(names.len(), 13);
    for name in names {
        let (g, c) = (std::fs::read(gpu.join(&name)).unwrap(), std::fs::read(cpu.join(&name)).unwrap());
        assert!(g == c, "{name:?}: the same file from either inflater");
    }
    // A small memory budget: a wave holds at most half of it (here several waves of a few PNGs), and the run ends
    // with the same files.
    let (code, small_stdout, _, small) = run("gpu", &["--max-memory", "10M"]);
    assert_eq!((code, failed(&small_stdout).len()), (Some(2), 3), "{small_stdout}");
    for entry in std::fs::read_dir(&cpu).unwrap() {
        let name = entry.unwrap().file_name();
        assert!(std::fs::read(small.join(&name)).unwrap() == std::fs::read(cpu.join(&name)).unwrap(), "{name:?}");
    }
}

/// `batch --kernel SPEC` is the filter command over a folder: every file's output has the pixels `filter --variant
/// cpu-scalar` gives it (the engine's strategy on a GPU, cpu-rayon elsewhere), for smoothing and gradient kernels,
/// separable or not, on images smaller than the kernel, every border, grey and `--rgb`; its outputs are named
/// `<stem>_<kernel>` and a second run over them skips them; the edges' options are refused beside it.
#[test]
fn batch_kernel_gives_the_filter_commands_pixels() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    std::fs::create_dir(&input).unwrap();
    let mut seed = 7u32;
    for (name, w, h) in
        [("one.png", 1, 1), ("row.png", 9, 1), ("small.png", 3, 2), ("odd.bmp", 37, 23), ("b.png", 64, 40)]
    {
        let img = image::RgbImage::from_fn(w, h, |_, _| {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            image::Rgb([(seed >> 16) as u8, (seed >> 8) as u8, (seed >> 24) as u8])
        });
        img.save(input.join(name)).unwrap();
    }
    let laplacian = dir.path().join("laplacian.txt");
    std::fs::write(&laplacian, "0 1 0\n1 -4 1\n0 1 0\ndivisor 1\n").unwrap();
    let laplacian = laplacian.to_str().unwrap().to_owned();
    let cases: Vec<(&str, &str, bool)> = ["box:5", "gaussian:7", "scharr:9", "sobel:3", laplacian.as_str()]
        .into_iter()
        .flat_map(|k| ["replicate", "zero", "reflect101"].map(move |b| (k, b, false)))
        .chain([("gaussian:5", "reflect101", true), ("box:3", "zero", true)])
        .collect();
    for (n, (kernel, border, rgb)) in cases.into_iter().enumerate() {
        let out = dir.path().join(format!("out{n}"));
        let mut batch = bin();
        batch.arg("batch").arg(&input).arg("--out").arg(&out).args(["--kernel", kernel, "--border", border]);
        if rgb {
            batch.arg("--rgb");
        }
        batch.assert().success();
        let tag = match kernel.split_once(':') {
            Some((name, size)) => format!("{name}{size}"),
            None => "laplacian".into(),
        };
        for stem in ["one", "row", "small", "odd", "b"] {
            let file = std::fs::read_dir(&input)
                .unwrap()
                .map(|e| e.unwrap().path())
                .find(|p| p.file_stem().unwrap() == stem)
                .unwrap();
            let reference = dir.path().join(format!("ref{n}_{stem}.png"));
            let mut filter = bin();
            filter.arg("filter").arg(&file).args(["--kernel", kernel, "--border", border, "--variant", "cpu-scalar"]);
            filter.arg("--out").arg(&reference);
            if rgb {
                filter.arg("--rgb");
            }
            filter.assert().success();
            let got = image::open(out.join(format!("{stem}_{tag}.png"))).unwrap();
            let want = image::open(&reference).unwrap();
            assert_eq!(got.color(), want.color(), "{kernel} {border} rgb {rgb}: {stem}");
            assert!(got.as_bytes() == want.as_bytes(), "{kernel} {border} rgb {rgb}: {stem}'s pixels differ");
        }
    }
    // A second run over its own outputs takes none of them.
    let mut again = bin();
    again.arg("batch").arg(dir.path().join("out0")).arg("--out").arg(dir.path().join("again"));
    let again = again.args(["--kernel", "box:5"]).assert().success();
    let stdout = String::from_utf8_lossy(&again.get_output().stdout).into_owned();
    assert!(stdout.contains("0 of 0 images") && stdout.contains("skipped 5 image(s) this tool wrote"), "{stdout}");
    // The edges' options are not the kernel's.
    let mut refused = bin();
    refused.arg("batch").arg(&input).arg("--out").arg(dir.path().join("no")).args(["--kernel", "box:3"]);
    let refused = refused.args(["--ksize", "5"]).assert().code(2);
    let stderr = String::from_utf8_lossy(&refused.get_output().stderr).into_owned();
    assert!(stderr.contains("--kernel takes --border alone") && stderr.lines().count() == 1, "{stderr}");
    assert!(!dir.path().join("no").join("b_box3.png").exists(), "nothing written");
}
