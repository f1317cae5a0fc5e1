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
    #[error("{}: empty file", path.display())]
    Empty { path: PathBuf },
    /// `detail` is the decoder's own message (the image crate repeats its causes, so no `source`).
    #[error("{}: not a decodable image: {detail}", path.display())]
    Decode { path: PathBuf, detail: String },
    #[error("{}: image has zero width or height ({width}×{height})", path.display())]
    ZeroSize { path: PathBuf, width: u32, height: u32 },
    #[error("{}: too large: {width}×{height} is {} pixels, over the limit of {max_pixels}", path.display(), *width as u64 * *height as u64)]
    TooLarge { path: PathBuf, width: u32, height: u32, max_pixels: u64 },
    #[error("{}: cannot write", path.display())]
    Write { path: PathBuf, source: std::io::Error },
    #[error("{}: output path is an existing directory", path.display())]
    OutputIsDirectory { path: PathBuf },
    #[error("{}: input and output are the same file", path.display())]
    SameFile { path: PathBuf },
    #[error("{}: cannot encode PNG: {detail}", path.display())]
    Encode { path: PathBuf, detail: String },
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
