//! Where a batch's threads spent their time, for `CUDA_SOBEL_TRACE`.

use crate::engine::Engine;
use crate::trace::TimeSum;

/// Thread-seconds a batch's workers spent reading (and inflating), on the GPU path (waiting for a slot and holding
/// it) and encoding and writing — for now the PNG inputs the GPU unfilters — printed with `CUDA_SOBEL_TRACE`.
#[derive(Default)]
pub(super) struct Stages {
    pub read: TimeSum,
    pub gpu: TimeSum,
    pub write: TimeSum,
}

impl Stages {
    pub fn trace(&self, engines: &[Engine], wall: f64, images: usize, threads: usize) {
        let (waited, held) =
            engines.iter().filter_map(Engine::slot_times).fold((0.0, 0.0), |a, t| (a.0 + t.0, a.1 + t.1));
        let per = |s: f64| s * 1e3 / images.max(1) as f64;
        crate::trace::mark(&format!(
            "batch: {images} images in {wall:.2} s; thread-seconds (ms an image): read + inflate {:.1} ({:.2}), GPU {:.1} \
             ({:.2}: waiting for a slot {:.2}, holding one {:.2}), encode + write {:.1} ({:.2}); {} threads",
            self.read.seconds(),
            per(self.read.seconds()),
            self.gpu.seconds(),
            per(self.gpu.seconds()),
            per(waited),
            per(held),
            self.write.seconds(),
            per(self.write.seconds()),
            threads
        ));
        for stats in engines.iter().filter_map(Engine::jpeg_engine_stats).filter(|s| s.calls > 0) {
            crate::trace::mark(&format!(
                "the JPEG engine: {} calls, {} images ({:.1} a call), in calls {:.2} s of {wall:.2}; a JPEG's wait for its decode {:.2} ms",
                stats.calls,
                stats.images,
                stats.images as f64 / stats.calls as f64,
                stats.in_calls,
                per(stats.jobs_waited)
            ));
        }
    }
}
