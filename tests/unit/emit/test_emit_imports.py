"""What loading the emitter costs every ``--emit-tflite`` run: the modules its import brings in.
The weight decoder (only ``validate --weights`` reads weight streams back), the weight-stream
check, the weight encoder (loaded by the first op with weights) and hashlib's OpenSSL bindings are
not among them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[3] / "src"
NOT_LOADED = ("npuplan.codec.decode", "npuplan.codec.encode", "npuplan.regstream.weight_streams", "_hashlib")


def _loaded_after(statement: str) -> set[str]:
    """The modules of ``NOT_LOADED`` a fresh interpreter holds after ``statement``."""
    probe = f"import sys\n{statement}\nprint(' '.join(m for m in {NOT_LOADED!r} if m in sys.modules))"
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True)
    return set(out.stdout.split())


def test_the_emit_path_loads_no_decoder_encoder_or_hashlib() -> None:
    assert _loaded_after("import npuplan.emit.emitter, npuplan.emit.native.api, npuplan.regstream") == set()


def test_the_probe_sees_a_module_that_is_loaded() -> None:
    assert _loaded_after("import npuplan.codec.decode") == {"npuplan.codec.decode"}
