//! The architecture holds (docs/architecture.md): the vocabulary module is a leaf, the layers above the
//! engine never reach into the GPU layer, the library (core/) depends on neither clap nor plotters, every kernel
//! file has its Rust twin, and no source file grows past what a reader can hold.

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(rust_files(&p));
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
    out.sort();
    out
}

fn code(path: &Path) -> String {
    // Comments may name other modules; only code counts.
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_vocabulary_is_a_leaf() {
    for leaf in ["variant.rs", "sobel.rs", "sobel/pixel.rs", "stats.rs", "bands.rs", "trace.rs"]
        .map(|f| format!("core/src/{f}"))
    {
        // The module itself, not its unit tests (which `use super::*`).
        let text = code(Path::new(&leaf));
        let module = text.split("#[cfg(test)]").next().unwrap();
        assert!(!module.contains("crate::") && !module.contains("super::"), "{leaf} imports nothing of ours");
    }
}

#[test]
fn only_the_engine_reaches_into_the_gpu_layer() {
    let mut files = rust_files(Path::new("core/src/student"));
    files.extend(rust_files(Path::new("core/src/batch")));
    files.extend(rust_files(Path::new("core/src/pipeline")));
    files.extend(rust_files(Path::new("src")));
    for f in files {
        assert!(!code(&f).contains("crate::gpu"), "{} imports core/src/gpu (go through crate::engine)", f.display());
    }
    for f in rust_files(Path::new("core/src/gpu")) {
        let text = code(&f);
        for upper in
            ["crate::pipeline", "crate::cli", "crate::bench", "crate::batch", "crate::engine", "crate::student"]
        {
            assert!(!text.contains(upper), "{} imports {upper}: the GPU layer imports only leaves", f.display());
        }
    }
}

#[test]
fn the_library_links_neither_clap_nor_plotters() {
    // Its manifest asks for neither, and its code names neither: they are the CLI's (this crate's) alone.
    let manifest = std::fs::read_to_string("core/Cargo.toml").unwrap();
    let deps = &manifest[manifest.find("[dependencies]").unwrap()..];
    for dep in ["clap", "plotters"] {
        assert!(!deps.lines().any(|l| l.starts_with(dep)), "core/Cargo.toml depends on {dep}");
        for f in rust_files(Path::new("core/src")).into_iter().chain(rust_files(Path::new("python/src"))) {
            assert!(!code(&f).contains(dep), "{} names {dep}", f.display());
        }
    }
    let python = std::fs::read_to_string("python/Cargo.toml").unwrap();
    assert!(python.contains("path = \"../core\""), "the Python crate is built on the library alone");
}

#[test]
fn every_kernel_file_has_its_rust_twin() {
    for e in std::fs::read_dir("cuda").unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "cu") {
            let stem = p.file_stem().unwrap().to_string_lossy().into_owned();
            let twin = Path::new("core/src/gpu/patterns").join(format!("{stem}.rs"));
            assert!(twin.is_file(), "{} has no {}", p.display(), twin.display());
            let text = std::fs::read_to_string(&twin).unwrap();
            assert!(
                text.contains(&format!("include_str!(\"../../../../cuda/{stem}.cu\")")),
                "{} embeds its .cu",
                twin.display()
            );
        }
    }
}

#[test]
fn no_source_file_is_too_long_to_hold() {
    for f in rust_files(Path::new("src")).into_iter().chain(rust_files(Path::new("core/src"))) {
        let lines = std::fs::read_to_string(&f).unwrap().lines().count();
        assert!(lines <= 450, "{} has {lines} lines (at most 450)", f.display());
    }
}

/// docs/architecture.md's "Adding a strategy / a size / an operator / an output / …" lists every file the change
/// takes: every source file whose code names an existing one of the kind (the template a new one follows)
/// must be listed under its heading.
#[test]
fn the_adding_lists_name_every_file_that_takes_part() {
    let doc = std::fs::read_to_string("docs/architecture.md").unwrap();
    let section = |heading: &str| {
        let start = doc.find(heading).unwrap_or_else(|| panic!("docs/architecture.md has no {heading}"));
        let rest = &doc[start + heading.len()..];
        rest[..rest.find("\n### ").or_else(|| rest.find("\n## ")).unwrap_or(rest.len())].to_string()
    };
    let mut files: Vec<PathBuf> =
        ["src", "core/src", "python/src"].iter().flat_map(|d| rust_files(Path::new(d))).collect();
    files.extend(["cuda/sobel.cuh", "cuda/row16.cuh", "python/cuda_sobel/__init__.py"].map(PathBuf::from));
    for entry in std::fs::read_dir("cuda").unwrap() {
        let p = entry.unwrap().path();
        if p.extension().is_some_and(|x| x == "cu") {
            files.push(p);
        }
    }
    let cases = [
        ("### Adding a size", &["Ksize::K7"][..]),
        ("### Adding an operator", &["Operator::Scharr"][..]),
        ("### Adding an output", &["Direction4", "DIRECTION4", "\"direction4\""][..]),
        ("### Adding a strategy", &["GpuTiled", "GpuRolling", "conv_rolling"][..]),
        ("### Adding a kernel", &["ConvKernel::gaussian"][..]),
        ("### Adding a codec", &["Format::Webp"][..]),
    ];
    let mut unlisted = Vec::new();
    for (heading, tokens) in cases {
        let listed = section(heading);
        for file in &files {
            let text = code(file);
            let name = file.to_string_lossy().replace('\\', "/");
            if tokens.iter().any(|t| text.contains(t)) && !listed.contains(name.as_str()) {
                unlisted.push(format!("{heading}: {name} names {tokens:?} but is not listed"));
            }
        }
    }
    assert!(unlisted.is_empty(), "{}", unlisted.join("\n"));
}
