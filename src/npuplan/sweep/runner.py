"""Planning sweep points into CSV rows: in this process or in worker processes.

Each process keeps the ``PreparedModel`` of the last models it planned (``PointPlanner``), and the
points arrive grouped by model and accelerator, so a worker reads a model once and lowers and
encodes it once per accelerator however many points it plans of it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed

from npuplan.api import PreparedModel, plan_prepared
from npuplan.errors import InfeasiblePlan, InternalError, NpuplanError, marked_op
from npuplan.hw import build_architecture
from npuplan.report import build_report
from npuplan.report.summary import summary_row
from npuplan.sweep.points import SweepPoint

log = logging.getLogger(__name__)

RowSink = Callable[[SweepPoint, dict[str, object]], None]


class PointPlanner:
    """Plans points, keeping the ``PreparedModel`` (or the ``ModelError``) of the last ``keep``
    models by SHA-256, so the points of one model share its reading, lowerings and encodings."""

    def __init__(self, keep: int = 2) -> None:
        self._keep = keep
        self._models: dict[str, PreparedModel | NpuplanError] = {}

    def model(self, point: SweepPoint, data: bytes | None = None) -> PreparedModel:
        """``point``'s model, read from its path (or parsed from ``data``, its bytes) on first use."""
        found = self._models.get(point.model.sha256)
        if found is None:
            try:
                found = (PreparedModel.read(point.model.path) if data is None
                         else PreparedModel.parse(data, point.model.path))
            except NpuplanError as error:
                found = error
            while len(self._models) >= self._keep:
                del self._models[next(iter(self._models))]
            self._models[point.model.sha256] = found
        if isinstance(found, NpuplanError):
            raise found
        return found

    def row(self, point: SweepPoint, data: bytes | None = None) -> dict[str, object]:
        """``point``'s CSV row: its cells, ``status``, ``reason`` and the summary CSV's columns."""
        row = point.cells()
        try:
            arch = build_architecture(point.options)
            result = plan_prepared(self.model(point, data), point.options, arch=arch)
        except InfeasiblePlan as error:
            row.update(status="infeasible", reason=str(error))
        except NpuplanError as error:
            row.update(status="invalid", reason=str(error))
        except Exception as error:  # noqa: BLE001 - a bug: one row saying so, the sweep goes on
            log.debug("internal error on point %d", point.index, exc_info=True)
            row.update(status="error", reason=str(InternalError(stage="planning", op=marked_op(error), cause=error)))
        else:
            row.update(summary_row(build_report(result)), status="ok", reason="")
        return row


# The planner of a worker process (each worker process has its own copy of this module).
_WORKER = PointPlanner()


def worker_row(point: SweepPoint, data: bytes | None = None) -> dict[str, object]:
    """``point``'s row planned by this process's ``PointPlanner`` (the function workers run)."""
    return _WORKER.row(point, data)


def run_points(points: Sequence[SweepPoint], on_row: RowSink, *, jobs: int = 1) -> None:
    """Plan ``points`` and hand each row to ``on_row`` as it is ready: in this process when
    ``jobs`` is 1, else in ``jobs`` worker processes (rows then arrive in completion order)."""
    if jobs <= 1 or len(points) <= 1:
        planner = PointPlanner()
        for point in points:
            on_row(point, planner.row(point))
        return
    with ProcessPoolExecutor(max_workers=min(jobs, len(points))) as pool:
        futures: dict[Future[dict[str, object]], SweepPoint] = {pool.submit(worker_row, p): p for p in points}
        try:
            for future in as_completed(futures):
                on_row(futures[future], future.result())
        except BaseException:
            pool.shutdown(wait=True, cancel_futures=True)
            raise
