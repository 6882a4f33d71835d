"""Shared fixtures: paths of the small models shipped in tests/data."""

from __future__ import annotations

from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture(scope="session")
def data_dir() -> Path:
    return DATA


@pytest.fixture(scope="session")
def ds_cnn() -> Path:
    return DATA / "ds_cnn_kws.tflite"


@pytest.fixture(scope="session")
def resnet8() -> Path:
    return DATA / "resnet8_cifar.tflite"
