//! What a batch takes from the paths it is given, and where each edge image goes.
//!
//! A file named on the command line is always taken (a broken one then fails, with its reason). A folder is
//! listed, and of what it holds batch leaves out, counting each so that the summary can say what and why:
//! - hidden files (names starting with `.`: its own temporary files among them);
//! - files that are not images: neither their first bytes nor their extension say image (`notes.txt`,
//!   `Thumbs.db`); a broken file with an image's extension is taken, and fails with its reason;
//! - the edge images this tool wrote earlier (`*_sobel.<ext>` carrying its marker, [`is_own_output`]);
//! - sub-folders, unless `--recursive`: then their images are taken too, and their edge images go to the
//!   same sub-folders of the output folder (hidden folders, links to folders and the output folder itself
//!   are not entered).

use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::error::{self, Error};
use crate::image_io::{self, is_own_output, output, Format};

/// One file to process, and the folder below the output folder its edge image goes in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Input {
    /// The file.
    pub path: PathBuf,
    /// Its folder relative to the folder it was found in (empty for a named file or a top-level one).
    pub sub_folder: PathBuf,
}

/// The files to process, and what the listed folders held that was left out.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Inputs {
    /// The files, sorted within each folder, each once.
    pub files: Vec<Input>,
    /// Edge images this tool wrote, found in the folders and left out.
    pub skipped_own_outputs: usize,
    /// Files found in the folders that are not images.
    pub skipped_not_images: Vec<PathBuf>,
    /// Hidden files found in the folders.
    pub skipped_hidden: usize,
    /// Sub-folders not entered (without `--recursive`).
    pub skipped_folders: Vec<PathBuf>,
}

/// Whether a listed file is an image to try: its first bytes are an image format's signature, or its
/// extension is an image format's (then a broken one is reported, not passed over).
pub fn looks_like_image(path: &Path) -> bool {
    let mut head = [0u8; 64];
    let n = std::fs::File::open(path).and_then(|mut f| f.read(&mut head)).unwrap_or(0);
    image::guess_format(&head[..n]).is_ok() || image::ImageFormat::from_path(path).is_ok()
}

fn hidden(path: &Path) -> bool {
    path.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.'))
}

/// The files `inputs` stand for: each named file, and the images of each named folder (and of its
/// sub-folders with `recursive`), sorted, without what the module doc lists; a file named twice is taken once.
/// `out_dir` is never entered.
pub fn collect(inputs: &[PathBuf], recursive: bool, out_dir: &Path) -> anyhow::Result<Inputs> {
    use anyhow::Context as _;
    let mut found = Inputs::default();
    let out_id = output::identity(out_dir);
    for input in inputs {
        if !input.is_dir() {
            found.files.push(Input { path: input.clone(), sub_folder: PathBuf::new() });
            continue;
        }
        let walk = walkdir::WalkDir::new(input)
            .min_depth(1)
            .max_depth(if recursive { usize::MAX } else { 1 })
            .sort_by_file_name()
            .into_iter()
            .filter_entry(|e| !(e.file_type().is_dir() && (hidden(e.path()) || output::identity(e.path()) == out_id)));
        for entry in walk {
            let entry = entry.with_context(|| format!("{}: cannot list folder", input.display()))?;
            let path = entry.path();
            if path.is_dir() {
                if !recursive {
                    found.skipped_folders.push(path.to_owned());
                }
                continue;
            }
            if !path.is_file() {
                continue; // a socket, a FIFO, a link to nothing: nothing to read
            }
            let sub_folder = path.parent().and_then(|p| p.strip_prefix(input).ok()).unwrap_or(Path::new("")).to_owned();
            if hidden(path) {
                found.skipped_hidden += 1;
            } else if is_output_name(path) && is_own_output(path) {
                found.skipped_own_outputs += 1;
            } else if !looks_like_image(path) {
                found.skipped_not_images.push(path.to_owned());
            } else {
                found.files.push(Input { path: path.to_owned(), sub_folder });
            }
        }
    }
    let mut seen = HashSet::new();
    found.files.retain(|f| output::identity(&f.path).is_none_or(|id| seen.insert(id)));
    Ok(found)
}

/// `*_sobel.<ext>` or `*_<kernel><size>.<ext>` (`_box5`, `_gaussian7`, `_scharr9`, `_sobel3`): the names batch gives
/// its outputs, edges and named kernels; whether it wrote the file is then read from the file's marker. Only such
/// names are opened for it, so a folder of `IMG_1234.jpg` is not read twice while it is listed.
fn is_output_name(path: &Path) -> bool {
    let Some(stem) = path.file_stem().map(|s| s.to_string_lossy().into_owned()) else { return false };
    let Some((_, tag)) = stem.rsplit_once('_') else { return false };
    let size = tag.trim_start_matches(|c: char| c.is_ascii_lowercase());
    tag == "sobel"
        || (["box", "gaussian", "scharr", "sobel"].contains(&&tag[..tag.len() - size.len()])
            && !size.is_empty()
            && size.chars().all(|c| c.is_ascii_digit()))
}

/// Every input's output path, checked before any work: no two inputs share an output, and no output is an
/// input (device and inode).
pub fn plan_outputs(files: &[Input], out_dir: &Path, tag: &str, format: Format) -> error::Result<Vec<PathBuf>> {
    output::check_folder(out_dir)?;
    let inputs_by_id: HashMap<(u64, u64), &PathBuf> =
        files.iter().filter_map(|f| output::identity(&f.path).map(|id| (id, &f.path))).collect();
    let mut by_output: HashMap<PathBuf, &PathBuf> = HashMap::new();
    let mut outputs = Vec::with_capacity(files.len());
    for f in files {
        let out = image_io::output_path(&out_dir.join(&f.sub_folder), &f.path, tag, format);
        if let Some(first) = by_output.insert(out.clone(), &f.path) {
            return Err(Error::OutputCollision { output: out, first: first.clone(), second: f.path.clone() });
        }
        if let Some(input) = output::identity(&out).and_then(|id| inputs_by_id.get(&id)) {
            return Err(Error::OutputReplacesInput { output: (*input).clone(), from: f.path.clone() });
        }
        outputs.push(out);
    }
    Ok(outputs)
}

/// The summary's lines about what was left out (none when nothing was).
pub fn skipped_lines(found: &Inputs) -> Vec<String> {
    let names = |paths: &[PathBuf]| {
        let mut shown: Vec<String> = paths.iter().take(5).map(|p| p.display().to_string()).collect();
        if paths.len() > 5 {
            shown.push(format!("… ({} more)", paths.len() - 5));
        }
        shown.join(", ")
    };
    let mut lines = Vec::new();
    if !found.skipped_not_images.is_empty() {
        lines.push(format!(
            "skipped {} file(s) that are not images (neither their content nor their extension says so): {}",
            found.skipped_not_images.len(),
            names(&found.skipped_not_images)
        ));
    }
    if !found.skipped_folders.is_empty() {
        lines.push(format!(
            "skipped {} sub-folder(s) (--recursive takes them, mirrored into the output folder): {}",
            found.skipped_folders.len(),
            names(&found.skipped_folders)
        ));
    }
    if found.skipped_own_outputs > 0 {
        lines.push(format!(
            "skipped {} image(s) this tool wrote earlier (inputs never include its own outputs)",
            found.skipped_own_outputs
        ));
    }
    if found.skipped_hidden > 0 {
        lines.push(format!("skipped {} hidden file(s) (names starting with '.')", found.skipped_hidden));
    }
    lines
}

/// Each input file with its output path.
pub type Jobs = Vec<(PathBuf, PathBuf)>;

/// The files of `opts.inputs` with their output paths, checked before any work (see this module), and the
/// summary's lines about what the folders held that was left out.
pub fn plan(opts: &super::BatchOptions) -> anyhow::Result<(Jobs, Vec<String>)> {
    let found = collect(&opts.inputs, opts.recursive, &opts.out_dir)?;
    let tag = match (&opts.kernel, opts.canny) {
        (Some(k), _) => k.kernel.tag(),
        (None, Some(_)) => "canny".into(),
        (None, None) => "sobel".into(),
    };
    let outputs = plan_outputs(&found.files, &opts.out_dir, &tag, opts.format)?;
    let jobs = found.files.iter().map(|f| f.path.clone()).zip(outputs).collect();
    Ok((jobs, skipped_lines(&found)))
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    #[test]
    fn output_names_are_the_edges_and_the_named_kernels() {
        for yes in ["a_sobel.png", "x_y_box5.png", "p_gaussian15.tif", "q_scharr9.jpg", "r_sobel3.png"] {
            assert!(super::is_output_name(Path::new(yes)), "{yes}");
        }
        for no in ["IMG_1234.jpg", "a_box.png", "sobel.png", "a_boxes5.png", "a_box5x.png", "plain.png", "a_5.png"] {
            assert!(!super::is_output_name(Path::new(no)), "{no}");
        }
    }
}
