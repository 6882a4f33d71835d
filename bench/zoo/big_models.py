"""Large networks for the planning-speed bench (issue 26): unrolled LSTMs and keras.applications
NASNet-mobile and DenseNet-121, random weights, int8. Kept out of git: written under /tmp.

- ``lstm_kws_49x10``: a keyword spotter, 49 frames of 10 MFCCs, LSTM(64) unrolled (~900 NPU ops);
- ``lstm_digits_28x28``: a digit classifier, 28 rows of 28 pixels, LSTM(64) unrolled (~500 ops);
- ``nasnet_mobile_32`` (~600 ops) and ``densenet121_32`` (~280 ops) at 32x32x3.

Runs with TensorFlow (a tool, never a dependency): /work/tfvenv/bin/python bench/zoo/big_models.py
Usage: big_models.py [--out /tmp/npuplan_big] [--only NAME ...]
"""

from __future__ import annotations

import argparse
import sys
import zlib
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import tensorflow as tf  # noqa: E402
from generate import convert, lstm_net  # noqa: E402

MODELS = {
    "lstm_kws_49x10": lambda: lstm_net(49, 10, 64),
    "lstm_digits_28x28": lambda: lstm_net(28, 28, 64),
    "nasnet_mobile_32": lambda: tf.keras.applications.NASNetMobile(input_shape=(32, 32, 3), weights=None, classes=10),
    "densenet121_32": lambda: tf.keras.applications.DenseNet121(input_shape=(32, 32, 3), weights=None, classes=10),
}


def write_models(models: dict, description: str, default_out: Path) -> None:
    """The command line of a generator of ``models`` (name -> Keras model builder): each written
    as ``<out>/<name>.tflite``, seeded by its name; ``--only`` picks some."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--out", type=Path, default=default_out)
    parser.add_argument("--only", nargs="*")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for name, build in models.items():
        if args.only and name not in args.only:
            continue
        tf.keras.utils.set_random_seed(zlib.crc32(name.encode()))
        data = convert(build(), np.random.default_rng(len(name)))
        (args.out / f"{name}.tflite").write_bytes(data)
        print(name, len(data), flush=True)


def main() -> None:
    write_models(MODELS, __doc__.splitlines()[0], Path("/tmp/npuplan_big"))


if __name__ == "__main__":
    main()
