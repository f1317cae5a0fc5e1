//! The memory estimate that the budget checks is the real peak: a one-variant run's peak RSS (and the same
//! with `--check`), less that of a run on a tiny image (the program itself), is within 10 % of
//! `pipeline::peak_bytes_per_pixel` × pixels.
//! One test in this binary, so the children's peak (`RUSAGE_CHILDREN`) is this test's alone.

mod common;

use cuda_sobel::image_io::Header;

/// The largest resident set of any child waited for so far, in bytes (Linux reports kilobytes).
fn children_peak_rss() -> u64 {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes one `rusage` into the pointer it is given, which points at one.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, usage.as_mut_ptr()) };
    assert_eq!(rc, 0);
    // SAFETY: initialised by the successful call above (and zeroed before it).
    unsafe { usage.assume_init() }.ru_maxrss as u64 * 1024
}

#[test]
fn a_runs_peak_matches_the_estimate() {
    let dir = tempfile::tempdir().unwrap();
    let tiny = dir.path().join("tiny.png");
    image::RgbImage::from_pixel(8, 8, image::Rgb([1, 2, 3])).save(&tiny).unwrap();
    let run_with = |input: &std::path::Path, check: bool| {
        let mut cmd = common::bin();
        cmd.arg(input).args(["--variant", "cpu-rayon", "-q", "--out"]).arg(dir.path().join("o.png"));
        if check {
            cmd.arg("--check");
        }
        cmd.assert().success();
        children_peak_rss()
    };
    let run = |input: &std::path::Path| run_with(input, false);
    // The program itself, before this process holds any image: a child shares this process's memory until
    // it executes the binary, and that counts in its peak.
    let base = run(&tiny);
    let (w, h) = (4000u32, 3000u32);
    let big = dir.path().join("big.png");
    image::RgbImage::from_fn(w, h, |x, y| image::Rgb([(x % 251) as u8, (y % 241) as u8, ((x ^ y) % 256) as u8]))
        .save(&big)
        .unwrap();
    let header = Header { width: w, height: h, stored_bytes_per_pixel: 3, reorients: false };
    // One variant alone (4 B/px), then the same with the reference (10 B/px): each peak is the largest so far.
    for check in [false, true] {
        let peak = run_with(&big, check);
        let per_pixel = cuda_sobel::pipeline::peak_bytes_per_pixel(&header, 1, false, check);
        let estimate = per_pixel * w as u64 * h as u64;
        let measured = peak - base;
        let ratio = measured as f64 / estimate as f64;
        assert!(
            (0.9..=1.1).contains(&ratio),
            "--check {check}: measured {measured} B against the estimate {estimate} B ({per_pixel} B/px, {ratio:.3})"
        );
    }
}
