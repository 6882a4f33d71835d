"""Sweep points as Ray tasks: the only module that imports ``ray`` (inside ``run_points_on_ray``).

Each model's bytes go into Ray's object store once; a task gets its point and those bytes, and
plans in a Ray worker process with that process's ``PointPlanner`` (``runner.worker_row``), so the
points of a model share its reading, lowerings and encodings per worker as with ``--jobs``. The
workers must be able to import npuplan (installed, or on their ``PYTHONPATH``).
"""

from __future__ import annotations

import logging
import os
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


def run_points_on_ray(points: Sequence[SweepPoint], on_row: RowSink, *, address: str | None = None,
                      num_cpus: int | None = None) -> None:
    """Plan ``points`` as Ray tasks and hand each row to ``on_row`` as it is ready.

    ``address`` of ``None`` starts a local Ray (``ray.init()``, with ``num_cpus`` CPUs when given,
    on the loopback address when Ray is first imported here); otherwise connects to the running cluster there (``ray.init(address=...)``). Ray is shut down
    afterwards. Raises ``ConfigError`` when Ray is not installed or cannot start or connect.
    """
    if not address:  # a Ray started for this sweep listens on the loopback address only
        os.environ.setdefault(LOOPBACK_ONLY, "0")
    try:
        import ray
    except ImportError:
        raise ConfigError(f"--ray needs Ray, which is not installed: {INSTALL_HINT}") from None
    _start(ray, address, num_cpus)
    try:
        task: Any = ray.remote(worker_row)
        models = {p.model.sha256: p.model.path for p in points}
        data = {sha: ray.put(Path(path).read_bytes()) for sha, path in models.items()}
        pending: dict[Any, SweepPoint] = {task.remote(p, data[p.model.sha256]): p for p in points}
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                on_row(pending.pop(ref), ray.get(ref))
    finally:
        ray.shutdown()


def _start(ray: Any, address: str | None, num_cpus: int | None) -> None:
    """``ray.init`` locally or at ``address``; a failure as one ``ConfigError`` line."""
    try:
        if address:
            ray.init(address=address, log_to_driver=False, logging_level=logging.WARNING)
        else:
            ray.init(num_cpus=num_cpus, include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING)
    except NpuplanError:
        raise
    except Exception as error:  # noqa: BLE001 - Ray's own errors: one line naming the address
        where = f"at '{address}'" if address else "locally"
        detail = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise ConfigError(f"cannot start or reach Ray {where}: {detail}") from None
