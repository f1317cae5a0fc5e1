//! Writing outputs without touching what the user owns.
//!
//! - Every output is checked before any work: not a directory, not one of the inputs (device and inode,
//!   links followed), its folder writable (probed by creating and removing a file there), its name not
//!   too long. So an unwritable destination fails in milliseconds, not after the decode.
//! - A regular file (or a new name) is written to a hidden temporary file beside it and renamed into place
//!   once complete; a file it replaces keeps its permission bits; a symbolic link is followed, so the link
//!   stays and its target is replaced. Something that is not a regular file — `/dev/null`, a FIFO — is
//!   opened and written through, never replaced; `-` is standard output.
//! - [`Staged`] makes a set of outputs (an edge image and its intermediates) appear together or not at
//!   all: every image is encoded to its temporary file first, and only then are all renamed.
//! - The output's extension chooses its format ([`super::format`]); each output carries the
//!   `Software: cuda_sobel` marker where its format has a place for one, so `batch` can tell its own
//!   outputs from a user's files when it lists a folder.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::interrupt::TempFile;

use super::format::{self, EncodeError, Format, Picture};
use super::png_out;
pub use super::png_out::encode_png;
use super::PngCompression;

/// The path that means standard output.
pub const STDOUT: &str = "-";
/// Longest file name most Linux file systems take (NAME_MAX).
const NAME_MAX: usize = 255;

/// Where one output goes, decided by [`plan`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// A regular file, existing (`mode` is kept) or new: temporary file, then rename.
    File {
        /// The file (links resolved).
        path: PathBuf,
        /// The permissions of the file it replaces, kept.
        mode: Option<std::fs::Permissions>,
    },
    /// An existing FIFO, character device or other non-regular file: written through, never replaced.
    Through(PathBuf),
    /// `-`: standard output.
    Stdout,
}

impl Target {
    /// The path as the user should read it.
    pub fn display_path(&self) -> PathBuf {
        match self {
            Target::File { path, .. } | Target::Through(path) => path.clone(),
            Target::Stdout => PathBuf::from(STDOUT),
        }
    }
}

/// Device and inode of what `path` names, links followed.
pub fn identity(path: &Path) -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        None
    }
}

/// The format `output`'s extension chooses ([`Format::of_path`]; standard output is PNG), or the one-line
/// refusal of an extension no format has.
pub fn format_of(output: &Path) -> Result<Format> {
    if output.as_os_str() == STDOUT {
        return Ok(Format::Png);
    }
    Format::of_path(output).map_err(|extension| Error::UnsupportedOutput { path: output.to_owned(), extension })
}

/// Checks `output` against every input and the file system, before any work, and says how to write it:
/// its format ([`format_of`]), [`target`], then a probe that its folder takes a new file.
pub fn plan(output: &Path, inputs: &[PathBuf]) -> Result<Target> {
    format_of(output)?;
    if let Some(id) = identity(output) {
        if let Some(input) = inputs.iter().find(|i| identity(i) == Some(id)) {
            return Err(Error::OutputIsInput { output: output.to_owned(), input: input.clone() });
        }
    }
    let target = target(output)?;
    let write_err = |source| Error::Write { path: output.to_owned(), source };
    if let Target::File { path, mode } = &target {
        if mode.is_some() {
            probe_folder(parent_of(path)).map_err(write_err)?;
        } else {
            probe_new(path).map_err(write_err)?;
        }
    }
    Ok(target)
}

/// How `output` would be written, from what the file system says of it now (no probe): a new or regular
/// file (links followed), something to write through, or standard output.
pub fn target(output: &Path) -> Result<Target> {
    if output.as_os_str() == STDOUT {
        return Ok(Target::Stdout);
    }
    let write_err = |source| Error::Write { path: output.to_owned(), source };
    match std::fs::metadata(output) {
        Ok(m) if m.is_dir() => Err(Error::OutputIsDirectory { path: output.to_owned() }),
        Ok(m) if m.is_file() => {
            // Follow links: the link stays, the file it names is replaced.
            let path = std::fs::canonicalize(output).map_err(write_err)?;
            Ok(Target::File { path, mode: Some(m.permissions()) })
        }
        Ok(_) => Ok(Target::Through(output.to_owned())),
        Err(_) if std::fs::symlink_metadata(output).is_ok() => {
            Err(write_err(std::io::Error::new(std::io::ErrorKind::NotFound, "a symbolic link to nothing (dangling)")))
        }
        Err(_) => {
            check_name_lengths(output).map_err(write_err)?;
            let existing = nearest_existing(output);
            match std::fs::metadata(&existing) {
                Ok(m) if !m.is_dir() => Err(Error::ParentNotFolder { path: output.to_owned(), parent: existing }),
                Ok(_) => Ok(Target::File { path: output.to_owned(), mode: None }),
                Err(e) => Err(write_err(e)),
            }
        }
    }
}

/// Checks that `dir` is, or can become, a folder that takes new files (batch's `--out`).
pub fn check_folder(dir: &Path) -> Result<()> {
    let write_err = |source| Error::Write { path: dir.to_owned(), source };
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => probe_folder(dir).map_err(write_err),
        Ok(_) => Err(Error::ParentNotFolder { path: dir.to_owned(), parent: dir.to_owned() }),
        Err(_) => match target(&dir.join("x"))? {
            Target::File { path, .. } => probe_new(&path).map_err(write_err),
            _ => Ok(()),
        },
    }
}

fn parent_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// The longest leading part of `path` that exists (at worst ".").
fn nearest_existing(path: &Path) -> PathBuf {
    let mut p = parent_of(path);
    loop {
        if std::fs::symlink_metadata(p).is_ok() {
            return p.to_owned();
        }
        match p.parent() {
            Some(q) if !q.as_os_str().is_empty() => p = q,
            _ => return PathBuf::from("."),
        }
    }
}

fn check_name_lengths(path: &Path) -> std::io::Result<()> {
    if path.components().any(|c| c.as_os_str().len() > NAME_MAX) {
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "File name too long"));
    }
    Ok(())
}

/// Can a file be created in `dir`? (A temporary one, removed at once.)
fn probe_folder(dir: &Path) -> std::io::Result<()> {
    TempFile::new_in(dir).map(drop)
}

/// Can `path`, which does not exist, be created? A temporary file is made and removed where it would go
/// (or a folder, where the first missing folder would go). Never the name itself: another process may be
/// writing the same output, and removing our probe could then remove its finished file.
fn probe_new(path: &Path) -> std::io::Result<()> {
    let existing = nearest_existing(path);
    if existing == parent_of(path) {
        probe_folder(&existing)
    } else {
        tempfile::Builder::new().prefix(".cuda_sobel-").tempdir_in(&existing).map(drop)
    }
}

/// Writes a grey `width × height` PNG whose image data `zlib` is already deflated — one zlib stream over rows of
/// a filter byte and the pixels, as `cuda/deflate.cu` makes it — at `target`, whole or not at all (as `write`).
pub fn write_png_zlib(target: &Target, width: u32, height: u32, zlib: &[u8]) -> Result<()> {
    let mut staged = Staged::new();
    staged.png_zlib(target, width, height, zlib)?;
    staged.commit()
}

/// Refuses, before any work, an output whose format cannot hold `kind` of values without loss, naming the
/// formats that can.
pub fn check_holds(output: &Path, kind: super::format::SampleKind, what: &str) -> Result<()> {
    let format = format_of(output)?;
    if format.holds(kind).is_some() {
        return Ok(());
    }
    Err(Error::CannotHold {
        path: output.to_owned(),
        detail: format!(
            ".{} cannot hold {what}'s {} values without loss: write it as {}",
            format.name(),
            kind.name(),
            super::format::Format::holding(kind)
        ),
    })
}

/// Outputs that appear together or not at all: [`Staged::image`] encodes each to a temporary file (or, for a
/// write-through target, to memory), [`Staged::commit`] moves them all into place. Dropped without a
/// commit, it removes its temporary files and any folder it made.
#[derive(Default)]
pub struct Staged {
    pending: Vec<Pending>,
    made_folders: Vec<PathBuf>,
}

enum Pending {
    Temp { tmp: TempFile, dest: PathBuf, existed: bool },
    Bytes { target: Target, bytes: Vec<u8> },
}

impl Staged {
    /// Nothing staged yet.
    pub fn new() -> Staged {
        Staged::default()
    }

    /// Encodes `img` for `target`, in its format.
    pub fn image(&mut self, target: &Target, img: &Picture) -> Result<()> {
        self.stage(target, img.format, |w| format::encode(w, img))
    }

    /// Encodes a grey `width × height` edge image for `target` as `rows` writes its rows, in order, into the
    /// writer it is given: the streamed pipeline's encoder ([`crate::engine::stream`]). An image whose rows do not
    /// all arrive (`rows` fails, or stops early) leaves nothing behind, as [`Staged::image`] does.
    pub fn png_rows(
        &mut self,
        target: &Target,
        width: u32,
        height: u32,
        compression: PngCompression,
        rows: impl FnOnce(&mut dyn Write) -> Result<()>,
    ) -> Result<()> {
        self.stage(target, Format::Png, |w| png_out::encode_png_rows(w, width, height, compression, rows))
    }

    /// A grey `width × height` PNG for `target` whose image data `zlib` is already deflated (one zlib stream,
    /// as `cuda/deflate.cu` makes it).
    pub fn png_zlib(&mut self, target: &Target, width: u32, height: u32, zlib: &[u8]) -> Result<()> {
        self.stage(target, Format::Png, |w| Ok(png_out::encode_png_zlib(w, width, height, zlib)?))
    }

    /// Runs `encode` (of a `format` file) into `target`'s temporary file (a regular file) or into memory
    /// (anything else), and keeps the result for [`Staged::commit`].
    fn stage(
        &mut self,
        target: &Target,
        format: Format,
        encode: impl FnOnce(&mut dyn Write) -> std::result::Result<(), EncodeError>,
    ) -> Result<()> {
        let shown = target.display_path();
        let write_err = |source| Error::Write { path: shown.clone(), source };
        let encode_err = |e: EncodeError| match e {
            EncodeError::Io(source) => Error::Write { path: shown.clone(), source },
            EncodeError::Codec(detail) => Error::Encode { path: shown.clone(), format: format.name(), detail },
            EncodeError::Source(ours) => ours,
        };
        match target {
            Target::File { path, mode } => {
                self.make_folders(parent_of(path)).map_err(write_err)?;
                let mut tmp = TempFile::beside(path).map_err(write_err)?;
                if let Some(mode) = mode {
                    tmp.file().set_permissions(mode.clone()).map_err(write_err)?;
                }
                let mut out = BufWriter::new(tmp.file());
                encode(&mut out).map_err(encode_err)?;
                out.flush().map_err(write_err)?;
                drop(out);
                self.pending.push(Pending::Temp { tmp, dest: path.clone(), existed: mode.is_some() });
            }
            Target::Through(_) | Target::Stdout => {
                let mut bytes = Vec::new();
                encode(&mut bytes).map_err(encode_err)?;
                self.pending.push(Pending::Bytes { target: target.clone(), bytes });
            }
        }
        Ok(())
    }

    fn make_folders(&mut self, dir: &Path) -> std::io::Result<()> {
        let mut missing = Vec::new();
        let mut p = dir;
        while std::fs::symlink_metadata(p).is_err() {
            missing.push(p.to_owned());
            match p.parent() {
                Some(q) if !q.as_os_str().is_empty() => p = q,
                _ => break,
            }
        }
        for d in missing.into_iter().rev() {
            match std::fs::create_dir(&d) {
                // Only folders this call made are removed again on failure, never one another process made.
                Ok(()) => self.made_folders.push(d),
                Err(_) if d.is_dir() => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Moves every staged output into place. If one fails, the ones already placed that were new are
    /// removed again (a file that was replaced cannot be brought back; the checks before the work make that
    /// failure unlikely).
    pub fn commit(mut self) -> Result<()> {
        let mut placed: Vec<PathBuf> = Vec::new();
        let pending = std::mem::take(&mut self.pending);
        for p in pending {
            let result = match p {
                Pending::Temp { tmp, dest, existed } => {
                    let r = tmp.persist(&dest).map_err(|source| Error::Write { path: dest.clone(), source });
                    if r.is_ok() && !existed {
                        placed.push(dest);
                    }
                    r
                }
                Pending::Bytes { target: Target::Stdout, bytes } => {
                    let mut out = std::io::stdout().lock();
                    out.write_all(&bytes)
                        .and_then(|_| out.flush())
                        .map_err(|source| Error::Write { path: PathBuf::from(STDOUT), source })
                }
                Pending::Bytes { target, bytes } => {
                    let path = target.display_path();
                    std::fs::OpenOptions::new()
                        .write(true)
                        .open(&path)
                        .and_then(|mut f| f.write_all(&bytes))
                        .map_err(|source| Error::Write { path, source })
                }
            };
            if let Err(e) = result {
                for f in placed {
                    let _ = std::fs::remove_file(f);
                }
                return Err(e);
            }
        }
        self.made_folders.clear(); // they hold the outputs now
        Ok(())
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        self.pending.clear(); // removes the temporary files
        for d in self.made_folders.iter().rev() {
            let _ = std::fs::remove_dir(d); // only if empty
        }
    }
}

/// Writes one image to a planned target, atomically.
pub fn write(target: &Target, img: &Picture) -> Result<()> {
    let mut staged = Staged::new();
    staged.image(target, img)?;
    staged.commit()
}

/// Writes one image at `path` (checked, atomic): for `generate`, the bench and tests.
pub fn write_image(path: &Path, img: &Picture) -> Result<()> {
    write(&plan(path, &[])?, img)
}
