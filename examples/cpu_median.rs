// Scratch timer used while tuning cpu-rayon (median of many runs); `cuda_sobel bench` replaces it.
fn main() {
    let path = std::env::args().nth(1).unwrap();
    let rgb = cuda_sobel::image_io::decode_rgb(path.as_ref()).unwrap();
    let mut t = vec![];
    for _ in 0..60 {
        let s = std::time::Instant::now();
        std::hint::black_box(cuda_sobel::cpu::rayon::sobel(&rgb, cuda_sobel::sobel::Border::Replicate));
        t.push(s.elapsed().as_secs_f64() * 1e3);
    }
    t.sort_by(f64::total_cmp);
    println!("cpu-rayon median {:.3} ms min {:.3}", t[t.len() / 2], t[0]);
}
