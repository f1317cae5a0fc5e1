//! The README and `docs/` name files of this repository; every one of them must exist, and no document may
//! point outside the repository (a clone has nothing beside it). Paths are found in `code spans` that start
//! with one of the repository's folders, and in Markdown links, which are resolved from the document's folder.
//! Things a run writes (`bench/out/…`, `imgs_out/…`, `.dev/…`) and placeholders (`<stem>`, `*`, `…`) are not
//! files to find.

use std::path::{Path, PathBuf};

const FOLDERS: [&str; 12] = [
    "src/",
    "core/",
    "cuda/",
    "docs/",
    "tests/",
    "scripts/",
    "bench/",
    "python/",
    "examples/",
    "kernels/",
    "imgs_in/",
    ".ci/",
];
const WRITTEN_BY_RUNS: [&str; 4] = ["bench/out", "bench/images", "imgs_out", "target/"];

fn documents() -> Vec<PathBuf> {
    let mut docs = vec![PathBuf::from("README.md")];
    for entry in std::fs::read_dir("docs").expect("docs/ in the current directory (the repository root)") {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            docs.push(path);
        }
    }
    docs.sort();
    docs
}

/// `a/{b,c}.png` → `a/b.png`, `a/c.png` (one level of braces, as the docs write them).
fn expand(path: &str) -> Vec<String> {
    match (path.find('{'), path.find('}')) {
        (Some(open), Some(close)) if open < close => path[open + 1..close]
            .split(',')
            .map(|alt| format!("{}{}{}", &path[..open], alt, &path[close + 1..]))
            .collect(),
        _ => vec![path.to_string()],
    }
}

fn code_spans(text: &str) -> Vec<String> {
    text.split('`').skip(1).step_by(2).map(str::to_string).collect()
}

/// Markdown link targets `](target)`, without an `#anchor`, web addresses left out.
fn links(text: &str) -> Vec<String> {
    text.match_indices("](")
        .filter_map(|(i, _)| text[i + 2..].split(')').next())
        .map(|t| t.split('#').next().unwrap_or("").trim().to_string())
        .filter(|t| !t.is_empty() && !t.contains("://") && !t.starts_with("mailto:"))
        .collect()
}

/// The repository paths a code span names: its first word, when it starts with a repository folder.
fn named_path(span: &str) -> Option<String> {
    let word = span.split_whitespace().next()?;
    let word = word.trim_end_matches([',', ';', ':', '.']);
    let word = word.split(':').next()?; // `core/src/sobel.rs:42`
    if !FOLDERS.iter().any(|f| word.starts_with(f)) {
        return None;
    }
    if ["<", "*", "…", "$", "NAME", "N."].iter().any(|p| word.contains(p))
        || WRITTEN_BY_RUNS.iter().any(|w| word.starts_with(w))
    {
        return None;
    }
    Some(word.to_string())
}

#[test]
fn every_path_the_docs_name_exists() {
    let mut missing = Vec::new();
    let mut checked = 0;
    for doc in documents() {
        let text = std::fs::read_to_string(&doc).unwrap();
        for span in code_spans(&text) {
            for path in named_path(&span).into_iter().flat_map(|p| expand(&p)) {
                checked += 1;
                if !Path::new(&path).exists() {
                    missing.push(format!("{}: `{path}`", doc.display()));
                }
            }
        }
        let folder = doc.parent().unwrap_or(Path::new(""));
        for target in links(&text) {
            checked += 1;
            if !folder.join(&target).exists() {
                missing.push(format!("{}: link ({target})", doc.display()));
            }
        }
    }
    assert!(checked > 100, "only {checked} paths found: is the search still finding them?");
    assert!(missing.is_empty(), "named in the docs but not in the repository:\n{}", missing.join("\n"));
}

#[test]
fn no_document_points_outside_the_repository() {
    for doc in documents() {
        let text = std::fs::read_to_string(&doc).unwrap();
        for bad in ["../shared", "](../../", "/work/"] {
            assert!(!text.contains(bad), "{} refers to {bad}…: a clone has nothing beside it", doc.display());
        }
    }
}

#[test]
fn the_search_finds_what_it_should() {
    // The test above passing means nothing if these helpers find nothing.
    assert_eq!(named_path("core/src/sobel.rs:42"), Some("core/src/sobel.rs".into()));
    assert_eq!(named_path("cuda/strip.cu, its twin"), Some("cuda/strip.cu".into()));
    assert_eq!(named_path("imgs_out/<stem>_sobel.png"), None);
    assert_eq!(named_path("cargo test"), None);
    assert_eq!(expand("tests/data/a_{x,y}.png"), ["tests/data/a_x.png", "tests/data/a_y.png"]);
    assert_eq!(links("see [cli](cli.md#exit) and [w](https://x.org)"), ["cli.md"]);
}
