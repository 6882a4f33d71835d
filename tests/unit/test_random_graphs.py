"""The seeded network generator (bench/random_graphs.py): generation 1 still writes the files the
earlier random sets were made of, and generation 2 makes every operator type npuplan lowers."""

from __future__ import annotations

import hashlib

from npuplan.lowering.lstm import LSTM
from npuplan.lowering.support import LOWERED_TYPES
from bench.random_graphs import network_bytes, random_network

# sha256 of network_bytes(seed, generation=1) for seeds 0..9, as written before generation 2
GENERATION_1_DIGEST = "7918672171a021541fa4bfeb0b7cb762e429f3b6bc9976914c16b3a0f72187c4"


def test_generation_1_writes_the_same_files() -> None:
    digest = hashlib.sha256()
    for seed in range(10):
        digest.update(network_bytes(seed, generation=1))
    assert digest.hexdigest() == GENERATION_1_DIGEST


def test_generation_2_makes_every_lowered_operator_type_but_the_lstm() -> None:
    seen: set[str] = set()
    for seed in range(200):
        seen |= {op.type for op in random_network(seed).subgraphs[0].ops}
    # PADV2 (a PAD of another fill), BATCH_MATMUL and TILE are not generated: a new kind would change
    # every generation-2 seed's network; tests/unit/emit/test_pads_and_reductions.py,
    # test_batch_matmul.py and test_batches_and_5d_views.py run them against LiteRT
    assert set(LOWERED_TYPES) - seen == {LSTM, "PADV2", "BATCH_MATMUL", "TILE"}


def test_generation_2_networks_are_4d_int8_maps_in_and_out_with_argmax_indices_as_extra_outputs() -> None:
    for seed in range(40):
        g = random_network(seed).subgraphs[0]
        assert [len(t.shape) for t in g.inputs] == [4] and len(g.outputs[0].shape) == 4
        assert all(len(t.shape) == 3 for t in g.outputs[1:])
