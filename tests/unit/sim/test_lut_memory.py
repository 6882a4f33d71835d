"""The lookup-table memory per configuration (``sim.lut_memory``) on command streams built in code:
where each configuration's tables live (the addresses Vela 5.2.0's files DMA them to), DMAs outside
the window or past SHRAM refused in one line, and lookups of tables that were never loaded, or that
an operation without a table may have overwritten on a 16-bank SHRAM, refused instead of computed
from stale bytes. Vela's own files for every configuration run in ``test_vela_files``."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from npuplan.errors import ValidationError
from npuplan.hw.accelerator import ACCELERATORS
from npuplan.sim import execute_stream
from npuplan.hw.lut_window import lut_window
from tests.unit.sim.test_machine import (OFM_PRECISION_16, POOL_1X1, PRECISION_16, SIGNED, Recorder, fm, payload,
                                         recorder)  # noqa: F401 (fixture)

# SHRAM address of the tables in Vela 5.2.0's files (both cores), and the SHRAM size
VELA_TABLE_ADDRESS = {"ethos-u55-32": (14336, 16384), "ethos-u55-64": (14336, 16384),
                      "ethos-u55-128": (22528, 24576), "ethos-u55-256": (47104, 49152),
                      "ethos-u65-256": (47104, 49152), "ethos-u65-512": (47104, 49152)}
TABLE = (np.arange(256) - 128).astype(np.int8).view(np.uint8)


def load(address: int, length: int = 256, src: int = 0) -> list[tuple[str, int]]:
    return [("DMA0_SRC_REGION", 0), ("DMA0_SRC", src), ("DMA0_DST_REGION", 1 << 8), ("DMA0_DST", address),
            ("DMA0_LEN", length), ("NPU_OP_DMA_START", 0)]


def pool(activation: int = 0, *, ib_end: int = 6) -> list[tuple[str, int]]:
    return [*fm("IFM", shape=(1, 1, 4)), *fm("OFM", base=16, shape=(1, 1, 4)), *POOL_1X1, ("IFM_IB_END", ib_end),
            ("AB_START", ib_end), ("ACTIVATION", activation), ("NPU_OP_POOL", 0)]


def elementwise(*, ib_end: int) -> list[tuple[str, int]]:
    return [*fm("IFM", shape=(1, 1, 4)), *fm("IFM2", base=4, shape=(1, 1, 4)), *fm("OFM", base=16, shape=(1, 1, 4)),
            ("IFM_IB_END", ib_end), ("AB_START", ib_end), ("ACTIVATION", 0), ("NPU_OP_ELEMENTWISE", 1)]


def run(commands: list[tuple[str, int]], name: str) -> None:
    flash = np.concatenate([TABLE, np.zeros(4096, dtype=np.uint8)])
    execute_stream(payload(*commands, accelerator=ACCELERATORS[name]), {0: flash, 1: np.zeros(64, dtype=np.uint8)})


@pytest.mark.parametrize("name", sorted(VELA_TABLE_ADDRESS))
def test_each_configuration_keeps_its_tables_where_vela_loads_them(recorder: Recorder, name: str) -> None:
    window = lut_window(ACCELERATORS[name])
    assert (window.base, window.shram_bytes) == VELA_TABLE_ADDRESS[name]
    run([*load(window.base + 512), *pool(16 + 2)], name)
    assert recorder.calls[0]["lut"].tolist() == (np.arange(256) - 128).tolist()


@pytest.mark.parametrize(("name", "commands", "message"), [
    ("ethos-u55-64", load(16384 - 256, 512), "DMA destination SHRAM bytes 16128..16640 lie outside the 16384-byte "
                                             "SHRAM of ethos-u55-64"),
    ("ethos-u55-256", load(47104 - 2048, 4096), "DMA destination SHRAM bytes 45056..49152 lie outside ethos-u55-256's "
                                                "lookup-table memory (SHRAM bytes 47104..49152)"),
    ("ethos-u55-128", load(22528 - 256), "outside ethos-u55-128's lookup-table memory (SHRAM bytes 22528..24576)"),
    ("ethos-u65-512", pool(16), "ACTIVATION 16 reads lookup-table bytes 0..256 that no DMA of this command stream "
                                "loaded"),
    ("ethos-u55-32", [*load(14336), *pool(16), *pool(0), *pool(16)],
     "NPU op 2 (NPU_OP_POOL): ACTIVATION 16 reads lookup-table bytes 0..256 that no DMA of this command stream "
     "loaded since an operation without a table"),
    ("ethos-u55-64", [*load(14336), *elementwise(ib_end=16), *pool(16)], "since an operation without a table"),
])
def test_tables_outside_the_window_or_not_loaded_are_refused(recorder: Recorder, name: str,
                                                             commands: list[tuple[str, int]], message: str) -> None:
    with pytest.raises(ValidationError, match=re.escape(message)) as error:
        run(commands, name)
    assert "\n" not in str(error.value)


@pytest.mark.parametrize(("name", "between"), [
    ("ethos-u55-128", pool(0)),  # reserved top banks: a table survives any operation
    ("ethos-u65-256", pool(0, ib_end=46)),
    ("ethos-u55-64", elementwise(ib_end=14)),  # elementwise buffers ending below the tables
])
def test_a_table_survives_operations_that_cannot_reach_it(recorder: Recorder, name: str,
                                                          between: list[tuple[str, int]]) -> None:
    base = lut_window(ACCELERATORS[name]).base
    run([*load(base), *pool(16), *between, *pool(16)], name)
    assert recorder.calls[-1]["lut"].tolist() == (np.arange(256) - 128).tolist()


def test_a_16_bit_lookup_needs_the_whole_2_kib(recorder: Recorder) -> None:
    base = lut_window(ACCELERATORS["ethos-u55-128"]).base
    int16_pool = [*fm("IFM", shape=(1, 1, 4), element=2, precision=SIGNED | PRECISION_16),
                  *fm("OFM", base=16, shape=(1, 1, 4), element=2, precision=SIGNED | OFM_PRECISION_16), *POOL_1X1,
                  ("ACTIVATION", 16), ("NPU_OP_POOL", 0)]
    with pytest.raises(ValidationError, match=re.escape("reads lookup-table bytes 0..2048")):
        run([*load(base, 1024), *int16_pool], "ethos-u55-128")
    run([*load(base, 2048), *int16_pool], "ethos-u55-128")
    assert recorder.calls[-1]["lut"].size == 512


def test_vela_files_lut_dma_past_the_shram_is_refused() -> None:
    # Vela 5.2.0's default core, bench/random_graphs.py seed 10, ethos-u55-64 --system-config
    # Ethos_U55_Deep_Embedded --memory-mode Shared_Sram --optimise Size: the LOG's 256-byte table is
    # DMAed to SHRAM byte 16384, one slot past the 16 KiB SHRAM's top (14336 + 8 * 256), while its
    # 20 lookups read slot 0 (14336)
    from bench.vela_files import run_compiled

    data = (Path(__file__).resolve().parents[2] / "data" / "sim" / "refused" / "random_10_u55-64S_vela.tflite").read_bytes()
    with pytest.raises(ValidationError, match=re.escape("DMA destination SHRAM bytes 16384..16640 lie outside the "
                                                        "16384-byte SHRAM of ethos-u55-64")):
        run_compiled(data, [np.zeros((1, 3, 40, 1), np.int8)])
