"""Folders over Dask: a local cluster of 2 worker processes over ~20 images with broken files among them
gives exactly `cuda_sobel batch`'s files and failures; a worker that dies mid-run changes nothing."""

import os
import shutil
import subprocess
import sys
import threading

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")
Image = pytest.importorskip("PIL.Image")

import cuda_sobel.dask as csd  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BROKEN = ["truncated.png", "text.png", "empty.jpg"]


def cli() -> str:
    """The command line to compare with: CUDA_SOBEL_BIN, else cargo's release build (in CARGO_TARGET_DIR when
    set), else an installed `cuda_sobel` (cargo install --path .)."""
    target = os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target")
    candidates = [os.environ.get("CUDA_SOBEL_BIN"), os.path.join(target, "release", "cuda_sobel"), shutil.which("cuda_sobel")]
    for exe in candidates:
        if exe and os.path.exists(exe):
            return exe
    pytest.skip(f"no cuda_sobel binary in {target}/release or on PATH (cargo build --release, or set CUDA_SOBEL_BIN)")


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    d = tmp_path_factory.mktemp("in")
    rng = np.random.default_rng(0)
    for i in range(18):
        h, w = int(rng.integers(8, 120)), int(rng.integers(8, 160))
        Image.fromarray(rng.integers(0, 256, (h, w, 3), dtype=np.uint8)).save(d / f"img{i:02d}.png")
    good = (d / "img00.png").read_bytes()
    (d / "truncated.png").write_bytes(good[: len(good) // 2])
    (d / "text.png").write_text("not an image")
    (d / "empty.jpg").write_bytes(b"")
    return d


@pytest.fixture(scope="module")
def expected(folder, tmp_path_factory):
    """What `cuda_sobel batch` writes and reports for the folder."""
    out = tmp_path_factory.mktemp("batch")
    run = subprocess.run([cli(), "batch", str(folder), "--out", str(out)], capture_output=True, text=True)
    assert run.returncode == 2, run.stderr  # the broken files
    return {p: (out / p).read_bytes() for p in sorted(os.listdir(out))}


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                       env={"RAYON_NUM_THREADS": "1"})
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def written(out) -> dict:
    return {p: (out / p).read_bytes() for p in sorted(os.listdir(out)) if not p.startswith(".")}


def test_two_workers_write_exactly_what_batch_writes(folder, expected, client, tmp_path):
    summary = csd.sobel_files([str(folder)], tmp_path, client=client, chunk_size=3)
    assert summary.images == 21 and summary.done == 18
    assert sorted(os.path.basename(f) for f, _ in summary.failed) == sorted(BROKEN)
    assert all(os.path.basename(f) in reason for f, reason in summary.failed)
    assert written(tmp_path) == expected
    assert "18 of 21 images" in str(summary) and summary.images_per_second > 0


def test_a_kernel_over_the_cluster_writes_what_batch_kernel_writes(folder, client, tmp_path):
    out = tmp_path / "batch"
    run = subprocess.run([cli(), "batch", str(folder), "--out", str(out), "--kernel", "gaussian:5", "--rgb"],
                         capture_output=True, text=True)
    assert run.returncode == 2, run.stderr  # the broken files
    summary = csd.sobel_files([str(folder)], tmp_path / "dask", client=client, chunk_size=4, kernel="gaussian:5",
                              rgb=True)
    assert summary.done == 18 and len(summary.failed) == 3
    got = written(tmp_path / "dask")
    assert got == written(out) and all(name.endswith("_gaussian5.png") for name in got)
    with pytest.raises(ValueError, match="gaussian:4: the size must be odd"):
        csd.sobel_files([str(folder)], tmp_path / "bad", client=client, kernel="gaussian:4")


class KillOnce(distributed.diagnostics.plugin.WorkerPlugin):
    """Kills its worker's process shortly after a task starts executing, once per flag file."""

    name = "kill-once"

    def __init__(self, flag):
        self.flag = flag

    def transition(self, key, start, finish, **kwargs):
        if finish == "executing" and not os.path.exists(self.flag):
            open(self.flag, "w").close()
            threading.Timer(0.05, os._exit, (1,)).start()


def test_a_worker_killed_mid_run_loses_nothing(folder, expected, client, tmp_path):
    flag = str(tmp_path / "killed")
    # Left registered afterwards: once the flag exists it does nothing (unregistering could race with the
    # restarting worker).
    client.register_plugin(KillOnce(flag))
    out = tmp_path / "out"
    summary = csd.sobel_files([str(folder / "*.png"), str(folder / "empty.jpg")], out, client=client, chunk_size=2)
    assert os.path.exists(flag), "a worker was killed"
    assert summary.done == 18 and len(summary.failed) == 3
    assert written(out) == expected


def test_refusals_come_before_any_task(folder, tmp_path):
    clash = tmp_path / "clash"
    (clash / "a").mkdir(parents=True)
    (clash / "b").mkdir()
    for sub in ("a", "b"):
        Image.fromarray(np.zeros((4, 4, 3), np.uint8)).save(clash / sub / "same.png")
    with pytest.raises(ValueError, match="same.png"):
        csd.sobel_files([str(clash / "a"), str(clash / "b")], tmp_path / "o")
    with pytest.raises(ValueError, match="matches no file"):
        csd.sobel_files([str(tmp_path / "nothing*.png")], tmp_path / "o")


def test_the_command_line(folder, expected, tmp_path):
    run = subprocess.run(
        [sys.executable, "-m", "cuda_sobel.dask", str(folder), "--out", str(tmp_path), "--workers", "2"],
        capture_output=True, text=True, cwd=tmp_path,
    )
    assert run.returncode == 2, run.stderr  # the broken files
    assert "18 of 21 images" in run.stdout and "failed (3):" in run.stdout
    assert written(tmp_path) == expected


def test_a_real_folder_recursively_as_batch_does_it(client, tmp_path):
    """A text file and a sub-folder: skipped and said without `recursive`; with it, mirrored into the output
    folder, byte for byte what `cuda_sobel batch -r` writes, in the format asked for."""
    photos = tmp_path / "photos"
    (photos / "2024" / "summer").mkdir(parents=True)
    rng = np.random.default_rng(1)
    for name in ["a.png", "2024/b.png", "2024/summer/c.png"]:
        Image.fromarray(rng.integers(0, 256, (30, 40, 3), dtype=np.uint8)).save(photos / name)
    (photos / "notes.txt").write_text("not an image")
    flat = csd.sobel_files([str(photos)], tmp_path / "flat", client=client)
    assert flat.done == 1 and not flat.failed
    assert any("not images" in line and "notes.txt" in line for line in flat.skipped), flat.skipped
    assert any("sub-folder" in line and "2024" in line for line in flat.skipped), flat.skipped
    tree = csd.sobel_files([str(photos)], tmp_path / "tree", client=client, recursive=True, format="tif", ksize=5)
    assert tree.done == 3 and "skipped 1 file(s) that are not images" in str(tree)
    ours = tmp_path / "ours"
    subprocess.run([cli(), "batch", str(photos), "--out", str(ours), "-r", "--format", "tif", "--ksize", "5"], check=True,
                   capture_output=True)
    for name in ["a_sobel.tif", "2024/b_sobel.tif", "2024/summer/c_sobel.tif"]:
        assert (tmp_path / "tree" / name).read_bytes() == (ours / name).read_bytes(), name
