//! What a batch run did, and the summary the terminal shows.

use std::path::PathBuf;

/// What a batch run did.
#[derive(Debug)]
pub struct BatchSummary {
    /// Files taken.
    pub images: usize,
    /// Each failed file with its one-line reason.
    pub failures: Vec<(PathBuf, String)>,
    /// Wall clock of the whole batch.
    pub seconds: f64,
    /// Bytes of the inputs that succeeded.
    pub input_bytes: u64,
    /// What computed the edges: "gpu-strip on …", "cpu-rayon (…)", or "none (baseline)".
    pub engine: String,
    /// One line per kind of thing the listed folders held that was not taken, with how many and why.
    pub skipped: Vec<String>,
    /// One line per thing the user should know about an input (orientation applied, animation).
    pub notes: Vec<String>,
    /// Outputs whose PNG data the GPU deflated (`--png-encoder auto`).
    pub gpu_deflated: u64,
    /// JPEGs nvJPEG decoded, and of them those its JPEG engine decoded (the GPU's hardware decoder).
    pub nvjpeg_decoded: (u64, u64),
    /// PNGs nvCOMP inflated on the GPU (`--png-inflate`).
    pub nvcomp_inflated: u64,
}

impl BatchSummary {
    /// Images that succeeded, per second.
    pub fn images_per_second(&self) -> f64 {
        (self.images - self.failures.len()) as f64 / self.seconds
    }
}

/// The summary as the terminal shows it.
pub fn summary_text(s: &BatchSummary) -> String {
    use std::fmt::Write as _;
    let mut t = String::new();
    let ok = s.images - s.failures.len();
    let _ = writeln!(
        t,
        "batch: {ok} of {} images in {:.2} s — {:.1} images/s, {:.0} MB/s of input — {}",
        s.images,
        s.seconds,
        s.images_per_second(),
        s.input_bytes as f64 / 1e6 / s.seconds,
        s.engine
    );
    if let (n @ 1.., on_engine) = s.nvjpeg_decoded {
        let _ = writeln!(t, "{n} JPEGs decoded by nvJPEG on the GPU, {on_engine} of them by its JPEG engine");
    }
    if s.nvcomp_inflated > 0 {
        let _ = writeln!(
            t,
            "{} PNGs inflated by nvCOMP on the GPU (--png-inflate), the others on the CPU",
            s.nvcomp_inflated
        );
    }
    if s.gpu_deflated > 0 {
        let _ = writeln!(t, "{} PNGs deflated on the GPU (--png-encoder auto), the others on the CPU", s.gpu_deflated);
    }
    for line in &s.skipped {
        let _ = writeln!(t, "{line}");
    }
    for note in &s.notes {
        let _ = writeln!(t, "note: {note}");
    }
    if !s.failures.is_empty() {
        let _ = writeln!(t, "failed ({}):", s.failures.len());
        for (_, reason) in &s.failures {
            let _ = writeln!(t, "  {reason}");
        }
    }
    t
}
