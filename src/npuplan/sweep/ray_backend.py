"""Sweep points as Ray tasks: the only module that imports ``ray`` (inside ``run_points_on_ray``).

Each model's bytes go into Ray's object store once; a task gets its point and those bytes, and
plans in a Ray worker process with that process's ``PointPlanner`` (``runner.worker_row``), so the
points of a model share its reading, lowerings and encodings per worker as with ``--jobs``. The
workers must be able to import npuplan (installed, or on their ``PYTHONPATH``).
"""

from __future__ import annotations

import logging
import os
import shutil
import socket
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from npuplan.errors import ConfigError, NpuplanError
from npuplan.sweep.points import SweepPoint
from npuplan.sweep.runner import RowSink, worker_row

log = logging.getLogger(__name__)

INSTALL_HINT = 'pip install "npuplan[ray]"'
# Set to 0 before Ray is imported, Ray binds a node it starts to 127.0.0.1, not to the host's address.
LOOPBACK_ONLY = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
CONNECT_TIMEOUT_S = 10
DEFAULT_PORT = 6379  # Ray's default GCS port


def run_points_on_ray(points: Sequence[SweepPoint], on_row: RowSink, *, address: str | None = None,
                      num_cpus: int | None = None) -> None:
    """Plan ``points`` as Ray tasks and hand each row to ``on_row`` as it is ready.

    ``address`` of ``None`` starts a private local Ray (``address="local"``: never a cluster an
    earlier ``ray start`` or ``RAY_ADDRESS`` points at, alive or dead) in a temporary folder of its
    own, with ``num_cpus`` CPUs when given; otherwise connects to the cluster at ``address`` after
    checking within ``CONNECT_TIMEOUT_S`` that something listens there. Ray is shut down and the
    private folder removed afterwards. Raises ``ConfigError`` (one line naming the address) when
    Ray is not installed or cannot start or connect.
    """
    if not address:  # a Ray started for this sweep listens on the loopback address only
        os.environ.setdefault(LOOPBACK_ONLY, "0")
    else:
        _probe(address)
    try:
        import ray
    except ImportError:
        raise ConfigError(f"--ray needs Ray, which is not installed: {INSTALL_HINT}") from None
    private = None if address else tempfile.mkdtemp(prefix="npuplan-ray-")
    try:
        _start(ray, address, num_cpus, private)
        try:
            _run(ray, points, on_row)
        finally:
            ray.shutdown()
    finally:
        if private is not None:
            shutil.rmtree(private, ignore_errors=True)


def _run(ray: Any, points: Sequence[SweepPoint], on_row: RowSink) -> None:
    task: Any = ray.remote(worker_row)
    models = {p.model.sha256: p.model.path for p in points}
    data = {sha: ray.put(Path(path).read_bytes()) for sha, path in models.items()}
    pending: dict[Any, SweepPoint] = {task.remote(p, data[p.model.sha256]): p for p in points}
    while pending:
        done, _ = ray.wait(list(pending), num_returns=1)
        for ref in done:
            on_row(pending.pop(ref), ray.get(ref))


def host_and_port(address: str) -> tuple[str, int]:
    """``(host, port)`` of a Ray address (``host:port`` or ``ray://host:port``; port 6379 when
    omitted). ``ConfigError`` for ``auto`` (which would follow whatever cluster file is left in
    ``/tmp/ray``) or a malformed address."""
    text = address.removeprefix("ray://")
    if text in ("auto", "local"):
        raise ConfigError(f"--ray {address}: give the cluster's address (host:port), or --ray alone for a "
                          "private local Ray")
    host, _, port = text.rpartition(":") if ":" in text else (text, "", str(DEFAULT_PORT))
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ConfigError(f"--ray {address}: not a Ray address (host:port)")
    return host.strip("[]"), int(port)


def _probe(address: str) -> None:
    """Check within ``CONNECT_TIMEOUT_S`` that something accepts connections at ``address``: Ray's
    own connect retries a dead address for minutes without a word."""
    host, port = host_and_port(address)
    try:
        with socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S):
            pass
    except OSError as error:
        reason = error.strerror or type(error).__name__
        raise ConfigError(f"cannot reach Ray at '{address}': {reason} (waited at most {CONNECT_TIMEOUT_S} s)") from None


def _start(ray: Any, address: str | None, num_cpus: int | None, private: str | None) -> None:
    """``ray.init`` at ``address``, or a private local Ray in the folder ``private``; a failure as one
    ``ConfigError`` line."""
    try:
        if address:
            ray.init(address=address, log_to_driver=False, logging_level=logging.WARNING)
        else:
            ray.init(address="local", _temp_dir=private, num_cpus=num_cpus, include_dashboard=False,
                     log_to_driver=False, logging_level=logging.WARNING)
    except NpuplanError:
        raise
    except Exception as error:  # noqa: BLE001 - Ray's own errors: one line naming the address
        where = f"at '{address}'" if address else "locally"
        detail = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise ConfigError(f"cannot start or reach Ray {where}: {detail}") from None
