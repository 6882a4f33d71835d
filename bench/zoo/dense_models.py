"""Dense (fully-connected) networks whose weights do not fit the U65's fast storage (issue 25): the
weights stream from DRAM layer after layer, so the plan's weight buffering and prefetch decide the
time. Random weights, int8, written under /tmp (kept out of git).

- ``mlp_1024x3``: 1024 -> 3 x Dense(1024, relu) -> 10 (3 MiB of weights, 1 MiB per layer);
- ``mlp_wide_2048``: 512 -> 2048 -> 2048 -> 256 (1 + 4 + 0.5 MiB: one layer larger than any SRAM);
- ``mlp_deep_512x8``: 512 -> 8 x Dense(512, relu) -> 10 (256 KiB a layer, 2 MiB in all);
- ``mlp_small_256x4``: 256 -> 4 x Dense(256, relu) -> 10 (64 KiB a layer: fits the 384 KiB cache);
- ``mlp_tokens_16x512``: 16 tokens x 512 -> Dense(1024, gelu) -> Dense(512) (a transformer MLP).

Runs with TensorFlow (a tool, never a dependency): /work/tfvenv/bin/python bench/zoo/dense_models.py
Usage: dense_models.py [--out /tmp/npuplan_dense] [--only NAME ...]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import tensorflow as tf  # noqa: E402
from big_models import write_models  # noqa: E402

L = tf.keras.layers


def mlp(inputs: int, widths: tuple[int, ...], classes: int, tokens: int = 0) -> tf.keras.Model:
    inp = tf.keras.Input((tokens, inputs) if tokens else (inputs,), batch_size=1)
    x = inp
    for width in widths:
        x = L.Dense(width, activation="relu")(x)
    return tf.keras.Model(inp, L.Dense(classes)(x))


def token_mlp(tokens: int, dim: int, hidden: int) -> tf.keras.Model:
    inp = tf.keras.Input((tokens, dim), batch_size=1)
    return tf.keras.Model(inp, L.Dense(dim)(L.Dense(hidden, activation="gelu")(inp)))


MODELS = {
    "mlp_1024x3": lambda: mlp(1024, (1024,) * 3, 10),
    "mlp_wide_2048": lambda: mlp(512, (2048, 2048), 256),
    "mlp_deep_512x8": lambda: mlp(512, (512,) * 8, 10),
    "mlp_small_256x4": lambda: mlp(256, (256,) * 4, 10),
    "mlp_tokens_16x512": lambda: token_mlp(16, 512, 1024),
}


def main() -> None:
    write_models(MODELS, __doc__.splitlines()[0], Path("/tmp/npuplan_dense"))


if __name__ == "__main__":
    main()
