"""scipy.ndimage-compatible resampling: zoom, rotate, shift, affine_transform, map_coordinates,
spline_filter and spline_filter1d with scipy's signatures, defaults and conventions.

Images are 2-D arrays (H, W), or (H, W, C) with C in 1..4 channels resampled alike (the
channel axis must be left unchanged: a zoom of 1, an identity row of the matrix, a shift of 0).
Orders 0 (nearest), 1 (linear) and 3 (exact cubic B-spline); modes 'constant' (scipy's
default), 'nearest', 'mirror', 'reflect' (= 'grid-mirror') and 'grid-wrap'. scipy's 'wrap'
(a period of n - 1 at the edges) and 'grid-constant' are refused with an error, as are
orders 2, 4 and 5. Keyword extras scipy lacks: ``interp='keys'`` (Keys cubic convolution,
a = -0.5, instead of ``order``), ``prefilter='fir'`` / ``'fir15'`` (the paper's FIR
prefilter), ``backend=`` ('auto', 'reference', 'cpu', 'cuda'), ``threads=`` (CPU threads, 0 =
all cores) and ``stream=`` (CUDA). docs/python.md lists every difference and its tolerance.
"""

from __future__ import annotations

import math
import os
from typing import Any, Optional, Sequence, Union

import numpy as np

from . import _arrays as A
from . import _upres
from ._errors import InvalidArgumentError

Number = Union[int, float]

_MODES = {"constant": "constant", "nearest": "nearest", "mirror": "mirror",
          "reflect": "reflect", "grid-mirror": "reflect", "grid-wrap": "wrap"}
_ORDERS = {0: "nearest", 1: "linear", 3: "bspline"}
# Prefilter modes (scipy.ndimage.spline_filter): the IIR start-up scipy uses for each.
_PREFILTER_MODES = {"mirror": "mirror", "wrap": "mirror", "constant": "mirror",
                    "grid-constant": "mirror", "reflect": "reflect", "grid-mirror": "reflect",
                    "nearest": "nearest", "grid-wrap": "wrap"}


def _border(mode: str, op: str) -> str:
    if mode in _MODES:
        return _MODES[mode]
    if mode == "wrap":
        raise InvalidArgumentError(
            f"{op}: mode 'wrap' (scipy's legacy periodic mode, whose period is n - 1 at the "
            "edges) is not supported; use 'grid-wrap' (period n)")
    if mode == "grid-constant":
        raise InvalidArgumentError(
            f"{op}: mode 'grid-constant' is not supported; 'constant' gives cval outside "
            "[0, n - 1] (allowed: " + ", ".join(_MODES) + ")")
    raise InvalidArgumentError(f"{op}: unknown mode '{mode}' (allowed: " + ", ".join(_MODES) + ")")


def _interp(order: int, interp: Optional[str], op: str) -> str:
    if interp is not None:
        if interp == "keys":
            return "cubic"
        if interp in ("nearest", "linear", "bspline"):
            return interp
        raise InvalidArgumentError(f"{op}: unknown interp '{interp}' (allowed: keys, nearest, "
                                   "linear, bspline)")
    if order not in _ORDERS:
        raise InvalidArgumentError(f"{op}: spline order {order} is not supported (allowed: 0, "
                                   "1, 3; or interp='keys' for Keys cubic convolution)")
    return _ORDERS[order]


def _prefilter_options(prefilter: Union[bool, str]) -> dict[str, str]:
    if prefilter is True:
        return {"prefilter": "iir"}
    if prefilter is False:
        return {"prefilter": "iir", "prefiltered": "true"}
    if isinstance(prefilter, str):
        return {"prefilter": prefilter}
    raise InvalidArgumentError(f"prefilter must be True, False or 'iir' / 'fir' / 'firK', not "
                               f"{prefilter!r}")


def _warp_option_text(op: str, order: int, interp: Optional[str], mode: str, cval: float,
                      prefilter: Union[bool, str]) -> tuple[str, dict[str, str]]:
    """(interpolation method, the warp's options as text), checked."""
    method = _interp(order, interp, op)
    opts = {"interp": method, "border": _border(mode, op)}
    if cval != 0:
        opts["fill"] = repr(float(cval))
    if method == "bspline":
        opts.update(_prefilter_options(prefilter))
    return method, opts


# (order, interp, mode, cval, prefilter) -> (interpolation, options for the native call):
# checked once, then reused (the per-call cost of small images).
_OPTIONS: dict[tuple[Any, ...], tuple[str, Any]] = {}


def _warp_options(op: str, order: int, interp: Optional[str], mode: str, cval: float,
                  prefilter: Union[bool, str]) -> tuple[str, Any]:
    """(interpolation method, the native module's parsed WarpOptions), cached per option set."""
    key = (order, interp, mode, cval, prefilter)
    hit = _OPTIONS.get(key)
    if hit is not None:
        return hit
    method, opts = _warp_option_text(op, order, interp, mode, cval, prefilter)
    if len(_OPTIONS) > 256:
        _OPTIONS.clear()
    _OPTIONS[key] = (method, _upres.warp_options(opts))
    return _OPTIONS[key]


def _warp(op: str, input: Any, out_shape: Sequence[int], kind: str, matrix: Sequence[float],
          field: Any, output: Any, order: int, mode: str, cval: float,
          prefilter: Union[bool, str], interp: Optional[str], backend: str, threads: int,
          stream: Any) -> Any:
    method, opts = _warp_options(op, order, interp, mode, cval, prefilter)
    # A contiguous NumPy array of a native dtype into a new array of its dtype: straight to the
    # native call (the C++ library checks what remains).
    if (type(input) is np.ndarray and output is None and backend == "auto" and
            input.dtype in A.NATIVE and input.flags.c_contiguous and
            not (method == "bspline" and prefilter is False and input.dtype != A.F32)):
        out = np.empty((out_shape[0], out_shape[1]) + input.shape[2:], input.dtype)
        _upres.warp(input, out, kind, matrix, field, opts, backend, threads, 0)
        return out
    # The same for a contiguous CuPy array on the current device, on the current stream: the
    # per-call cost of a small GPU warp is mostly this Python (the C++ call is asynchronous).
    if output is None and backend == "auto" and field is None and len(input.shape) in (2, 3):
        cupy = A.cupy_fast(input)
        if cupy is not None and not (method == "bspline" and prefilter is False and
                                     input.dtype != A.F32):
            out = cupy.empty((out_shape[0], out_shape[1]) + input.shape[2:], input.dtype)
            handle = cupy.cuda.get_current_stream().ptr if stream is None else \
                A.stream_handle(A.place_of(input), stream)
            _upres.warp(A.cupy_arg(input), A.cupy_arg(out), kind, matrix, None, opts, backend,
                        threads, handle)
            return out
    a = A.as_array(input, "input")
    in_dt = A.check_dtype(a, "input")
    p = A.place_of(a)
    A.check_backend(backend, p, op)
    shape = (out_shape[0], out_shape[1]) + tuple(a.shape[2:])
    ret, work = A.output_array(output, p, shape, in_dt)
    # The kernel reads and writes one pixel type: the output's when the input has it, else
    # float32 (exact for every input type; integer outputs then round and saturate).
    wdt = A.np_dtype(work)
    kdt = wdt
    if (method == "bspline" and prefilter is False) or in_dt != wdt:
        kdt = A.F32  # B-spline coefficients are real numbers
    src = A.native(a, "input", kdt)
    if wdt != kdt:
        work = A.empty(p, shape, kdt)
    if kdt.kind in "ui" and not math.isfinite(cval):
        raise InvalidArgumentError(f"{op}: cval {cval} is not finite; integer outputs need a "
                                   "finite cval")
    _upres.warp(A.arg(src), A.arg(work), kind, matrix, A.arg(field), opts, backend, threads,
                A.stream_handle(p, stream, src))
    return ret if work is ret else A.finish(ret, work)


def _plane_only(a: Any, values: Sequence[Any], neutral: Any, what: str, op: str) -> None:
    if len(a.shape) == 3 and values[2] != neutral:
        raise InvalidArgumentError(
            f"{op}: {what} {values[2]!r} on the channel axis; upres resamples (H, W, C) images "
            f"plane by plane (give {neutral!r} for the last axis)")


def _normalize(v: Any, ndim: int, what: str, op: str) -> list[float]:
    if isinstance(v, (int, float)):
        return [float(v)] * ndim
    if isinstance(v, (tuple, list)) and len(v) == ndim and all(
            isinstance(x, (int, float)) for x in v):
        return [float(x) for x in v]
    if np.ndim(v) == 0:
        return [float(v)] * ndim
    seq = [float(x) for x in np.asarray(v, dtype=np.float64).ravel()]
    if len(seq) != ndim:
        raise InvalidArgumentError(f"{op}: {what} has {len(seq)} entries for a {ndim}-D input")
    return seq


def _check_ndim(a: Any, op: str) -> None:
    if len(a.shape) not in (2, 3):
        raise InvalidArgumentError(
            f"{op}: {len(a.shape)}-D input; upres resamples 2-D images (H, W) or (H, W, C) with "
            "C in 1..4")


def zoom(input: Any, zoom: Union[Number, Sequence[Number]], output: Any = None, order: int = 3,
         mode: str = "constant", cval: float = 0.0, prefilter: Union[bool, str] = True, *,
         grid_mode: bool = False, interp: Optional[str] = None, backend: str = "auto",
         threads: int = 0, stream: Any = None) -> Any:
    """Zoom an image, as scipy.ndimage.zoom.

    Parameters: input (H, W) or (H, W, C) array; zoom: factor, or one per axis (1 on the
    channel axis); output: None, a dtype or an array of the output shape; order: 0, 1 or 3;
    mode: 'constant' (default), 'nearest', 'mirror', 'reflect', 'grid-mirror', 'grid-wrap';
    cval: value outside with 'constant'; prefilter: True (exact B-spline), False (input holds
    B-spline coefficients) or 'fir' / 'firK'; grid_mode: False (default: corner pixels
    aligned, input x = o (n_in - 1) / (n_out - 1)) or True (pixel edges aligned, the
    ``upres warp --zoom`` convention). Extras: interp, backend, threads, stream (module doc).
    The output shape is round(n * zoom) per axis, as scipy's.

    Example::

        >>> import numpy as np, upres
        >>> upres.zoom(np.arange(12, dtype=np.float32).reshape(3, 4), 2).shape
        (6, 8)
    """
    a = A.as_array(input, "input")
    _check_ndim(a, "zoom")
    z = _normalize(zoom, len(a.shape), "zoom", "zoom")
    _plane_only(a, z, 1.0, "zoom", "zoom")
    out = [int(round(n * f)) for n, f in zip(a.shape[:2], z[:2])]
    if min(out) < 1:
        raise InvalidArgumentError(f"zoom: output shape {tuple(out)} is empty")
    if grid_mode:
        # Pixel edges aligned: input x = (o + 0.5) n_in / n_out - 0.5 per axis, upres's resize
        # (`upres warp --zoom`), whose separable path is also what upres.dask.zoom tiles.
        return _warp("zoom", a, out, "resize", [], None, output, order, mode, cval, prefilter,
                     interp, backend, threads, stream)
    return _warp("zoom", a, out, "affine", _corner_zoom(a.shape[:2], out), None, output, order,
                 mode, cval, prefilter, interp, backend, threads, stream)


def _corner_zoom(in_hw: Sequence[int], out_hw: Sequence[int]) -> list[float]:
    """upres's affine of scipy's zoom with grid_mode=False (corner pixels aligned)."""
    m = [0.0] * 6
    # output (row o_r, col o_c) -> input, per axis: scipy's zoom_shift.
    for axis, (n_in, n_out) in enumerate(zip(in_hw, out_hw)):
        s = (n_in - 1) / (n_out - 1) if n_out > 1 else 1.0
        if axis == 1:  # x (columns): u = m0 x + m1 y + m2
            m[0] = s
        else:  # y (rows): v = m3 x + m4 y + m5
            m[4] = s
    return m


def _cosdg_sindg(angle: float) -> tuple[float, float]:
    r = math.fmod(float(angle), 360.0)
    if r < 0:
        r += 360.0
    exact = {0.0: (1.0, 0.0), 90.0: (0.0, 1.0), 180.0: (-1.0, 0.0), 270.0: (0.0, -1.0)}
    if r in exact:
        return exact[r]
    t = math.radians(r)
    return math.cos(t), math.sin(t)


def _affine_params(rows: np.ndarray[Any, Any], offset: Any) -> list[float]:
    """upres's (u, v) affine from scipy's (row, col) matrix and offset."""
    return [float(v) for v in (rows[1, 1], rows[1, 0], offset[1], rows[0, 1], rows[0, 0],
                               offset[0])]


def rotate(input: Any, angle: float, axes: Sequence[int] = (1, 0), reshape: bool = True,
           output: Any = None, order: int = 3, mode: str = "constant", cval: float = 0.0,
           prefilter: Union[bool, str] = True, *, interp: Optional[str] = None,
           backend: str = "auto", threads: int = 0, stream: Any = None) -> Any:
    """Rotate an image by `angle` degrees about its centre, as scipy.ndimage.rotate.

    Parameters: input (H, W) or (H, W, C); angle in degrees; axes: the image plane (the first
    two axes, in either order); reshape: True (default) grows the output to hold the whole
    rotated input; output, order, mode, cval, prefilter as in zoom. Extras: interp, backend,
    threads, stream.

    Example::

        >>> import numpy as np, upres
        >>> img = np.random.default_rng(0).random((64, 48), dtype=np.float32)
        >>> upres.rotate(img, 30, reshape=False, mode="mirror").shape
        (64, 48)
    """
    a = A.as_array(input, "input")
    _check_ndim(a, "rotate")
    shape, m = _rotation(tuple(a.shape), angle, axes, reshape, "rotate")
    return _warp("rotate", a, shape, "affine", m, None, output, order, mode, cval, prefilter,
                 interp, backend, threads, stream)


def _rotation(in_shape: tuple[int, ...], angle: float, axes: Sequence[int], reshape: bool,
              op: str) -> tuple[list[int], list[float]]:
    """(output (rows, columns), upres's affine) of scipy's rotate."""
    ax = sorted(int(x) % len(in_shape) for x in axes)
    if ax != [0, 1]:
        raise InvalidArgumentError(f"{op}: axes {tuple(axes)}; upres rotates the image plane, "
                                   "axes (1, 0) or (0, 1)")
    c, s = _cosdg_sindg(angle)
    # scipy's geometry (rot = [[c, s], [-s, c]] on (row, col)) in plain floats: numpy's small
    # array operations cost more per call than a small GPU rotation.
    iy, ix = in_shape[0], in_shape[1]
    if reshape:
        r0 = (0.0, s * ix, c * iy, c * iy + s * ix)
        r1 = (0.0, c * ix, -s * iy, -s * iy + c * ix)
        oy, ox = int(max(r0) - min(r0) + 0.5), int(max(r1) - min(r1) + 0.5)
    else:
        oy, ox = iy, ix
    hy, hx = (oy - 1) / 2, (ox - 1) / 2
    off_y = (iy - 1) / 2 - (c * hy + s * hx)
    off_x = (ix - 1) / 2 - (-s * hy + c * hx)
    return [oy, ox], [c, -s, off_x, s, c, off_y]


def shift(input: Any, shift: Union[Number, Sequence[Number]], output: Any = None,
          order: int = 3, mode: str = "constant", cval: float = 0.0,
          prefilter: Union[bool, str] = True, *, interp: Optional[str] = None,
          backend: str = "auto", threads: int = 0, stream: Any = None) -> Any:
    """Shift an image, as scipy.ndimage.shift: output[o] = input[o - shift].

    Parameters: input (H, W) or (H, W, C); shift: one value or one per axis (0 on the channel
    axis); output, order, mode, cval, prefilter as in zoom. Extras: interp, backend, threads,
    stream.

    Example::

        >>> import numpy as np, upres
        >>> float(upres.shift(np.eye(4, dtype=np.float32), (0, 1), order=1)[0, 1])
        1.0
    """
    a = A.as_array(input, "input")
    nd = len(a.shape)
    if nd not in (2, 3):
        _check_ndim(a, "shift")
    sh = _normalize(shift, nd, "shift", "shift")
    if nd == 3:
        _plane_only(a, sh, 0.0, "shift", "shift")
    m = [1.0, 0.0, -sh[1], 0.0, 1.0, -sh[0]]
    return _warp("shift", a, a.shape[:2], "affine", m, None, output, order, mode, cval, prefilter,
                 interp, backend, threads, stream)


def affine_transform(input: Any, matrix: Any, offset: Union[Number, Sequence[Number]] = 0.0,
                     output_shape: Optional[Sequence[int]] = None, output: Any = None,
                     order: int = 3, mode: str = "constant", cval: float = 0.0,
                     prefilter: Union[bool, str] = True, *, interp: Optional[str] = None,
                     backend: str = "auto", threads: int = 0, stream: Any = None) -> Any:
    """Affine transform, as scipy.ndimage.affine_transform: input[matrix @ o + offset].

    Parameters: input (H, W) or (H, W, C); matrix: (ndim,) diagonal, (ndim, ndim),
    (ndim, ndim + 1) with the offset as its last column, or (ndim + 1, ndim + 1) homogeneous
    (for (H, W, C) input the channel axis must map to itself); offset: one value or one per
    axis; output_shape: default the input's; output, order, mode, cval, prefilter as in zoom.
    Extras: interp, backend, threads, stream.

    Example::

        >>> import numpy as np, upres
        >>> img = np.ones((8, 8), np.float32)
        >>> upres.affine_transform(img, [[0.5, 0], [0, 0.5]], output_shape=(16, 16)).shape
        (16, 16)
    """
    a = A.as_array(input, "input")
    _check_ndim(a, "affine_transform")
    shape, m = _affine(tuple(a.shape), matrix, offset, output_shape, "affine_transform")
    return _warp("affine_transform", a, shape, "affine", m, None, output, order, mode, cval,
                 prefilter, interp, backend, threads, stream)


def _affine(in_shape: tuple[int, ...], matrix: Any, offset: Union[Number, Sequence[Number]],
            output_shape: Optional[Sequence[int]], op: str) -> tuple[Any, list[float]]:
    """(output (rows, columns), upres's affine) of scipy's affine_transform arguments."""
    nd = len(in_shape)
    mat = np.asarray(matrix, dtype=np.float64)
    off = np.asarray(_normalize(offset, nd, "offset", op), dtype=np.float64)
    if mat.ndim == 1:
        if mat.shape[0] != nd:
            raise InvalidArgumentError(f"{op}: a 1-D matrix needs {nd} entries")
        mat = np.diag(mat)
    elif mat.shape == (nd + 1, nd + 1) or mat.shape == (nd, nd + 1):
        if mat.shape[0] == nd + 1 and not np.array_equal(mat[nd], [0] * nd + [1]):
            raise InvalidArgumentError(
                f"{op}: the bottom row of a homogeneous matrix is {mat[nd].tolist()}, "
                f"expected {[0] * nd + [1]} (projective maps: upres warp's homography)")
        off = mat[:nd, nd].copy()
        mat = mat[:nd, :nd]
    elif mat.shape != (nd, nd):
        raise InvalidArgumentError(f"{op}: matrix of shape {mat.shape} for a {nd}-D "
                                   f"input (allowed: ({nd},), ({nd}, {nd}), ({nd}, {nd + 1}), "
                                   f"({nd + 1}, {nd + 1}))")
    if nd == 3:
        if not (mat[2, 2] == 1 and not mat[2, :2].any() and not mat[:2, 2].any() and off[2] == 0):
            raise InvalidArgumentError(
                f"{op}: the matrix mixes the channel axis of an (H, W, C) input; "
                "upres transforms the image plane (last row and column of an identity)")
    if not np.all(np.isfinite(mat)) or not np.all(np.isfinite(off)):
        raise InvalidArgumentError(f"{op}: the matrix or offset is not finite")
    shape = in_shape[:2] if output_shape is None else tuple(output_shape)[:2]
    if output_shape is not None and nd == 3 and len(output_shape) == 3 and \
            output_shape[2] != in_shape[2]:
        raise InvalidArgumentError(f"{op}: output_shape changes the channel count")
    return shape, _affine_params(mat, off)


def map_coordinates(input: Any, coordinates: Any, output: Any = None, order: int = 3,
                    mode: str = "constant", cval: float = 0.0,
                    prefilter: Union[bool, str] = True, *, interp: Optional[str] = None,
                    backend: str = "auto", threads: int = 0, stream: Any = None) -> Any:
    """Sample an image at coordinates, as scipy.ndimage.map_coordinates.

    Parameters: input (H, W), or (H, W, C) sampled on every channel alike (an extension:
    scipy would want 3 coordinate rows); coordinates: (2, ...) array of (row, col) positions
    in the input's library and device; the output has shape coordinates.shape[1:] (+ (C,));
    output, order, mode, cval, prefilter as in zoom. Extras: interp, backend, threads, stream.

    Example::

        >>> import numpy as np, upres
        >>> img = np.arange(16, dtype=np.float32).reshape(4, 4)
        >>> float(upres.map_coordinates(img, [[0.5], [1.5]], order=1)[0])
        3.5
    """
    a = A.as_array(input, "input")
    _check_ndim(a, "map_coordinates")
    p = A.place_of(a)
    coords = A.as_array(coordinates, "coordinates")
    if p.lib != "numpy" and A.place_of(coords).lib == "numpy":
        raise InvalidArgumentError("map_coordinates: coordinates are a NumPy array but the input "
                                   f"is {p.describe()} (pass them in the input's library)")
    A.same_place([a, coords], ["input", "coordinates"])
    if len(coords.shape) < 2 or coords.shape[0] != 2:
        raise InvalidArgumentError(f"map_coordinates: coordinates of shape {tuple(coords.shape)}; "
                                   "expected (2, ...) (row, col) for a 2-D image")
    out_shape = tuple(coords.shape[1:])
    n = int(np.prod(out_shape))
    if n == 0:
        raise InvalidArgumentError("map_coordinates: no coordinates")
    xp = A.xp_of(p)
    if len(out_shape) == 2 and max(out_shape) <= 65536:
        h, w = out_shape
    else:  # any other shape: flattened onto rows of at most 4096 samples
        w = min(n, 4096)
        h = -(-n // w)
    # The remap field: (u, v) = (col, row) per output pixel, float32.
    flat = coords.reshape(2, n)
    field = A.empty(p, (h * w, 2), np.float32)
    if p.lib == "torch":
        field.zero_()
        field[:n, 0] = flat[1].to(field.dtype)
        field[:n, 1] = flat[0].to(field.dtype)
    else:
        field[...] = 0
        field[:n, 0] = flat[1]
        field[:n, 1] = flat[0]
    field = field.reshape(h, w, 2)
    chans = tuple(a.shape[2:])
    if (h, w) == out_shape:
        return _warp("map_coordinates", a, (h, w), "remap", [], field, output, order, mode, cval,
                     prefilter, interp, backend, threads, stream)
    res = _warp("map_coordinates", a, (h, w), "remap", [], field, None, order, mode, cval,
                prefilter, interp, backend, threads, stream)
    res = res.reshape((h * w,) + chans)[:n].reshape(out_shape + chans)
    if output is None:
        return res
    ret, _ = A.output_array(output, p, out_shape + chans, A.np_dtype(res))
    A.round_into(res, ret)
    del xp
    return ret


def _prefilter(op: str, input: Any, axes: str, output: Any, mode: str, fir: Union[bool, str],
               backend: str, threads: int, stream: Any) -> Any:
    a = A.as_array(input, "input")
    A.check_dtype(a, "input")
    p = A.place_of(a)
    A.check_backend(backend, p, op)
    if mode not in _PREFILTER_MODES:
        raise InvalidArgumentError(f"{op}: unknown mode '{mode}' (allowed: "
                                   + ", ".join(_PREFILTER_MODES) + ")")
    ret, work = A.output_array(output, p, a.shape, np.float64)
    if A.np_dtype(work) != np.float32:
        work = A.empty(p, a.shape, np.float32)
    src = A.native(a, "input", np.float32)
    opts = {"border": _PREFILTER_MODES[mode], "axes": axes}
    if isinstance(fir, str):
        opts["fir_length"] = "0" if fir == "iir" else str(_fir_length(fir))
    _upres.prefilter(A.arg(src), A.arg(work), opts, backend, threads,
                     A.stream_handle(p, stream, src))
    return A.finish(ret, work)


def _fir_length(name: str) -> int:
    if name == "fir":
        return 17
    if name.startswith("fir") and name[3:].isdigit():
        return int(name[3:])
    raise InvalidArgumentError(f"unknown prefilter '{name}' (allowed: iir, fir, fir3, ..., fir31)")


def _filter_order(order: int, op: str) -> None:
    if order not in (0, 1, 3):
        raise InvalidArgumentError(f"{op}: spline order {order} is not supported (allowed: 3; 0 "
                                   "and 1 return the input)")


def spline_filter(input: Any, order: int = 3, output: Any = np.float64, mode: str = "mirror", *,
                  channel_axis: Optional[int] = None, prefilter: Union[bool, str] = "iir",
                  backend: str = "auto", threads: int = 0, stream: Any = None) -> Any:
    """Cubic B-spline coefficients of an image, as scipy.ndimage.spline_filter (order 3).

    Parameters: input (H, W), or (H, W, C) with channel_axis=-1 (each channel's plane alone;
    scipy would also filter across the channels, so upres asks you to say so); order: 3 (0
    and 1 return the input converted); output: dtype (default float64, scipy's) or array;
    mode: the prefilter's boundary ('mirror' default, 'reflect', 'nearest', 'grid-wrap', and
    the others as scipy maps them). Extras: prefilter='fir' / 'firK' (the paper's FIR),
    backend, threads, stream.

    Example::

        >>> import numpy as np, upres
        >>> c = upres.spline_filter(np.ones((5, 5), np.float32))
        >>> bool(np.allclose(c, 1))
        True
    """
    a = A.as_array(input, "input")
    _filter_order(order, "spline_filter")
    _check_ndim(a, "spline_filter")
    if len(a.shape) == 3 and channel_axis not in (-1, 2):
        raise InvalidArgumentError(
            "spline_filter: an (H, W, C) input would be filtered across its channels too (as "
            "scipy does); pass channel_axis=-1 to filter each channel's plane")
    if order < 2:
        ret, _ = A.output_array(output, A.place_of(a), a.shape, np.float64)
        A.round_into(a, ret)
        return ret
    return _prefilter("spline_filter", a, "both", output, mode, prefilter, backend, threads,
                      stream)


def spline_filter1d(input: Any, order: int = 3, axis: int = -1, output: Any = np.float64,
                    mode: str = "mirror", *, prefilter: Union[bool, str] = "iir",
                    backend: str = "auto", threads: int = 0, stream: Any = None) -> Any:
    """The 1-D cubic B-spline prefilter along one axis, as scipy.ndimage.spline_filter1d.

    Parameters: input (H, W) or (H, W, C); order: 3 (0 and 1 return the input converted);
    axis: 0 (along columns) or 1 / -1 of a 2-D input (along rows); output, mode as in
    spline_filter. Extras: prefilter, backend, threads, stream.

    Example::

        >>> import numpy as np, upres
        >>> upres.spline_filter1d(np.ones((3, 6), np.float32), axis=0).shape
        (3, 6)
    """
    a = A.as_array(input, "input")
    _filter_order(order, "spline_filter1d")
    _check_ndim(a, "spline_filter1d")
    ax = int(axis) % len(a.shape)
    if ax == 2:
        raise InvalidArgumentError("spline_filter1d: axis 2 is the channel axis of an (H, W, C) "
                                   "image (allowed: 0, 1)")
    if order < 2:
        ret, _ = A.output_array(output, A.place_of(a), a.shape, np.float64)
        A.round_into(a, ret)
        return ret
    return _prefilter("spline_filter1d", a, "x" if ax == 1 else "y", output, mode, prefilter,
                      backend, threads, stream)


def spline_filter_tiff(input: Union[str, os.PathLike[str]], output: Union[str, os.PathLike[str]],
                       *, axis: Optional[int] = None, mode: str = "mirror",
                       prefilter: str = "iir", band_rows: int = 0, max_memory_mib: float = 0.0,
                       tile: int = 0, deflate: bool = False,
                       threads: int = 0) -> dict[str, float]:
    """Cubic B-spline coefficients of a TIFF or BigTIFF of any size, written as a tiled float32
    TIFF, band by band in bounded memory (``upres::bspline_prefilter_tiled``, docs/scale.md).

    Parameters: input, output: file paths (u8, u16 or f32 samples, 1-4 channels; each
    channel's plane is filtered alone); axis: None (both axes, as spline_filter), 0 or 1 (one
    axis, as spline_filter1d); mode: as spline_filter's ('mirror' default, 'reflect',
    'nearest'; 'grid-wrap' is refused: its recursions couple the first and the last rows);
    prefilter: 'iir' (exact), 'fir' or 'firK'; band_rows, max_memory_mib (0: automatic), tile
    (output tile side; 0: 256, less for a smaller output), deflate, threads. The coefficients
    equal spline_filter's (cpu backend) on the whole image converted to float32, bit for bit.
    CPU backend; the GIL is released. Returns the run's figures (bands, band_rows, rows_read,
    buffer_bytes, bigtiff). An interrupted call leaves no output.

    Example::

        >>> import numpy as np, upres
        >>> try:  # (a build without libtiff refuses TIFF files: UnsupportedFormatError)
        ...     upres.imwrite("/tmp/upres_doc_sf.tif", np.ones((8, 12), np.uint16))
        ...     upres.spline_filter_tiff("/tmp/upres_doc_sf.tif", "/tmp/upres_doc_sfc.tif")["bands"]
        ... except upres.UnsupportedFormatError:
        ...     1.0
        1.0
    """
    op = "spline_filter_tiff"
    if axis is None:
        axes = "both"
    elif int(axis) in (0, 1, -1):
        axes = "x" if int(axis) % 2 == 1 else "y"
    else:
        raise InvalidArgumentError(f"{op}: axis {axis!r} (allowed: None for both axes, 0, 1)")
    if mode not in _PREFILTER_MODES:
        raise InvalidArgumentError(f"{op}: unknown mode '{mode}' (allowed: "
                                   + ", ".join(_PREFILTER_MODES) + ")")
    opts = {"border": _PREFILTER_MODES[mode], "axes": axes,
            "fir_length": "0" if prefilter == "iir" else str(_fir_length(prefilter))}
    return _upres.spline_filter_tiff(os.fspath(input), os.fspath(output), opts, int(band_rows),
                                     float(max_memory_mib), int(tile), bool(deflate),
                                     int(threads))
