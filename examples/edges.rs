//! The shortest useful program: edges of one image file, on the GPU when there is one.
//!
//!     cargo run --release --example edges -- imgs_in/2048x1024.png /tmp/edges.png
//!
//! Decoding applies the memory budget and the EXIF orientation; writing is atomic (see README "Outputs").

use std::path::Path;

use cuda_sobel::engine::{Device, Engine};
use cuda_sobel::image_io;
use cuda_sobel::sobel::Filter;

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let input = args.next().unwrap_or_else(|| "imgs_in/512x512.png".into());
    let output = args.next().unwrap_or_else(|| "/tmp/cuda_sobel_example_edges.png".into());

    // One engine per process: it opens the GPU (if any) and loads the kernels once.
    let engine = Engine::new(Device::Auto, Filter::default())?;
    let rgb = image_io::decode_rgb(Path::new(&input))?;
    let edges = engine.sobel(&rgb, Filter::default())?;
    image_io::write_png(
        Path::new(&output),
        edges.width(),
        edges.height(),
        edges.as_raw(),
        image::ExtendedColorType::L8,
    )?;
    println!("{input} → {output} ({})", engine.describe());
    Ok(())
}
