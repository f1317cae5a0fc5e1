//! The larger and smaller Sobel kernels (ksize 1, 5, 7) on literal images, worked out by hand from OpenCV's
//! taps: a 3×2 image — narrower and shorter than every stencil here — for each border, and an impulse, whose
//! response is the kernel itself, flipped. Every CPU variant and output is held to them; `tests/gpu.rs` holds
//! the GPU variants to the same images.

mod common;

use cuda_sobel::cpu;
use cuda_sobel::sobel::{Border, Filter, Ksize, Output};

/// 3×2, grey values:
/// ```text
///  1 0 2
///  0 3 1
/// ```
const GREY: [u8; 6] = [1, 0, 2, 0, 3, 1];

struct Case {
    ksize: Ksize,
    border: Border,
    gx: [i32; 6],
    gy: [i32; 6],
    magnitude: [u8; 6],
}

// Worked examples (rows r0 = [1 0 2], r1 = [0 3 1]; taps smooth [1 4 6 4 1], deriv [-1 -2 0 2 1] for ksize 5,
// [1 6 15 20 15 6 1] and [-1 -4 -5 0 5 4 1] for 7):
// - ksize 5, replicate, pixel (0,0): rows −2 … 2 are r0 r0 r0 r1 r1, so the column sums are
//   s = 11·r0 + 5·r1 = [11 15 27] and d = −3·r0 + 3·r1 = [−3 9 −3]; columns −2 … 2 are 0 0 0 1 2, so
//   Gx = −11 − 2·11 + 0 + 2·15 + 27 = 24 and Gy = −3 − 4·3 − 6·3 + 4·9 − 3 = 0; √(24²) = 24.
// - ksize 7, zero, pixel (2,1): rows −2 … 4 are 0 0 r0 r1 0 0 0, so s = 15·r0 + 20·r1 = [15 60 50] and
//   d = −5·r0 = [−5 0 −10]; columns −1 … 5 are 0 c0 c1 c2 0 0 0, so Gx = −4·15 − 5·60 + 0 = −360 and
//   Gy = 6·(−5) + 15·0 + 20·(−10) = −230; √(360² + 230²) = 427 → 255.
// - ksize 1, reflect101: a 2-row image reflects each row onto the other (−1 → 1, 2 → 0), so the rows above and
//   below are the same row and Gy = 0; columns mirror (−1 → 1, 3 → 1), so the end columns' Gx are 0 too and the
//   middle's is 2 − 1 = 1 (row 0) and 1 − 0 = 1 (row 1).
const CASES: [Case; 9] = [
    Case {
        ksize: Ksize::K1,
        border: Border::Replicate,
        gx: [-1, 1, 2, 3, 1, -2],
        gy: [-1, 3, -1, -1, 3, -1],
        magnitude: [1, 3, 2, 3, 3, 2],
    },
    Case {
        ksize: Ksize::K1,
        border: Border::Zero,
        gx: [0, 1, 0, 3, 1, -3],
        gy: [0, 3, 1, -1, 0, -2],
        magnitude: [0, 3, 1, 3, 1, 4],
    },
    Case {
        ksize: Ksize::K1,
        border: Border::Reflect101,
        gx: [0, 1, 0, 0, 1, 0],
        gy: [0, 0, 0, 0, 0, 0],
        magnitude: [0, 1, 0, 0, 1, 0],
    },
    Case {
        ksize: Ksize::K5,
        border: Border::Replicate,
        gx: [24, 48, 40, 72, 48, -8],
        gy: [0, 24, 0, 0, 24, 0],
        magnitude: [24, 54, 40, 72, 54, 8],
    },
    Case {
        ksize: Ksize::K5,
        border: Border::Zero,
        gx: [40, 20, -30, 50, 20, -40],
        gy: [26, 44, 36, -16, -24, -26],
        magnitude: [48, 48, 47, 52, 31, 48],
    },
    Case {
        ksize: Ksize::K5,
        border: Border::Reflect101,
        gx: [0, 32, 0, 0, 32, 0],
        gy: [0, 0, 0, 0, 0, 0],
        magnitude: [0, 32, 0, 0, 32, 0],
    },
    Case {
        ksize: Ksize::K7,
        border: Border::Replicate,
        gx: [440, 640, 520, 840, 640, 120],
        gy: [-40, 160, -40, -40, 160, -40],
        magnitude: [255, 255, 255, 255, 255, 126],
    },
    Case {
        ksize: Ksize::K7,
        border: Border::Zero,
        gx: [445, 175, -305, 500, 175, -360],
        gy: [255, 375, 325, -160, -225, -230],
        magnitude: [255, 255, 255, 255, 255, 255],
    },
    Case {
        ksize: Ksize::K7,
        border: Border::Reflect101,
        gx: [0, 256, 0, 0, 256, 0],
        gy: [0, 0, 0, 0, 0, 0],
        magnitude: [0, 255, 0, 0, 255, 0],
    },
];

#[test]
fn a_3x2_image_smaller_than_every_stencil_for_every_border() {
    let rgb = common::grey_rgb(3, 2, &GREY);
    for c in &CASES {
        let f = Filter { ksize: c.ksize, border: c.border, ..Filter::default() };
        let stages = cpu::scalar::sobel_stages(&rgb, f);
        let what = format!("ksize {:?}, {:?}", c.ksize, c.border);
        assert_eq!(stages.grey, GREY, "{what}: grey of R = G = B is unchanged");
        assert_eq!((&stages.gx[..], &stages.gy[..]), (&c.gx[..], &c.gy[..]), "{what}: Gx, Gy");
        assert_eq!(stages.magnitude, c.magnitude, "{what}: scalar magnitude");
        assert_eq!(cpu::rayon::sobel(&rgb, f).as_raw(), &c.magnitude, "{what}: rayon magnitude");
        // The other outputs of cpu-rayon are cpu-scalar's, byte for byte.
        let src = cpu::rayon::PackedRgb::new(rgb.as_raw(), 3, 2);
        for output in [Output::Gradients(cuda_sobel::sobel::Number::I32), Output::Direction, Output::Direction4] {
            assert_eq!(
                cpu::rayon::output_bytes(&src, f, output),
                cpu::scalar::output_bytes(&stages, f, output),
                "{what}: {output:?}"
            );
        }
    }
}

/// One bright pixel far from the edges: Gx around it is Gx's kernel flipped, smooth[r − dy]·deriv[r − dx] at
/// offset (dx, dy), so the response shows every tap — the 2-D kernel OpenCV builds from `getDerivKernels`.
#[test]
fn an_impulse_gives_the_kernel_flipped() {
    let taps: [(Ksize, &[i32], &[i32]); 3] = [
        (Ksize::K1, &[0, 1, 0], &[-1, 0, 1]),
        (Ksize::K5, &[1, 4, 6, 4, 1], &[-1, -2, 0, 2, 1]),
        (Ksize::K7, &[1, 6, 15, 20, 15, 6, 1], &[-1, -4, -5, 0, 5, 4, 1]),
    ];
    let (w, h) = (11u32, 9u32);
    let (cx, cy) = (5i32, 4i32);
    let mut grey = vec![0u8; (w * h) as usize];
    grey[(cy as u32 * w + cx as u32) as usize] = 1;
    let rgb = common::grey_rgb(w, h, &grey);
    for (ksize, smooth, deriv) in taps {
        let r = (smooth.len() / 2) as i32;
        for border in Border::ALL {
            let f = Filter { ksize, border, ..Filter::default() };
            let stages = cpu::scalar::sobel_stages(&rgb, f);
            for y in 0..h as i32 {
                for x in 0..w as i32 {
                    let (dx, dy) = (x - cx, y - cy);
                    let inside = dx.abs() <= r && dy.abs() <= r;
                    let at = |t: &[i32], d: i32| t[(r - d) as usize];
                    let gx = if inside { at(smooth, dy) * at(deriv, dx) } else { 0 };
                    let gy = if inside { at(deriv, dy) * at(smooth, dx) } else { 0 };
                    let i = (y as u32 * w + x as u32) as usize;
                    assert_eq!((stages.gx[i], stages.gy[i]), (gx, gy), "{ksize:?} {border:?} at ({x}, {y})");
                }
            }
            // The strongest tap of 7×7 is 20·5 = 100: the magnitude stays below saturation, √(100² + 0²) = 100.
            assert_eq!(cpu::rayon::sobel(&rgb, f).into_raw(), stages.magnitude, "{ksize:?} {border:?}");
        }
    }
    let f = Filter { ksize: Ksize::K7, ..Filter::default() };
    let m = cpu::scalar::sobel(&rgb, f);
    assert_eq!(m.get_pixel(cx as u32 + 1, cy as u32)[0], 100, "right of the impulse: Gx = −20·5, Gy = 0");
}

/// gpu-strip's and gpu-vec16's kernel files (`cuda/strip.cu`, `cuda/vec16.cu`: the row16.cuh smoothing and 3×3
/// step every size goes through) run on the CPU (`scripts/emulate`: g++, each thread in turn) equal the scalar
/// reference on awkward sizes, every border and several rows a thread — for every ksize, both operators, OpenCV's
/// grey, the L1 norm and every output, with the `-D` options the host gives NVRTC ([`Build::defines`]). Their
/// indexing and arithmetic checked where no GPU is at hand, CI included; skipped, saying why, without g++ or a
/// Python with numpy and Pillow.
#[test]
fn the_row16_kernel_files_run_on_the_cpu_equal_the_reference() {
    use cuda_sobel::gpu::kernels::Build;
    use cuda_sobel::sobel::{Grey, Norm, Number, Operator, Stencil};
    let sobel = |ksize| Filter { ksize, ..Filter::default() };
    let gradients = |ksize| {
        let n = if Stencil::of(Operator::Sobel, ksize).fits_i16() { Number::I16 } else { Number::I32 };
        (sobel(ksize), Output::Gradients(n))
    };
    let cases = [
        (sobel(Ksize::K1), Output::Edges),
        (sobel(Ksize::K3), Output::Edges),
        (sobel(Ksize::K5), Output::Edges),
        (sobel(Ksize::K7), Output::Edges),
        (Filter { operator: Operator::Scharr, ..Filter::default() }, Output::Edges),
        (Filter { ksize: Ksize::K5, grey: Grey::Bt601, norm: Norm::L1, ..Filter::default() }, Output::Edges),
        gradients(Ksize::K5),
        gradients(Ksize::K7),
        (sobel(Ksize::K3), Output::Gradients(Number::F32)),
        (sobel(Ksize::K7), Output::Direction),
        (sobel(Ksize::K5), Output::Direction4),
    ];
    let json: Vec<serde_json::Value> = cases
        .iter()
        .map(|&(f, output)| {
            let cli = ["--ksize", f.ksize.name(), "--operator", f.operator.name(), "--grey", f.grey.name()];
            let planes = match output {
                Output::Edges if f.norm == Norm::L1 => serde_json::json!([["l1", "u1"]]),
                Output::Edges => serde_json::json!([["magnitude", "u1"]]),
                Output::Gradients(n) => {
                    let t = match n {
                        Number::I16 => "i2",
                        Number::I32 => "i4",
                        Number::F32 => "f4",
                    };
                    serde_json::json!([["gx", t], ["gy", t]])
                }
                Output::Direction => serde_json::json!([["direction", "f4"]]),
                Output::Direction4 => serde_json::json!([["direction4", "u1"]]),
                Output::Sectors(_) => unreachable!("not among the cases: no command writes Canny's words"),
            };
            serde_json::json!({ "cli": cli, "defines": Build::with_output(f, output).defines(), "planes": planes })
        })
        .collect();
    let list = std::env::temp_dir().join(format!("row16_cases_{}.json", std::process::id()));
    std::fs::write(&list, serde_json::to_string(&json).unwrap()).unwrap();
    let script = std::ffi::OsStr::new("scripts/emulate/strip_check.py");
    common::emulation_check("the_row16_kernel_files_run_on_the_cpu_equal_the_reference", &[script, list.as_os_str()]);
    let _ = std::fs::remove_file(&list);
}
