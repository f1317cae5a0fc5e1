"""Folders over Dask: a local cluster of 2 worker processes over ~20 images with broken files among them
gives exactly `cuda_sobel batch`'s files and failures; a worker that dies mid-run changes nothing."""

import os
import shutil
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")
Image = pytest.importorskip("PIL.Image")

import cuda_sobel.dask as csd  # noqa: E402
from cuda_sobel import _native  # noqa: E402

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


def test_canny_over_the_cluster_writes_what_batch_output_canny_writes(folder, client, tmp_path):
    out = tmp_path / "batch"
    args = ["--output", "canny", "--low", "40", "--high", "120", "--grey", "bt601", "--ksize", "5"]
    run = subprocess.run([cli(), "batch", str(folder), "--out", str(out), *args], capture_output=True, text=True)
    assert run.returncode == 2, run.stderr  # the broken files
    summary = csd.sobel_files([str(folder)], tmp_path / "dask", client=client, chunk_size=4, canny=(40, 120),
                              grey="bt601", ksize=5)
    assert summary.done == 18 and len(summary.failed) == 3 and "Canny (aperture 5, norm l1" in str(summary)
    got = written(tmp_path / "dask")
    assert got == written(out) and all(name.endswith("_canny.png") for name in got)
    with pytest.raises(ValueError, match="must be a finite number"):
        csd.sobel_files([str(folder)], tmp_path / "bad", client=client, canny=(float("nan"), 9))
    with pytest.raises(ValueError, match="must be 3, 5 or 7"):
        csd.sobel_files([str(folder)], tmp_path / "bad", client=client, canny=(1, 9), ksize=1)
    assert not (tmp_path / "bad").exists()


class KillOnce(distributed.diagnostics.plugin.WorkerPlugin):
    """SIGKILLs its worker's process shortly after a task starts executing, once per flag file: the worker ends as
    one the kernel's OOM killer or a lost node would, with no chance to clean up."""

    name = "kill-once"

    def __init__(self, flag):
        self.flag = flag

    def transition(self, key, start, finish, **kwargs):
        if finish == "executing" and not os.path.exists(self.flag):
            open(self.flag, "w").close()
            threading.Timer(0.05, os.kill, (os.getpid(), signal.SIGKILL)).start()


def leftover(out) -> list:
    """Hidden files under `out`: what a writer killed mid-file would leave."""
    return [os.path.join(d, f) for d, _, files in os.walk(out) for f in files if f.startswith(".")]


def test_a_worker_killed_mid_run_loses_nothing(folder, expected, client, tmp_path):
    flag = str(tmp_path / "killed")
    # Left registered afterwards: once the flag exists it does nothing (unregistering could race with the
    # restarting worker).
    client.register_plugin(KillOnce(flag))
    out = tmp_path / "out"
    summary = csd.sobel_files([str(folder / "*.png"), str(folder / "empty.jpg")], out, client=client, chunk_size=2)
    assert os.path.exists(flag), "a worker was killed"
    assert summary.done == 18 and len(summary.failed) == 3
    assert written(out) == expected and not leftover(out)
    assert sum(w.images for w in summary.workers.values()) == 21, "each image counted once"


def test_what_a_killed_writer_left_is_removed_and_nothing_else(folder, expected, client, tmp_path):
    """A temporary file as a worker killed mid-write leaves it (named after its output) goes once the run is over;
    the user's own hidden files, even ones that look alike, stay."""
    out = tmp_path / "out"
    out.mkdir()
    stale = out / ".cuda_sobel-img03_sobel.png.Ab12Cd.tmp"
    stale.write_bytes(b"half an image")
    mine = [out / ".cuda_sobel-notes.txt.Ab12Cd.tmp", out / ".cuda_sobel-img03_sobel.png.tmp", out / ".hidden"]
    for f in mine:
        f.write_bytes(b"the user's")
    summary = csd.sobel_files([str(folder)], out, client=client, chunk_size=5)
    assert summary.done == 18 and written(out) == expected
    assert not stale.exists()
    assert all(f.read_bytes() == b"the user's" for f in mine)


@pytest.fixture
def separate_cluster(tmp_path):
    """A scheduler and two workers started as a user's cluster is: Dask's own `dask scheduler` and `dask worker`
    commands, separate processes talking TCP (each worker under its nanny, which restarts it when it dies)."""
    dask = os.path.join(os.path.dirname(sys.executable), "dask")
    if not os.path.exists(dask):
        dask = shutil.which("dask")
    if dask is None:
        pytest.skip("no `dask` command beside the Python interpreter or on PATH")
    address = tmp_path / "scheduler.json"
    # The tests' own plugin (KillOnce) travels by reference to this module, so the workers can import it.
    path = os.pathsep.join(filter(None, [os.path.dirname(__file__), os.environ.get("PYTHONPATH")]))
    env = dict(os.environ, RAYON_NUM_THREADS="1", PYTHONPATH=path)
    # Each in a session of its own, so that its whole process group (a worker's nanny and the worker under it) ends.
    start = dict(env=env, stderr=subprocess.DEVNULL, start_new_session=True)
    procs = [subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                               "--scheduler-file", str(address)], **start)]
    try:
        for i in range(2):
            procs.append(subprocess.Popen([dask, "worker", "--scheduler-file", str(address), "--name", f"w{i}",
                                           "--nthreads", "2", "--no-dashboard"], **start))
        for _ in range(300):
            if address.exists():
                break
            time.sleep(0.1)
        c = distributed.Client(scheduler_file=str(address), timeout=60)
        c.wait_for_workers(2, timeout=60)
        yield c
        c.close()
    finally:
        for p in procs[::-1]:
            os.killpg(p.pid, signal.SIGTERM)
        for p in procs[::-1]:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:  # a worker the nanny was restarting when asked to end
                os.killpg(p.pid, signal.SIGKILL)
                p.wait(timeout=10)


def test_a_separate_process_cluster_over_tcp_with_a_worker_killed(folder, expected, separate_cluster, tmp_path):
    """As `dask scheduler` + `dask worker` run on a user's machines: batch's bytes, and a worker SIGKILLed mid-run
    loses no image, leaves no partial file, and the summary counts each image once."""
    client = separate_cluster
    assert client.scheduler.address.startswith("tcp://")
    plain = csd.sobel_files([str(folder)], tmp_path / "plain", client=client, chunk_size=3)
    assert plain.done == 18 and written(tmp_path / "plain") == expected
    assert set(plain.workers) <= {"w0", "w1"} and sum(w.images for w in plain.workers.values()) == 21
    assert all(w.engines for w in plain.workers.values()), "each worker says what computed"

    flag = str(tmp_path / "killed")
    client.register_plugin(KillOnce(flag))
    out = tmp_path / "out"
    summary = csd.sobel_files([str(folder)], out, client=client, chunk_size=2)
    assert os.path.exists(flag), "a worker was killed"
    assert summary.done == 18 and len(summary.failed) == 3
    assert written(out) == expected and not leftover(out)
    assert sum(w.images for w in summary.workers.values()) == summary.images == 21
    assert sum(w.failed for w in summary.workers.values()) == 3


def test_tasks_are_sized_to_the_work():
    assert csd.chunk_size_for(21, 2) == 8  # never fewer than 8 images a task
    assert csd.chunk_size_for(2000, 2) == 250  # about four tasks a worker
    assert csd.chunk_size_for(2000, 1) == 500
    assert csd.chunk_size_for(1_000_000, 4) == 1024  # never more than 1024
    assert csd.chunk_size_for(2000, 1, per_worker=2) == 1000  # the command's own cluster


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


def test_the_command_shows_the_driver_only_its_workers_gpus(folder, expected, tmp_path):
    """`--gpus --workers N` shows the CUDA driver GPUs 0…N-1 alone (its `cuInit` starts every visible one), and
    writes what batch writes; a `CUDA_VISIBLE_DEVICES` of the user's stands."""
    env = {k: v for k, v in os.environ.items() if k != "CUDA_VISIBLE_DEVICES"}
    command = [sys.executable, "-m", "cuda_sobel.dask", str(folder), "--gpus", "--workers", "1", "--out"]
    run = subprocess.run(command + [str(tmp_path / "shown")], capture_output=True, text=True, cwd=tmp_path,
                         env={**env, "CUDA_SOBEL_TRACE": "1"})
    assert run.returncode == 2, run.stderr  # the broken files
    assert "the driver shown CUDA_VISIBLE_DEVICES=0\n" in run.stderr
    assert written(tmp_path / "shown") == expected
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "0")
    run = subprocess.run(command + [str(tmp_path / "as set")], capture_output=True, text=True, cwd=tmp_path,
                         env={**env, "CUDA_SOBEL_TRACE": "1", "CUDA_VISIBLE_DEVICES": visible})
    assert run.returncode == 2 and "the driver shown" not in run.stderr, run.stderr
    assert written(tmp_path / "as set") == expected


def test_the_commands_own_cluster_runs_in_this_process(folder, expected, tmp_path):
    """The local cluster `python -m cuda_sobel.dask` starts: its workers are threads of this process, each with its
    own choice of devices and threads (every core: workers on the CPU share one engine), and they write batch's
    bytes."""
    client = csd._local_client(2, False)
    try:
        cluster = client.cluster
        assert all(not hasattr(w, "process") for w in cluster.workers.values())  # Workers, not Nannies
        csd.sobel_files(folder, tmp_path, client=client)
        for w in cluster.workers.values():
            devices, threads, jpegs = w.plugins[csd.EnginePlugin.name].chosen[str(w.name)]
            assert devices is None and threads == (os.cpu_count() or 1) and jpegs
        assert sorted(str(w.name) for w in cluster.workers.values()) == ["0", "1"]
    finally:
        csd._close(client)
    assert written(tmp_path) == expected


def test_the_command_opens_its_engines_before_dask_is_imported(folder, expected, tmp_path):
    """`python -m cuda_sobel.dask` starts opening its local cluster's engines as soon as it has read its arguments:
    importing the module leaves Dask and NumPy unimported (so that the engines open meanwhile), and the workers then
    compute with exactly the engines opened early — none is opened a second time."""
    imported = subprocess.run([sys.executable, "-c", "import sys, cuda_sobel.dask; print('distributed' in sys.modules,"
                               " 'numpy' in sys.modules)"], capture_output=True, text=True, check=True, cwd=tmp_path)
    assert imported.stdout.split() == ["False", "False"], "neither Dask nor NumPy is imported before the engines open"
    key = (None, os.cpu_count() or 1, True)  # the CPU workers' one engine, with every core (and nvJPEG if it can)
    csd._open_local(2, False, True)
    deadline = time.monotonic() + 60
    while key not in csd._OPENED and time.monotonic() < deadline:
        time.sleep(0.01)
    opened = set(csd._OPENED)
    assert key in opened
    client = csd._local_client(2, False)
    try:
        csd.sobel_files(folder, tmp_path, client=client)
    finally:
        csd._close(client)
    assert set(csd._OPENED) == opened, "a worker opened an engine of its own"
    assert written(tmp_path) == expected


def test_the_engines_load_nvjpeg_only_where_batch_would(tmp_path):
    """The plan says whether its engines need nvJPEG as `cuda_sobel batch` decides it — a JPEG among the inputs by its
    first bytes, whatever its name, and not for `--kernel` — and the command's early opening follows it (its JPEG
    engine's start is ~0.6 s on an H200, longer than a GPU's context and kernels)."""
    rng = np.random.default_rng(5)
    pngs = tmp_path / "pngs"
    pngs.mkdir()
    for k in range(3):
        Image.fromarray(rng.integers(0, 256, (9, 14, 3), dtype=np.uint8)).save(pngs / f"{k}.png")
    mixed = tmp_path / "mixed"
    shutil.copytree(pngs, mixed)
    Image.fromarray(rng.integers(0, 256, (9, 14, 3), dtype=np.uint8)).save(mixed / "photo.png", format="JPEG")
    plan = lambda folder, kernel=None: _native.plan_batch([str(folder)], str(tmp_path / "out"), False, "png", kernel)
    pairs, _, jpegs = plan(pngs)
    assert len(pairs) == 3 and jpegs is False
    pairs, _, jpegs = plan(mixed)
    assert len(pairs) == 4 and jpegs is True, "a JPEG named .png is a JPEG"
    assert plan(mixed, "box:3")[2] is False, "the filter command's kernels decode on the CPU"

    import argparse
    from concurrent.futures import Future

    for folder, expected in [(pngs, False), (mixed, True)]:
        args = argparse.Namespace(inputs=[str(folder)], out=str(tmp_path / "out"), recursive=False, format="png",
                                  kernel=None, output="magnitude", workers=1, gpus=False, check=False)
        said: Future = Future()
        csd._open_for(args, said)
        assert said.result() is expected
        key, deadline = (None, os.cpu_count() or 1, expected), time.monotonic() + 60
        while key not in csd._OPENED and time.monotonic() < deadline:
            time.sleep(0.01)
        assert key in csd._OPENED
        # The plan it made waits for sobel_files, once.
        planned = (str(folder),), str(tmp_path / "out"), False, "png", None, False
        assert csd._plan(*planned)[2] is expected and planned not in csd._PLANNED


def test_the_command_plans_its_inputs_once(folder, expected, tmp_path, monkeypatch):
    """The command plans its inputs once, before it imports Dask (to open its engines with or without nvJPEG), and
    runs that plan: listing and sniffing a large folder twice cost as much again."""
    calls = []
    real = _native.plan_batch
    monkeypatch.setattr(_native, "plan_batch", lambda *args: calls.append(args) or real(*args))
    assert csd.main([str(folder), "--out", str(tmp_path), "--workers", "1"]) == 2  # the folder's broken files
    assert len(calls) == 1
    assert written(tmp_path) == expected


def test_the_command_reads_its_pngs_ahead_for_its_tasks(folder, expected, tmp_path, monkeypatch):
    """While Dask is imported and its cluster starts, the command reads its plan's PNGs ahead; on a GPU host (where a
    task takes a PNG's rows still filtered) its tasks take every one that reads, and write batch's bytes."""
    made = []
    real = _native.ReadAhead
    monkeypatch.setattr(_native, "ReadAhead", lambda *args: made.append(real(*args)) or made[-1])
    assert csd.main([str(folder), "--out", str(tmp_path), "--workers", "1"]) == 2  # the folder's broken files
    assert written(tmp_path) == expected
    assert len(made) == 1 and csd._READ_AHEAD is None, "one, let go when the run ends"
    # The 18 PNGs that read (not the truncated one or the text) take milliseconds; Dask's import, tenths of a second.
    assert made[0].taken == (18 if _native.device_count() else 0)


def test_the_command_runs_its_first_chunks_while_its_cluster_starts(folder, expected, tmp_path, monkeypatch, capsys):
    """The command's engines start on the first chunks as soon as they are open, while Dask is imported and the
    cluster starts; the cluster takes the chunks they did not take. Every image is counted once, under the worker whose
    engine did it, and the outputs are batch's."""
    seen = []
    real = csd._EarlyStart.stop
    monkeypatch.setattr(csd._EarlyStart, "stop", lambda self: seen.append(real(self)) or seen[-1])
    assert csd.main([str(folder), "--out", str(tmp_path), "--workers", "1", "--chunk-size", "4"]) == 2
    assert written(tmp_path) == expected
    (chunks, started), = seen
    assert len(chunks) == 6 and sum(map(len, chunks)) == 21
    # The engine opens in milliseconds here, the cluster in tenths of a second: the first chunk at least is taken.
    assert 1 <= len(started) <= 6 and sorted(started) == list(range(len(started)))
    printed = capsys.readouterr().out
    assert "18 of 21 images" in printed and "6 task(s)" in printed and "  0: 18 done, 3 failed" in printed
    assert not csd._EARLY, "taken over by the run"
    # By default, two tasks a worker: its workers are threads of the command, none dies alone.
    seen.clear()
    assert csd.main([str(folder), "--out", str(tmp_path / "again"), "--workers", "1"]) == 2
    assert [len(c) for c in seen[0][0]] == [11, 10]


def test_a_run_takes_what_was_read_ahead_and_writes_the_same_bytes(folder, expected, tmp_path):
    """A worker's runs given a read-ahead of the plan write batch's bytes and failures, each taking its own files."""
    pairs, _, _ = _native.plan_batch([str(folder)], str(tmp_path), False, "png")
    ahead = _native.ReadAhead(pairs)
    engine = csd._engine(None, 2)
    from cuda_sobel._arrays import native_filter

    filter = native_filter("sobel", 3, None, "exact", "percent", "l2")
    failed = []
    for chunk in (pairs[:7], pairs[7:]):
        images, f, _, _ = engine.run(chunk, filter, "default", "png", False, ahead=ahead)
        assert images == len(chunk)
        failed += f
    assert sorted(os.path.basename(p) for p, _ in failed) == sorted(BROKEN)
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
