//! Compiled kernels on disk (CUBIN for the device's architecture, or PTX), so that a later run skips NVRTC
//! and the driver's JIT: in `$CUDA_SOBEL_CACHE`, else
//! `$XDG_CACHE_HOME/cuda_sobel`, else `~/.cache/cuda_sobel`. An entry is keyed by the source text, the
//! options and this tool's version ([`super::compile::cache_key`], which says why not NVRTC's), and carries
//! a checksum of its own body: a truncated or corrupt entry is detected, deleted and rebuilt, never trusted.

use std::path::PathBuf;

use super::compile::Code;

/// SHA-256 of the entry's body, in hex (so that `sha256sum` can check an entry too).
fn checksum(body: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(body).iter().map(|b| format!("{b:02x}")).collect()
}

/// Compiled kernel files on disk. Every failure to read or write it just means compiling again.
pub struct CodeCache {
    dir: Option<PathBuf>,
}

/// An entry's first line; then the code. The checksum is the SHA-256 of everything after the first line.
const CACHE_MAGIC: &[u8] = b"// cuda_sobel kernel cache entry, body sha256 ";

impl CodeCache {
    /// The cache in its usual folder (see the module doc).
    pub fn in_default_folder() -> Self {
        let dir = std::env::var_os("CUDA_SOBEL_CACHE")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("XDG_CACHE_HOME").map(|d| PathBuf::from(d).join("cuda_sobel")))
            .or_else(|| std::env::var_os("HOME").map(|d| PathBuf::from(d).join(".cache/cuda_sobel")));
        CodeCache { dir }
    }

    fn path(&self, name: &str, key: u64, code: Code) -> Option<PathBuf> {
        Some(self.dir.as_ref()?.join(format!("{name}-{key:016x}.{}", code.extension())))
    }

    /// The cached code, if present and intact; a damaged entry is removed.
    pub fn get(&self, name: &str, key: u64, code: Code) -> Option<Vec<u8>> {
        let path = self.path(name, key, code)?;
        let bytes = std::fs::read(&path).ok()?;
        let intact = (|| {
            let newline = bytes.iter().position(|&b| b == b'\n')?;
            let (first, body) = (&bytes[..newline], &bytes[newline + 1..]);
            (first.strip_prefix(CACHE_MAGIC)? == checksum(body).as_bytes()).then(|| body.to_vec())
        })();
        if intact.is_none() {
            let _ = std::fs::remove_file(&path);
        }
        intact
    }

    /// Stores `body` under (`name`, `key`, `code`), atomically; a failure only costs a compile next time.
    pub fn put(&self, name: &str, key: u64, code: Code, body: &[u8]) {
        let Some(path) = self.path(name, key, code) else { return };
        let write = || -> std::io::Result<()> {
            let dir = path.parent().expect("cache entries live in a folder");
            std::fs::create_dir_all(dir)?;
            let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
            let entry = [CACHE_MAGIC, checksum(body).as_bytes(), b"\n", body].concat();
            std::io::Write::write_all(&mut tmp, &entry)?;
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
        let cache = CodeCache { dir: Some(dir.path().to_owned()) };
        let cubin: &[u8] = b"\x7fELF\x02\x01\x01\0\n\0machine code with NULs and newlines\n";
        cache.put("k", 7, Code::Cubin, cubin);
        assert_eq!(cache.get("k", 7, Code::Cubin).as_deref(), Some(cubin));
        assert_eq!(cache.get("k", 8, Code::Cubin), None, "another key is another entry");
        assert_eq!(cache.get("k", 7, Code::Ptx), None, "PTX and CUBIN are different entries");

        let path = cache.path("k", 7, Code::Cubin).unwrap();
        let full = std::fs::read(&path).unwrap();
        std::fs::write(&path, &full[..full.len() - 5]).unwrap(); // truncated
        assert_eq!(cache.get("k", 7, Code::Cubin), None);
        assert!(!path.exists(), "the damaged entry is deleted");

        cache.put("k", 7, Code::Cubin, cubin);
        let mut bytes = std::fs::read(&path).unwrap();
        let last = bytes.len() - 2;
        bytes[last] ^= 0x20; // one flipped bit in the body
        std::fs::write(&path, bytes).unwrap();
        assert_eq!(cache.get("k", 7, Code::Cubin), None);
    }
}
