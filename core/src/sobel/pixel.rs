//! The per-pixel arithmetic of [`super`]: grey from RGB, the edge byte from the gradients, the direction.
//! Each is a pure function of a pixel's values, which the CPU variants call in their inner loops and
//! `cuda/sobel.cuh` restates for the kernels.

/// The report's grey: `(byte)(0.30·R + 0.59·G + 0.11·B)`, evaluated left to right in doubles and
/// truncated. Rust, like C on x86-64, rounds each `*` and `+` on its own (it never fuses them into an
/// FMA), so this is the C expression's exact value.
#[inline(always)]
pub fn grey_report(r: u8, g: u8, b: u8) -> u8 {
    (0.30 * r as f64 + 0.59 * g as f64 + 0.11 * b as f64) as u8
}

/// The report's magnitude: each gradient stored as `(byte)abs(g)` (mod 256), then
/// `(byte)(int)sqrt(h² + v²)`: truncated, and wrapped mod 256 above 255 (at most √(2·255²) ≈ 360).
#[inline(always)]
pub fn magnitude_report(gx: i32, gy: i32) -> u8 {
    let (h, v) = (gx.unsigned_abs() as u8 as i32, gy.unsigned_abs() as u8 as i32);
    ((h * h + v * v) as f64).sqrt() as i32 as u8
}

/// Grey weights in hundredths, for R, G and B.
pub const GREY_WEIGHTS: [u16; 3] = [30, 59, 11];

/// OpenCV's grey weights for R, G and B in 15-bit fixed point (they sum to 2^15).
pub const BT601_WEIGHTS: [u32; 3] = [9798, 19235, 3735];

/// `Gx² + Gy²` at or above which the rounded magnitude is at least 255: `round(√s) ≥ 255 ⇔ s > 254² + 254`.
pub const SATURATED_SQUARE: u32 = 254 * 254 + 254 + 1;

/// Converts one RGB pixel to grey: `(30·R + 59·G + 11·B + 50) / 100`, i.e. rounded half up.
#[inline(always)]
pub fn grey(r: u8, g: u8, b: u8) -> u8 {
    let [wr, wg, wb] = GREY_WEIGHTS;
    // At most 100·255 + 50 = 25 550: fits in u16, which lets the compiler use 8 lanes per SSE register.
    ((wr * r as u16 + wg * g as u16 + wb * b as u16 + 50) / 100) as u8
}

/// OpenCV's grey: `(9798·R + 19235·G + 3735·B + 2^14) >> 15` (at most 2^23 + 2^14: 32-bit arithmetic).
#[inline(always)]
pub fn grey_bt601(r: u8, g: u8, b: u8) -> u8 {
    let [wr, wg, wb] = BT601_WEIGHTS;
    ((wr * r as u32 + wg * g as u32 + wb * b as u32 + (1 << 14)) >> 15) as u8
}

/// The saturated, rounded gradient magnitude `min(255, round(√(gx² + gy²)))`, for any gradients: each is
/// clamped to 255 first (if either reaches 255, so does the magnitude), so the squares stay below 2^17 even
/// for ksize 7, whose gradients reach 163 200.
#[inline(always)]
pub fn magnitude(gx: i32, gy: i32) -> u8 {
    let (x, y) = (gx.unsigned_abs().min(255), gy.unsigned_abs().min(255));
    magnitude_from_squared(x * x + y * y)
}

/// `min(255, |gx| + |gy|)`.
#[inline(always)]
pub fn magnitude_l1(gx: i32, gy: i32) -> u8 {
    (gx.unsigned_abs().min(255) + gy.unsigned_abs().min(255)).min(255) as u8
}

/// `min(255, round(√s))`, exactly, without branches (so loops over it vectorise).
///
/// Clamping `s` to [`SATURATED_SQUARE`] keeps it below 2^24, where `s as f32` is exact; IEEE `sqrt` is
/// correctly rounded, and for `s < 2^24` that never rounds a non-square up to the next integer, so
/// `r = ⌊√s⌋`. Then `round(√s) = r + 1` exactly when `s > r² + r` (because `(r + ½)² = r² + r + ¼`).
/// The GPU kernels do the same with `sqrtf` (correctly rounded unless `-use_fast_math`).
#[inline(always)]
pub fn magnitude_from_squared(s: u32) -> u8 {
    let s = s.min(SATURATED_SQUARE);
    let r = (s as f32).sqrt() as u32;
    (r + (s > r * r + r) as u32) as u8
}

/// `atan2(gy, gx)` in radians, in (−π, π] (y grows down the image, as rows do; 0 where both are 0), by one
/// fixed sequence of IEEE single-precision operations — Cephes' `atanf` on `min/max` of |gx|, |gy| — which
/// `sobel.cuh` repeats with no fused multiply-add, so the GPU gives the same bits. Within 3e-7 rad (about 3
/// float32 ulps) of the true angle: a test checks every direction a ksize-3 gradient can have, and ksize 7's
/// at random.
#[inline(always)]
pub fn direction(gx: i32, gy: i32) -> f32 {
    const FRAC_PI_4: f32 = std::f32::consts::FRAC_PI_4;
    // Cephes' constants, each the f32 nearest to the f64 nearest to its decimal (as `(float)` of a double
    // literal in CUDA C).
    const TAN_PI_8: f64 = 0.414_213_562_373_095;
    const P3: f64 = 8.053_744_495_38e-2;
    const P2: f64 = 1.387_768_560_32e-1;
    const P1: f64 = 1.997_771_064_78e-1;
    const P0: f64 = 3.333_294_915_39e-1;
    let (ax, ay) = (gx.unsigned_abs() as f32, gy.unsigned_abs() as f32); // exact: |g| < 2^24
    let (lo, hi) = (ax.min(ay), ax.max(ay));
    let t = if hi == 0.0 { 0.0 } else { lo / hi }; // in [0, 1]
                                                   // Above tan(π/8), atan(t) = π/4 + atan((t − 1)/(t + 1)).
    let (base, x) = if t > TAN_PI_8 as f32 { (FRAC_PI_4, (t - 1.0) / (t + 1.0)) } else { (0.0, t) };
    let z = x * x;
    let p = (((P3 as f32 * z - P2 as f32) * z + P1 as f32) * z - P0 as f32) * z * x + x;
    let a = base + p; // atan(lo / hi) in [0, π/4]
    let a = if ay > ax { 2.0 * FRAC_PI_4 - a } else { a };
    let a = if gx < 0 { 4.0 * FRAC_PI_4 - a } else { a };
    if gy < 0 {
        -a
    } else {
        a
    }
}

/// OpenCV Canny's quantised direction of the gradient, in its integer arithmetic (tan 22.5° as 13573/2^15):
/// 0 — within 22.5° of horizontal (|gy| < tan 22.5°·|gx|), 2 — within 22.5° of vertical (|gy| > tan 67.5°·|gx|),
/// else 1 when gx and gy have the same sign (down-right, the 45° diagonal with y down) and 3 when not. A pixel
/// with no gradient passes neither test: 1, as OpenCV computes it. In 64 bits: |gy|·2^15 passes 2^31 for ksize 7.
#[inline(always)]
pub fn direction4(gx: i32, gy: i32) -> u8 {
    direction4_in::<i64>(gx, gy)
}

/// [`direction4`] computed in `T`, exact when `T` holds |g| · (13 573 + 2^16) and |g| · 2^15 for both gradients: i64
/// for every gradient here, i32 for |g| ≤ 27 145 — OpenCV's Canny's, whose suppression then runs in twice the
/// vector lanes.
#[inline(always)]
pub fn direction4_in<T: num_traits::PrimInt + num_traits::Signed + From<i32>>(gx: i32, gy: i32) -> u8 {
    let (x, y) = (<T as From<i32>>::from(gx).abs(), <T as From<i32>>::from(gy).abs() << 15);
    let tg22x = x * <T as From<i32>>::from(13573);
    if y < tg22x {
        0
    } else if y > tg22x + (x << 16) {
        2
    } else if (gx ^ gy) < 0 {
        3
    } else {
        1
    }
}
