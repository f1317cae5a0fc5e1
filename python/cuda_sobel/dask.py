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
import glob
import math
import os
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Iterable, List, Optional, Sequence, Tuple, Union

from . import _native

__all__ = ["sobel_files", "Summary", "main"]

PathLike = Union[str, "os.PathLike[str]"]


@dataclass
class Summary:
    """What a run did."""

    images: int
    """Input files taken (folders listed, patterns expanded, the tool's own earlier outputs left out)."""
    failed: List[Tuple[str, str]] = field(default_factory=list)
    """(file, reason) for each file that could not be done, in ``cuda_sobel batch``'s words."""
    seconds: float = 0.0
    """Wall clock of the whole run, seen from the client."""
    engines: List[str] = field(default_factory=list)
    """What computed on the workers (e.g. ``gpu-strip on NVIDIA H100 80GB HBM3 (1 device(s)), 16 slots each``)."""
    skipped: List[str] = field(default_factory=list)
    """What the input folders held that was left out, one line per kind, with how many and why (files that
    are not images, sub-folders without ``recursive``, hidden files, images this tool wrote earlier)."""

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
            f" — {'; '.join(self.engines) or 'no task ran'}"
        ]
        lines.extend(self.skipped)
        if self.failed:
            lines.append(f"failed ({len(self.failed)}):")
            lines.extend(f"  {reason}" for _, reason in self.failed)
        return "\n".join(lines)


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


def _chunk(jobs: List[Tuple[str, str]], filter: Tuple[Any, ...], png_compression: str, format: str, check: bool,
           gpus: bool, kernel: Tuple[Optional[str], bool] = (None, False),
           ) -> Tuple[int, List[Tuple[str, str]], float, str]:
    """One task: ``cuda_sobel batch`` on `jobs` ((input, output) pairs), on this worker's GPU when it has one.
    `filter`: the arguments of :func:`cuda_sobel._arrays.native_filter` (the checked filter itself does not
    travel); `kernel`: ``batch --kernel``'s spec (None: the edges) and ``--rgb``."""
    from ._arrays import native_filter

    devices = None
    if gpus and not os.environ.get("CUDA_VISIBLE_DEVICES"):
        # A plain LocalCluster on a multi-GPU host: worker i takes GPU i (dask-cuda's workers instead see
        # one device each through CUDA_VISIBLE_DEVICES).
        try:
            from distributed import get_worker

            name = get_worker().name
        except (ImportError, ValueError):
            name = None
        count = _native.device_count()
        if isinstance(name, int) and count:
            devices = [name % count]
    return _native.batch(jobs, native_filter(*filter), png_compression, format, check, devices, *kernel)


def _local_client(workers: Optional[int], gpus: bool) -> Any:
    """A local cluster: one worker per GPU with ``gpus`` (dask-cuda's LocalCUDACluster when installed),
    else ``workers`` processes (default: 2), each one task at a time, the cores shared out among them."""
    from distributed import Client, LocalCluster

    cores = os.cpu_count() or 1
    if gpus:
        gpu_count = max(1, _native.device_count())
        try:
            from dask_cuda import LocalCUDACluster

            return Client(LocalCUDACluster(n_workers=workers))
        except ImportError:
            workers = workers or gpu_count
        # A GPU worker gets its GPU's share of the host's cores, however many workers run.
        threads = str(max(1, cores // max(workers, gpu_count)))
    else:
        workers = workers or 2
        threads = str(max(1, cores // workers))
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, env={"RAYON_NUM_THREADS": threads})
    return Client(cluster)


def _close(client: Any) -> None:
    """Closes a client this module started, and its local cluster."""
    cluster = client.cluster
    client.close()
    cluster.close()


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
    norm: str = "l2",
    png_compression: str = "default",
    format: str = "png",
    recursive: bool = False,
    check: bool = False,
    chunk_size: Optional[int] = None,
    gpus: bool = False,
    progress: bool = False,
    kernel: Optional[str] = None,
    rgb: bool = False,
) -> Summary:
    """Edge images of every input into ``out_dir`` (``<stem>_sobel.<format>``), computed on a Dask cluster — or
    with ``kernel`` the ``filter`` command's images (``<stem>_<kernel>.<format>``, as ``batch --kernel``).

    inputs
        Files, folders and glob patterns. Of a folder, its images are taken (files that are not images,
        hidden files and this tool's earlier outputs are left out, and the summary says so); its sub-folders
        too with ``recursive``, their edge images in the same sub-folders of ``out_dir``.
    client
        A ``distributed.Client``; None: the current one, else a local cluster started (and closed) here.
    operator, ksize, border, compat, grey, norm, png_compression, format, check
        As ``cuda_sobel batch``'s options (``norm="l1"`` is its ``--output l1``; ``format``: one of
        ``cuda_sobel.FORMATS``, e.g. ``"png"``, ``"jpg"``).
    chunk_size
        Images per task (default: about four tasks per worker, at most 64 images each).
    gpus
        For a cluster started here: one worker per GPU. On any cluster, a worker without a GPU computes on
        its CPU.
    progress
        Show Dask's progress bar.
    kernel, rgb
        As ``cuda_sobel batch --kernel SPEC [--rgb]``: ``"gaussian:5"``, ``"box:7"``, a matrix file's path, …, of the
        grey image or of each channel (``operator``, ``ksize``, ``compat``, ``grey`` and ``norm`` do not apply).

    Refusals (colliding output names, an output that would replace an input, an output folder that cannot
    be written) raise ``ValueError`` before any task runs; a file that fails is listed in the summary.
    """
    from ._arrays import native_filter

    filter_args = (operator, ksize, border, compat, grey, norm)
    native_filter(*filter_args)  # a bad name or combination fails here, before any task
    started = time.perf_counter()
    files_in = _expand(inputs)
    out = os.fspath(out_dir)
    pairs, skipped = _native.plan_batch(files_in, out, recursive, format, kernel)
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
            client = own = _local_client(None, gpus)
    try:
        workers = max(1, len(client.scheduler_info().get("workers", {})))
        size = chunk_size or min(64, max(1, math.ceil(len(pairs) / (4 * workers))))
        chunks = [pairs[i : i + size] for i in range(0, len(pairs), size)]
        futures = client.map(
            _chunk, chunks, filter=filter_args, png_compression=png_compression, format=format, check=check,
            gpus=gpus, kernel=(kernel, rgb), pure=False, retries=2,
        )
        if progress:
            from distributed import progress as show

            show(futures)
        for images, failed, _seconds, engine in client.gather(futures):
            summary.failed.extend(failed)
            if engine not in summary.engines:
                summary.engines.append(engine)
    finally:
        if own is not None:
            _close(own)
    summary.failed.sort()
    summary.seconds = time.perf_counter() - started
    return summary


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``python -m cuda_sobel.dask IN… --out DIR``: exit 0, or 2 when a file failed or the run was refused."""
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
    ap.add_argument("--output", default="magnitude", choices=["magnitude", "l1"], help="the edges' norm")
    ap.add_argument("--png-compression", default="default", choices=["fast", "default", "best"])
    ap.add_argument("--check", action="store_true", help="also compute cpu-scalar; an image whose bytes differ fails")
    ap.add_argument("--chunk-size", type=int, help="images per task")
    ap.add_argument("--kernel", help="the filter command's kernel instead of the edges (box:D, gaussian:D, scharr:D, "
                    "sobel:K, a matrix file), as batch --kernel")
    ap.add_argument("--rgb", action="store_true", help="with --kernel: filter R, G and B apart")
    a = ap.parse_args(argv)
    from distributed import Client

    client = Client(a.scheduler) if a.scheduler else _local_client(a.workers, a.gpus)
    if client.dashboard_link:
        print(f"cuda_sobel: Dask dashboard (progress, workers): {client.dashboard_link}", file=sys.stderr)
    try:
        summary = sobel_files(
            a.inputs, a.out, client=client, operator=a.operator, ksize=a.ksize, border=a.border, compat=a.compat,
            grey=a.grey, norm="l1" if a.output == "l1" else "l2",
            png_compression=a.png_compression, format=a.format, recursive=a.recursive, check=a.check,
            chunk_size=a.chunk_size, gpus=a.gpus, kernel=a.kernel, rgb=a.rgb,
            progress=sys.stderr.isatty(),
        )
    except ValueError as e:
        print(f"cuda_sobel: {e}", file=sys.stderr)
        return 2
    finally:
        if a.scheduler:
            client.close()
        else:
            _close(client)
    print(summary)
    return 0 if not summary.failed else 2


if __name__ == "__main__":
    sys.exit(main())
