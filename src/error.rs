//! Library errors. Each names the file it concerns; the cause is its `source`, so `{:#}` (anyhow) prints
//! "file: problem: cause" on one line. `main` prints it; `cli` decides the exit code.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{}: cannot read", path.display())]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{}: not a decodable image", path.display())]
    Decode { path: PathBuf, source: image::ImageError },
    #[error("{}: cannot write", path.display())]
    Write { path: PathBuf, source: std::io::Error },
    #[error("{}: cannot encode PNG", path.display())]
    Encode { path: PathBuf, source: image::ImageError },
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
