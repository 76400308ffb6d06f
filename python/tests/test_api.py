"""The Python surface: errors and their classes, option names from the operations' tables (the
command line's), arrays of every layout and library on the host, docstrings, typing."""

from __future__ import annotations

import inspect
import pathlib
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest

import upres

from conftest import ROOT


def test_error_classes_map_onto_builtins() -> None:
    assert issubclass(upres.InvalidArgumentError, ValueError)
    assert issubclass(upres.UnsupportedFormatError, TypeError)
    assert issubclass(upres.FileError, OSError)
    assert issubclass(upres.OutOfMemoryError, MemoryError)
    assert issubclass(upres.BackendUnavailableError, RuntimeError)
    for cls in (upres.InvalidArgumentError, upres.CudaError, upres.InternalError,
                upres.CorruptDataError):
        assert issubclass(cls, upres.Error)
    # A C++ error arrives as its class with the C++ message.
    with pytest.raises(upres.InvalidArgumentError, match=r"unknown stereo aggregation 'sgm5' \("
                                                         r"allowed: gauss7, gauss13, box, sgm4"):
        upres.stereo.disparity(np.zeros((20, 30), np.uint8), np.zeros((20, 30), np.uint8),
                               aggregate="sgm5")


def test_option_keywords_come_from_the_tables() -> None:
    names = {o["name"] for o in upres.option_table("upscale")}
    assert {"method", "scale", "lattice", "iterations", "max_error", "model"} <= names
    img = np.zeros((16, 16), np.uint8)
    with pytest.raises(ValueError, match=r"upscale: unknown option 'colour' \(allowed: method, "):
        upres.upscale(img, 2, colour=True)
    with pytest.raises(ValueError, match="outside"):
        upres.fuse([img, img], patch=99)
    with pytest.raises(ValueError, match="unknown operation"):
        upres.option_table("nope")
    # The same values the command line lists.
    cli = pathlib.Path(upres.__file__).resolve().parents[2] / "upres"
    if cli.exists():
        out = subprocess.run([str(cli), "info", "--options"], capture_output=True, text=True,
                             check=True).stdout
        for line in out.splitlines():
            op, name, kind, default, values, *_ = line.split("\t")
            if op == "context":
                continue
            row = [o for o in upres.option_table(op) if o["name"] == name.replace("-", "_")]
            assert row and row[0]["kind"] == kind, line
            if kind == "enum":
                assert ",".join(row[0]["values"]) == values, line


def test_host_layouts_and_libraries(rng: np.random.Generator) -> None:
    img = rng.random((30, 40, 3), dtype=np.float32)
    want = upres.zoom(img, (2, 2, 1))
    big = np.zeros((50, 60, 3), np.float32)
    big[5:35, 7:47] = img
    assert np.array_equal(upres.zoom(big[5:35, 7:47], (2, 2, 1)), want)  # sub-image, no copy
    assert np.array_equal(upres.zoom(img.tolist(), (2, 2, 1)), want)     # a nested list
    gray = rng.random((30, 40), dtype=np.float32)
    assert upres.zoom(gray[:, :, None], (2, 2, 1)).shape == (60, 80, 1)
    torch = pytest.importorskip("torch")
    t = torch.from_numpy(img)
    r = upres.zoom(t, (2, 2, 1))
    assert isinstance(r, torch.Tensor) and r.device.type == "cpu"
    assert np.array_equal(r.numpy(), want)


def test_mixed_places_and_forced_backends_are_errors() -> None:
    img = np.zeros((16, 16), np.float32)
    with pytest.raises(upres.BackendUnavailableError, match="needs device arrays"):
        upres.zoom(img, 2, backend="cuda")
    with pytest.raises(ValueError, match="unknown backend"):
        upres.zoom(img, 2, backend="gpu")
    torch = pytest.importorskip("torch")
    with pytest.raises(upres.BackendUnavailableError, match="PyTorch tensor"):
        upres.psnr(img, torch.zeros(16, 16))


def test_bad_input_is_named(rng: np.random.Generator) -> None:
    with pytest.raises(ValueError, match="empty"):
        upres.zoom(np.zeros((0, 5), np.float32), 2)
    with pytest.raises(ValueError, match="5 channels"):
        upres.rotate(np.zeros((8, 8, 5), np.float32), 10)
    nan = rng.random((20, 20), dtype=np.float32)
    nan[3, 4] = np.nan
    with pytest.raises(ValueError, match=r"x 4, y 3"):
        upres.spline_filter(nan)
    with pytest.raises(ValueError, match="smaller than"):
        upres.brisque(np.zeros((10, 10), np.uint8))
    with pytest.raises(ValueError, match="frame 1"):
        upres.fuse([np.zeros((16, 16), np.uint8), np.zeros((16, 17), np.uint8)])
    with pytest.raises(ValueError, match="shape"):
        upres.zoom(np.zeros((8, 8), np.float32), 2, output=np.zeros((8, 8), np.float32))


PUBLIC = ["zoom", "rotate", "shift", "affine_transform", "map_coordinates", "spline_filter",
          "spline_filter1d", "upscale", "srcnn", "seabi", "fuse", "psnr", "ssim", "brisque",
          "rgb_to_ycbcr", "ycbcr_to_rgb", "imread", "imwrite", "zoom_tiff", "spline_filter_tiff",
          "fuse_tiff", "option_table"]


def test_every_function_documents_parameters_and_an_example() -> None:
    for name in PUBLIC + ["stereo.disparity", "stereo.disparity_tiff"]:
        f = upres
        for part in name.split("."):
            f = getattr(f, part)
        doc = inspect.getdoc(f) or ""
        assert "Example" in doc and ">>>" in doc, name
        assert "Parameters" in doc or name in ("option_table", "imread", "imwrite"), name


def test_docstring_examples_run() -> None:
    import doctest

    for mod in (upres, upres.ndimage, upres._ops, upres.stereo):
        r = doctest.testmod(mod, optionflags=doctest.ELLIPSIS)
        assert r.failed == 0, mod.__name__


def test_scipy_signatures_match() -> None:
    import scipy.ndimage as ndi

    for name in ("zoom", "rotate", "shift", "affine_transform", "map_coordinates",
                 "spline_filter", "spline_filter1d"):
        ours = inspect.signature(getattr(upres, name)).parameters
        theirs = inspect.signature(getattr(ndi, name)).parameters
        for p in theirs.values():
            assert p.name in ours, f"{name}: missing {p.name}"
            if p.default is not inspect.Parameter.empty:
                assert ours[p.name].default == p.default, f"{name}: default of {p.name}"
        # scipy's positional order is kept
        assert list(ours)[:len(theirs)] == [p for p in theirs if p in ours][:len(theirs)], name


def test_call_overhead_is_small() -> None:
    """A 16 x 16 call costs little more than the C++ call (docs/python.md has the measured
    figure; this guards against a regression by an order of magnitude)."""
    img = np.ones((16, 16), np.float32)
    for _ in range(50):
        upres.shift(img, 1, order=1, threads=1)
    n = 2000
    t = time.perf_counter()
    for _ in range(n):
        upres.shift(img, 1, order=1, threads=1)
    per_call = (time.perf_counter() - t) / n
    assert per_call < 200e-6, f"{per_call * 1e6:.1f} us per call"


def test_typing_strict_on_the_example() -> None:
    mypy = shutil.which("mypy") or (str(pathlib.Path(sys.executable).parent / "mypy"))
    if not pathlib.Path(mypy).exists():
        pytest.skip("mypy is not installed (scripts/test installs it)")
    pkg = pathlib.Path(upres.__file__).parent
    r = subprocess.run([mypy, "--strict", "--no-incremental", str(ROOT / "examples/python/example.py")],
                       capture_output=True, text=True,
                       env={"MYPYPATH": str(pkg.parent), "PATH": "/usr/bin:/bin"})
    assert r.returncode == 0, r.stdout + r.stderr
