//! The single-image command's first step: the image decoded (on the CPU, or by nvJPEG when asked) while the GPU
//! opens on a thread of its own, so that the user waits for the longer of the two, not their sum.

use super::{auto_variant, peak_bytes_per_pixel, timed, Options, Variant};
use crate::engine::{Device, Engine, JpegDecoder};
use crate::error::Result;
use crate::image_io::{self, Header};
use crate::memory;

/// The engine, the variants to run (`auto`'s choice made) and the decoded image with its decode time.
pub(super) struct Opened {
    pub engine: Engine,
    pub variants: Vec<Variant>,
    pub decoded: image_io::Decoded,
    pub decode_ms: f64,
}

/// Decodes `opts.input` and opens the engine its variants need, side by side.
pub(super) fn decode_and_open(opts: &Options) -> Result<Opened> {
    // As in the report, the GPU's first action (a dummy allocation that absorbs context start-up) comes
    // first and is reported apart from every variant's timings.
    // It is opened on a thread of its own while this one decodes the image: the user waits for the longer
    // of the two, not their sum. With `auto`, that thread starts once the header has chosen the GPU.
    let decode_opts = image_io::DecodeOptions { budget: opts.budget, keep_orientation: opts.keep_orientation };
    // A JPEG goes to nvJPEG only when asked (--jpeg-decoder gpu): for one image, loading nvJPEG and its first
    // decode cost ~0.6 s more than the CPU decoder, which runs while the GPU opens, so
    // `auto` decodes on the CPU here (batch, where that start-up is paid once for many images, uses nvJPEG). The
    // file is then only read here, beside the opening, and decoded once the GPU is open.
    let jpeg_to_gpu = opts.jpeg_decoder == JpegDecoder::Gpu && image_io::jpeg::starts_like_jpeg(&opts.input);
    let open = |variants: &[Variant]| {
        let gpu = variants.iter().any(|v| v.is_gpu()) || jpeg_to_gpu;
        let engine = Engine::for_variants(if gpu { Device::Auto } else { Device::Cpu }, opts.filter, variants)
            .expect("Auto and Cpu always open");
        if jpeg_to_gpu {
            engine.with_jpeg_decoder()
        } else {
            engine
        }
    };
    let open = &open;
    let (engine, variants, (decoded, decode_ms)) = std::thread::scope(|s| {
        let opening = (!opts.auto).then(|| s.spawn(|| open(&opts.variants)));
        let admit = |h: &Header| {
            let variants = if opts.auto {
                vec![auto_variant(h.width, h.height, crate::engine::driver_present(), rayon::current_num_threads())]
            } else {
                opts.variants.clone()
            };
            let per_pixel = peak_bytes_per_pixel(h, variants.len(), opts.intermediate, opts.needs_reference());
            opts.budget.check(&opts.input, h.width, h.height, memory::image_bytes(h.width, h.height, per_pixel))?;
            let chosen = variants.clone();
            let opening = opts.auto.then(|| s.spawn(move || open(&chosen)));
            Ok((variants, opening))
        };
        let decoded = timed(|| {
            if jpeg_to_gpu {
                if let Some((file, admitted)) = image_io::jpeg::read(&opts.input, &decode_opts, admit)? {
                    return Ok((Input::Jpeg(file), admitted));
                }
            }
            let (mut d, admitted) = image_io::decode(&opts.input, &decode_opts, admit)?;
            if jpeg_to_gpu {
                // A JPEG that jpeg::read left to the CPU: one whose EXIF orientation is to be applied.
                let path = opts.input.display();
                d.notes.insert(
                    0,
                    format!("{path}: decoded on the CPU (it applies the EXIF orientation; nvJPEG does not)"),
                );
            }
            Ok((Input::Decoded(d), admitted))
        });
        let (decoded, decode_ms) = decoded;
        match decoded {
            Ok((d, (variants, auto_opening))) => {
                let engine = opening.or(auto_opening).map(|t| t.join().expect("opening the GPU does not panic"));
                (engine, variants, (Ok(d), decode_ms))
            }
            Err(e) => {
                (opening.map(|t| t.join().expect("opening the GPU does not panic")), Vec::new(), (Err(e), decode_ms))
            }
        }
    });
    crate::trace::mark("decoded; GPU open");
    let engine = engine.unwrap_or_else(|| open(&[]));
    let (decoded, decode_ms) = match decoded {
        Ok(Input::Jpeg(file)) => {
            let (decoded, ms) = timed(|| decode_read_jpeg(opts, &engine, &file, &decode_opts));
            crate::trace::mark("JPEG decoded");
            (decoded, decode_ms + ms)
        }
        Ok(Input::Decoded(d)) => (Ok(d), decode_ms),
        Err(e) => (Err(e), decode_ms),
    };
    Ok(Opened { engine, variants, decoded: decoded?, decode_ms })
}

/// What the decode step hands on: the decoded image, or a JPEG read whole for nvJPEG.
enum Input {
    Decoded(image_io::Decoded),
    Jpeg(image_io::jpeg::JpegFile),
}

/// The RGB of a JPEG read for nvJPEG (`--jpeg-decoder gpu`): decoded on the GPU, or — when nvJPEG refuses the
/// file, or it is too large for one pass — by the CPU decoder, and one line says which ran and why. No GPU or no
/// nvJPEG is an error: the user asked for it.
fn decode_read_jpeg(
    opts: &Options,
    engine: &Engine,
    file: &image_io::jpeg::JpegFile,
    decode_opts: &image_io::DecodeOptions,
) -> Result<image_io::Decoded> {
    let path = opts.input.display();
    let why_cpu = match engine.jpeg_decoder() {
        Err(why) => {
            let reason = engine.gpu_error().map_or(why, |e| e.to_string());
            return Err(crate::error::Error::NoGpuDecoder { path: opts.input.clone(), reason });
        }
        Ok(decoder) => match engine.decode_jpeg(&file.bytes) {
            Ok(Some((rgb, on_engine))) => {
                let backend = if on_engine { "on the GPU's JPEG engine" } else { "on the GPU" };
                let library = decoder.split(',').next().unwrap_or_default();
                let note = format!("{path}: decoded by nvJPEG {backend} ({library})");
                return Ok(image_io::Decoded { rgb, notes: vec![note] });
            }
            Ok(None) => "too large for nvJPEG in one pass".to_string(),
            Err(e) => match e.to_string().lines().next().unwrap_or_default() {
                line if line.starts_with("nvJPEG") => line.to_string(),
                line => format!("nvJPEG: {line}"),
            },
        },
    };
    let (mut decoded, ()) = image_io::decode(&opts.input, decode_opts, |_| Ok(()))?;
    decoded.notes.insert(0, format!("{path}: decoded on the CPU ({why_cpu})"));
    Ok(decoded)
}
