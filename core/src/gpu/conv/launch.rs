//! The filter's launchers, one per pattern: the kernels each loads from its file, its block and how it launches one
//! pass. The one table of strategies ([`crate::variant::TABLE`]) names each GPU strategy's launcher.

use cudarc::driver::{CudaSlice, DriverError};

use super::{ConvJob, Prepared};
use crate::gpu::patterns::{self, conv_block, conv_double, conv_rolling, conv_separable, conv_strip};

/// Launches one pass of a prepared strategy: `(input, output, scratch)` and the pass (0 for a one-pass image; 1 and 2
/// for a two-pass gradient's Gx and Gy).
pub(crate) type Launcher =
    fn(&Prepared, &ConvJob, (&CudaSlice<u8>, &mut CudaSlice<u8>, &mut CudaSlice<u8>), i32) -> Result<(), DriverError>;

/// How a GPU strategy launches: the kernels it loads from its file, its block (`None`: the tuning's, else 32×8) and
/// its launcher.
pub(crate) struct Launch {
    pub(crate) functions: &'static [&'static str],
    pub(crate) block: Option<(u32, u32)>,
    pub(crate) launcher: Launcher,
}

/// A map pass (gpu-single, -constant, -local, -predefined differ in their `.cu` file alone): one launcher, with
/// gpu-single's taps buffer as the last argument where it has one. The kernel's name is its file's.
const fn map_pass(file: &'static [&'static str]) -> Launch {
    Launch {
        functions: file,
        block: None,
        launcher: |p, job, (i, o, gx), pass| {
            patterns::launch_conv_pass(
                job,
                &p.functions[0],
                (i, o, Some(gx)),
                (pass, p.taps.as_ref()),
                job.grid(job.block),
            )
        },
    }
}

/// gpu-single's map pass.
pub(crate) const SINGLE: Launch = map_pass(&["conv_single"]);
/// gpu-constant's map pass.
pub(crate) const CONSTANT: Launch = map_pass(&["conv_constant"]);
/// gpu-local's map pass.
pub(crate) const LOCAL: Launch = map_pass(&["conv_local"]);
/// gpu-predefined's map pass.
pub(crate) const PREDEFINED: Launch = map_pass(&["conv_predefined"]);

/// gpu-double: both gradients from one read of each window.
pub(crate) const DOUBLE: Launch = Launch {
    functions: &["conv_double"],
    block: None,
    launcher: |p, job, (i, o, _), _| conv_double::launch(job, &p.functions[0], i, o),
};

/// gpu-block: 16 pixels a thread.
pub(crate) const BLOCK: Launch = Launch {
    functions: &["conv_block"],
    block: Some(conv_block::BLOCK),
    launcher: |p, job, (i, o, _), _| conv_block::launch(job, &p.functions[0], i, o),
};

/// gpu-rolling: running row sums down each column.
pub(crate) const ROLLING: Launch = Launch {
    functions: &["conv_rolling"],
    block: Some(conv_rolling::BLOCK),
    launcher: |p, job, (i, o, _), _| conv_rolling::launch(job, &p.functions[0], i, o),
};

/// gpu-separable: the row pass into the scratch image, then the column pass.
pub(crate) const SEPARABLE: Launch = Launch {
    functions: &["conv_rows", "conv_columns"],
    block: Some(conv_separable::BLOCK),
    launcher: |p, job, (i, o, s), _| conv_separable::launch_two_pass(job, (&p.functions[0], &p.functions[1]), i, o, s),
};

/// gpu-separable-fused: both passes in one launch.
pub(crate) const SEPARABLE_FUSED: Launch = Launch {
    functions: &["conv_separable_fused"],
    block: Some(conv_separable::BLOCK),
    launcher: |p, job, (i, o, _), _| conv_separable::launch_fused(job, &p.functions[0], i, o),
};

/// gpu-strip: a box or a packed ring has two builds (columns a thread), one of which each image takes.
pub(crate) const STRIP: Launch = Launch {
    functions: &["conv_strip"],
    block: Some(conv_strip::BLOCK),
    launcher: |p, job, (i, o, _), _| {
        let b = conv_strip::build_for(&p.strip_columns, job.pixels() as u64);
        conv_strip::launch(job, &p.functions[b], i, o, (p.strip_columns[b], p.strip_rows, p.strip_march))
    },
};
