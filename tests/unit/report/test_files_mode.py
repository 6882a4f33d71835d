"""Report files get the permissions a plain open() gives (0666 less the umask), not 0600."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from npuplan.io.atomic import write_atomically


def test_atomic_writes_follow_the_umask(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        write_atomically({tmp_path / "a.csv": "x\n", tmp_path / "b.json": b"{}"})
    finally:
        os.umask(old)
    for name in ("a.csv", "b.json"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o644
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.csv", "b.json"]  # no temporary left
