//! Every variant on one generated image, each checked against the scalar reference byte for byte — the
//! tool's promise, in a dozen lines. GPU variants are skipped (with the reason) without a GPU.
//!
//!     cargo run --release --example every_variant -- 1920x1080

use cuda_sobel::engine::{Device, Engine, RunOptions};
use cuda_sobel::sobel::Filter;
use cuda_sobel::variant::{count_mismatches, Variant};

fn main() -> anyhow::Result<()> {
    let size = std::env::args().nth(1).unwrap_or_else(|| "1024x512".into());
    let (w, h) = cuda_sobel::generate::parse_size(&size).map_err(anyhow::Error::msg)?;
    let rgb = cuda_sobel::generate::scene(w, h);
    let filter = Filter::default();
    let engine = Engine::new(Device::Auto, filter)?;
    let reference = cuda_sobel::cpu::scalar::sobel(&rgb, filter).into_raw();
    for variant in Variant::EDGES {
        match engine.run(variant, &rgb, filter, RunOptions { warm_up: true, reps: 10 }) {
            Ok(run) => {
                let differing = count_mismatches(&run.output, &reference);
                println!(
                    "{:<16} {:>10.4} ms  {}",
                    variant.name(),
                    run.compute_ms,
                    if differing == 0 { "identical" } else { "DIFFERS" }
                );
                anyhow::ensure!(differing == 0, "{} differs from cpu-scalar in {differing} pixels", variant.name());
            }
            Err(e) => println!("{:<16} skipped: {e}", variant.name()),
        }
    }
    Ok(())
}
