//! Nothing a user owns is ever lost: every data-loss case found by trying the tool with hostile inputs,
//! as a test. Outputs never replace an input, a device or another output; batch never eats its own
//! outputs; interrupted runs leave no temporary files; photos come out as people see them.

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::bin;

fn copy_of(src: &str, dst: &Path) -> PathBuf {
    if let Some(parent) = dst.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::copy(src, dst).unwrap();
    dst.to_owned()
}

fn digest(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap()
}

fn pixels(path: &Path) -> Vec<u8> {
    image::open(path).unwrap().into_luma8().into_raw()
}

fn golden() -> Vec<u8> {
    pixels(Path::new("tests/data/512x512_sobel.png"))
}

fn stderr_of(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn batch_refuses_two_inputs_with_one_output_name_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let a = copy_of("imgs_in/512x512.png", &dir.path().join("a/x.png"));
    let b = copy_of("imgs_in/1024x512.png", &dir.path().join("b/x.png"));
    let out = dir.path().join("out");
    let o = bin().arg("batch").arg(&a).arg(&b).arg("--out").arg(&out).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = stderr_of(&o);
    assert!(err.contains("x_sobel.png: both") && err.contains("a/x.png") && err.contains("b/x.png"), "{err}");
    assert!(!out.exists(), "nothing made");

    // y.png and y.jpg in one folder.
    let photos = dir.path().join("photos");
    copy_of("imgs_in/512x512.png", &photos.join("y.png"));
    let img = image::open("imgs_in/512x512.png").unwrap().into_rgb8();
    img.save(photos.join("y.jpg")).unwrap();
    let o = bin().arg("batch").arg(&photos).arg("--out").arg(&out).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr_of(&o));
    assert!(stderr_of(&o).contains("y_sobel.png: both"));
    assert!(!out.exists());
}

#[test]
fn batch_into_its_own_input_folder_never_replaces_a_users_file_nor_eats_its_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let photos = dir.path().join("photos");
    copy_of("imgs_in/512x512.png", &photos.join("a.png"));
    // A user's own photo that happens to carry the output's name.
    let theirs = copy_of("imgs_in/1024x512.png", &photos.join("a_sobel.png"));
    let before = digest(&theirs);
    let o = bin().arg("batch").arg(&photos).arg("--out").arg(&photos).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr_of(&o).contains("a_sobel.png: is an input, and the output of"), "{}", stderr_of(&o));
    assert_eq!(digest(&theirs), before, "the user's photo is untouched");

    // A folder of one image, run twice into itself: the second run skips the first run's output.
    let mine = dir.path().join("mine");
    copy_of("imgs_in/512x512.png", &mine.join("a.png"));
    for run in 0..2 {
        let o = bin().arg("batch").arg(&mine).arg("--out").arg(&mine).output().unwrap();
        assert!(o.status.success(), "run {run}: {}", stderr_of(&o));
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert!(stdout.contains("1 of 1 images"), "run {run}: {stdout}");
        assert_eq!(run == 1, stdout.contains("skipped 1 image(s) this tool wrote"), "run {run}: {stdout}");
    }
    let mut names: Vec<_> = std::fs::read_dir(&mine).unwrap().map(|e| e.unwrap().file_name()).collect();
    names.sort();
    assert_eq!(names, ["a.png", "a_sobel.png"]);
    assert_eq!(pixels(&mine.join("a_sobel.png")), golden());
}

#[test]
fn a_file_given_twice_is_processed_once() {
    let dir = tempfile::tempdir().unwrap();
    let a = copy_of("imgs_in/512x512.png", &dir.path().join("in/a.png"));
    let out = dir.path().join("out");
    let o = bin().arg("batch").arg(&a).arg(dir.path().join("in")).arg("--out").arg(&out).output().unwrap();
    assert!(o.status.success(), "{}", stderr_of(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("1 of 1 images"));
}

#[test]
fn intermediate_outputs_appear_together_or_not_at_all() {
    let dir = tempfile::tempdir().unwrap();
    let scan_grey = copy_of("imgs_in/512x512.png", &dir.path().join("d/scan_grey.png"));
    let before = digest(&scan_grey);
    // The grey sibling of d/scan.png is the input.
    bin()
        .arg(&scan_grey)
        .args(["--variant", "cpu-rayon", "--intermediate", "--out"])
        .arg(dir.path().join("d/scan.png"))
        .assert()
        .code(2);
    assert_eq!(digest(&scan_grey), before);
    assert!(!dir.path().join("d/scan.png").exists());

    // The |Gx| sibling's name is a folder: found before the work, nothing written.
    std::fs::create_dir_all(dir.path().join("e/e_gx.png")).unwrap();
    bin()
        .args(["imgs_in/512x512.png", "--variant", "cpu-rayon", "--intermediate", "--out"])
        .arg(dir.path().join("e/e.png"))
        .assert()
        .code(2);
    let names: Vec<_> = std::fs::read_dir(dir.path().join("e")).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, ["e_gx.png"]);

    // And when all is well, all four appear.
    let out = dir.path().join("f/f.png");
    bin()
        .args(["imgs_in/512x512.png", "--variant", "cpu-rayon", "--intermediate", "-q", "--out"])
        .arg(&out)
        .assert()
        .success();
    for name in ["f.png", "f_grey.png", "f_gx.png", "f_gy.png"] {
        assert!(dir.path().join("f").join(name).is_file(), "{name}");
    }
}

#[cfg(unix)]
#[test]
fn devices_fifos_links_and_permissions_are_respected() {
    use std::os::unix::fs::{FileTypeExt, PermissionsExt};
    let dir = tempfile::tempdir().unwrap();

    // /dev/null is written through, never replaced (as root, a rename would replace the device node).
    bin().args(["imgs_in/512x512.png", "--variant", "cpu-rayon", "-q", "--out", "/dev/null"]).assert().success();
    assert!(std::fs::metadata("/dev/null").unwrap().file_type().is_char_device());

    // `--out -`: the PNG on standard output, the table on standard error.
    let o = bin().args(["imgs_in/512x512.png", "--variant", "cpu-rayon", "--out", "-"]).output().unwrap();
    assert!(o.status.success());
    assert_eq!(image::load_from_memory(&o.stdout).unwrap().into_luma8().into_raw(), golden());
    assert!(stderr_of(&o).contains("cpu-rayon"), "the table went to stderr");

    // `-` as input: standard input.
    let out = dir.path().join("stdin.png");
    bin()
        .args(["-", "--variant", "cpu-rayon", "-q", "--out"])
        .arg(&out)
        .pipe_stdin("imgs_in/512x512.png")
        .unwrap()
        .assert()
        .success();
    assert_eq!(pixels(&out), golden());

    // An existing output keeps its permission bits.
    let kept = dir.path().join("kept.png");
    std::fs::write(&kept, b"old").unwrap();
    std::fs::set_permissions(&kept, std::fs::Permissions::from_mode(0o600)).unwrap();
    bin().args(["imgs_in/512x512.png", "--variant", "cpu-rayon", "-q", "--out"]).arg(&kept).assert().success();
    assert_eq!(std::fs::metadata(&kept).unwrap().permissions().mode() & 0o777, 0o600);
    assert_eq!(pixels(&kept), golden());

    // A link as output: the link stays, its target gets the image.
    let target = dir.path().join("target.png");
    std::fs::write(&target, b"old").unwrap();
    let link = dir.path().join("link.png");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    bin().args(["imgs_in/512x512.png", "--variant", "cpu-rayon", "-q", "--out"]).arg(&link).assert().success();
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    assert_eq!(pixels(&target), golden());

    // A link to the input as output: refused.
    let input = copy_of("imgs_in/512x512.png", &dir.path().join("in.png"));
    let to_input = dir.path().join("to_input.png");
    std::os::unix::fs::symlink(&input, &to_input).unwrap();
    let before = digest(&input);
    bin().arg(&input).args(["--variant", "cpu-rayon", "--out"]).arg(&to_input).assert().code(2);
    assert_eq!(digest(&input), before);

    // A FIFO as input is refused at once (opening it would wait for a writer forever).
    let fifo = dir.path().join("pipe.png");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let start = Instant::now();
    bin().arg(&fifo).args(["--variant", "cpu-rayon"]).timeout(Duration::from_secs(20)).assert().code(2);
    assert!(start.elapsed() < Duration::from_secs(10));
    let o = bin()
        .arg("batch")
        .arg(&fifo)
        .arg("--out")
        .arg(dir.path().join("o"))
        .timeout(Duration::from_secs(20))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stdout).contains("is a FIFO"));
}

#[test]
fn batch_failures_carry_the_operating_systems_cause() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("gone.png");
    let o = bin().arg("batch").arg(&missing).arg("--out").arg(dir.path().join("o")).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("gone.png: cannot read: No such file or directory"), "{stdout}");
}

/// Starts the binary, waits until a temporary output appears in `watch`, then sends `signal`.
#[cfg(unix)]
fn interrupt_when_writing(mut cmd: std::process::Command, watch: &Path, signal: &str) -> std::process::ExitStatus {
    let mut child = cmd.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null()).spawn().unwrap();
    let start = Instant::now();
    let has_temp = |d: &Path| {
        std::fs::read_dir(d)
            .is_ok_and(|r| r.filter_map(|e| e.ok()).any(|e| e.file_name().to_string_lossy().ends_with(".tmp")))
    };
    // (Seen once is enough: looking again could miss it, renamed into place in between — CI saw that race.)
    let mut seen = false;
    while !seen && start.elapsed() < Duration::from_secs(60) {
        seen = has_temp(watch);
        if !seen && child.try_wait().unwrap().is_some() {
            panic!("finished before a temporary file was seen; make the work larger");
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    assert!(seen, "a temporary file appeared");
    let status = std::process::Command::new("kill").args([signal, &child.id().to_string()]).status().unwrap();
    assert!(status.success());
    child.wait().unwrap()
}

#[cfg(unix)]
#[test]
fn interrupted_runs_leave_no_temporary_files() {
    let dir = tempfile::tempdir().unwrap();
    // A batch of large images at the slowest compression: workers are mid-encode when SIGINT comes.
    let input = dir.path().join("in");
    std::fs::create_dir(&input).unwrap();
    let big = input.join("big0.png");
    bin().args(["generate", "3000x2000", "--out"]).arg(&big).assert().success();
    for i in 1..8 {
        std::fs::copy(&big, input.join(format!("big{i}.png"))).unwrap();
    }
    let out = dir.path().join("out");
    let mut cmd = std::process::Command::new(bin().get_program());
    cmd.arg("batch").arg(&input).args(["--png-compression", "best", "--out"]).arg(&out);
    let status = interrupt_when_writing(cmd, &out, "-INT");
    assert_eq!(status.code(), Some(130));
    for e in std::fs::read_dir(&out).unwrap() {
        let p = e.unwrap().path();
        assert!(!p.to_string_lossy().ends_with(".tmp"), "left behind: {}", p.display());
        assert!(image::open(&p).is_ok(), "every output present is whole: {}", p.display());
    }

    // One image with its intermediates, SIGTERM: nothing at all appears.
    let one = dir.path().join("one");
    let mut cmd = std::process::Command::new(bin().get_program());
    cmd.arg(&big)
        .args(["--variant", "cpu-rayon", "--intermediate", "--png-compression", "best", "--out"])
        .arg(one.join("e.png"));
    std::fs::create_dir(&one).unwrap();
    let status = interrupt_when_writing(cmd, &one, "-TERM");
    assert_eq!(status.code(), Some(143));
    assert_eq!(std::fs::read_dir(&one).unwrap().count(), 0, "no temporary file, no partial set");
}

/// A PNG carrying an EXIF orientation (6: the camera was turned; view it turned 90° clockwise).
fn png_with_orientation(path: &Path, img: &image::RgbImage, orientation: u16) {
    use image::ImageEncoder;
    let mut exif = b"MM\x00\x2a\x00\x00\x00\x08\x00\x01".to_vec();
    exif.extend([0x01, 0x12, 0x00, 0x03, 0x00, 0x00, 0x00, 0x01]);
    exif.extend(orientation.to_be_bytes());
    exif.extend([0, 0, 0, 0, 0, 0]);
    let file = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut enc = image::codecs::png::PngEncoder::new(file);
    enc.set_exif_metadata(exif).unwrap();
    enc.write_image(img.as_raw(), img.width(), img.height(), image::ExtendedColorType::Rgb8).unwrap();
}

#[test]
fn photos_come_out_as_people_see_them() {
    let dir = tempfile::tempdir().unwrap();
    let img =
        image::RgbImage::from_fn(40, 24, |x, y| image::Rgb([(x * 6) as u8, (y * 9) as u8, ((x * y) % 256) as u8]));
    let p = dir.path().join("turned.png");
    png_with_orientation(&p, &img, 6);
    let f = cuda_sobel::sobel::Filter::default();
    let out = dir.path().join("e.png");
    let o = bin().arg(&p).args(["--variant", "cpu-rayon", "--out"]).arg(&out).output().unwrap();
    assert!(o.status.success());
    assert!(stderr_of(&o).contains("EXIF orientation applied"), "{}", stderr_of(&o));
    let turned = image::imageops::rotate90(&img);
    assert_eq!(pixels(&out), cuda_sobel::cpu::scalar::sobel(&turned, f).into_raw(), "edges of the turned image");
    bin().arg(&p).args(["--variant", "cpu-rayon", "-q", "--keep-orientation", "--out"]).arg(&out).assert().success();
    assert_eq!(pixels(&out), cuda_sobel::cpu::scalar::sobel(&img, f).into_raw(), "--keep-orientation");

    // An animated GIF: the first frame, and one line saying so.
    let gif = dir.path().join("anim.gif");
    {
        let file = std::fs::File::create(&gif).unwrap();
        let mut enc = image::codecs::gif::GifEncoder::new(file);
        let frames = (0..3).map(|k| {
            let f =
                image::RgbaImage::from_fn(16, 12, |x, y| image::Rgba([(x * 16) as u8, (y * 20) as u8, k * 80, 255]));
            image::Frame::new(f)
        });
        enc.encode_frames(frames).unwrap();
    }
    let o = bin().arg(&gif).args(["--variant", "cpu-rayon", "--out"]).arg(&out).output().unwrap();
    assert!(o.status.success(), "{}", stderr_of(&o));
    assert!(stderr_of(&o).contains("anim.gif: 3 frames; edges of the first"), "{}", stderr_of(&o));
    let first = image::open(&gif).unwrap().into_rgb8();
    assert_eq!(pixels(&out), cuda_sobel::cpu::scalar::sobel(&first, f).into_raw());

    // An APNG of two frames: the default image is the first.
    let apng = dir.path().join("anim.png");
    {
        let file = std::io::BufWriter::new(std::fs::File::create(&apng).unwrap());
        let mut enc = png::Encoder::new(file, 40, 24);
        enc.set_color(png::ColorType::Rgb);
        enc.set_animated(2, 0).unwrap();
        let mut w = enc.write_header().unwrap();
        w.write_image_data(img.as_raw()).unwrap();
        w.write_image_data(&vec![200; img.as_raw().len()]).unwrap();
        w.finish().unwrap();
    }
    let o = bin().arg(&apng).args(["--variant", "cpu-rayon", "--out"]).arg(&out).output().unwrap();
    assert!(o.status.success(), "{}", stderr_of(&o));
    assert!(stderr_of(&o).contains("anim.png: 2 frames; edges of the first"), "{}", stderr_of(&o));
    assert_eq!(pixels(&out), cuda_sobel::cpu::scalar::sobel(&img, f).into_raw());
}

#[test]
fn generate_and_bench_obey_the_budget() {
    let dir = tempfile::tempdir().unwrap();
    let o = bin()
        .args(["generate", "20000x20000", "--max-memory", "1G", "--out"])
        .arg(dir.path().join("g.png"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr_of(&o).contains("too large: 20000×20000 needs ~1.2 GB, over the memory budget of 1.0 GB"),
        "{}",
        stderr_of(&o)
    );
    let o = bin()
        .args(["bench", "--sizes", "512x512,30000x30000", "--max-memory", "2G", "--out"])
        .arg(dir.path().join("b"))
        .arg("--images")
        .arg(dir.path().join("i"))
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr_of(&o).contains("bench size 30000x30000: too large"), "{}", stderr_of(&o));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "refused before any work");
}

#[test]
fn a_closed_standard_output_ends_quietly_not_with_a_panic() {
    // The reader goes away before the table is written (as `cuda_sobel … --json | head -0` does).
    for args in [
        &["imgs_in/512x512.png", "--variant", "cpu-rayon", "--json", "--out"][..],
        &["batch", "imgs_in/512x512.png", "--out"][..],
    ] {
        let dir = tempfile::tempdir().unwrap();
        let mut child = std::process::Command::new(bin().get_program())
            .args(args)
            .arg(dir.path().join("o"))
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = stderr_of(&out);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
    }
}
