//! `--variant auto`, the fast path for people who just want edges: which of cpu-rayon and gpu-strip
//! finishes a whole command first on this machine, predicted from the image's size, the CPU's threads and
//! a few measured figures — GPU start-up included.

use crate::variant::Variant;

/// What `--variant auto` weighs, each measured on the H200 machine (16 threads). Its choice must not cost the user: the GPU is picked only when it is predicted to save at least
/// [`Auto::margin_ms`] of the whole command.
#[derive(Clone, Copy, Debug)]
pub struct Auto {
    /// cpu-rayon's computation, ns per pixel per thread (66 ms at 16384² on 16 threads).
    pub cpu_ns_per_pixel_thread: f64,
    /// gpu-strip's staged copies and kernel, ns per pixel (4 bytes a pixel over the bus).
    pub gpu_ns_per_pixel: f64,
    /// Driver initialisation and context creation (210–320 ms), on a thread beside the decode: only the
    /// part longer than the decode is waited for.
    pub gpu_startup_ms: f64,
    /// PNG decoding, ns per pixel (1.26 s at 16384²), which hides the GPU's start-up.
    pub decode_ns_per_pixel: f64,
    /// The least predicted saving for which the GPU is worth its risks (a busier machine, a slower bus).
    pub margin_ms: f64,
}

/// The figures [`auto_variant`] uses.
pub const AUTO: Auto = Auto {
    cpu_ns_per_pixel_thread: 3.9,
    gpu_ns_per_pixel: 0.1,
    gpu_startup_ms: 320.0,
    decode_ns_per_pixel: 4.7,
    margin_ms: 100.0,
};

impl Auto {
    /// Predicted milliseconds of (cpu-rayon, gpu-strip) for `pixels` on `threads` threads, start-up included.
    pub fn predict(&self, pixels: f64, threads: usize) -> (f64, f64) {
        let cpu = pixels * self.cpu_ns_per_pixel_thread / threads.max(1) as f64 / 1e6;
        let hidden = pixels * self.decode_ns_per_pixel / 1e6;
        let gpu = pixels * self.gpu_ns_per_pixel / 1e6 + (self.gpu_startup_ms - hidden).max(0.0);
        (cpu, gpu)
    }
}

/// The variant `--variant auto` runs on a `width × height` image with `threads` CPU threads: gpu-strip when
/// `gpu_possible` and [`AUTO`] predicts it saves at least its margin, else cpu-rayon. On the H200 machine's
/// 16 threads that is never (cpu-rayon takes 66 ms at 16384²); on 4 threads, from about 11k × 11k.
pub fn auto_variant(width: u32, height: u32, gpu_possible: bool, threads: usize) -> Variant {
    let (cpu, gpu) = AUTO.predict(width as f64 * height as f64, threads);
    if gpu_possible && cpu - gpu >= AUTO.margin_ms {
        Variant::GpuStrip
    } else {
        Variant::CpuRayon
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_picks_the_gpu_only_for_large_images_with_a_driver() {
        // The H200 machine's 16 threads: cpu-rayon at every size up to 16384² (measured).
        assert_eq!(auto_variant(2048, 1024, true, 16), Variant::CpuRayon);
        assert_eq!(auto_variant(16384, 16384, true, 16), Variant::CpuRayon);
        // Fewer threads: the GPU for large images only, and never without a driver.
        assert_eq!(auto_variant(4096, 4096, true, 4), Variant::CpuRayon);
        assert_eq!(auto_variant(16384, 16384, true, 4), Variant::GpuStrip);
        assert_eq!(auto_variant(16384, 16384, false, 4), Variant::CpuRayon, "no driver: the CPU");
        assert_eq!(auto_variant(u32::MAX, u32::MAX, true, 16), Variant::GpuStrip, "no overflow");
    }
}
