//! Where batch's time per image goes, stage by stage, on every core at once: each stage runs alone over
//! every file of a folder with rayon, and prints images/s and ms per image per thread.
//! `cargo run --release --example codec_rates -- FOLDER` (e.g. 300 copies of imgs_in/2048x1024.png).
//! The stages: reading the file; our decode (`image_io::decode`, the `image` crate); the `png` crate
//! decoding into a buffer each thread keeps; encoding the edge image into memory; encoding and writing it
//! through `output::write` (temporary file and rename).
use std::path::PathBuf;
use std::time::Instant;

use cuda_sobel::image_io::{self, output, DecodeOptions, Format, Picture, PngCompression};
use cuda_sobel::memory::Budget;
use cuda_sobel::sobel::Filter;
use rayon::prelude::*;

fn main() {
    let dir = PathBuf::from(std::env::args().nth(1).expect("usage: codec_rates FOLDER"));
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    let threads = rayon::current_num_threads();
    let n = files.len() as f64;
    let stage = |name: &str, f: &(dyn Fn(&PathBuf) + Sync)| {
        let t = Instant::now();
        files.par_iter().for_each(f);
        let s = t.elapsed().as_secs_f64();
        println!("{name:<34} {:8.1} images/s  {:6.2} ms/image/thread", n / s, s * 1e3 * threads as f64 / n);
    };
    println!("{} files, {threads} threads", files.len());
    let opts = DecodeOptions { budget: Budget::detect(), keep_orientation: false };
    stage("read file", &|p| {
        std::hint::black_box(std::fs::read(p).unwrap());
    });
    stage("decode (image_io::decode)", &|p| {
        std::hint::black_box(image_io::decode(p, &opts, |_| Ok(())).unwrap());
    });
    thread_local!(static BUF: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) });
    stage("decode (png crate, reused buffer)", &|p| {
        let mut reader =
            png::Decoder::new(std::io::BufReader::new(std::fs::File::open(p).unwrap())).read_info().unwrap();
        BUF.with_borrow_mut(|b| {
            b.resize(reader.output_buffer_size().unwrap(), 0);
            reader.next_frame(b).unwrap();
        });
    });
    let first = image_io::decode(&files[0], &opts, |_| Ok(())).unwrap().0.rgb;
    let edges = cuda_sobel::cpu::rayon::sobel(&first, Filter::default()).into_raw();
    let (w, h) = first.dimensions();
    for compression in PngCompression::ALL {
        let png = Picture {
            width: w,
            height: h,
            samples: image_io::format::Samples::U8(&edges),
            color: png::ColorType::Grayscale,
            compression,
            format: Format::Png,
        };
        stage(&format!("encode to memory ({})", compression.name()), &|_| {
            let mut v = Vec::new();
            output::encode_png(&mut v, &png, &edges).unwrap();
            std::hint::black_box(v);
        });
    }
    let out = tempfile::tempdir().unwrap();
    let png = Picture {
        width: w,
        height: h,
        samples: image_io::format::Samples::U8(&edges),
        color: png::ColorType::Grayscale,
        compression: PngCompression::Default,
        format: Format::Png,
    };
    stage("encode + write (output::write)", &|p| {
        let dest = image_io::edge_path(out.path(), p, Format::Png);
        output::write(&output::target(&dest).unwrap(), &png).unwrap();
    });
}
