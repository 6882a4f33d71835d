"""The sweep CSV: one row per point, written atomically, read back to resume.

Columns: the point's model and options, ``status`` (``ok``, ``infeasible``: no plan fits the
budget, ``invalid``: the options or the model cannot be planned together, ``error``: a bug in
npuplan) and ``reason`` (the one-line error), every column of the summary CSV of ``npuplan plan``
under Vela's names (empty when not ``ok``), then the npuplan version and the resume key.
"""

from __future__ import annotations

import csv
import io
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from npuplan.errors import NpuplanError
from npuplan.io.atomic import write_atomically
from npuplan.report.files import text_cell
from npuplan.report.summary import SUMMARY_COLUMNS
from npuplan.sweep.points import OPTION_COLUMNS, SweepPoint

COLUMNS = ("model", "model_sha256", *OPTION_COLUMNS, "status", "reason", *SUMMARY_COLUMNS, "npuplan_version", "key")
STATUSES = ("ok", "infeasible", "invalid", "error")
CSV_NAME = "sweep.csv"

Row = Mapping[str, object]


def read_rows(path: Path) -> list[dict[str, str]]:
    """The rows of an existing sweep CSV (none when there is no file); ``NpuplanError`` when it is
    not a sweep CSV (no ``key`` column)."""
    if not path.is_file():
        return []
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            if reader.fieldnames is None:
                return []
            if "key" not in reader.fieldnames:
                raise NpuplanError(f"'{path}' is not a sweep CSV (no 'key' column): move it away or choose another --output-dir")
            return [dict(row) for row in reader]
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        raise NpuplanError(f"cannot read '{path}': {error}") from None


def csv_text(rows: Sequence[Row]) -> str:
    """``rows`` as CSV text under ``COLUMNS`` (formula-like text cells quoted with ``'``)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(COLUMNS)
    writer.writerows([text_cell(row.get(c, "")) for c in COLUMNS] for row in rows)
    return buffer.getvalue()


def write_text_atomically(path: Path, text: str) -> None:
    """Write ``text`` to a temporary file beside ``path`` and move it into place: a reader (or a
    crash) never sees half a file."""
    write_atomically({path: text})


class SweepTable:
    """The sweep CSV of one run: the rows it found, the rows planned since, rewritten atomically
    at most every ``flush_seconds`` while planning and once at the end.

    The final order is this sweep's points in point order, then rows of other points the CSV held.
    """

    def __init__(self, path: Path, points: Sequence[SweepPoint], *, flush_seconds: float = 2.0) -> None:
        self.path = path
        self._old = read_rows(path)
        self._points = points
        self._done: dict[str, Row] = {row["key"]: row for row in self._old}
        self._flush_seconds = flush_seconds
        self._flushed = time.monotonic()
        self.added = 0

    def pending(self) -> list[SweepPoint]:
        """The points the CSV does not hold yet, in point order."""
        return [p for p in self._points if p.key not in self._done]

    def add(self, point: SweepPoint, row: Row) -> None:
        """Record ``point``'s row; rewrite the CSV when the last write is old enough."""
        self._done[point.key] = row
        self.added += 1
        if time.monotonic() - self._flushed >= self._flush_seconds:
            self.flush()

    def rows(self) -> list[Row]:
        """Every row to write: this sweep's points first, in order, then the other old rows."""
        keys = {p.key for p in self._points}
        ours = [self._done[p.key] for p in self._points if p.key in self._done]
        return ours + [row for row in self._old if row["key"] not in keys]

    def flush(self) -> None:
        """Rewrite the CSV with every row so far (atomically)."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            write_text_atomically(self.path, csv_text(self.rows()))
        except OSError as error:
            raise NpuplanError(f"cannot write '{self.path}': {error.strerror or error}") from None
        self._flushed = time.monotonic()
