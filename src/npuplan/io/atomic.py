"""Writing files all or nothing: every file staged beside its target, then moved into place."""

from __future__ import annotations

import itertools
import os
from collections.abc import Mapping
from pathlib import Path

# Not ``tempfile``: its import brings shutil, bz2, lzma and random (~3 ms of every plan's start-up)
# for one exclusive create, which ``os.open`` does, with the mode a plain ``open`` gives.
_STAGED_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
_serials = itertools.count()


def _stage(path: Path) -> tuple[int, str]:
    """A new file beside ``path`` that no other writer holds (created exclusively, its name unique to
    this process and call; a stale one from a dead process of the same id is passed over): its
    descriptor and name. Created with 0666 less the umask, as a plain ``open`` would."""
    while True:
        tmp = str(path.parent / f".{path.name}.{os.getpid()}.{next(_serials)}.tmp")
        try:
            return os.open(tmp, _STAGED_FLAGS, 0o666), tmp
        except FileExistsError:
            continue


def write_atomically(files: Mapping[Path, str | bytes]) -> None:
    """Write every file to a temporary file beside it, then move them all into place: a failure
    (or a reader) never sees half a file. The files get the permissions a plain ``open`` would
    give them (0666 less the umask)."""
    staged: list[tuple[str, Path]] = []
    try:
        for path, text in files.items():
            fd, tmp = _stage(path)
            staged.append((tmp, path))
            with os.fdopen(fd, "wb") as handle:
                handle.write(text if isinstance(text, bytes) else text.encode("utf-8"))
        for tmp, path in staged:
            os.replace(tmp, path)
    finally:
        for tmp, _ in staged:
            if os.path.exists(tmp):
                os.unlink(tmp)
