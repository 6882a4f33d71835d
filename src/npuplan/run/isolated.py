"""A LiteRT interpreter in a child process, for kernels that can kill the process that runs them.

LiteRT 2.3's reference kernels (``--reference-kernels``: the ones TensorFlow Lite Micro runs) abort
or fault inside native code on 6 of the 9 public models (the depthwise networks): no Python
exception, the process dies. So they run in a child process that holds the interpreter (its
variable tensors persist between invocations, as in one process), and a child that dies turns into
``LiteRTCrash``, one line naming the signal, in the parent. The child is forked where the platform
can (Linux: nothing to re-import), spawned elsewhere; it writes no core file and nothing on
stderr (what LiteRT says comes back as the parent's exception).
"""

from __future__ import annotations

import multiprocessing
import signal
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

from npuplan.errors import LiteRTCrash, ModelError

_METHODS = frozenset({"get_input_details", "get_output_details", "set_tensor", "get_tensor", "invoke"})


Build = Callable[[bytes, str], Any]


def _serve(conn: Connection, build: Build, model: bytes, label: str) -> None:
    """The child: builds the interpreter, then answers (method, args) requests until None."""
    import faulthandler
    import os

    try:
        import resource  # POSIX only
    except ImportError:
        pass
    else:
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a crash is reported, not dumped
    faulthandler.disable()  # the parent reports the crash in one line: no traceback, no LiteRT chatter
    quiet = os.open(os.devnull, os.O_WRONLY)
    os.dup2(quiet, 2)
    try:
        found = build(model, label)
    except ModelError as error:
        conn.send(("error", str(error)))
        return
    conn.send(("ok", None))
    while (request := conn.recv()) is not None:
        method, args = request
        try:
            conn.send(("ok", getattr(found, method)(*args)))
        except (ValueError, RuntimeError) as error:
            conn.send(("raise", (type(error).__name__, str(error))))


def _context() -> Any:
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else "spawn")


def _signal_name(exitcode: int | None) -> str:
    if exitcode is None or exitcode >= 0:
        return f"exit status {exitcode}"
    try:
        return f"signal {-exitcode}, {signal.Signals(-exitcode).name}"
    except ValueError:
        return f"signal {-exitcode}"


class IsolatedInterpreter:
    """The interpreter ``build(model, label)`` makes (``run.litert``'s, with the reference kernels),
    in a child process: the methods
    ``npuplan.run`` calls (``get_input_details``, ``get_output_details``, ``set_tensor``,
    ``get_tensor``, ``invoke``), each a round trip; ``ModelError`` when LiteRT refuses the model,
    ``LiteRTCrash`` when the child dies."""

    def __init__(self, model: bytes, *, label: str, build: Build) -> None:
        self.label = label
        parent, child = _context().Pipe()
        self._conn = parent
        self._process = _context().Process(target=_serve, args=(child, build, model, label), daemon=True)
        self._process.start()
        child.close()
        status, value = self._receive("loading it")
        if status == "error":
            self.close()
            raise ModelError(value)

    def _receive(self, doing: str) -> tuple[str, Any]:
        try:
            return self._conn.recv()  # type: ignore[no-any-return]
        except (EOFError, ConnectionError):
            self._process.join(timeout=10)
            why = _signal_name(self._process.exitcode)
            raise LiteRTCrash(f"{self.label}: LiteRT's reference kernels crashed ({why}) {doing}; TFLite's "
                              "optimised kernels (without --reference-kernels) run it") from None

    def _call(self, method: str, *args: Any) -> Any:
        if not self._process.is_alive() and self._process.exitcode is not None:
            raise LiteRTCrash(f"{self.label}: LiteRT's reference kernels crashed earlier "
                              f"({_signal_name(self._process.exitcode)})")
        self._conn.send((method, args))
        status, value = self._receive(f"in {method}")
        if status == "raise":
            kind, text = value
            raise (ValueError if kind == "ValueError" else RuntimeError)(text)
        return value

    def __getattr__(self, method: str) -> Any:
        if method not in _METHODS:
            raise AttributeError(method)
        return lambda *args: self._call(method, *args)

    def close(self) -> None:
        """Ends the child (it also ends with the parent: a daemon process)."""
        try:
            self._conn.send(None)
        except (OSError, ValueError):
            pass
        self._process.join(timeout=5)
        if self._process.is_alive():
            self._process.kill()
            self._process.join()
        self._conn.close()

    def __del__(self) -> None:
        process = getattr(self, "_process", None)
        if process is not None and process.is_alive():
            process.kill()
            process.join()
