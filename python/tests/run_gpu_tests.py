"""Runs test_gpu.py; exits 77 (CTest's "Skipped") when there is no CUDA device to test on."""

import pathlib
import sys

import pytest

import upres

if not upres.cuda_available():
    print("SKIPPED: no CUDA device (or upres built without CUDA): the GPU tests did not run")
    sys.exit(77)
sys.exit(pytest.main(["-q", "-rs", "-p", "no:cacheprovider",
                      str(pathlib.Path(__file__).with_name("test_gpu.py"))]))
