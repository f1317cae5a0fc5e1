//! Library errors. Each names the file it concerns and says what is wrong in one line; where an
//! underlying error adds something, it is the `source`, so `{:#}` (anyhow) prints "file: problem: cause".
//! `main` prints it; `cli` decides the exit code.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{}: cannot read", path.display())]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{}: is a directory, not an image file", path.display())]
    IsDirectory { path: PathBuf },
    /// A FIFO, socket or device: reading it could block forever, so it is refused before it is opened.
    #[error("{}: is a {kind}, not a regular file (use - to read standard input)", path.display())]
    NotRegular { path: PathBuf, kind: &'static str },
    #[error("{}: empty file", path.display())]
    Empty { path: PathBuf },
    /// `detail` is the decoder's own message (the image crate repeats its causes, so no `source`).
    #[error("{}: not a decodable image: {detail}", path.display())]
    Decode { path: PathBuf, detail: String },
    #[error("{}: image has zero width or height ({width}×{height})", path.display())]
    ZeroSize { path: PathBuf, width: u32, height: u32 },
    #[error("{}: too large: {width}×{height} is {} pixels, over the limit of {max_pixels}", path.display(), *width as u64 * *height as u64)]
    TooLarge { path: PathBuf, width: u32, height: u32, max_pixels: u64 },
    #[error("{}: too large: {width}×{height} needs ~{}, over the memory budget of {} (--max-memory)",
        path.display(), crate::memory::human(*needed), crate::memory::human(*budget))]
    OverBudget { path: PathBuf, width: u32, height: u32, needed: u64, budget: u64 },
    #[error("{}: cannot write", path.display())]
    Write { path: PathBuf, source: std::io::Error },
    #[error("{}: output path is an existing directory", path.display())]
    OutputIsDirectory { path: PathBuf },
    /// An output path that is (by device and inode, links followed) one of the inputs.
    #[error("{}: input and output are the same file{}", output.display(),
        if output == input { String::new() } else { format!(" ({})", input.display()) })]
    OutputIsInput { output: PathBuf, input: PathBuf },
    /// Two inputs of one batch whose outputs would have the same name.
    #[error("{}: both {} and {} would be written here; rename one, or run them in separate batches",
        output.display(), first.display(), second.display())]
    OutputCollision { output: PathBuf, first: PathBuf, second: PathBuf },
    /// A batch output that would replace one of the batch's inputs.
    #[error("{}: is an input, and the output of {} would replace it; choose another --out", output.display(), from.display())]
    OutputReplacesInput { output: PathBuf, from: PathBuf },
    #[error("{}: cannot write: {} is not a folder", path.display(), parent.display())]
    ParentNotFolder { path: PathBuf, parent: PathBuf },
    #[error("{}: cannot encode PNG: {detail}", path.display())]
    Encode { path: PathBuf, detail: String },
}

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
