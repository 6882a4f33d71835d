"""Writing files all or nothing: every file staged beside its target, then moved into place."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from pathlib import Path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_atomically(files: Mapping[Path, str | bytes]) -> None:
    """Write every file to a temporary file beside it, then move them all into place: a failure
    (or a reader) never sees half a file. The files get the permissions a plain ``open`` would
    give them (0666 less the umask), not the temporary file's 0600."""
    staged: list[tuple[str, Path]] = []
    mode = 0o666 & ~_umask()
    try:
        for path, text in files.items():
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
            with os.fdopen(fd, "wb") as handle:
                handle.write(text if isinstance(text, bytes) else text.encode("utf-8"))
                os.fchmod(handle.fileno(), mode)
            staged.append((tmp, path))
        for tmp, path in staged:
            os.replace(tmp, path)
    finally:
        for tmp, _ in staged:
            if os.path.exists(tmp):
                os.unlink(tmp)
