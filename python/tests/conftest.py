"""Shared fixtures: real photos from data/ (scripts/fetch_data.sh), seeded random arrays, and
the GPU libraries (CuPy, PyTorch) when a CUDA device is there; GPU tests skip visibly
otherwise."""

from __future__ import annotations

import os
import pathlib

import numpy as np
import pytest

import upres

ROOT = pathlib.Path(__file__).resolve().parents[2]
DATA = pathlib.Path(os.environ.get("UPRES_DATA_DIR", ROOT / "data"))
GOLDEN = ROOT / "tests" / "data"


def photo(name: str) -> np.ndarray:
    path = DATA / name
    if not path.exists():
        pytest.fail(f"{path} is missing: run scripts/fetch_data.sh")
    return upres.imread(path)


@pytest.fixture(scope="session")
def baboon() -> np.ndarray:
    return photo("baboon.jpg")


@pytest.fixture(scope="session")
def camera() -> np.ndarray:
    return photo("camera.png")


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(12345)


def gpu_libs() -> list[str]:
    libs = []
    if not upres.cuda_available():
        return libs
    try:
        import cupy  # noqa: F401

        libs.append("cupy")
    except ImportError:
        pass
    try:
        import torch

        if torch.cuda.is_available():
            libs.append("torch")
    except ImportError:
        pass
    return libs


requires_gpu = pytest.mark.skipif(not upres.cuda_available(),
                                  reason="no CUDA device (or upres built without CUDA)")
