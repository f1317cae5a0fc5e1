//! Machine code shipped inside the binary for the GPUs we measure on (sm_90: H100, H200), so that a first
//! run there compiles nothing: NVRTC takes 1.4–2.4 s for `cuda/strip.cu` alone
//! (H200), more than the rest of a first run together. Only the default build (Sobel 3×3, exact, the edges) of the
//! files the edge command runs; other builds, the filter command's builds and other GPUs compile on first use and are
//! cached ([`super::cache`]).
//!
//! `kernels/sm_90/` is made by `scripts/prebuild-kernels.sh` (NVRTC 13.0.88, the options of
//! [`super::compile`]). Each embedded file is used only when its MANIFEST key is the key the running binary
//! computes for that source and options — so code built from an older source can never be loaded — and
//! its SHA-256 matches. `tests/kernels.rs` checks in CI that every key is current.
//! `CUDA_SOBEL_NO_PREBUILT=1` ignores them (to measure or test the compile path on these GPUs).

use super::compile::Code;

/// Where the files live, from the repository root.
pub const DIR: &str = "kernels/sm_90";
/// The compute capability the files are built for.
pub const MAJOR: i32 = 9;
/// The compute capability the files are built for.
pub const MINOR: i32 = 0;

const MANIFEST: &str = include_str!("../../../kernels/sm_90/MANIFEST");

macro_rules! embed {
    ([$($name:ident),*], [$($shared:ident),*], [$($conv:ident),*]) => {
        /// Every embedded file, by kernel file name: the edge and shared files of
        /// [`super::patterns::kernel_files!`], in its order.
        const FILES: [(&str, &[u8]); [$(stringify!($name),)* $(stringify!($shared)),*].len()] = [
            $((stringify!($name), include_bytes!(concat!("../../../kernels/sm_90/", stringify!($name), ".cubin"))),)*
            $((stringify!($shared), include_bytes!(concat!("../../../kernels/sm_90/", stringify!($shared), ".cubin")))),*
        ];
    };
}
super::patterns::kernel_files!(embed);

/// SHA-256 in hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// The MANIFEST's cache key for kernel file `name`, if listed.
pub fn manifest_key(name: &str) -> Option<u64> {
    MANIFEST.lines().find_map(|line| {
        let mut fields = line.split_whitespace();
        (fields.next()? == name).then(|| u64::from_str_radix(fields.next()?, 16).ok()).flatten()
    })
}

/// The embedded CUBIN of kernel file `name`, when it was built from exactly the source and options that
/// `key` (a [`super::compile::cache_key`] for CUBIN) stands for, and is intact.
pub fn get(name: &str, key: u64, code: Code) -> Option<&'static [u8]> {
    if code != Code::Cubin || std::env::var_os("CUDA_SOBEL_NO_PREBUILT").is_some() || manifest_key(name)? != key {
        return None;
    }
    let bytes = FILES.iter().find(|(n, _)| *n == name)?.1;
    let sha = MANIFEST.lines().find(|l| l.split_whitespace().next() == Some(name))?.split_whitespace().nth(2)?;
    (sha256_hex(bytes) == sha).then_some(bytes)
}
