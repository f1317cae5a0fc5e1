"""Folders of images over Dask (``distributed``): a laptop, one multi-GPU host, or a cluster.

Each Dask task is ``cuda_sobel batch`` on a chunk of the files, on a worker: decode and encode on the worker's
cores, Sobel on its GPU when it has one (else on its CPU), outputs written atomically (a temporary file
renamed into place), so a task that Dask retries after a worker died does no harm. Output names, the
refusals (two inputs whose outputs would share a name, an output that would replace an input) and the
per-image failure lines are ``cuda_sobel batch``'s, checked on the client before any task runs.

    summary = cuda_sobel.dask.sobel_files(["photos/", "more/*.jpg"], "edges/")
    print(summary)            # done, failed with reasons, images/s

or, for people who do not write Python::

    python -m cuda_sobel.dask photos/ --out edges/ [--scheduler tcp://host:8786] [--workers N] [--gpus]
"""

from __future__ import annotations

import argparse
import functools
import glob
import math
import os
import sys
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

from . import _native

__all__ = ["sobel_files", "Summary", "WorkerSummary", "EnginePlugin", "chunk_size_for", "main"]

PathLike = Union[str, "os.PathLike[str]"]

TASKS_PER_WORKER = 2
"""Tasks a worker runs at once, through its one engine: while one task's last images finish, the next one's
first are already decoding, so the GPU and the cores never drain between tasks."""


@dataclass
class Summary:
    """What a run did."""

    images: int
    """Input files taken (folders listed, patterns expanded, the tool's own earlier outputs left out)."""
    failed: List[Tuple[str, str]] = field(default_factory=list)
    """(file, reason) for each file that could not be done, in ``cuda_sobel batch``'s words."""
    seconds: float = 0.0
    """Wall clock of the whole run, seen from the client (for the command, from its start: its engines begin before the
    cluster is up)."""
    engines: List[str] = field(default_factory=list)
    """What computed on the workers (e.g. ``gpu-strip on NVIDIA H100 80GB HBM3 (1 device(s)), 16 slots each``)."""
    skipped: List[str] = field(default_factory=list)
    """What the input folders held that was left out, one line per kind, with how many and why (files that
    are not images, sub-folders without ``recursive``, hidden files, images this tool wrote earlier)."""
    workers: Dict[str, "WorkerSummary"] = field(default_factory=dict)
    """What each worker did, by its name (a task that a dead worker did not finish counts where it was redone)."""
    tasks: int = 0
    """Tasks the images were spread over."""

    @property
    def done(self) -> int:
        """Images written."""
        return self.images - len(self.failed)

    @property
    def images_per_second(self) -> float:
        return self.done / self.seconds if self.seconds > 0 else 0.0

    def __str__(self) -> str:
        lines = [
            f"dask: {self.done} of {self.images} images in {self.seconds:.2f} s — {self.images_per_second:.1f} images/s"
            f" — {len(self.workers)} worker(s), {self.tasks} task(s)"
        ]
        lines.extend(f"  {name}: {w}" for name, w in sorted(self.workers.items()))
        lines.extend(self.skipped)
        if self.failed:
            lines.append(f"failed ({len(self.failed)}):")
            lines.extend(f"  {reason}" for _, reason in self.failed)
        return "\n".join(lines)


@dataclass
class WorkerSummary:
    """What one worker did."""

    images: int = 0
    failed: int = 0
    seconds: float = 0.0
    """Time its tasks took, added up (tasks that ran at once count each)."""
    engines: List[str] = field(default_factory=list)
    """What computed there: device, slots, JPEG decoder (``cuda_sobel batch``'s line)."""

    def __str__(self) -> str:
        return f"{self.images - self.failed} done, {self.failed} failed — {'; '.join(self.engines)}"


def chunk_size_for(images: int, workers: int, per_worker: int = 4) -> int:
    """Images a task: about `per_worker` tasks a worker (four: two rounds of its two tasks at once), 8 to 1024 images
    each. Each task costs its worker more than Dask's dispatch: on one H200 (16 cores), 2000 PNGs of 2048×1024 through
    one resident worker took 3.69 s in 16 tasks and 1.96 s in 4 (`cuda_sobel batch`: 1.60–1.66 s of work). Four still
    balance the workers' ends, and a worker that dies takes at most its two tasks under way with it. The command's own
    local cluster takes two (its workers are threads of one process: none dies alone)."""
    return min(1024, max(8, math.ceil(images / (per_worker * max(1, workers)))))


def _expand(inputs: Union[PathLike, Iterable[PathLike]]) -> List[str]:
    """Files and folders as given; glob patterns (``*``, ``?``, ``[``) expanded, sorted."""
    if isinstance(inputs, (str, os.PathLike)):
        inputs = [inputs]
    out: List[str] = []
    for item in inputs:
        text = os.fspath(item)
        if not os.path.exists(text) and glob.has_magic(text):
            matched = sorted(glob.glob(text))
            if not matched:
                raise ValueError(f"{text}: the pattern matches no file")
            out.extend(matched)
        else:
            out.append(text)
    return out


_OPENED: Dict[Tuple[Optional[Tuple[int, ...]], Optional[int], bool], "Future[Any]"] = {}
_OPENING = threading.Lock()


_PLANNED: Dict[Tuple[Any, ...], "Future[Any]"] = {}

_READ_AHEAD: Any = None
"""The command's :class:`~cuda_sobel._native.ReadAhead`: its plan's PNGs, read while Dask is imported and the local
cluster starts, for the tasks its workers (threads of this process) run."""
_SHOWN_ONLY = False
"""Whether the command showed the driver only its local cluster's GPUs (``--gpus --workers N``): then
``CUDA_VISIBLE_DEVICES`` is its own, and worker i still takes GPU i."""


def _plan(files_in: List[str], out: str, recursive: bool, format: str, kernel: Optional[str], canny: bool) -> Any:
    """``plan_batch`` of these arguments — or the plan the command's opening thread made of the same ones (taken once):
    the command plans its inputs before it imports Dask, to know whether its engines need nvJPEG, and planning again
    listed and sniffed every file twice (0.21–0.24 s for 20 000 PNGs on a 2-core host; minutes for a million files on
    a shared file system)."""
    key = (tuple(files_in), out, recursive, format, kernel, canny)
    with _OPENING:
        made = _PLANNED.pop(key, None)
    if made is not None:
        return made.result()  # a refusal is raised here, in the same words
    return _native.plan_batch(files_in, out, recursive, format, kernel, canny)


def _engine(devices: Optional[List[int]], threads: Optional[int], jpegs: bool = True) -> Any:
    """This process's :class:`~cuda_sobel._native.BatchWorker` for ``devices`` and ``threads`` (with nvJPEG where
    ``jpegs``): opened by the first caller (or by :class:`EnginePlugin` when the worker started) and kept for the
    process's life, so that no task pays for a GPU context, kernels, nvJPEG, pinned slots or threads. Callers meanwhile
    wait for the one opening."""
    key = (tuple(devices) if devices is not None else None, threads, jpegs)
    with _OPENING:
        opened = _OPENED.get(key)
        mine = opened is None
        if mine:
            opened = _OPENED[key] = Future()
    if mine:
        try:
            opened.set_result(_native.BatchWorker(devices, threads, jpegs))
        except BaseException as e:  # every waiter sees why; a later task tries again
            with _OPENING:
                del _OPENED[key]
            opened.set_exception(e)
    return opened.result()


def _worker_devices(gpus: bool, name: Any) -> Optional[List[int]]:
    """The GPU worker `name` computes on: with ``gpus`` on a local cluster of a multi-GPU host (workers named 0, 1,
    …), worker i takes GPU i; elsewhere (a worker whose ``CUDA_VISIBLE_DEVICES`` is set, as dask-cuda's are, or any
    other) every visible one."""
    if not gpus or (os.environ.get("CUDA_VISIBLE_DEVICES") and not _SHOWN_ONLY):
        return None
    count = _native.device_count()
    return [name % count] if isinstance(name, int) and count else None


def _threads() -> Optional[int]:
    """Workers beside the GPU slots: the ``CUDA_SOBEL_THREADS`` a local cluster gives each worker (its share of
    the host's cores), else every core (``RAYON_NUM_THREADS`` when set)."""
    text = os.environ.get("CUDA_SOBEL_THREADS")
    return int(text) if text else None


def _engine_plugin() -> Any:
    """:class:`EnginePlugin`, defined at its first use: it subclasses Dask's ``WorkerPlugin``, and importing Dask at
    this module's import (0.3–0.5 s on an H200 host) kept the command from opening its engines meanwhile."""
    global _ENGINE_PLUGIN
    with _OPENING:
        if _ENGINE_PLUGIN is None:
            _ENGINE_PLUGIN = _define_engine_plugin()
        return _ENGINE_PLUGIN


def _define_engine_plugin() -> Any:
    try:
        from distributed.diagnostics.plugin import WorkerPlugin
    except ImportError:  # Dask is needed to run, not to import (the docs build, type checks)
        WorkerPlugin = object

    class EnginePlugin(WorkerPlugin):  # type: ignore[misc,valid-type]
        """A Dask worker plugin that opens cuda_sobel's engine as the worker starts, on a thread of its own — so the
        worker joins the cluster at once and the GPU opens while the client plans — and keeps it for the worker's
        life. Registered by :func:`sobel_files` (``client.register_plugin``); tasks that reach a worker first simply
        wait for it. ``threads``: the workers beside each engine's GPU slots (default: ``CUDA_SOBEL_THREADS``, else
        every core); ``jpegs``: whether the engines load nvJPEG (a cluster that will only see PNGs saves its JPEG
        engine's start, ~0.6 s on an H200; without it, JPEGs decode on the workers' cores).
        """

        name = _PLUGIN_NAME
        idempotent = True

        def __init__(self, gpus: bool, threads: Optional[int] = None, jpegs: bool = True) -> None:
            self.gpus, self.given_threads, self.jpegs = gpus, threads, jpegs
            # Each worker's (devices, threads, jpegs), by name: safe whether the workers of a process share the plugin
            # or copy it.
            self.chosen: Dict[str, Tuple[Optional[List[int]], Optional[int], bool]] = {}

        def setup(self, worker: Any) -> None:
            # The worker's devices are chosen here, once: every task on it then computes on them, whichever call
            # sent it.
            chosen = self.chosen[str(worker.name)] = (_worker_devices(self.gpus, worker.name),
                                                      self.given_threads or _threads(), self.jpegs)
            # A failure here is the first task's error, with its words (the task opens again and raises it).
            threading.Thread(target=lambda: _try(_engine, *chosen), name="cuda-sobel-open", daemon=True).start()

    # Named as a class of this module, so that a pickle of one (the scheduler's copy) finds it by name.
    EnginePlugin.__module__, EnginePlugin.__qualname__ = __name__, "EnginePlugin"
    return EnginePlugin


_ENGINE_PLUGIN: Any = None
_PLUGIN_NAME = "cuda-sobel-engine"


def __getattr__(name: str) -> Any:
    # `cuda_sobel.dask.EnginePlugin` (and a pickle naming it, as the scheduler's copy of a registered one does).
    if name == "EnginePlugin":
        return _engine_plugin()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _try(f: Any, *args: Any) -> None:
    try:
        f(*args)
    except Exception:
        pass


def _chunk(jobs: List[Tuple[str, str]], filter: Tuple[Any, ...], png_compression: str, format: str, check: bool,
           gpus: bool, kernel: Tuple[Optional[str], bool] = (None, False),
           canny: Optional[Tuple[float, float]] = None) -> Tuple[int, List[Tuple[str, str]], float, str, str]:
    """One task: ``cuda_sobel batch`` on `jobs` ((input, output) pairs) through this worker's resident engine (its
    GPU when it has one). `filter`: the arguments of :func:`cuda_sobel._arrays.native_filter` (the checked filter
    itself does not travel); `kernel`: ``batch --kernel``'s spec (None: the edges) and ``--rgb``; `canny`: ``--output
    canny``'s thresholds. Returns batch's
    (images, failures, seconds, what computed) and the worker's name."""
    try:
        from distributed import get_worker

        worker = get_worker()
        name, plugin = worker.name, worker.plugins.get(_PLUGIN_NAME)
    except (ImportError, ValueError):  # called outside a worker
        name, plugin = f"pid {os.getpid()}", None
    if isinstance(plugin, _engine_plugin()) and str(name) in plugin.chosen:  # what the worker took when it started
        engine = _engine(*plugin.chosen[str(name)])
    else:
        engine = _engine(_worker_devices(gpus, name), _threads())
    return _run_on(engine, jobs, filter, png_compression, format, check, kernel, canny) + (str(name),)


def _run_on(engine: Any, jobs: List[Tuple[str, str]], filter: Tuple[Any, ...], png_compression: str, format: str,
            check: bool, kernel: Tuple[Optional[str], bool], canny: Optional[Tuple[float, float]]) -> Tuple[Any, ...]:
    """A task's work (:func:`_chunk`) on `engine`: batch's (images, failures, seconds, what computed), taking the files
    the command read ahead first (:data:`_READ_AHEAD`, in the command's own process)."""
    from ._arrays import native_filter

    return tuple(engine.run(jobs, native_filter(*filter), png_compression, format, check, *kernel, canny,
                            ahead=_READ_AHEAD))


def _local_plan(workers: Optional[int], gpus: bool) -> Tuple[int, int]:
    """A local cluster's workers (default: one per GPU with ``gpus``, else 2) and each engine's threads: workers on
    GPUs each open their own engine with their share of the host's cores; workers on the CPU share one (the
    process's), with every core."""
    cores = os.cpu_count() or 1
    workers = workers or (max(1, _native.device_count()) if gpus else 2)
    return workers, max(1, cores // workers) if gpus and _native.device_count() else cores


def _open_local(workers: Optional[int], gpus: bool, jpegs: bool) -> None:
    """Starts opening the engines of :func:`_local_client`'s workers, each on a thread of its own: the command calls
    this before it imports Dask, which then happens meanwhile (the workers' plugins find them opening)."""
    n, threads = _local_plan(workers, gpus)
    for devices in {tuple(_worker_devices(gpus, i) or ()) for i in range(n)}:
        args = (list(devices) or None, threads, jpegs)
        threading.Thread(target=_try, args=(_engine, *args), name="cuda-sobel-open", daemon=True).start()


def _local_client(workers: Optional[int], gpus: bool, jpegs: bool = True) -> Any:
    """A local cluster of ``workers`` workers (:func:`_local_plan`) inside this process, worker i on GPU i with
    ``gpus``, their engines with nvJPEG where ``jpegs``; each runs :data:`TASKS_PER_WORKER` tasks at once. Threads, not
    processes: a task's work is native and lets go of the GIL (decoding, the GPU, encoding), and worker processes added
    their start and stop to every command (one H200 host, 2000 photos, one worker: 293–316 images/s with a worker
    process, 362–384 in this process)."""
    from distributed import Client, LocalCluster

    workers, threads = _local_plan(workers, gpus)
    client = Client(LocalCluster(n_workers=workers, threads_per_worker=TASKS_PER_WORKER, processes=False))
    # Registered with the scheduler, so that sobel_files's own (idempotent) registration keeps it: each worker's
    # engine starts opening now, while the client plans.
    client.register_plugin(_engine_plugin()(gpus, threads, jpegs))
    return client


def _close(client: Any) -> None:
    """Closes a client this module started, and its local cluster."""
    cluster = client.cluster
    client.close()
    cluster.close()


def _settings(operator: str, ksize: int, border: Optional[str], compat: str, grey: str, norm: Optional[str],
              png_compression: str, format: str, check: bool, kernel: Optional[str], rgb: bool,
              canny: Optional[Tuple[float, float]]) -> Dict[str, Any]:
    """What every task of a :func:`sobel_files` call takes besides its files (:func:`_chunk`'s keywords), checked: a
    bad name or combination is a ``ValueError`` here, before any task."""
    from ._arrays import native_filter

    if canny is not None and kernel is not None:
        raise ValueError("canny and kernel: one output at a time")
    norm = norm or ("l1" if canny is not None else "l2")
    filter_args = (operator, ksize, border, compat, grey, norm)
    checked = native_filter(*filter_args)
    if canny is not None:
        low, high = canny
        _native.check_canny(checked, float(low), float(high))
    return dict(filter=filter_args, png_compression=png_compression, format=format, check=check, kernel=(kernel, rgb),
                canny=canny)


def _as_done(futures: List[Any]) -> Iterable[Any]:
    """Each of `futures` (Dask's, and the early chunks' :class:`concurrent.futures.Future` objects) as it completes."""
    import queue

    done: "queue.SimpleQueue[Any]" = queue.SimpleQueue()
    for future in futures:
        future.add_done_callback(done.put)
    for _ in futures:
        yield done.get()


class _EarlyStart:
    """The command's first chunks, run on its local engines while Dask is imported and its cluster starts: the engines
    are open ~0.3 s after the command starts (PNGs; ~0.9 s with nvJPEG's JPEG engine), its cluster's first task comes
    at ~1.0 s. Each engine takes the next chunk until :meth:`stop` (:func:`sobel_files`, once the cluster is up,
    which then gives Dask the chunks not taken). A chunk runs as that engine's worker would run it as a task — the same
    engine, outputs written whole under batch's names — and counts under that worker's name."""

    def __init__(self) -> None:
        self.began = time.perf_counter()
        """When the command began its work: the run's clock counts from here."""
        self._lock = threading.Lock()
        self._chunks: Optional[List[Any]] = None
        self._next = 0
        self._stopped = False
        self._started: Dict[int, "Future[Any]"] = {}

    def start(self, chunks: List[Any], runners: List[Any]) -> None:
        """Runs `chunks` in order, each on the first of `runners` (one an engine, each a chunk at a time) free."""
        with self._lock:
            if self._stopped:
                return
            self._chunks = chunks
        for run in runners:
            threading.Thread(target=self._take, args=(run,), name="cuda-sobel-early", daemon=True).start()

    def _take(self, run: Any) -> None:
        while True:
            with self._lock:
                if self._stopped or self._chunks is None or self._next >= len(self._chunks):
                    return
                i, self._next = self._next, self._next + 1
                done = self._started[i] = Future()
                jobs = self._chunks[i]
            try:
                done.set_result(run(jobs))
            except BaseException as e:  # raised where sobel_files takes the result, as a task's error would be
                done.set_exception(e)

    def stop(self) -> Tuple[Optional[List[Any]], Dict[int, "Future[Any]"]]:
        """Takes no more chunks. Returns the chunks (None where it never started) and, by index, the futures of those
        it took (running or done)."""
        with self._lock:
            self._stopped = True
            return self._chunks, dict(self._started)


_EARLY: Dict[Tuple[Any, ...], _EarlyStart] = {}


def _early_key(files_in: List[str], out: str, recursive: bool, settings: Dict[str, Any], chunk_size: Optional[int],
               gpus: bool) -> Tuple[Any, ...]:
    """What an early start and the :func:`sobel_files` call that takes it over must agree on."""
    return (tuple(files_in), out, recursive, tuple(sorted(settings.items())), chunk_size, gpus)


def _early_chunk(devices: Optional[List[int]], threads: int, jpegs: bool, name: str, settings: Dict[str, Any],
                 jobs: List[Tuple[str, str]]) -> Tuple[Any, ...]:
    """An early chunk on worker `name`'s engine: what :func:`_chunk` returns."""
    return _run_on(_engine(devices, threads, jpegs), jobs, **settings) + (name,)


def sobel_files(
    inputs: Union[PathLike, Iterable[PathLike]],
    out_dir: PathLike,
    *,
    client: Any = None,
    operator: str = "sobel",
    ksize: int = 3,
    border: Optional[str] = None,
    compat: str = "exact",
    grey: str = "percent",
    norm: Optional[str] = None,
    png_compression: str = "default",
    format: str = "png",
    recursive: bool = False,
    check: bool = False,
    chunk_size: Optional[int] = None,
    gpus: bool = False,
    progress: bool = False,
    kernel: Optional[str] = None,
    rgb: bool = False,
    canny: Optional[Tuple[float, float]] = None,
) -> Summary:
    """Edge images of every input into ``out_dir`` (``<stem>_sobel.<format>``), computed on a Dask cluster — or
    with ``kernel`` the ``filter`` command's images (``<stem>_<kernel>.<format>``, as ``batch --kernel``), or with
    ``canny`` OpenCV's Canny (``<stem>_canny.<format>``, as ``batch --output canny``).

    inputs
        Files, folders and glob patterns. Of a folder, its images are taken (files that are not images,
        hidden files and this tool's earlier outputs are left out, and the summary says so); its sub-folders
        too with ``recursive``, their edge images in the same sub-folders of ``out_dir``.
    client
        A ``distributed.Client``; None: the current one, else a local cluster started (and closed) here.
    operator, ksize, border, compat, grey, norm, png_compression, format, check
        As ``cuda_sobel batch``'s options (``norm="l1"`` is its ``--output l1``, default ``"l2"``; with ``canny``,
        Canny's norm, default ``"l1"`` as OpenCV's; ``format``: one of ``cuda_sobel.FORMATS``, e.g. ``"png"``).
    chunk_size
        Images per task (default: :func:`chunk_size_for`).
    gpus
        For a cluster started here: one worker per GPU. On a multi-GPU host's local cluster (workers named 0, 1, …),
        worker i computes on GPU i; a worker started with :class:`EnginePlugin` keeps the GPU it took then. On any
        cluster, a worker without a GPU computes on its CPU.
    progress
        A line on standard error, updated as tasks end: images done, images/s, failures.
    kernel, rgb
        As ``cuda_sobel batch --kernel SPEC [--rgb]``: ``"gaussian:5"``, ``"box:7"``, a matrix file's path, …, of the
        grey image or of each channel (``operator``, ``ksize``, ``compat``, ``grey`` and ``norm`` do not apply).
    canny
        ``(low, high)``: ``cuda_sobel batch --output canny --low LOW --high HIGH`` — ``cv2.Canny``'s bytes of the grey
        image (``grey="bt601"`` for ``cvtColor``'s), aperture ``ksize`` (3, 5 or 7), on the workers' cores.

    Refusals (colliding output names, an output that would replace an input, an output folder that cannot
    be written) raise ``ValueError`` before any task runs; a file that fails is listed in the summary.
    """
    settings = _settings(operator, ksize, border, compat, grey, norm, png_compression, format, check, kernel, rgb,
                         canny)
    started = time.perf_counter()
    files_in = _expand(inputs)
    out = os.fspath(out_dir)
    pairs, skipped, jpegs = _plan(files_in, out, recursive, format, kernel, canny is not None)
    with _OPENING:
        early = _EARLY.pop(_early_key(files_in, out, recursive, settings, chunk_size, gpus), None)
    if early is not None:
        started = early.began  # the run's clock: from the command's start, where its engines began the work
    summary = Summary(images=len(pairs), skipped=skipped)
    if not pairs:
        summary.seconds = time.perf_counter() - started
        return summary

    own = None
    if client is None:
        try:
            from distributed import get_client

            client = get_client()
        except (ImportError, ValueError):
            client = own = _local_client(None, gpus, jpegs)
    try:
        client.register_plugin(_engine_plugin()(gpus))
        # The chunks the command's engines took while its cluster started run on there; Dask runs the others.
        chunks, running = early.stop() if early is not None else (None, {})
        if chunks is None:
            workers = max(1, len(client.scheduler_info().get("workers", {})))
            size = chunk_size or chunk_size_for(len(pairs), workers)
            chunks = [pairs[i : i + size] for i in range(0, len(pairs), size)]
        summary.tasks = len(chunks)
        rest = [c for i, c in enumerate(chunks) if i not in running]
        futures = client.map(_chunk, rest, gpus=gpus, pure=False, retries=2, **settings) if rest else []
        done = 0
        for future in _as_done(list(running.values()) + futures):
            images, failed, seconds, engine, name = future.result()
            summary.failed.extend(failed)
            if engine not in summary.engines:
                summary.engines.append(engine)
            w = summary.workers.setdefault(name, WorkerSummary())
            w.images, w.failed, w.seconds = w.images + images, w.failed + len(failed), w.seconds + seconds
            if engine not in w.engines:
                w.engines.append(engine)
            done += images
            if progress:
                rate = done / (time.perf_counter() - started)
                print(f"\r{done}/{len(pairs)} images · {rate:.0f} images/s · {len(summary.failed)} failed",
                      end="", file=sys.stderr, flush=True)
        if progress:
            print(file=sys.stderr)
        # What a worker killed mid-file left (its hidden temporary file): no task writes these outputs any more.
        _native.remove_stale([o for _, o in pairs])
    finally:
        if own is not None:
            _close(own)
    summary.failed.sort()
    summary.seconds = time.perf_counter() - started
    return summary


def _open_for(a: argparse.Namespace, jpegs: "Future[bool]", options: Optional[Dict[str, Any]] = None) -> None:
    """The command's local engines opened (:func:`_open_local`), after planning its inputs to find whether they need
    nvJPEG (``jpegs``, set first: True where the inputs cannot be planned, whose error the run then reports). The plan
    is kept for :func:`sobel_files` (:func:`_plan`), and its PNGs are read ahead meanwhile (:data:`_READ_AHEAD`), as
    ``cuda_sobel batch`` reads them while its GPU opens. With ``options`` (:func:`sobel_files`'s keywords), the engines
    then run the first chunks while Dask is imported and the cluster starts (:class:`_EarlyStart`): without either,
    the cores and the GPU stayed idle until the first task, ~1 s in on an H200 host, where batch computes its first
    image at ~0.3 s."""
    global _READ_AHEAD
    planned: "Future[Any]" = Future()
    canny = a.output == "canny"
    early, settings = None, None
    if options is not None:
        o = options
        try:
            settings = _settings(o["operator"], o["ksize"], o["border"], o["compat"], o["grey"], o["norm"],
                                 o["png_compression"], o["format"], o["check"], o["kernel"], o["rgb"], o["canny"])
            early = _EarlyStart()
        except ValueError:  # sobel_files refuses the same, before any task
            pass
    try:
        files_in = _expand(a.inputs)
        with _OPENING:
            _PLANNED[(tuple(files_in), a.out, a.recursive, a.format, a.kernel, canny)] = planned
            if early is not None:
                _EARLY[_early_key(files_in, a.out, a.recursive, settings, a.chunk_size, a.gpus)] = early
        plan = _native.plan_batch(files_in, a.out, a.recursive, a.format, a.kernel, canny)
        if a.kernel is None and plan[0]:
            ahead = _native.ReadAhead(plan[0], a.check, canny)
            # Filtered rows are what a GPU takes (on the CPU a run would read them again): kept only where there is
            # one. Set before the plan, so that every task sees it, and the first one stops the reading.
            if _native.device_count():
                _READ_AHEAD = ahead
        planned.set_result(plan)
    except Exception as e:  # sobel_files raises it, before any task
        planned.set_exception(e)
    jpegs.set_result(planned.result()[2] if planned.exception() is None else True)
    _try(_open_local, a.workers, a.gpus, jpegs.result())
    if early is not None and planned.exception() is None:
        pairs = planned.result()[0]
        n, threads = _local_plan(a.workers, a.gpus)
        names: Dict[Tuple[int, ...], str] = {}  # each engine, by its devices, with the first worker that has it
        for i in range(n):
            names.setdefault(tuple(_worker_devices(a.gpus, i) or ()), str(i))
        # Two tasks a worker: its workers are threads of this process, so none can die alone, and each task's run
        # fills and drains the GPU slots once (one H200, 2000 PNGs, three runs: 794–827 images/s in chunks of 500,
        # 855–896 in chunks of 1000, 890–908 in one; batch 859–1016).
        size = a.chunk_size or chunk_size_for(len(pairs), n, per_worker=2)
        # A chunk at a time on each engine: two at once, as its worker runs tasks, made no difference (one H200, 2000
        # PNGs: 761–833 against 766–823 images/s; photos 421–432 against 415–438).
        runners = [functools.partial(_early_chunk, list(d) or None, threads, jpegs.result(), name, settings)
                   for d, name in names.items()]
        early.start([pairs[i : i + size] for i in range(0, len(pairs), size)], runners)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``python -m cuda_sobel.dask IN… --out DIR``: exit 0, or 2 when a file failed or the run was refused."""
    global _READ_AHEAD, _SHOWN_ONLY
    ap = argparse.ArgumentParser(
        prog="python -m cuda_sobel.dask",
        description="Edge images of many files on a Dask cluster (cuda_sobel batch, spread over workers)",
    )
    ap.add_argument("inputs", nargs="+", help="image files, folders and glob patterns")
    ap.add_argument("--out", required=True, help="folder for the edge images (<stem>_sobel.<format>)")
    ap.add_argument("-r", "--recursive", action="store_true", help="also the folders' sub-folders, mirrored into --out")
    ap.add_argument("--format", default="png", choices=_native.FORMATS, help="format of the edge images")
    ap.add_argument("--scheduler", help="address of a running scheduler, e.g. tcp://10.0.0.5:8786 (default: a local cluster)")
    ap.add_argument("--workers", type=int, help="workers of the local cluster (default: 2, or one per GPU with --gpus)")
    ap.add_argument("--gpus", action="store_true", help="a local cluster with one worker per GPU")
    ap.add_argument("--operator", default="sobel", choices=_native.OPERATORS)
    ap.add_argument("--ksize", type=int, default=3, choices=_native.KSIZES)
    ap.add_argument("--border", choices=_native.BORDERS)
    ap.add_argument("--compat", default="exact", choices=_native.COMPATS)
    ap.add_argument("--grey", default="percent", choices=_native.GREYS)
    ap.add_argument("--output", default="magnitude", choices=["magnitude", "l1", "canny"],
                    help="the edges' norm, or canny: OpenCV's Canny (with --low and --high), as batch --output canny")
    ap.add_argument("--low", type=float, help="with --output canny: the lower threshold (cv2.Canny's threshold1)")
    ap.add_argument("--high", type=float, help="with --output canny: the upper threshold (threshold2)")
    ap.add_argument("--norm", choices=["l1", "l2"], help="with --output canny: the gradient's norm (default l1)")
    ap.add_argument("--png-compression", default="default", choices=["fast", "default", "best"])
    ap.add_argument("--check", action="store_true", help="also compute cpu-scalar; an image whose bytes differ fails")
    ap.add_argument("--chunk-size", type=int, help="images per task")
    ap.add_argument("--kernel", help="the filter command's kernel instead of the edges (box:D, gaussian:D, scharr:D, "
                    "sobel:K, a matrix file), as batch --kernel")
    ap.add_argument("--rgb", action="store_true", help="with --kernel: filter R, G and B apart")
    a = ap.parse_args(argv)
    if (a.low is not None or a.high is not None or a.norm) and a.output != "canny":
        ap.error("--low, --high and --norm go with --output canny")
    if a.output == "canny" and (a.low is None or a.high is None):
        ap.error("--output canny needs both --low and --high (cv2.Canny's two thresholds)")
    options = dict(operator=a.operator, ksize=a.ksize, border=a.border, compat=a.compat, grey=a.grey,
                   norm=a.norm if a.output == "canny" else "l1" if a.output == "l1" else "l2",
                   png_compression=a.png_compression, format=a.format, recursive=a.recursive, check=a.check,
                   chunk_size=a.chunk_size, gpus=a.gpus, kernel=a.kernel, rgb=a.rgb,
                   canny=(a.low, a.high) if a.output == "canny" else None)
    jpegs: "Future[bool]" = Future()
    if not a.scheduler and a.gpus and a.workers:
        # Before any CUDA call and any thread: the driver starts only the GPUs the workers take (cuInit starts every
        # visible one, ~0.2 s each on an H200 host).
        _SHOWN_ONLY = _native.show_only_devices(list(range(a.workers)))
    if not a.scheduler:
        # The engines open and start on the first chunks while Dask is imported and the cluster starts, not after; with
        # nvJPEG only where a JPEG is among the inputs, as batch decides.
        threading.Thread(target=_open_for, args=(a, jpegs, options), name="cuda-sobel-open", daemon=True).start()
    from distributed import Client

    client = Client(a.scheduler) if a.scheduler else _local_client(a.workers, a.gpus, jpegs.result())
    if client.dashboard_link:
        print(f"cuda_sobel: Dask dashboard (progress, workers): {client.dashboard_link}", file=sys.stderr)
    try:
        summary = sobel_files(a.inputs, a.out, client=client, progress=sys.stderr.isatty(), **options)
    except ValueError as e:
        print(f"cuda_sobel: {e}", file=sys.stderr)
        return 2
    finally:
        _READ_AHEAD = None  # what no task took (a file that failed to read ahead, say): its memory back
        if a.scheduler:
            client.close()
        else:
            _close(client)
    print(summary)
    return 0 if not summary.failed else 2


if __name__ == "__main__":
    # Through the package's module, not this `__main__` copy of it: what travels to the workers (the tasks, the
    # plugin) is then named by reference to `cuda_sobel.dask`, not pickled with this module's state.
    from cuda_sobel.dask import main as _main

    code = _main()
    # Every output is written and the summary printed: exit without tearing down what the process leaves (the
    # engines' contexts and pinned memory took 0.17 s of a run of 2000 photos on one H200).
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
