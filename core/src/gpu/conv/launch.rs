//! The filter's launch table: for each GPU strategy, the kernels it loads from its file, its block and its launcher.
//! With [`crate::conv::strategy::TABLE`] (its name, file, taps and what it accepts), the one table of the
//! strategies: a new strategy is a row of each.

use cudarc::driver::{CudaSlice, DriverError};

use super::{ConvJob, Prepared};
use crate::conv::Strategy;
use crate::gpu::patterns::{self, conv_block, conv_double, conv_rolling, conv_separable, conv_strip};

/// Launches one pass of a prepared strategy: `(input, output, scratch)` and the pass (0 for a one-pass image; 1 and 2
/// for a two-pass gradient's Gx and Gy).
pub(super) type Launcher =
    fn(&Prepared, &ConvJob, (&CudaSlice<u8>, &mut CudaSlice<u8>, &mut CudaSlice<u8>), i32) -> Result<(), DriverError>;

/// How a GPU strategy launches: the kernels it loads from its file, its block (`None`: the tuning's, else 32×8) and
/// its launcher.
pub(super) struct Launch {
    pub(super) functions: &'static [&'static str],
    pub(super) block: Option<(u32, u32)>,
    pub(super) launcher: Launcher,
}

/// Each GPU strategy's [`Launch`].
pub(super) fn launch_of(strategy: Strategy) -> Launch {
    // The map passes (gpu-single, -constant, -local, -predefined) differ in their `.cu` file alone: one launcher, with
    // gpu-single's taps buffer as the last argument where it has one.
    let map_pass: Launcher = |p, job, (i, o, gx), pass| {
        patterns::launch_conv_pass(job, &p.functions[0], (i, o, Some(gx)), (pass, p.taps.as_ref()), job.grid(job.block))
    };
    let (functions, block, launcher): (&'static [&'static str], _, Launcher) = match strategy {
        Strategy::GpuSingle => (&["conv_single"], None, map_pass),
        Strategy::GpuConstant => (&["conv_constant"], None, map_pass),
        Strategy::GpuLocal => (&["conv_local"], None, map_pass),
        Strategy::GpuPredefined => (&["conv_predefined"], None, map_pass),
        Strategy::GpuDouble => {
            (&["conv_double"], None, |p, job, (i, o, _), _| conv_double::launch(job, &p.functions[0], i, o))
        }
        Strategy::GpuBlock => (&["conv_block"], Some(conv_block::BLOCK), |p, job, (i, o, _), _| {
            conv_block::launch(job, &p.functions[0], i, o)
        }),
        Strategy::GpuRolling => (&["conv_rolling"], Some(conv_rolling::BLOCK), |p, job, (i, o, _), _| {
            conv_rolling::launch(job, &p.functions[0], i, o)
        }),
        Strategy::GpuSeparable => {
            (&["conv_rows", "conv_columns"], Some(conv_separable::BLOCK), |p, job, (i, o, s), _| {
                conv_separable::launch_two_pass(job, (&p.functions[0], &p.functions[1]), i, o, s)
            })
        }
        Strategy::GpuSeparableFused => {
            (&["conv_separable_fused"], Some(conv_separable::BLOCK), |p, job, (i, o, _), _| {
                conv_separable::launch_fused(job, &p.functions[0], i, o)
            })
        }
        // A box or a packed ring has two builds (columns a thread), one of which each image takes.
        Strategy::GpuStrip => (&["conv_strip"], Some(conv_strip::BLOCK), |p, job, (i, o, _), _| {
            let b = conv_strip::build_for(&p.strip_columns, job.pixels() as u64);
            conv_strip::launch(job, &p.functions[b], i, o, (p.strip_columns[b], p.strip_rows, p.strip_march))
        }),
        Strategy::CpuScalar | Strategy::CpuRayon => unreachable!("a GPU strategy"),
    };
    Launch { functions, block, launcher }
}
