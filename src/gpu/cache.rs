//! Compiled kernels on disk, so that a later run skips NVRTC: in `$CUDA_SOBEL_CACHE`, else
//! `$XDG_CACHE_HOME/cuda_sobel`, else `~/.cache/cuda_sobel`. An entry is keyed by the source text, the
//! options and this tool's version ([`super::compile::cache_key`], which says why not NVRTC's), and carries
//! a checksum of its own body: a truncated or corrupt entry is detected, deleted and rebuilt, never trusted.

use std::path::PathBuf;

/// SHA-256 of the entry's body, in hex (so that `sha256sum` can check an entry too).
fn checksum(body: &str) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(body.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// PTX files on disk. Every failure to read or write it just means compiling again.
pub struct PtxCache {
    dir: Option<PathBuf>,
}

/// An entry's first line; then the PTX. The checksum is the SHA-256 of everything after the first line.
const CACHE_MAGIC: &str = "// cuda_sobel PTX cache entry, body sha256 ";

impl PtxCache {
    /// The cache in its usual folder (see the module doc).
    pub fn in_default_folder() -> Self {
        let dir = std::env::var_os("CUDA_SOBEL_CACHE")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("XDG_CACHE_HOME").map(|d| PathBuf::from(d).join("cuda_sobel")))
            .or_else(|| std::env::var_os("HOME").map(|d| PathBuf::from(d).join(".cache/cuda_sobel")));
        PtxCache { dir }
    }

    fn path(&self, name: &str, key: u64) -> Option<PathBuf> {
        Some(self.dir.as_ref()?.join(format!("{name}-{key:016x}.ptx")))
    }

    /// The cached PTX, if present and intact; a damaged entry is removed.
    pub fn get(&self, name: &str, key: u64) -> Option<String> {
        let path = self.path(name, key)?;
        let text = std::fs::read(&path).ok()?;
        let intact = String::from_utf8(text).ok().and_then(|t| {
            let (first, body) = t.split_once('\n')?;
            (first.strip_prefix(CACHE_MAGIC)? == checksum(body) && !body.contains('\0')).then(|| body.to_owned())
        });
        if intact.is_none() {
            let _ = std::fs::remove_file(&path);
        }
        intact
    }

    /// Stores `ptx` under (`name`, `key`), atomically; a failure only costs a compile next time.
    pub fn put(&self, name: &str, key: u64, ptx: &str) {
        let Some(path) = self.path(name, key) else { return };
        let write = || -> std::io::Result<()> {
            let dir = path.parent().expect("cache entries live in a folder");
            std::fs::create_dir_all(dir)?;
            let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
            std::io::Write::write_all(&mut tmp, format!("{CACHE_MAGIC}{}\n{ptx}", checksum(ptx)).as_bytes())?;
            tmp.persist(&path)?;
            Ok(())
        };
        let _ = write(); // a read-only cache folder only costs a compile next time
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_damaged_cache_entry_is_removed_not_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let cache = PtxCache { dir: Some(dir.path().to_owned()) };
        let ptx = ".version 9.0\n.target sm_90\n// a kernel\n";
        cache.put("k", 7, ptx);
        assert_eq!(cache.get("k", 7).as_deref(), Some(ptx));
        assert_eq!(cache.get("k", 8), None, "another key is another entry");

        let path = cache.path("k", 7).unwrap();
        let full = std::fs::read(&path).unwrap();
        std::fs::write(&path, &full[..full.len() - 5]).unwrap(); // truncated
        assert_eq!(cache.get("k", 7), None);
        assert!(!path.exists(), "the damaged entry is deleted");

        cache.put("k", 7, ptx);
        let mut bytes = std::fs::read(&path).unwrap();
        let last = bytes.len() - 2;
        bytes[last] ^= 0x20; // one flipped bit in the body
        std::fs::write(&path, bytes).unwrap();
        assert_eq!(cache.get("k", 7), None);
    }
}
