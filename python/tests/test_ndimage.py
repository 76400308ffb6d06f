"""upres's scipy.ndimage functions against scipy.ndimage itself, on real photos and seeded
random arrays: every order, mode and dtype, odd sizes, non-contiguous views, output arrays.

Tolerances (docs/python.md): float32 results within 2e-6 of the value range of scipy's float64
computation (upres computes in float32); integer results within 1 level (a rounding tie can
land on either side of float rounding)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.ndimage as ndi

import upres

MODES = ["constant", "nearest", "mirror", "reflect", "grid-mirror", "grid-wrap"]
ORDERS = [0, 1, 3]


def close(got: np.ndarray, want: np.ndarray, what: str = "") -> None:
    assert got.shape == want.shape, what
    assert got.dtype == want.dtype, what
    if got.dtype.kind in "ui":
        diff = np.abs(got.astype(np.int64) - want.astype(np.int64)).max()
        assert diff <= 1, f"{what}: max |diff| {diff} levels"
    else:
        scale = max(float(np.abs(want).max()), 1.0)
        diff = float(np.abs(got.astype(np.float64) - want.astype(np.float64)).max())
        assert diff <= 2e-6 * scale, f"{what}: max |diff| {diff:.3g} (scale {scale:.3g})"


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("mode", MODES)
def test_zoom_rotate_shift_affine_random(order: int, mode: str,
                                         rng: np.random.Generator) -> None:
    img = rng.random((37, 53), dtype=np.float32) * 2 - 0.5
    tag = f"order {order} mode {mode}"
    for z in (2, 0.7, (1.5, 3)):
        close(upres.zoom(img, z, order=order, mode=mode), ndi.zoom(img, z, order=order, mode=mode),
              f"zoom {z} {tag}")
    close(upres.zoom(img, 2, order=order, mode=mode, grid_mode=True),
          ndi.zoom(img, 2, order=order, mode=mode, grid_mode=True), f"zoom grid_mode {tag}")
    for angle, reshape in ((30, True), (-17.5, False), (90, True), (180, False)):
        close(upres.rotate(img, angle, reshape=reshape, order=order, mode=mode, cval=0.25),
              ndi.rotate(img, angle, reshape=reshape, order=order, mode=mode, cval=0.25),
              f"rotate {angle} {tag}")
    close(upres.shift(img, (2.3, -4.6), order=order, mode=mode, cval=-1),
          ndi.shift(img, (2.3, -4.6), order=order, mode=mode, cval=-1), f"shift {tag}")
    # Coordinates avoid exact half-integers: there order 0 rounds either way depending on the
    # scipy version (1.18 rounds before the mirror / reflect mapping, scipy PR 24985; upres, as
    # scipy up to 1.17, after it; docs/python.md).
    m = np.array([[0.9, 0.2], [-0.15, 1.1]])
    close(upres.affine_transform(img, m, (1.37, -2.21), output_shape=(41, 47), order=order,
                                 mode=mode),
          ndi.affine_transform(img, m, (1.37, -2.21), output_shape=(41, 47), order=order,
                               mode=mode), f"affine {tag}")


def test_affine_matrix_forms(rng: np.random.Generator) -> None:
    img = rng.random((30, 41), dtype=np.float32)
    m = np.array([[1.1, 0.1], [0.05, 0.9]])
    off = np.array([2.0, -3.0])
    want = ndi.affine_transform(img, m, off)
    close(upres.affine_transform(img, np.hstack([m, off[:, None]])), want, "(2, 3)")
    h = np.eye(3)
    h[:2, :2], h[:2, 2] = m, off
    close(upres.affine_transform(img, h), want, "homogeneous")
    close(upres.affine_transform(img, [0.8, 1.3], 1.0), ndi.affine_transform(img, [0.8, 1.3], 1.0),
          "diagonal")


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.float64])
def test_dtypes_preserved(dtype: type, rng: np.random.Generator) -> None:
    hi = {np.uint8: 255, np.uint16: 65535, np.float64: 1.0}[dtype]
    img = (rng.random((29, 31)) * hi).astype(dtype)
    for order in ORDERS:
        got = upres.rotate(img, 23, order=order, mode="reflect")
        want = ndi.rotate(img, 23, order=order, mode="reflect")
        assert got.dtype == np.dtype(dtype)
        if dtype is np.float64:  # computed in float32
            assert np.abs(got - want).max() <= 2e-6
        else:
            close(got, want, f"{dtype.__name__} order {order}")


def test_real_photo_channels_last(baboon: np.ndarray) -> None:
    img = baboon[:201, :157]  # a non-contiguous sub-image view, (H, W, 3) uint8
    assert not img.flags["C_CONTIGUOUS"]
    close(upres.zoom(img, (1.7, 1.7, 1), mode="mirror"), ndi.zoom(img, (1.7, 1.7, 1), mode="mirror"),
          "zoom photo")
    close(upres.rotate(img, 33, mode="nearest"), ndi.rotate(img, 33, mode="nearest"), "rotate photo")
    f = img.astype(np.float32) / 255
    close(upres.shift(f, (0.5, 1.25, 0), mode="mirror"), ndi.shift(f, (0.5, 1.25, 0), mode="mirror"),
          "shift photo")


def test_non_contiguous_and_reversed_views(camera: np.ndarray) -> None:
    img = camera.astype(np.float32)
    for view in (img[::2, ::3], img[::-1], img.T, img[10:-7, 5:-11]):
        close(upres.zoom(view, 1.3, order=3, mode="mirror"),
              ndi.zoom(view, 1.3, order=3, mode="mirror"), "view")


def test_map_coordinates(rng: np.random.Generator, camera: np.ndarray) -> None:
    # upres's remap field is float32: the coordinates are rounded to float32 first (scipy gets
    # the same rounded values, so only the arithmetic is compared).
    img = camera[100:180, 50:150].astype(np.float32)
    coords = (rng.random((2, 23, 19)) * np.array([90, 110])[:, None, None] - 5).astype(np.float32)
    for order in ORDERS:
        for mode in MODES:
            close(upres.map_coordinates(img, coords, order=order, mode=mode, cval=3),
                  ndi.map_coordinates(img, coords, order=order, mode=mode, cval=3),
                  f"map_coordinates {order} {mode}")
    flat = (rng.random((2, 70001)) * 70).astype(np.float32) # 1-D output longer than one image row
    close(upres.map_coordinates(img, flat, order=1), ndi.map_coordinates(img, flat, order=1), "1-D")


@pytest.mark.parametrize("mode", ["mirror", "reflect", "nearest", "grid-wrap", "wrap", "constant"])
def test_spline_filters(mode: str, rng: np.random.Generator) -> None:
    img = rng.random((45, 38), dtype=np.float32)
    close(upres.spline_filter(img, mode=mode), ndi.spline_filter(img, mode=mode), "spline_filter")
    for axis in (0, 1, -1):
        close(upres.spline_filter1d(img, axis=axis, mode=mode),
              ndi.spline_filter1d(img, axis=axis, mode=mode), f"spline_filter1d axis {axis}")
    out = upres.spline_filter(img, output=np.float32, mode=mode)
    assert out.dtype == np.float32


def test_prefilter_false_takes_coefficients(rng: np.random.Generator) -> None:
    img = rng.random((33, 27), dtype=np.float32)
    for mode in ("mirror", "reflect", "nearest", "grid-wrap", "constant"):
        c = ndi.spline_filter(img, mode=mode).astype(np.float32)
        close(upres.rotate(c, 21, mode=mode, prefilter=False),
              ndi.rotate(c, 21, mode=mode, prefilter=False), f"prefilter=False {mode}")


def test_output_array_written_in_place(rng: np.random.Generator) -> None:
    img = rng.random((40, 50), dtype=np.float32)
    out = np.empty((80, 100), np.float32)
    ret = upres.zoom(img, 2, output=out, mode="mirror")
    assert ret is out and ret.__array_interface__["data"][0] == out.__array_interface__["data"][0]
    close(out, ndi.zoom(img, 2, mode="mirror"), "output=")
    out64 = np.empty((80, 100))
    assert upres.zoom(img, 2, output=out64) is out64
    assert upres.zoom(img, 2, output=np.uint8).dtype == np.uint8


def test_extras_fir_keys_backend(camera: np.ndarray) -> None:
    img = camera.astype(np.float32) / 255
    ref = upres.rotate(img, 10, mode="mirror", backend="reference")
    cpu = upres.rotate(img, 10, mode="mirror", backend="cpu", threads=1)
    assert np.abs(ref - cpu).max() < 2e-5
    fir = upres.rotate(img, 10, mode="mirror", prefilter="fir15")
    assert 0 < np.abs(fir - cpu).max() < 0.02
    keys = upres.rotate(img, 10, mode="mirror", interp="keys")
    assert 0 < np.abs(keys - cpu).max() < 0.2


def test_unsupported_modes_and_orders_are_named() -> None:
    img = np.ones((8, 8), np.float32)
    with pytest.raises(ValueError, match="grid-wrap"):
        upres.zoom(img, 2, mode="wrap")
    with pytest.raises(upres.InvalidArgumentError, match="grid-constant"):
        upres.rotate(img, 3, mode="grid-constant")
    with pytest.raises(ValueError, match="order 2"):
        upres.shift(img, 1, order=2)
    with pytest.raises(ValueError, match="channel axis"):
        upres.zoom(np.ones((8, 8, 3), np.float32), 2)
    with pytest.raises(ValueError, match="channel_axis"):
        upres.spline_filter(np.ones((8, 8, 3), np.float32))
    with pytest.raises(TypeError, match="int32"):
        upres.zoom(np.ones((8, 8), np.int32), 2)
    with pytest.raises(ValueError, match="4-D"):
        upres.zoom(np.ones((2, 8, 8, 1), np.float32), 2)
