//! The Python package's tests (python/tests, pytest + hypothesis), run from the README's test command.
//! They need the package installed (`pip install ./python`) with pytest and hypothesis: `.ci/run` builds it
//! into a virtual environment and points `CUDA_SOBEL_PYTHON` at its interpreter, and sets
//! `CUDA_SOBEL_REQUIRE_PYTHON=1` so that a missing package fails there. Elsewhere, without them, this
//! test is skipped, saying why.

use std::io::Write;
use std::process::Command;

#[test]
fn the_python_packages_tests_pass() {
    let python = std::env::var("CUDA_SOBEL_PYTHON").unwrap_or_else(|_| "python3".into());
    let probe = Command::new(&python).args(["-c", "import cuda_sobel, pytest, hypothesis, numpy"]).output();
    let ready = matches!(&probe, Ok(o) if o.status.success());
    if !ready {
        let why = match &probe {
            Ok(o) => String::from_utf8_lossy(&o.stderr).lines().last().unwrap_or("").to_owned(),
            Err(e) => e.to_string(),
        };
        assert!(
            std::env::var_os("CUDA_SOBEL_REQUIRE_PYTHON").is_none(),
            "the Python package is required here: {python}: {why}"
        );
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED the_python_packages_tests_pass: {python}: {why} (pip install ./python pytest hypothesis)"
        );
        return;
    }
    let run = Command::new(&python)
        .args(["-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "python/tests"])
        .env("CUDA_SOBEL_BIN", env!("CARGO_BIN_EXE_cuda_sobel"))
        .output()
        .expect("pytest starts");
    let text = String::from_utf8_lossy(&run.stdout);
    let _ = writeln!(
        std::io::stderr(),
        "{}",
        text.lines().rev().take(12).collect::<Vec<_>>().into_iter().rev().collect::<Vec<_>>().join("\n")
    );
    assert!(run.status.success(), "pytest failed:\n{text}\n{}", String::from_utf8_lossy(&run.stderr));
}
