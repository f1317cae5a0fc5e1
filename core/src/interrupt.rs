//! Temporary files that an interrupt cleans up.
//!
//! Every image is first written to a hidden temporary file beside its destination (`.cuda_sobel-<its name>.*.tmp`)
//! and renamed into place once complete. A `Ctrl-C` (SIGINT), SIGTERM or a closed terminal (SIGHUP) must
//! not leave those behind, so each one is registered here from the moment it exists until it is renamed
//! or removed, and a signal thread (signal-hook) removes every registered file, then ends the process with
//! 128 + the signal (130, 143, 129).
//!
//! One lock orders everything: creating a temporary file, renaming it into place and removing it all happen
//! while holding it, and the signal thread takes it and never gives it back. So a temporary file is either
//! registered or already gone when the signal thread looks, and no worker can create another afterwards.
//! (SIGKILL cannot be caught; what it leaves is hidden, batch skips hidden files, and the file's name says whose it
//! was: [`remove_stale`] removes it once no writer of that output is left, as the Dask client does after a run.)

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, Once};

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};

static REGISTRY: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
static INSTALL: Once = Once::new();

fn registry() -> MutexGuard<'static, Vec<PathBuf>> {
    // A panic elsewhere while holding the lock leaves the list intact; keep using it.
    REGISTRY.lock().unwrap_or_else(|e| e.into_inner())
}

/// Starts the signal thread (once per process; later calls do nothing).
pub fn install() {
    INSTALL.call_once(|| {
        let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
            return; // without handlers the default action (end at once) applies, as before
        };
        std::thread::spawn(move || {
            if let Some(signal) = signals.forever().next() {
                remove_all_and_exit(128 + signal);
            }
        });
    });
}

/// Removes every registered temporary file and ends the process with `code`. `_exit`, not `exit`: other
/// threads may be inside the CUDA driver, whose exit hooks could wait on them. The lock is never released,
/// so nothing new is created after this point.
fn remove_all_and_exit(code: i32) -> ! {
    let files = registry();
    for f in files.iter() {
        let _ = std::fs::remove_file(f);
    }
    signal_hook::low_level::exit(code)
}

/// Ends a command that has finished its work with `code` at once, skipping the CUDA driver's exit hooks:
/// with a GPU context open, a normal exit spent ~95 ms tearing it down (of a 0.32 s command on the H200,
/// `CUDA_SOBEL_TRACE=1`), and the OS reclaims it all anyway. Call it only
/// when every output is in place: standard output is flushed here, standard error is unbuffered.
pub fn exit_now(code: u8) -> ! {
    use std::io::Write as _;
    let _ = std::io::stdout().flush();
    remove_all_and_exit(code.into())
}

/// Writes `text` to standard output. When the reader has gone (`cuda_sobel … --json | head -1`), the
/// process ends quietly with exit 0, its temporary files removed, instead of panicking as `print!` does.
pub fn print(text: &str) {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            remove_all_and_exit(0);
        }
        // Anything else (a full disk under a redirect): say so once, on stderr.
        let _ = writeln!(std::io::stderr(), "cuda_sobel: standard output: {e}");
    }
}

/// [`print()`] with `format!` arguments.
#[macro_export]
macro_rules! say {
    ($($arg:tt)*) => { $crate::interrupt::print(&format!($($arg)*)) };
}

/// The start of the names of `dest`'s temporary files ([`TempFile::beside`]); `None` for a path without a name.
fn stale_prefix(dest: &Path) -> Option<String> {
    dest.file_name().and_then(|n| n.to_str()).map(|n| format!(".cuda_sobel-{n}."))
}

/// Removes the temporary files of `outputs` ([`TempFile::beside`]) that processes killed while writing them left
/// behind, and returns how many. Call it only where nothing writes those outputs any more: a live writer's file would
/// go too. Only names of exactly that form are touched, never an output or any other file. Each folder is listed
/// once, however many outputs it holds.
pub fn remove_stale(outputs: &[PathBuf]) -> std::io::Result<usize> {
    let mut by_folder: std::collections::HashMap<&Path, std::collections::HashSet<&std::ffi::OsStr>> =
        Default::default();
    for output in outputs {
        if let Some(name) = output.file_name() {
            let dir = output.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
            by_folder.entry(dir).or_default().insert(name);
        }
    }
    let mut removed = 0;
    for (dir, names) in by_folder {
        let entries = match std::fs::read_dir(dir) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            entries => entries?,
        };
        for entry in entries {
            let entry = entry?;
            let name = entry.file_name();
            // `.cuda_sobel-<output>.XXXXXX.tmp`, XXXXXX tempfile's six letters or digits.
            let Some(middle) = name.to_str().and_then(|n| n.strip_prefix(".cuda_sobel-")?.strip_suffix(".tmp")) else {
                continue;
            };
            let Some((output, random)) = middle.rsplit_once('.') else { continue };
            let random_part = random.len() == 6 && random.bytes().all(|b| b.is_ascii_alphanumeric());
            if random_part && names.contains(std::ffi::OsStr::new(output)) && entry.file_type()?.is_file() {
                std::fs::remove_file(entry.path())?;
                removed += 1;
            }
        }
    }
    Ok(removed)
}

/// A temporary file in `dir`, registered until it is persisted or dropped.
pub struct TempFile {
    file: Option<tempfile::NamedTempFile>,
}

impl TempFile {
    /// Creates a hidden temporary file in `dir` with the mode an output image should have (0644 less umask).
    pub fn new_in(dir: &Path) -> std::io::Result<TempFile> {
        TempFile::named(dir, ".cuda_sobel-", ".png.tmp")
    }

    /// [`TempFile::new_in`] beside `dest`, named after it (`.cuda_sobel-<name>.XXXXXX.tmp`), so that one a killed
    /// process left can be told from every other file ([`remove_stale`]). A name too long for that gets
    /// [`TempFile::new_in`]'s.
    pub fn beside(dest: &Path) -> std::io::Result<TempFile> {
        let dir = dest.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        match stale_prefix(dest) {
            Some(prefix) if prefix.len() + 16 <= 255 => TempFile::named(dir, &prefix, ".tmp"),
            _ => TempFile::new_in(dir),
        }
    }

    fn named(dir: &Path, prefix: &str, suffix: &str) -> std::io::Result<TempFile> {
        let mut reg = registry();
        let mut builder = tempfile::Builder::new();
        builder.prefix(prefix).suffix(suffix);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            builder.permissions(std::fs::Permissions::from_mode(0o644));
        }
        let file = builder.tempfile_in(dir)?;
        reg.push(file.path().to_owned());
        Ok(TempFile { file: Some(file) })
    }

    /// The open file, to write to.
    pub fn file(&mut self) -> &mut std::fs::File {
        self.file.as_mut().expect("present until persisted or dropped").as_file_mut()
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        self.file.as_ref().expect("present until persisted or dropped").path()
    }

    /// Renames the file to `dest` (replacing a regular file there).
    pub fn persist(mut self, dest: &Path) -> std::io::Result<()> {
        let mut reg = registry();
        let file = self.file.take().expect("present until persisted or dropped");
        let tmp = file.path().to_owned();
        match file.persist(dest) {
            Ok(_) => {
                reg.retain(|p| p != &tmp);
                Ok(())
            }
            Err(e) => {
                // The NamedTempFile comes back with the error; dropping it removes the file, still under the lock.
                drop(e.file);
                reg.retain(|p| p != &tmp);
                Err(e.error)
            }
        }
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if let Some(file) = self.file.take() {
            let mut reg = registry();
            let tmp = file.path().to_owned();
            let _ = file.close();
            reg.retain(|p| p != &tmp);
        }
    }
}

/// Whether `path` is registered for removal on an interrupt (for tests).
pub fn is_registered(path: &Path) -> bool {
    registry().iter().any(|p| p == path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temp_files_are_registered_until_persisted_or_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let a = TempFile::new_in(dir.path()).unwrap();
        let b = TempFile::new_in(dir.path()).unwrap();
        let (a_path, b_path) = (a.path().to_owned(), b.path().to_owned());
        assert!(is_registered(&a_path) && is_registered(&b_path));
        drop(b);
        assert!(!b_path.exists() && !is_registered(&b_path));
        a.persist(&dir.path().join("x.png")).unwrap();
        assert!(!is_registered(&a_path));
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, ["x.png"], "only x.png");
    }

    #[test]
    fn what_a_killed_writer_left_is_removed_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("a_sobel.png");
        // A writer killed mid-file: its temporary file is never persisted nor dropped.
        let left = TempFile::beside(&dest).unwrap();
        let left_path = left.path().to_owned();
        std::mem::forget(left);
        let name = left_path.file_name().unwrap().to_str().unwrap().to_owned();
        assert!(name.starts_with(".cuda_sobel-a_sobel.png.") && name.ends_with(".tmp"), "{name}");
        // Files that only look alike, and the output of another name, stay.
        let keep =
            [".cuda_sobel-a_sobel.png.seven77.tmp", ".cuda_sobel-b_sobel.png.abcdef.tmp", "a_sobel.png", "x.tmp"];
        for k in keep {
            std::fs::write(dir.path().join(k), b"mine").unwrap();
        }
        assert_eq!(remove_stale(&[dest.clone(), dir.path().join("c_sobel.png")]).unwrap(), 1);
        assert!(!left_path.exists());
        let mut names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        names.sort();
        let mut keep = keep.map(std::ffi::OsString::from).to_vec();
        keep.sort();
        assert_eq!(names, keep);
        assert_eq!(remove_stale(&[dir.path().join("missing/x.png")]).unwrap(), 0, "a folder that is not there");
        registry().retain(|p| p != &left_path);
    }
}
