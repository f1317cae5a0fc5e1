//! What the filter's strategies are compiled with for a kernel (the `-D` options of `cuda/conv.cuh`), which builds
//! a strategy loads, and what its launches need (sums' bytes, launches an image).

use super::Tuning;
use crate::conv::{ConvKernel, Kind};
use crate::gpu::patterns::conv_strip;
use crate::variant::Taps;
use crate::variant::Variant;

/// The `-D` options of `kernel` for a file: the radius, the kind, the divisor, the sums' width, and (`taps`) the
/// taps themselves; `cuda/conv.cuh` says what each means.
pub fn defines(kernel: &ConvKernel, taps: bool) -> Vec<String> {
    let divisor = match kernel.kind {
        Kind::Smooth { divisor } => divisor,
        Kind::Gradient => 1,
    };
    let mut d = vec![format!("-DCONV_R={}", kernel.radius), format!("-DCONV_DIVISOR={divisor}")];
    if kernel.kind == Kind::Gradient {
        d.push("-DCONV_GRADIENT=1".into());
        d.push(format!("-DCONV_BOUND={}", kernel.bound()));
    }
    if kernel.wide() {
        d.push("-DCONV_WIDE=1".into());
    }
    if kernel.taps.iter().all(|&t| t >= 0) {
        d.push("-DCONV_NONNEG=1".into());
    }
    if taps {
        d.push(format!("-DCONV_TAPS={}", list(&kernel.taps)));
    }
    d
}

fn list(taps: &[i32]) -> String {
    taps.iter().map(i32::to_string).collect::<Vec<_>>().join(",")
}

/// The `-D` options of a rank-one kernel's factors (gpu-strip compiles them in): `CONV_COLUMN` and `CONV_ROW`,
/// `CONV_STRIDE` where its ring keeps every S-th row only ([`ConvKernel::ring_stride`]), and `CONV_FLAT` for a box
/// (every factor tap 1, a smoothing kernel), which the file sums with running sums.
pub fn factor_defines(kernel: &ConvKernel) -> Vec<String> {
    let Some((column, row)) = kernel.factors() else { return Vec::new() };
    let mut d = vec![format!("-DCONV_COLUMN={}", list(&column)), format!("-DCONV_ROW={}", list(&row))];
    d.extend((kernel.ring_stride() > 1).then(|| format!("-DCONV_STRIDE={}", kernel.ring_stride())));
    d.extend(is_box(kernel).then(|| "-DCONV_FLAT=1".to_string()));
    d
}

/// A smoothing kernel whose factors are all ones (a box): gpu-strip sums it with running sums, 16 columns a thread,
/// along the row in floats — so only where every sum plus ⌊d/2⌋ stays below 2^23, where floats are exact (every
/// named box; a matrix file of ones with a larger divisor takes the ring, see `cuda/conv_strip.cu`).
pub fn is_box(kernel: &ConvKernel) -> bool {
    let ones = |v: &[i32]| v.iter().all(|&t| t == 1);
    let Kind::Smooth { divisor } = kernel.kind else { return false };
    kernel.factors().is_some_and(|(column, row)| ones(&column) && ones(&row)) && kernel.bound() + divisor / 2 < 1 << 23
}

/// The kernel file and the NVRTC options (`arch`, then the `-D` constants) that GPU `strategy` is compiled with
/// for `kernel`: the taps compiled in for gpu-predefined, gpu-block, gpu-rolling and "local + predefined"; gpu-local's
/// tile shape and loaders.
pub fn build_of(arch: &str, kernel: &ConvKernel, strategy: Variant, t: Tuning) -> (&'static str, Vec<String>) {
    let row = strategy.kernels().expect("a strategy of the filter command");
    let file = row.file.expect("a GPU strategy");
    let compiled = row.taps == Taps::Compiled || t.local_predefined;
    let mut options = crate::gpu::compile::base_options(arch);
    options.extend(defines(kernel, compiled));
    if row.taps == Taps::CompiledFactors {
        options.extend(factor_defines(kernel));
        options.extend(t.strip_columns.map(|c| format!("-DSTRIP_G={c}")));
    }
    if t.overlap {
        options.push("-DCONV_OVERLAP=1".into());
    }
    if strategy == Variant::GpuLocal {
        if let Some((w, h)) = t.block {
            options.extend([format!("-DTILE_W={w}"), format!("-DTILE_H={h}")]);
        }
        if let Some(n) = t.tile_loaders {
            options.push(format!("-DTILE_LOADERS={n}"));
        }
        if t.local_predefined {
            options.push("-DLOCAL_PREDEFINED=1".into());
        }
    }
    options.extend(crate::gpu::compile::extra_defines()); // a tuning to try (`CUDA_SOBEL_DEFINES`), after the rest
    (file, options)
}

/// The builds [`super::ConvGpu::prepare`] loads for `strategy` on `kernel` (each a tuning for [`build_of`]), and gpu-strip's
/// columns a thread of each: the tuning's, a ring's 4, or two builds (a box's 16 and 8, a packed ring's 8 and 4), one
/// of which each image takes (`enqueue`).
pub fn tunings_of(kernel: &ConvKernel, strategy: Variant, t: Tuning) -> (Vec<u32>, Vec<Tuning>) {
    let strip_columns = match t.strip_columns {
        Some(c) => vec![c],
        None if strategy == Variant::GpuStrip => {
            conv_strip::column_builds(is_box(kernel), kernel.strip_packed()).to_vec()
        }
        None => vec![conv_strip::columns(is_box(kernel))],
    };
    let tunings = if strip_columns.len() > 1 {
        strip_columns.iter().map(|&c| Tuning { strip_columns: Some(c), ..t }).collect()
    } else {
        vec![t]
    };
    (strip_columns, tunings)
}

/// Whether `strategy` computes `kernel`'s gradient in two map passes through a Gx plane: `t.two_pass`, or its row's
/// default, where its row lets a tuning choose.
pub(super) fn two_pass(kernel: &ConvKernel, strategy: Variant, t: Tuning) -> bool {
    kernel.kind == Kind::Gradient
        && strategy.kernels().and_then(|k| k.two_pass).is_some_and(|default| t.two_pass.unwrap_or(default))
}

/// Launches `strategy` makes an image of `kernel`: two for a two-pass gradient and for gpu-separable, whose second
/// reads what the first wrote to the scratch buffer (which the next image's first launch reuses: so only strategies
/// of one launch take [`Tuning::overlap`]), else one.
pub fn launches_an_image(kernel: &ConvKernel, strategy: Variant, t: Tuning) -> u32 {
    1 + (strategy == Variant::GpuSeparable || two_pass(kernel, strategy, t)) as u32
}
