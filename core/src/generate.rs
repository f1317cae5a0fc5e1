//! Deterministic test images. The report tiled one photograph to its four sizes; we draw a 512×512 tile
//! with edges of every orientation (rings, a starburst of lines), smooth gradients (no edges), a fine
//! texture (checkerboard) and text-like detail (rows of dot glyphs), and tile it to any size.
//! Integer arithmetic only, so every machine draws the same bytes.

use ::rayon::prelude::*;
use image::RgbImage;

/// Side of the square tile the scene repeats.
pub const TILE: u32 = 512;

/// Host bytes per pixel of drawing and writing a scene: the RGB image (the PNG encoder streams).
pub const BYTES_PER_PIXEL: u64 = 3;

/// The scene, tiled to `width × height`.
pub fn scene(width: u32, height: u32) -> RgbImage {
    let mut buf = vec![0u8; width as usize * height as usize * 3];
    if !buf.is_empty() {
        buf.par_chunks_mut(width as usize * 3).enumerate().for_each(|(y, row)| {
            for (x, px) in row.chunks_exact_mut(3).enumerate() {
                px.copy_from_slice(&tile_pixel(x as u32 % TILE, y as u32 % TILE));
            }
        });
    }
    RgbImage::from_raw(width, height, buf).expect("width × height × 3 bytes")
}

/// Directions of the starburst's lines, every 15°, as (cos, sin) · 1024.
const RAYS: [(i32, i32); 12] = [
    (1024, 0),
    (989, 265),
    (887, 512),
    (724, 724),
    (512, 887),
    (265, 989),
    (0, 1024),
    (-265, 989),
    (-512, 887),
    (-724, 724),
    (-887, 512),
    (-989, 265),
];

fn tile_pixel(x: u32, y: u32) -> [u8; 3] {
    let (x, y) = (x as i32, y as i32);
    // Smooth background: gradients everywhere, no edges.
    let mut rgb = [(x / 2) as u8, (y / 2) as u8, (255 - (x + y) / 4) as u8];

    if x < 256 && y < 256 {
        // Concentric rings: edges at every orientation, at one scale.
        let (dx, dy) = (x - 128, y - 128);
        let d = isqrt(dx * dx + dy * dy);
        if d < 120 {
            rgb = if (d / 10) % 2 == 0 { [230, 90 + d as u8, 40] } else { [30, 40, 120 + d as u8] };
        }
    } else if y < 256 {
        // Starburst: thin lines at 15° steps through one centre, alternating colours.
        let (dx, dy) = (x - 384, y - 128);
        if dx * dx + dy * dy < 120 * 120 {
            for (k, &(c, s)) in RAYS.iter().enumerate() {
                if (dx * s - dy * c).abs() < 2 * 1024 {
                    rgb = if k % 2 == 0 { [250, 250, 250] } else { [10, 10, 10] };
                }
            }
        }
    } else if x < 256 {
        // Texture: an 8-pixel checkerboard whose colours drift with position.
        rgb = if ((x / 8) + (y / 8)) % 2 == 0 {
            [200, (60 + x / 2) as u8, 40]
        } else {
            [40, 90, (100 + (y - 256) / 2) as u8]
        };
    } else {
        // Text-like detail: rows of 5×7 dot glyphs (2 px a dot) on paper, drawn from a hash.
        rgb = [235, 230, 220];
        let (tx, ty) = (x - 264, y - 264);
        if (0..240).contains(&tx) && (0..240).contains(&ty) {
            let glyph = (ty / 16 * 20 + tx / 12) as u32;
            let (cx, cy) = ((tx % 12) / 2, (ty % 16) / 2);
            if cx < 5 && cy < 7 && (hash(glyph) >> (cy * 5 + cx)) & 1 == 1 {
                rgb = [20, 20, 30];
            }
        }
    }
    // A disk across the tile's centre gives one large curved edge over all four regions.
    let (dx, dy) = (x - 256, y - 256);
    if dx * dx + dy * dy < 40 * 40 {
        rgb = [250, 220, 0];
    }
    rgb
}

fn isqrt(v: i32) -> i32 {
    let mut r = (v as f64).sqrt() as i32;
    while r * r > v {
        r -= 1;
    }
    while (r + 1) * (r + 1) <= v {
        r += 1;
    }
    r
}

/// A small integer hash (splitmix-style) for the glyph bits.
fn hash(v: u32) -> u64 {
    let mut z = (v as u64).wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Parses `WIDTHxHEIGHT`.
pub fn parse_size(s: &str) -> Result<(u32, u32), String> {
    let (w, h) = s.split_once(['x', 'X']).ok_or_else(|| format!("'{s}' is not WIDTHxHEIGHT"))?;
    let dim = |d: &str| {
        d.parse::<u32>().ok().filter(|&v| v > 0).ok_or_else(|| format!("'{d}' in '{s}' is not a positive number"))
    };
    Ok((dim(w)?, dim(h)?))
}

/// A deterministic pseudo-random image (xorshift from `seed`), so that a failure found on it can be
/// reproduced: `--kernel-file --sweep`'s awkward sizes, and the GPU tests.
pub fn noise(width: u32, height: u32, seed: u64) -> RgbImage {
    let mut s = seed | 1;
    let bytes = (0..width as usize * height as usize * 3)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 24) as u8
        })
        .collect();
    RgbImage::from_raw(width, height, bytes).expect("width × height × 3 bytes")
}

/// Canny's hardest case for a parallel hysteresis: a one-pixel square spiral of grey `line` on black, its turns 4
/// pixels apart, winding from the top-left corner inwards, its first 3 pixels `seed`. With thresholds between the
/// line's edge magnitude and the seed's, every edge pixel beside the line joins the one strong start through a
/// chain of weak ones as long as the spiral (about a quarter of the image's pixels).
pub fn spiral(width: u32, height: u32, line: u8, seed: u8) -> RgbImage {
    let mut img = RgbImage::new(width, height);
    let (a, b, step) = (width as i64 - 3, height as i64 - 3, 4);
    let (mut x, mut y, mut drawn) = (1i64, 1i64, 0);
    let mut put = |x: i64, y: i64| {
        if (0..width as i64).contains(&x) && (0..height as i64).contains(&y) {
            let v = if drawn < 3 { seed } else { line };
            img.put_pixel(x as u32, y as u32, image::Rgb([v, v, v]));
            drawn += 1;
        }
    };
    put(x, y);
    // Segment lengths a, b, a, b − 4, a − 4, b − 8, a − 8, …: right, down, left, up, turning clockwise.
    let directions = [(1, 0), (0, 1), (-1, 0), (0, -1)];
    for i in 0.. {
        let length = match i {
            0 => a,
            1 => b,
            _ if i % 2 == 0 => a - step * ((i as i64 - 1) / 2),
            _ => b - step * ((i as i64 - 1) / 2),
        };
        if length <= 0 {
            break;
        }
        let (dx, dy) = directions[i % 4];
        for _ in 0..length {
            (x, y) = (x + dx, y + dy);
            put(x, y);
        }
    }
    img
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spiral_winds_inwards() {
        let s = spiral(16, 12, 40, 255);
        let row = |y: u32| (0..16).map(|x| (s.get_pixel(x, y)[0] > 0) as u8).collect::<Vec<_>>();
        // Worked by hand: right 13 along row 1, down 9, left 13 along row 10, up 5 to (1, 5), right 9 along row 5,
        // down 1 to row 6, left 5 along row 6 to (5, 6); the next segment would have no length.
        assert_eq!(row(0), [0; 16]);
        assert_eq!(row(1), [0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0]);
        assert_eq!(row(5), [0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 1, 0]);
        assert_eq!(row(6), [0, 1, 0, 0, 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 1, 0]);
        assert_eq!(row(10), [0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0]);
        assert_eq!(&s.get_pixel(3, 1).0, &[255; 3], "the seed");
        assert_eq!(&s.get_pixel(4, 1).0, &[40; 3], "the line");
    }

    #[test]
    fn scene_is_tiled_and_deterministic() {
        let a = scene(700, 600);
        assert_eq!(a.get_pixel(10, 20), a.get_pixel(10 + TILE, 20));
        assert_eq!(a.get_pixel(100, 50), a.get_pixel(100, 50 + TILE));
        assert_eq!(a.as_raw(), scene(700, 600).as_raw());
    }

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("2048x1024"), Ok((2048, 1024)));
        assert!(parse_size("2048").is_err());
        assert!(parse_size("0x5").is_err());
    }
}
