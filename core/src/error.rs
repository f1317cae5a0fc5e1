//! Library errors. Each names the file it concerns and says what is wrong in one line; where an
//! underlying error adds something, it is the `source`, so `{:#}` (anyhow) prints "file: problem: cause".
//! `main` prints it; `cli` decides the exit code.

use std::path::PathBuf;

/// What can go wrong with a file: every message names the file and says what is wrong.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The file cannot be opened or read.
    #[error("{}: cannot read", path.display())]
    Read {
        /// The file concerned.
        path: PathBuf,
        /// The operating system's cause.
        source: std::io::Error,
    },
    /// A directory where an image file was expected.
    #[error("{}: is a directory, not an image file", path.display())]
    IsDirectory {
        /// The file concerned.
        path: PathBuf,
    },
    /// A FIFO, socket or device: reading it could block forever, so it is refused before it is opened.
    #[error("{}: is a {kind}, not a regular file (use - to read standard input)", path.display())]
    NotRegular {
        /// The file concerned.
        path: PathBuf,
        /// What it is instead ("FIFO", "socket", …).
        kind: &'static str,
    },
    /// A file of zero bytes.
    #[error("{}: empty file", path.display())]
    Empty {
        /// The file concerned.
        path: PathBuf,
    },
    /// `detail` is the decoder's own message (the image crate repeats its causes, so no `source`).
    #[error("{}: not a decodable image: {detail}", path.display())]
    Decode {
        /// The file concerned.
        path: PathBuf,
        /// The decoder's or encoder's own words.
        detail: String,
    },
    /// A header with zero width or height.
    #[error("{}: image has zero width or height ({width}×{height})", path.display())]
    ZeroSize {
        /// The file concerned.
        path: PathBuf,
        /// Width the header claims.
        width: u32,
        /// Height the header claims.
        height: u32,
    },
    /// More pixels than any run decodes (2^32), from the header.
    #[error("{}: too large: {width}×{height} is {} pixels, over the limit of {max_pixels}", path.display(), *width as u64 * *height as u64)]
    TooLarge {
        /// The file concerned.
        path: PathBuf,
        /// Width the header claims.
        width: u32,
        /// Height the header claims.
        height: u32,
        /// The largest image decoded, in pixels.
        max_pixels: u64,
    },
    /// An image whose estimated peak memory is over the budget, refused from its header.
    #[error("{}: too large: {width}×{height} needs ~{}, over the memory budget of {} (--max-memory)",
        path.display(), crate::memory::human(*needed), crate::memory::human(*budget))]
    OverBudget {
        /// The file concerned.
        path: PathBuf,
        /// Width the header claims.
        width: u32,
        /// Height the header claims.
        height: u32,
        /// Estimated peak bytes.
        needed: u64,
        /// The budget, bytes.
        budget: u64,
    },
    /// An output that cannot be written.
    #[error("{}: cannot write", path.display())]
    Write {
        /// The file concerned.
        path: PathBuf,
        /// The operating system's cause.
        source: std::io::Error,
    },
    /// An output path that is a directory.
    #[error("{}: output path is an existing directory", path.display())]
    OutputIsDirectory {
        /// The file concerned.
        path: PathBuf,
    },
    /// An output path that is (by device and inode, links followed) one of the inputs.
    #[error("{}: input and output are the same file{}", output.display(),
        if output == input { String::new() } else { format!(" ({})", input.display()) })]
    OutputIsInput {
        /// The output path.
        output: PathBuf,
        /// The input it would replace.
        input: PathBuf,
    },
    /// Two inputs of one batch whose outputs would have the same name.
    #[error("{}: both {} and {} would be written here; rename one, or run them in separate batches",
        output.display(), first.display(), second.display())]
    OutputCollision {
        /// The output path.
        output: PathBuf,
        /// The first input with that output.
        first: PathBuf,
        /// The second.
        second: PathBuf,
    },
    /// A batch output that would replace one of the batch's inputs.
    #[error("{}: is an input, and the output of {} would replace it; choose another --out", output.display(), from.display())]
    OutputReplacesInput {
        /// The output path.
        output: PathBuf,
        /// The input whose output it would be.
        from: PathBuf,
    },
    /// An output whose path goes through something that is not a folder.
    #[error("{}: cannot write: {} is not a folder", path.display(), parent.display())]
    ParentNotFolder {
        /// The file concerned.
        path: PathBuf,
        /// The part of the path that is not a folder.
        parent: PathBuf,
    },
    /// The encoder failed.
    #[error("{}: cannot encode {format}: {detail}", path.display())]
    Encode {
        /// The file concerned.
        path: PathBuf,
        /// The format's name ("png", "jpg", …).
        format: &'static str,
        /// The encoder's own words.
        detail: String,
    },
    /// An output whose format cannot hold the values written without loss.
    #[error("{}: {detail}", path.display())]
    CannotHold {
        /// The output path.
        path: PathBuf,
        /// What it would hold, and which formats can.
        detail: String,
    },
    /// An output whose extension names no format this tool writes.
    #[error("{}: cannot write .{extension} images: the extension chooses the format ({})", path.display(),
        crate::image_io::Format::all_extensions())]
    UnsupportedOutput {
        /// The output path.
        path: PathBuf,
        /// Its extension, lower case.
        extension: String,
    },
    /// `--jpeg-decoder gpu`, and nvJPEG cannot run here (no GPU, no library).
    #[error("{}: --jpeg-decoder gpu: {reason} (--jpeg-decoder auto decodes on the CPU instead)", path.display())]
    NoGpuDecoder {
        /// The JPEG concerned.
        path: PathBuf,
        /// Why nvJPEG cannot decode it.
        reason: String,
    },
    /// The GPU failed while streaming an image through it.
    #[error("{}: the GPU failed: {detail}", path.display())]
    Gpu {
        /// The image being processed.
        path: PathBuf,
        /// The driver's words.
        detail: String,
    },
}

/// A result whose error is an [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// An error and its causes on one line, joined by ": " (what anyhow's `{:#}` prints), for places that
/// keep errors as text, such as batch's list of failures.
pub fn one_line(e: &dyn std::error::Error) -> String {
    let mut line = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        line.push_str(": ");
        line.push_str(&s.to_string());
        source = s.source();
    }
    line
}
