//! A student's kernel (`--kernel-file my.cu`): compiled by NVRTC with the options our kernels get, launched
//! with the signature of `sobel_fused` — `(const u8* rgb, u8* out, int width, int height, int border)` —
//! on a 2-D grid of `block` blocks, each thread owning `pixels_per_thread` pixels along a row, and timed
//! exactly as our variants are ([`Gpu::time_runs`]). The output buffer is poisoned before every checked
//! run, so a kernel that skips pixels cannot pass by luck. The check itself is [`crate::student`]'s.

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaModule, CudaSlice, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::Ptx;
use image::RgbImage;

use super::compile::{arch_option, compile_text, options, student_source, Code};
use super::kernels::Build;
use super::patterns::Dims;
use super::{Gpu, GpuError};
use crate::sobel::Filter;

/// How a student's kernel is launched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Launch {
    /// Threads per block, x × y (`--block`).
    pub block: (u32, u32),
    /// Pixels each thread computes along its row (`--pixels-per-thread`).
    pub pixels_per_thread: u32,
}

impl Launch {
    /// The grid covering a `width × height` image.
    pub fn config(self, width: u32, height: u32) -> LaunchConfig {
        let across = self.block.0 * self.pixels_per_thread.max(1);
        LaunchConfig {
            grid_dim: (width.div_ceil(across), height.div_ceil(self.block.1), 1),
            block_dim: (self.block.0, self.block.1, 1),
            shared_mem_bytes: 0,
        }
    }
}

/// The names of the `extern "C" __global__` functions a source defines (what `--kernel-name` picks from).
pub fn entry_points(text: &str) -> Vec<String> {
    let mut flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    // `__launch_bounds__(…)` sits between the return type and the name; its parenthesis is not the name's.
    while let Some(at) = flat.find("__launch_bounds__(") {
        let close = flat[at..].find(')').map_or(flat.len(), |c| at + c + 1);
        flat.replace_range(at..close, "");
    }
    let mut names = Vec::new();
    let mut rest = flat.as_str();
    while let Some(at) = rest.find("extern \"C\" __global__") {
        rest = &rest[at + 21..];
        // The name is the identifier before the first `(`, after the return type and any qualifiers.
        if let Some(paren) = rest.find('(') {
            let head = rest[..paren].trim_end();
            let name: String = head.chars().rev().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            names.push(name.chars().rev().collect());
        }
    }
    names
}

/// Which entry point to run: `name` if given (and defined), else the only one.
pub fn pick_entry(file: &str, text: &str, name: Option<&str>) -> Result<String, String> {
    let found = entry_points(text);
    match (name, found.as_slice()) {
        (Some(n), _) if found.iter().any(|f| f == n) => Ok(n.to_owned()),
        (Some(n), _) => {
            Err(format!("{file}: no extern \"C\" __global__ function named {n} (found: {})", found.join(", ")))
        }
        (None, [one]) => Ok(one.clone()),
        (None, []) => {
            Err(format!("{file}: no extern \"C\" __global__ function: the entry needs the signature of sobel_fused"))
        }
        (None, many) => Err(format!(
            "{file}: several extern \"C\" __global__ functions ({}): pick one with --kernel-name",
            many.join(", ")
        )),
    }
}

/// Compiles a student's file to PTX for `compute_90` (no GPU needed): `--kernel-file F --emit-ptx DIR`.
pub fn compile_ptx(file: &str, text: &str, filter: Filter) -> Result<String, GpuError> {
    let source = student_source(file, text).map_err(|log| GpuError::Compile { file: file.into(), log })?;
    let ptx = compile_text(file, &source, &options(&arch_option(9, 0, Code::Ptx), Build::of(filter)), Code::Ptx)?;
    Ok(String::from_utf8_lossy(&ptx).into_owned())
}

/// A student's kernel, compiled for this GPU and loaded.
pub struct StudentKernel {
    _module: Arc<CudaModule>,
    function: CudaFunction,
    /// The entry point's name.
    pub name: String,
}

impl StudentKernel {
    /// Compiles `text` (the file `file`) for this GPU in `filter`'s build and loads the entry `name`.
    pub fn compile(gpu: &Gpu, file: &str, text: &str, name: &str, filter: Filter) -> Result<StudentKernel, GpuError> {
        let source = student_source(file, text).map_err(|log| GpuError::Compile { file: file.into(), log })?;
        let (major, minor) = gpu.ctx.compute_capability()?;
        let opts = options(&arch_option(major, minor, Code::Cubin), Build::of(filter));
        let cubin = compile_text(file, &source, &opts, Code::Cubin)?;
        let module = gpu.ctx.load_module(Ptx::from_binary(cubin))?;
        let function = module.load_function(name)?;
        Ok(StudentKernel { _module: module, function, name: name.to_owned() })
    }

    /// The loaded entry, for a harness that launches it itself (Canny's link step, [`crate::engine::Engine::student_canny`]).
    pub fn function(&self) -> &CudaFunction {
        &self.function
    }

    fn enqueue(
        &self,
        gpu: &Gpu,
        rgb: &CudaSlice<u8>,
        out: &mut CudaSlice<u8>,
        d: Dims,
        border: i32,
        launch: Launch,
    ) -> Result<(), GpuError> {
        assert!(rgb.len() >= 3 * d.pixels() && out.len() >= d.pixels());
        let mut b = gpu.stream.launch_builder(&self.function);
        b.arg(rgb).arg(out).arg(&d.width).arg(&d.height).arg(&border);
        // SAFETY: the documented contract (`--help`, docs/exercises.md): the entry takes (const u8*, u8*,
        // int, int, int) and touches only the 3·w·h input and w·h output bytes, both allocated here at those
        // sizes. A kernel breaking it is caught by the driver (an illegal-address error) or by the check.
        unsafe { b.launch(launch.config(d.width as u32, d.height as u32)) }?;
        Ok(())
    }

    /// One run on `rgb`, the output buffer filled with `poison` first; the output.
    pub fn run(&self, gpu: &Gpu, rgb: &RgbImage, border: i32, launch: Launch, poison: u8) -> Result<Vec<u8>, GpuError> {
        let d = Dims::new(rgb.width(), rgb.height())?;
        let input = gpu.stream.clone_htod(rgb.as_raw())?;
        let mut out = gpu.stream.clone_htod(&vec![poison; d.pixels()])?;
        self.enqueue(gpu, &input, &mut out, d, border, launch)?;
        let got = gpu.stream.clone_dtoh(&out)?;
        gpu.stream.synchronize()?;
        Ok(got)
    }

    /// `reps` event-timed runs after one warm-up, as our variants are timed; milliseconds each.
    pub fn time(
        &self,
        gpu: &Gpu,
        rgb: &RgbImage,
        border: i32,
        launch: Launch,
        reps: usize,
    ) -> Result<Vec<f64>, GpuError> {
        let d = Dims::new(rgb.width(), rgb.height())?;
        let input = gpu.stream.clone_htod(rgb.as_raw())?;
        let mut out = gpu.stream.alloc_zeros::<u8>(d.pixels())?;
        self.enqueue(gpu, &input, &mut out, d, border, launch)?;
        gpu.stream.synchronize()?;
        gpu.time_runs(reps.max(1), |_| self.enqueue(gpu, &input, &mut out, d, border, launch))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_points_are_found_by_name() {
        let src = "#include \"sobel.cuh\"\nextern \"C\" __global__ void\n  mine(const u8* rgb, u8* out, int w, int h, int b) {}\n\
                   __device__ int helper(int x) { return x; }\nextern \"C\" __global__ void __launch_bounds__(256) other(int x) {}";
        assert_eq!(entry_points(src), ["mine", "other"]);
        assert!(pick_entry("f.cu", src, None).unwrap_err().contains("--kernel-name"));
        assert_eq!(pick_entry("f.cu", src, Some("other")).unwrap(), "other");
        assert!(pick_entry("f.cu", src, Some("nope")).unwrap_err().contains("no extern"));
        assert_eq!(pick_entry("f.cu", &src[..80], None).unwrap(), "mine");
    }

    #[test]
    fn the_grid_covers_the_image() {
        let l = Launch { block: (16, 16), pixels_per_thread: 4 };
        let c = l.config(1025, 3);
        assert_eq!((c.grid_dim, c.block_dim), ((17, 1, 1), (16, 16, 1)));
    }
}
