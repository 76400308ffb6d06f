"""upres on Dask arrays: images larger than memory, on every core of a host or on a cluster.

``zoom``, ``affine_transform``, ``rotate``, ``map_coordinates``, ``spline_filter``,
``spline_filter1d``, ``upscale``, ``fuse`` and ``disparity`` (``upres.stereo.disparity``'s window
matcher) take dask arrays (or NumPy ones) and return a dask array whose every chunk is computed
by its own task, with the same pixels as the whole-image call, bit for bit. The
prefilter and the zoom with ``grid_mode=True`` go by bands of full rows: each band reads the
source rows its taps need plus the exact B-spline prefilter's warm-up
(``upres::warp_tiled_source_rows``, docs/scale.md) and runs as one band of upres's tiled
execution. The affine maps (``zoom`` with ``grid_mode=False`` included) go by 2-D output tiles,
each given the source box it reads (``upres::warp_source_box``; with the B-spline, 64 pixels of
warm-up at each cut; on the cuda backend, the cuda prefilter's units), whatever the input's
chunks. ``imread_tiff`` makes a dask array of a TIFF
or BigTIFF whose tasks open the file by its path and read their rows (no file handle is
pickled). The native calls release the GIL; each task runs ``threads`` CPU threads (default 1:
Dask runs the tasks in parallel).

Why not ``dask.array.map_overlap``: its halo is the same on every chunk, but a zoom's band of
output rows reads a band of source rows that is not a chunk of the source, and the exact
prefilter needs its warm-up aligned to 8 rows; each task here slices exactly the rows it
needs, and upres applies its own border at the image's true edges (Dask has no mirror border).

Needs ``dask[array]`` (and ``distributed`` for a cluster); ``import upres`` does not.

Example::

    >>> import numpy as np, dask.array as da, upres.dask
    >>> x = da.from_array(np.arange(64, dtype=np.float32).reshape(8, 8), chunks=(4, 8))
    >>> upres.dask.zoom(x, 2, mode="mirror").shape
    (16, 16)
"""

from __future__ import annotations

import logging
import math
import os
from typing import Any, Optional, Sequence, Union

from dask.delayed import delayed
import dask.array as da
from dask.base import tokenize
import numpy as np

from . import _upres
from ._errors import BackendUnavailableError, InvalidArgumentError
from ._arrays import options_text as _options_text
from .ndimage import (_PREFILTER_MODES, _affine, _corner_zoom, _fir_length, _rotation,
                      _warp_option_text)

__all__ = ["imread_tiff", "zoom", "affine_transform", "rotate", "map_coordinates", "spline_filter",
           "spline_filter1d", "upscale", "fuse", "disparity", "local_gpu_cluster"]

_NATIVE = (np.dtype(np.uint8), np.dtype(np.uint16), np.dtype(np.float32))
# Bands of at least 256 source rows of their own (the prefilter's warm-up, 2 x 64 rows a band,
# would otherwise cost more than the band) and about 32 MiB of output.
_BAND_BYTES = 32 << 20
_MIN_SOURCE_ROWS = 256


def _image(input: Any, op: str) -> Any:
    """The input as a dask array of an image: (H, W) or (H, W, C), C in 1..4, not empty."""
    x = input if isinstance(input, da.Array) else da.from_array(np.asarray(input))
    if x.ndim not in (2, 3) or (x.ndim == 3 and not 1 <= x.shape[2] <= 4):
        raise InvalidArgumentError(f"{op}: shape {tuple(x.shape)}; images are (H, W) or "
                                   "(H, W, C) with C in 1..4")
    if min(x.shape[:2]) < 1:
        raise InvalidArgumentError(f"{op}: the image {tuple(x.shape)} is empty")
    return x


def _as_dask(input: Any, op: str) -> Any:
    # Bands of full rows: one chunk across the columns and the channels.
    x = _image(input, op)
    return x.rechunk({1: -1, 2: -1} if x.ndim == 3 else {1: -1})


def _point_options(op: str, x: Any, order: int, interp: Optional[str], mode: str, cval: float,
                   prefilter: Union[bool, str]) -> tuple[dict[str, str], Any]:
    """(the options as text for the tasks, parsed for the graph) of a point map of x, checked."""
    if x.dtype not in _NATIVE:
        raise InvalidArgumentError(f"{op}: dtype {x.dtype} (allowed: uint8, uint16, float32)")
    method, opts = _warp_option_text(op, order, interp, mode, cval, prefilter)
    if method == "bspline" and prefilter is False and x.dtype != np.float32:
        raise InvalidArgumentError(f"{op}: prefilter=False takes float32 B-spline coefficients, "
                                   f"not {x.dtype}")
    return opts, _upres.warp_options(opts)  # checks the options now, not in a task


def _pieces(x: Any) -> Any:
    """A dask array as a task argument: the nested list of its chunks, unoptimised. (A dask
    array passed to a delayed call is optimised alone, which fuses its source's tasks into it
    under new names: every task whose slice shares a source chunk then computed that chunk again,
    a TIFF band decoded once per band and tile that read it.)"""
    return x.to_delayed(optimize_graph=False).tolist()


def _host(a: Any) -> Any:
    """A chunk in host memory: CuPy chunks are copied there (the native band calls read host
    rows)."""
    if type(a).__module__.split(".")[0] == "cupy":
        return a.get()
    return a


def _joined(parts: Any) -> Any:
    """The array of _pieces' chunks, in a task, in host memory."""
    if isinstance(parts, list):
        return np.block(_nested_map(_host, parts))
    return _host(parts)


def _nested_map(f: Any, parts: Any) -> Any:
    return [_nested_map(f, p) for p in parts] if isinstance(parts, list) else f(parts)


def _lib_of(x: Any) -> str:
    """'cupy' when the dask array's chunks are CuPy arrays, else 'numpy'."""
    return "cupy" if type(x._meta).__module__.split(".")[0] == "cupy" else "numpy"


def _meta(lib: str, ndim: int, dtype: Any) -> Any:
    if lib == "cupy":
        import cupy
        return cupy.empty((0,) * ndim, dtype)
    return np.empty((0,) * ndim, dtype)


class _InLib:
    """A task's function whose NumPy result goes back as the input's kind of chunk (CuPy
    chunks in, CuPy chunks out, on the worker's current GPU)."""

    def __init__(self, fn: Any, lib: str) -> None:
        self.fn, self.lib = fn, lib

    def __call__(self, *args: Any) -> Any:
        out = self.fn(*args)
        if self.lib == "cupy":
            import cupy
            return cupy.asarray(out)
        return out


def _backend(op: str, backend: str) -> str:
    if backend not in ("cpu", "cuda"):
        raise InvalidArgumentError(f"{op}: backend {backend!r} (allowed: 'cpu', 'cuda')")
    return backend


def _band_edges(out_h: int, src_h: int, row_bytes: int, chunk_rows: Optional[int],
                op: str) -> list[int]:
    if chunk_rows is None:
        own = math.ceil(_MIN_SOURCE_ROWS * out_h / src_h)
        rows = max(own, _BAND_BYTES // max(1, row_bytes), 8)
    else:
        rows = int(chunk_rows)
        if rows < 1:
            raise InvalidArgumentError(f"{op}: chunk_rows {chunk_rows} must be at least 1")
    rows = min(rows, out_h)
    return list(range(0, out_h, rows)) + [out_h]


def _assemble(x: Any, out_w: int, out_h: int, dtype: Any, edges: list[int],
              rows_of: Any, band: Any, name: str) -> Any:
    """A dask array of out_h x out_w (x's channels) from one task per band [y0, y1): band(block,
    first, y0, y1) on the source rows [first, last) = rows_of(y0, y1)."""
    tail = tuple(x.shape[2:])
    lib = _lib_of(x)
    fn = band if lib == "numpy" else _InLib(band, lib)
    parts = []
    for y0, y1 in zip(edges[:-1], edges[1:]):
        first, last = rows_of(y0, y1)
        task = delayed(fn, pure=True)(_pieces(x[first:last]), first, y0, y1)
        parts.append(da.from_delayed(task, shape=(y1 - y0, out_w) + tail, dtype=dtype,
                                     meta=_meta(lib, x.ndim, dtype),
                                     name=f"{name}-{y0}-" + tokenize(task.key)))
    return da.concatenate(parts, axis=0)


class _ZoomBand:
    """One band of a zoom: picklable (plain options, parsed in the task)."""

    def __init__(self, options: dict[str, str], src_h: int, out_w: int, out_h: int,
                 dtype: Any, threads: int, backend: str) -> None:
        self.options, self.src_h, self.out_w, self.out_h = options, src_h, out_w, out_h
        self.dtype, self.threads, self.backend = np.dtype(dtype), threads, backend

    def __call__(self, block: Any, first: int, y0: int, y1: int) -> np.ndarray[Any, Any]:
        block = _joined(block)
        out = np.empty((y1 - y0, self.out_w) + block.shape[2:], self.dtype)
        _upres.zoom_band(np.ascontiguousarray(block, self.dtype), first, self.src_h, out, y0,
                         self.out_h, _upres.warp_options(self.options), self.threads,
                         self.backend)
        return out


def zoom(input: Any, zoom: Union[float, tuple[float, ...]], order: int = 3,
         mode: str = "constant", cval: float = 0.0, prefilter: Union[bool, str] = True, *,
         grid_mode: bool = False, interp: Optional[str] = None,
         output_shape: Optional[tuple[int, int]] = None, chunk_rows: Optional[int] = None,
         output_chunks: Optional[tuple[int, int]] = None, threads: int = 1,
         backend: str = "cpu") -> Any:
    """Zoom a dask array, as upres.zoom (scipy's zoom).

    Parameters: input (H, W) or (H, W, C) dask or NumPy array of uint8, uint16 or float32;
    zoom: factor, or (rows, columns[, 1]); order 0, 1, 3 (or interp='keys'); mode: 'constant'
    (default), 'nearest', 'mirror', 'reflect' / 'grid-mirror' ('grid-wrap' with the B-spline
    prefilter is refused: its recursions couple opposite edges); cval; prefilter: True (exact
    B-spline), False (input holds float32 coefficients), 'fir' / 'firK'; grid_mode: False
    (default: corner pixels aligned, computed tile by tile of the output as affine_transform)
    or True (pixel edges aligned, the ``upres warp --zoom`` convention: the separable resize,
    band by band of output rows, several times faster); output_shape: (rows, columns) instead
    of round(n * zoom); chunk_rows: output rows per task with grid_mode=True (default: bands of
    about 32 MiB and at least 256 source rows); output_chunks: (rows, columns) per task with
    grid_mode=False (as affine_transform); threads: CPU threads per task; backend: 'cpu' or
    'cuda' (grid_mode=True only: each band runs on the worker's current GPU, as
    ``upres.zoom_tiff(backend='cuda')``; one worker per GPU: local_gpu_cluster). Returns a dask
    array of the input's dtype whose pixels equal upres.zoom's on the same backend bit for bit
    (its chunks NumPy arrays, or CuPy arrays on the worker's GPU where the input's chunks are).
    """
    op = "upres.dask.zoom"
    backend = _backend(op, backend)
    x = input if isinstance(input, da.Array) else da.from_array(np.asarray(input))
    if x.ndim not in (2, 3):
        raise InvalidArgumentError(f"{op}: shape {tuple(x.shape)}; images are (H, W) or "
                                   "(H, W, C) with C in 1..4")
    h, w = int(x.shape[0]), int(x.shape[1])
    if output_shape is not None:
        oh, ow = int(output_shape[0]), int(output_shape[1])
    else:
        z = [float(zoom)] * 2 if np.isscalar(zoom) else [float(v) for v in zoom]  # type: ignore
        if len(z) != x.ndim or (x.ndim == 3 and z[2] != 1):
            raise InvalidArgumentError(f"{op}: zoom {zoom!r}: one factor, or one per axis with 1 "
                                       "on the channel axis")
        if not all(v > 0 and math.isfinite(v) for v in z[:2]):
            raise InvalidArgumentError(f"{op}: zoom {zoom!r} must be positive and finite")
        oh, ow = int(round(h * z[0])), int(round(w * z[1]))
    if min(oh, ow) < 1:
        raise InvalidArgumentError(f"{op}: output shape {(oh, ow)} is empty")
    if not grid_mode:
        if backend == "cuda":
            raise InvalidArgumentError(f"{op}: backend 'cuda' runs grid_mode=True (the separable "
                                       "resize in bands); grid_mode=False maps are tiled on the "
                                       "cpu backend")
        return _warp_tiles(op, x, (oh, ow), _corner_zoom((h, w), (oh, ow)), order, mode, cval,
                           prefilter, interp, output_chunks, threads, "cpu")
    x = _as_dask(x, op)
    if x.dtype not in _NATIVE:
        raise InvalidArgumentError(f"{op}: dtype {x.dtype} (allowed: uint8, uint16, float32)")
    _, opts = _warp_option_text(op, order, interp, mode, cval, prefilter)
    handle = _upres.warp_options(opts)  # checks the options now, not in a task
    c = int(x.shape[2]) if x.ndim == 3 else 1
    edges = _band_edges(oh, h, ow * c * x.dtype.itemsize, chunk_rows, op)
    band = _ZoomBand(opts, h, ow, oh, x.dtype, threads, backend)
    return _assemble(x, ow, oh, x.dtype, edges,
                     lambda y0, y1: _upres.zoom_source_rows(w, h, ow, oh, handle, y0, y1,
                                                            backend), band, "upres-zoom")


class _UpscaleBand:
    """One band of an SRCNN upscale: picklable (plain options)."""

    def __init__(self, scale: int, options: dict[str, Any], dtype: Any, threads: int,
                 backend: str) -> None:
        self.scale, self.options, self.dtype, self.threads = scale, options, np.dtype(dtype), threads
        self.backend = backend

    def __call__(self, block: Any, first: int, y0: int, y1: int) -> np.ndarray[Any, Any]:
        from ._ops import upscale as _upscale
        block = np.ascontiguousarray(_joined(block), self.dtype)
        if self.backend == "cuda":  # the whole cuda call on the band, in the worker's GPU
            if not _upres.cuda_available():
                raise BackendUnavailableError("upres.dask.upscale: backend 'cuda' was requested "
                                              "but this worker has no CUDA device")
            try:
                import cupy
            except ImportError:
                raise BackendUnavailableError("upres.dask.upscale: backend 'cuda' runs srcnn's "
                                              "bands through CuPy, which this worker lacks "
                                              "(pip install cupy-cuda13x)") from None
            up = cupy.asnumpy(_upscale(cupy.asarray(block), self.scale, "srcnn",
                                       backend="cuda", **self.options))
        else:
            up = _upscale(block, self.scale, "srcnn", backend=self.backend,
                          threads=self.threads, **self.options)
        s = self.scale
        return np.ascontiguousarray(up[y0 - s * first:y1 - s * first])


# SRCNN's reach beyond a band, in source rows: the bicubic step's 2 (and 1 for rounding) plus the
# largest network's receptive radius on the output grid (kernels of at most 15: 21 pixels).
_SRCNN_RADIUS = 21


def upscale(input: Any, scale: int = 2, method: str = "auto", *, model: Optional[str] = None,
            chunk_rows: Optional[int] = None, threads: int = 1, backend: str = "cpu",
            precision: str = "fp32", variant: Optional[str] = None) -> Any:
    """Upscale a dask array, as upres.upscale with an integer scale.

    Parameters: input (H, W) or (H, W, C) dask or NumPy array (uint8, uint16, float32; C 1 to
    4); scale: an integer in [1, 16] (srcnn: a factor with a model); method: 'auto' (srcnn
    where a bundled model exists, else bicubic), 'srcnn', 'bicubic', 'bilinear', 'bspline' (the
    SEABI family's threshold is a statistic of the whole image: upscale it whole, or stream it
    with ``upres upscale --stream``); model: an SRCNN weights file; chunk_rows: output rows per
    task (default: bands of about 32 MiB); threads: CPU threads per task; backend: 'cpu' or
    'cuda' (each band on the worker's current GPU, through CuPy; one worker per GPU:
    local_gpu_cluster); precision, variant: SRCNN's kernels on the cuda backend ('fp32', 'tf32', 'fp16', 'bf16';
    variant default 'fused', or any named variant but 'auto': the tasks run apart, and a choice
    made by timing in each could differ from band to band; precision 'fastest' is refused for
    the same reason). srcnn runs one task per band of output rows, each given its source rows
    plus the network's reach (aligned to 8 rows, as upres's tiled SRCNN); bicubic, bilinear and
    bspline are the resizes ``upres.dask.zoom(grid_mode=True)`` runs. Returns a dask array of
    the input's dtype whose pixels equal upres.upscale's on the same backend (and kernels) bit
    for bit.
    """
    op = "upres.dask.upscale"
    backend = _backend(op, backend)
    s = float(scale)
    if not (1 <= s <= 16) or s != math.floor(s):
        raise InvalidArgumentError(f"{op}: scale {scale!r} must be an integer in [1, 16]")
    si = int(s)
    x = _as_dask(input, op)
    if x.dtype not in _NATIVE:
        raise InvalidArgumentError(f"{op}: dtype {x.dtype} (allowed: uint8, uint16, float32)")
    zs = si if x.ndim == 2 else (si, si, 1)
    options: dict[str, Any] = {} if model is None else {"model": os.fspath(model)}
    method = _upres.upscale_method(_options_text(dict(options, scale=si, method=method)))
    if method == "bicubic":
        return zoom(x, zs, interp="keys", mode="reflect", grid_mode=True, chunk_rows=chunk_rows,
                    threads=threads, backend=backend)
    if method == "bilinear":
        return zoom(x, zs, order=1, mode="reflect", grid_mode=True, chunk_rows=chunk_rows,
                    threads=threads, backend=backend)
    if method == "bspline":
        return zoom(x, zs, order=3, mode="mirror", grid_mode=True, chunk_rows=chunk_rows,
                    threads=threads, backend=backend)
    if method != "srcnn":
        raise InvalidArgumentError(f"{op}: method {method!r} is not tiled (allowed: auto, srcnn, "
                                   "bicubic, bilinear, bspline)")
    if backend == "cuda":
        variant = "fused" if variant is None else variant
        if variant == "auto" or precision == "fastest":
            raise InvalidArgumentError(
                f"{op}: variant {variant!r}, precision {precision!r}: on the cuda backend name "
                "the kernels (variant 'fused', 'tensor-core', ...; precision 'fp32', 'tf32', "
                "'fp16', 'bf16'): 'auto' and 'fastest' choose by timing in each task, and "
                "bands that chose differently would not join into one image")
        options.update(precision=precision, variant=variant)
    elif precision != "fp32" or variant is not None:
        raise InvalidArgumentError(f"{op}: precision and variant name SRCNN's CUDA kernels; the "
                                   "cpu backend computes in fp32 (backend='cuda' takes them)")
    h, w = int(x.shape[0]), int(x.shape[1])
    c = int(x.shape[2]) if x.ndim == 3 else 1
    from ._ops import upscale as _upscale
    # The options checked now (a model for the scale, the image's shape), not in a task.
    _upscale(np.zeros((min(h, 16), min(w, 16)) + tuple(x.shape[2:]), x.dtype), si, "srcnn",
             backend="cpu", **{k: v for k, v in options.items() if k == "model"})
    oh, ow = si * h, si * w
    halo = 3 + -(-_SRCNN_RADIUS // si)
    edges = _band_edges(oh, h, ow * c * x.dtype.itemsize, chunk_rows, op)

    def rows_of(y0: int, y1: int) -> tuple[int, int]:
        return max(0, y0 // si - halo) // 8 * 8, min(h, -(-y1 // si) + halo)

    return _assemble(x, ow, oh, x.dtype, edges, rows_of,
                     _UpscaleBand(si, options, x.dtype, threads, backend), "upres-upscale")


class _FuseBand:
    """One band of an NLM-SR fusion: picklable (plain options, the noise among them)."""

    def __init__(self, options: dict[str, str], height: int, out_w: int, dtype: Any,
                 threads: int, backend: str) -> None:
        self.options, self.height, self.out_w = options, height, out_w
        self.dtype, self.threads, self.backend = np.dtype(dtype), threads, backend

    def __call__(self, blocks: Any, first: int, y0: int, y1: int) -> np.ndarray[Any, Any]:
        frames = [np.ascontiguousarray(_joined(b), self.dtype) for b in blocks]
        out = np.empty((y1 - y0, self.out_w) + frames[0].shape[2:], self.dtype)
        _upres.fuse_band(frames, first, self.height, out, y0, self.options, self.threads,
                         self.backend)
        return out


def fuse(frames: Any, scale: int = 2, *, chunk_rows: Optional[int] = None, threads: int = 1,
         backend: str = "cpu", **options: Any) -> Any:
    """Fuse frames (dask or NumPy arrays) by NLM-SR, as upres.fuse.

    Parameters: frames: a sequence of (H, W) or (H, W, 3) arrays of one shape and dtype
    (uint8, uint16, float32), or one (N, H, W[, 3]) array; scale: 2, 3 or 4; options: as
    upres.fuse (reference, patch, search, sigma, noise, iterations, post, back_projections,
    psf_sigma, reconstructions, model; on the cuda backend also variant, precision, block_x,
    block_y, block_z); chunk_rows: output rows per task (rounded up to a multiple of 32 scale;
    default: bands of about 32 MiB); threads: CPU threads per task; backend: 'cpu' or 'cuda'
    (each band on the worker's current GPU; one worker per GPU: local_gpu_cluster).
    Unless ``noise`` is given, the reference frame's noise is computed first, its rows streamed
    through ``NlmsrNoise`` in order on the client (one pass, chunk by chunk: the whole call's
    value bit for bit). Each task then holds its band's rows of every frame plus every step's
    reach (``nlm_fuse_tiled_source_rows``). Returns a dask array of the frames' dtype whose
    pixels equal upres.fuse's on the same backend (and cuda kernels) bit for bit, its chunks
    CuPy arrays where the first frame's are.
    """
    op = "upres.dask.fuse"
    if hasattr(frames, "shape") and len(frames.shape) in (3, 4):
        frames = [frames[i] for i in range(frames.shape[0])]
    xs = [_as_dask(f, op) for f in frames]
    if not xs or len(xs) > 64:
        raise InvalidArgumentError(f"{op}: {len(xs)} frames (allowed: 1 to 64)")
    x0 = xs[0]
    for i, x in enumerate(xs):
        if tuple(x.shape) != tuple(x0.shape) or x.dtype != x0.dtype:
            raise InvalidArgumentError(f"{op}: frame {i} is {tuple(x.shape)} {x.dtype} but frame "
                                       f"0 is {tuple(x0.shape)} {x0.dtype} (all frames alike)")
    if x0.dtype not in _NATIVE:
        raise InvalidArgumentError(f"{op}: dtype {x0.dtype} (allowed: uint8, uint16, float32)")
    c = int(x0.shape[2]) if x0.ndim == 3 else 1
    if c not in (1, 3):
        raise InvalidArgumentError(f"{op}: {c} channels (allowed: 1 gray, 3 RGB)")
    h, w = int(x0.shape[0]), int(x0.shape[1])
    s = int(scale)
    opts = _options_text(dict(options, scale=s))
    oh, ow = s * h, s * w
    _upres.fuse_source_rows(w, h, opts, 0, min(oh, s))  # checks the options now, not in a task
    backend = _backend(op, backend)
    if backend == "cpu" and opts.get("variant", "fast") != "fast":
        raise InvalidArgumentError(f"{op}: variant {opts['variant']!r} is a cuda variant "
                                   "(allowed on the cpu backend: 'fast')")
    if backend == "cuda" and opts.get("post") == "reconstruct":
        # The SRCNN start picks its kernels by timing per plane shape on the GPU: each task
        # would pick its own (nlm_fuse_tiled runs the first band's choice for all).
        raise InvalidArgumentError(f"{op}: post 'reconstruct' on the cuda backend (its SRCNN "
                                   "start chooses kernels by timing in each task; use "
                                   "upres.fuse_tiff(backend='cuda'), or backend='cpu')")
    if float(opts.get("noise", "-1")) < 0:
        ref = int(opts.get("reference", "-1"))
        ref = (len(xs) - 1) // 2 if ref < 0 else ref
        if ref >= len(xs):
            raise InvalidArgumentError(f"{op}: reference {ref} is out of range (allowed: -1 for "
                                       f"the middle frame, or 0 to {len(xs) - 1})")
        acc = _upres.NlmsrNoise(w, h)
        for block in xs[ref].to_delayed(optimize_graph=False).ravel():
            acc.push(np.ascontiguousarray(_host(block.compute())))
        opts["noise"] = repr(acc.value())
    unit = 32 * s
    if chunk_rows is None:
        rows = max(unit, (_BAND_BYTES // max(1, ow * c * x0.dtype.itemsize)) // unit * unit)
    else:
        if int(chunk_rows) < 1:
            raise InvalidArgumentError(f"{op}: chunk_rows {chunk_rows} must be at least 1")
        rows = -(-int(chunk_rows) // unit) * unit
    edges = list(range(0, oh, rows)) + [oh]
    lib = _lib_of(x0)
    band = _FuseBand(opts, h, ow, x0.dtype, threads, backend)
    fn = band if lib == "numpy" else _InLib(band, lib)
    tail = tuple(x0.shape[2:])
    parts = []
    for y0, y1 in zip(edges[:-1], edges[1:]):
        first, last = _upres.fuse_source_rows(w, h, opts, y0, y1)
        task = delayed(fn, pure=True)([_pieces(x[first:last]) for x in xs], first, y0, y1)
        parts.append(da.from_delayed(task, shape=(y1 - y0, ow) + tail, dtype=x0.dtype,
                                     meta=_meta(lib, x0.ndim, x0.dtype),
                                     name=f"upres-fuse-{y0}-" + tokenize(task.key)))
    return da.concatenate(parts, axis=0)


class _StereoBand:
    """One band of a disparity map: picklable (plain options)."""

    def __init__(self, options: dict[str, str], height: int, width: int, dtype: Any,
                 threads: int, backend: str) -> None:
        self.options, self.height, self.width = options, height, width
        self.dtype, self.threads, self.backend = np.dtype(dtype), threads, backend

    def __call__(self, blocks: Any, first: int, y0: int, y1: int) -> np.ndarray[Any, Any]:
        left, right = (np.ascontiguousarray(_joined(b), self.dtype) for b in blocks)
        out = np.empty((y1 - y0, self.width), np.float32)
        _upres.stereo_band(left, right, first, self.height, out, y0, self.options, self.threads,
                           self.backend)
        return out


def disparity(left: Any, right: Any, *, disparities: int = 64, min_disparity: int = 0,
              chunk_rows: Optional[int] = None, threads: int = 1, backend: str = "cpu",
              **options: Any) -> Any:
    """The left-based disparity map of a rectified pair of dask (or NumPy) arrays, as
    upres.stereo.disparity, band by band of rows.

    Parameters: left, right: (H, W) or (H, W, 3) arrays of one shape and dtype (uint8, uint16,
    float32); disparities, min_disparity and options as upres.stereo.disparity, for the window
    matcher (aggregate 'gauss7', 'gauss13' or 'box'; the semi-global paths and speckle removal
    reach the whole image and are refused); chunk_rows: output rows per task (default: about
    32 MiB of map); threads: CPU threads per task; backend: 'cpu' or 'cuda' (each band on the
    worker's current GPU; one worker per GPU: local_gpu_cluster). Each task holds its band's rows
    of both images plus the rows the windows reach (``stereo_disparity_tiled_source_rows``).
    Returns a float32 (H, W) dask array equal to upres.stereo.disparity's map bit for bit (both
    backends give the same bytes; NaN where invalid, unless ``invalid`` says otherwise), its
    chunks CuPy arrays where the left image's are.

    Example::

        >>> import numpy as np, dask.array as da, upres.dask
        >>> rng = np.random.default_rng(6)
        >>> right = (rng.random((64, 80)) * 255).astype(np.uint8)
        >>> left = da.from_array(np.roll(right, 5, axis=1), chunks=(16, 80))
        >>> d = upres.dask.disparity(left, right, disparities=16, aggregate="box", chunk_rows=24)
        >>> round(float(np.nanmedian(d.compute()[:, 20:])), 2)
        5.0
    """
    op = "upres.dask.disparity"
    l_x, r_x = _as_dask(left, op), _as_dask(right, op)
    if tuple(l_x.shape) != tuple(r_x.shape) or l_x.dtype != r_x.dtype:
        raise InvalidArgumentError(f"{op}: left is {tuple(l_x.shape)} {l_x.dtype} but right is "
                                   f"{tuple(r_x.shape)} {r_x.dtype} (they must match)")
    if l_x.dtype not in _NATIVE:
        raise InvalidArgumentError(f"{op}: dtype {l_x.dtype} (allowed: uint8, uint16, float32)")
    c = int(l_x.shape[2]) if l_x.ndim == 3 else 1
    if c not in (1, 3):
        raise InvalidArgumentError(f"{op}: {c} channels (allowed: 1 gray, 3 RGB)")
    h, w = int(l_x.shape[0]), int(l_x.shape[1])
    opts = _options_text(dict(options, disparities=disparities, min_disparity=min_disparity))
    _upres.stereo_source_rows(w, h, opts, 0, 1)  # checks the options now, not in a task
    backend = _backend(op, backend)
    edges = _band_edges(h, h, w * 4, chunk_rows, op)
    lib = _lib_of(l_x)
    band = _StereoBand(opts, h, w, l_x.dtype, threads, backend)
    fn = band if lib == "numpy" else _InLib(band, lib)
    parts = []
    for y0, y1 in zip(edges[:-1], edges[1:]):
        first, last = _upres.stereo_source_rows(w, h, opts, y0, y1)
        task = delayed(fn, pure=True)([_pieces(l_x[first:last]), _pieces(r_x[first:last])],
                                      first, y0, y1)
        parts.append(da.from_delayed(task, shape=(y1 - y0, w), dtype=np.float32,
                                     meta=_meta(lib, 2, np.float32),
                                     name=f"upres-disparity-{y0}-" + tokenize(task.key)))
    return da.concatenate(parts, axis=0)


class _WarpTile:
    """One output tile of a point transform: picklable (plain options, parsed in the task)."""

    def __init__(self, options: dict[str, str], kind: str, matrix: list[float],
                 src_shape: tuple[int, int], out_shape: tuple[int, int], dtype: Any,
                 threads: int, backend: str) -> None:
        self.options, self.kind, self.matrix = options, kind, matrix
        self.src_shape, self.out_shape, self.threads = src_shape, out_shape, threads
        self.dtype, self.backend = np.dtype(dtype), backend

    def __call__(self, block: Any, in_box: tuple[int, int, int, int],
                 out_box: tuple[int, int, int, int], tail: tuple[int, ...]) -> np.ndarray[Any, Any]:
        block = _joined(block)
        x0, y0, x1, y1 = out_box
        out = np.empty((y1 - y0, x1 - x0) + tail, self.dtype)
        src = None if block is None else np.ascontiguousarray(block, self.dtype)
        (h, w), (oh, ow) = self.src_shape, self.out_shape
        _upres.warp_box(src, in_box, w, h, out, out_box, ow, oh, self.kind, self.matrix, None,
                        _upres.warp_options(self.options), self.threads, self.backend)
        return out


def _tile_edges(n: int, size: int) -> list[int]:
    return list(range(0, n, size)) + [n]


def _warp_tiles(op: str, input: Any, out_shape: Any, matrix: list[float], order: int,
                mode: str, cval: float, prefilter: Union[bool, str], interp: Optional[str],
                chunks: Optional[tuple[int, int]], threads: int, backend: str) -> Any:
    """An affine warp of a dask array, one task per output tile given only its source box
    (``upres::warp_source_box``), bit-identical to the whole-image call on the same backend."""
    backend = _backend(op, backend)
    x = _image(input, op)
    opts, handle = _point_options(op, x, order, interp, mode, cval, prefilter)
    h, w = int(x.shape[0]), int(x.shape[1])
    oh, ow = int(out_shape[0]), int(out_shape[1])
    if min(oh, ow) < 1:
        raise InvalidArgumentError(f"{op}: the output shape ({oh}, {ow}) is empty")
    tail = tuple(int(v) for v in x.shape[2:])
    if chunks is None:  # about 16 MiB of output per tile, square
        side = int(math.sqrt((16 << 20) / (max(1, math.prod(tail)) * x.dtype.itemsize)))
        th = tw = max(64, side)
    else:
        th, tw = int(chunks[0]), int(chunks[1])
        if th < 1 or tw < 1:
            raise InvalidArgumentError(f"{op}: output_chunks {chunks} must be positive")
    lib = _lib_of(x)
    tile = _InLib(_WarpTile(opts, "affine", matrix, (h, w), (oh, ow), x.dtype, threads, backend),
                  lib)
    channels = math.prod(tail)
    meta = _meta(lib, x.ndim, x.dtype)
    rows = []
    ys, xs = _tile_edges(oh, th), _tile_edges(ow, tw)
    for y0, y1 in zip(ys[:-1], ys[1:]):
        row = []
        for x0, x1 in zip(xs[:-1], xs[1:]):
            box = (x0, y0, x1, y1)
            bx0, by0, bx1, by1 = _upres.warp_source_box(w, h, ow, oh, "affine", matrix, None,
                                                        handle, box, backend, channels)
            block = x[by0:by1, bx0:bx1] if bx1 > bx0 else None
            task = delayed(tile, pure=True)(None if block is None else _pieces(block),
                                            (bx0, by0, bx1, by1), box, tail)
            row.append(da.from_delayed(task, shape=(y1 - y0, x1 - x0) + tail, dtype=x.dtype,
                                       meta=meta,
                                       name=f"upres-{op}-{y0}-{x0}-" + tokenize(task.key)))
        rows.append(row)
    if x.ndim == 3:
        return da.block([[[t] for t in r] for r in rows])
    return da.block(rows)


def affine_transform(input: Any, matrix: Any, offset: Any = 0.0,
                     output_shape: Optional[tuple[int, ...]] = None, order: int = 3,
                     mode: str = "constant", cval: float = 0.0, prefilter: Union[bool, str] = True,
                     *, interp: Optional[str] = None,
                     output_chunks: Optional[tuple[int, int]] = None, threads: int = 1,
                     backend: str = "cpu") -> Any:
    """An affine transform of a dask array, as upres.affine_transform (scipy's arguments:
    input[matrix @ o + offset]), tile by tile of the output: each task holds only the source
    pixels its tile reads (with the B-spline prefilter, 64 pixels of warm-up at each cut; on the
    cuda backend the cuda prefilter's units, up to 768 rows at each cut), and the result equals
    upres.affine_transform's on the same backend bit for bit. The input may be chunked any way
    (each task slices its box out of it). output_chunks: (rows, columns) per tile (default about
    16 MiB, square; on the cuda backend multiples of 64 waste no work: each task computes its
    tile grown to the kernels' 64 x 64 tiles); threads: CPU threads per task; backend: 'cpu' or
    'cuda' (each tile on the worker's current GPU: one worker per GPU, local_gpu_cluster; the
    client needs no GPU). Border 'grid-wrap' with the B-spline prefilter is refused (its
    recursions couple opposite edges).
    """
    op = "upres.dask.affine_transform"
    shape, m = _affine(tuple(int(v) for v in np.shape(input)), matrix, offset, output_shape, op)
    return _warp_tiles(op, input, shape, m, order, mode, cval, prefilter, interp, output_chunks,
                       threads, backend)


def rotate(input: Any, angle: float, axes: tuple[int, int] = (1, 0), reshape: bool = True,
           order: int = 3, mode: str = "constant", cval: float = 0.0,
           prefilter: Union[bool, str] = True, *, interp: Optional[str] = None,
           output_chunks: Optional[tuple[int, int]] = None, threads: int = 1,
           backend: str = "cpu") -> Any:
    """Rotate a dask array by `angle` degrees about its centre, as upres.rotate (scipy's
    geometry), tile by tile of the output, bit-identical to upres.rotate on the same backend.
    output_chunks, threads, backend: as affine_transform.
    """
    op = "upres.dask.rotate"
    shape, m = _rotation(tuple(int(v) for v in np.shape(input)), angle, axes, reshape, op)
    return _warp_tiles(op, input, shape, m, order, mode, cval, prefilter, interp, output_chunks,
                       threads, backend)


class _RemapChunk:
    """One chunk of map_coordinates: picklable (plain options, parsed in the task)."""

    def __init__(self, options: dict[str, str], src_shape: tuple[int, int], dtype: Any,
                 threads: int, backend: str) -> None:
        self.options, self.src_shape, self.threads = options, src_shape, threads
        self.dtype, self.backend = np.dtype(dtype), backend

    def __call__(self, block: Any, in_box: tuple[int, int, int, int], coords: Any,
                 tail: tuple[int, ...]) -> np.ndarray[Any, Any]:
        block, coords = _joined(block), _joined(coords)
        shape = coords.shape[1:]
        n = int(np.prod(shape))
        # The chunk as a remap of its own: a field of (column, row) per output sample, on rows
        # of at most 4096 (each output reads its own field entry only: the whole call's
        # arithmetic; the padding repeats the first sample, inside the chunk's box, and is
        # dropped).
        fw = min(n, 4096)
        fh = -(-n // fw)
        field = np.empty((fh * fw, 2), np.float32)
        field[:n, 0] = coords[1].reshape(n)
        field[:n, 1] = coords[0].reshape(n)
        field[n:] = field[0]
        out = np.empty((fh, fw) + tail, self.dtype)
        src = None if block is None else np.ascontiguousarray(block, self.dtype)
        h, w = self.src_shape
        _upres.warp_box(src, in_box, w, h, out, (0, 0, fw, fh), fw, fh, "remap", [],
                        field.reshape(fh, fw, 2), _upres.warp_options(self.options),
                        self.threads, self.backend)
        return out.reshape((fh * fw,) + tail)[:n].reshape(shape + tail)


def map_coordinates(input: Any, coordinates: Any, order: int = 3, mode: str = "constant",
                    cval: float = 0.0, prefilter: Union[bool, str] = True, *,
                    interp: Optional[str] = None, threads: int = 1,
                    backend: str = "cpu") -> Any:
    """Sample a dask array at coordinates, as upres.map_coordinates (scipy's arguments:
    coordinates (2, ...) of (row, column) positions, a dask or NumPy array; the output has
    their shape after the first axis, plus the input's channels, and their chunks). The
    coordinates' range per chunk is computed first (one pass over them, as dask-image does);
    each chunk's task then holds only the source box that range reads (with the B-spline,
    64 pixels of warm-up at each cut; on the cuda backend the cuda prefilter's units) and its
    coordinates, and its samples equal upres.map_coordinates' on the same backend bit for bit.
    threads: CPU threads per task; backend: 'cpu' or 'cuda' (as affine_transform; the cuda
    kernel's bits for a sample depend on the samples its thread shares, so there the
    coordinates are laid out as the whole call lays them, rows of 4096 unless they are 2-D, and
    cut in tiles on the kernel's 64 x 64 tiles, whatever their chunks).
    """
    op = "upres.dask.map_coordinates"
    backend = _backend(op, backend)
    x = _image(input, op)
    c = coordinates if isinstance(coordinates, da.Array) else \
        da.from_array(np.asarray(coordinates, dtype=np.float64))
    if c.ndim < 2 or c.shape[0] != 2 or math.prod(c.shape[1:]) == 0:
        raise InvalidArgumentError(f"{op}: coordinates of shape {tuple(c.shape)}; expected "
                                   "(2, ...) (row, col) for a 2-D image, not empty")
    c = c.rechunk({0: 2})
    opts, handle = _point_options(op, x, order, interp, mode, cval, prefilter)
    h, w = int(x.shape[0]), int(x.shape[1])
    tail = tuple(int(v) for v in x.shape[2:])
    if backend == "cuda":
        return _map_coordinates_in_layout(x, c, opts, handle, tail, threads, backend)
    nb = tuple(len(ch) for ch in c.chunks[1:])
    lim = _coordinate_ranges(c, op)
    lib = _lib_of(x)
    task_fn = _InLib(_RemapChunk(opts, (h, w), x.dtype, threads, backend), lib)
    meta = _meta(lib, c.ndim - 1 + len(tail), x.dtype)
    blocks: dict[tuple[int, ...], Any] = {}
    for idx in np.ndindex(*nb):
        cb = c.blocks[(0,) + idx]
        b = lim[(slice(None), slice(2 * idx[0], 2 * idx[0] + 2)) + idx[1:]]
        block, in_box = _range_source(x, b, handle, backend)
        task = delayed(task_fn, pure=True)(block, in_box, _pieces(cb), tail)
        blocks[idx] = da.from_delayed(task, shape=tuple(cb.shape[1:]) + tail, dtype=x.dtype,
                                      meta=meta, name="upres-map-coordinates-" +
                                      "-".join(map(str, idx)) + "-" + tokenize(task.key))
    return da.block(_nested(blocks, nb, (), len(tail)))


def _coordinate_ranges(c: Any, op: str) -> np.ndarray[Any, Any]:
    """Per chunk of a (2, ...) dask array of coordinates, the least and the largest row and
    column (as float32, the field's type), in one pass over them: block i1, ..., ik gives
    lim[:, 2 i1 : 2 i1 + 2, i2, ...] = [row | col][min | max]. Error for non-finite ones."""
    def bounds(b: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
        f = _host(b).astype(np.float32).reshape(2, -1)
        r: np.ndarray[Any, Any] = np.stack([f.min(axis=1), f.max(axis=1)], axis=1)
        return r.reshape((2, 2) + (1,) * (b.ndim - 2))

    nb = tuple(len(ch) for ch in c.chunks[1:])
    lim: np.ndarray[Any, Any] = c.map_blocks(
        bounds, dtype=np.float32,
        chunks=((2,), (2,) * nb[0]) + tuple((1,) * n for n in nb[1:])).compute()
    if not np.all(np.isfinite(lim)):
        raise InvalidArgumentError(f"{op}: the coordinates hold NaN or infinite values; they "
                                   "must be finite")
    return lim


def _range_source(x: Any, r: np.ndarray[Any, Any], handle: Any, backend: str) -> Any:
    """The source pixels (as task pieces, None when none are read) and their box for samples
    whose coordinates lie in r = [row | col][min | max]: the source box of the range as a
    2-sample remap field (``upres::warp_source_box``)."""
    (rmin, rmax), (cmin, cmax) = r.tolist()
    field = np.array([[[cmin, rmin], [cmax, rmax]]], np.float32)
    h, w = int(x.shape[0]), int(x.shape[1])
    box = _upres.warp_source_box(w, h, 2, 1, "remap", [], field, handle, (0, 0, 2, 1), backend,
                                 math.prod(int(v) for v in x.shape[2:]))
    bx0, by0, bx1, by1 = box
    return (_pieces(x[by0:by1, bx0:bx1]) if bx1 > bx0 else None), box


class _RemapTile:
    """One tile of map_coordinates on the cuda backend, in the whole call's layout of the
    samples: picklable."""

    def __init__(self, options: dict[str, str], src_shape: tuple[int, int],
                 layout: tuple[int, int], dtype: Any, threads: int, backend: str) -> None:
        self.options, self.src_shape, self.layout = options, src_shape, layout
        self.dtype, self.threads, self.backend = np.dtype(dtype), threads, backend

    def __call__(self, block: Any, in_box: tuple[int, int, int, int], coords: Any,
                 out_box: tuple[int, int, int, int], tail: tuple[int, ...]) -> Any:
        block, coords = _joined(block), _joined(coords)
        th, tw = coords.shape[1:]
        field = np.empty((th, tw, 2), np.float32)
        field[..., 0] = coords[1]
        field[..., 1] = coords[0]
        out = np.empty((th, tw) + tail, self.dtype)
        src = None if block is None else np.ascontiguousarray(block, self.dtype)
        (h, w), (lh, lw) = self.src_shape, self.layout
        _upres.warp_box(src, in_box, w, h, out, out_box, lw, lh, "remap", [], field,
                        _upres.warp_options(self.options), self.threads, self.backend)
        return out


def _map_coordinates_in_layout(x: Any, c: Any, opts: dict[str, str], handle: Any,
                               tail: tuple[int, ...], threads: int, backend: str,
                               tile: tuple[int, int] = (1024, 1024)) -> Any:
    """map_coordinates as the cuda backend needs it: the samples laid out as the whole call
    lays them (the coordinates' own 2-D shape, else rows of 4096 padded with (0, 0)), in tiles
    on the kernels' 64 x 64 tiles (each output's bits depend on its kernel thread's group of
    samples, so a tile holds the whole call's groups), each from the source box of its samples'
    range. (The cpu backend, whose samples are each their own, runs it in the tests.)"""
    out_shape = tuple(int(v) for v in c.shape[1:])
    n = math.prod(out_shape)
    if len(out_shape) == 2 and max(out_shape) <= 65536:
        lh, lw = out_shape
        grid = c
    else:
        lw = min(n, 4096)
        lh = -(-n // lw)
        flat = c.reshape(2, n)
        if lh * lw > n:
            flat = da.concatenate([flat, da.zeros((2, lh * lw - n), dtype=flat.dtype)], axis=1)
        grid = flat.reshape(2, lh, lw)
    # Tiles of 1024 x 1024 samples (the tests cut smaller ones; multiples of 64).
    ty, tx = min(lh, tile[0]), min(lw, tile[1])
    grid = grid.rechunk((2, ty, tx))

    nby, nbx = len(grid.chunks[1]), len(grid.chunks[2])
    lim = _coordinate_ranges(grid, "upres.dask.map_coordinates")
    h, w = int(x.shape[0]), int(x.shape[1])
    lib = _lib_of(x)
    fn = _InLib(_RemapTile(opts, (h, w), (lh, lw), x.dtype, threads, backend), lib)
    meta = _meta(lib, 2 + len(tail), x.dtype)
    ys = [0] + list(np.cumsum(grid.chunks[1]))
    xs = [0] + list(np.cumsum(grid.chunks[2]))
    rows = []
    for i in range(nby):
        row = []
        for j in range(nbx):
            block, in_box = _range_source(x, lim[:, 2 * i:2 * i + 2, j], handle, backend)
            box = (int(xs[j]), int(ys[i]), int(xs[j + 1]), int(ys[i + 1]))
            task = delayed(fn, pure=True)(block, in_box, _pieces(grid.blocks[0, i, j]), box,
                                          tail)
            row.append(da.from_delayed(task, shape=(box[3] - box[1], box[2] - box[0]) + tail,
                                       dtype=x.dtype, meta=meta,
                                       name=f"upres-map-coordinates-cuda-{i}-{j}-" +
                                       tokenize(task.key)))
        rows.append(row)
    out = da.block([[[t] for t in r] for r in rows]) if tail else da.block(rows)
    if (lh, lw) == out_shape:
        return out
    return out.reshape((lh * lw,) + tail)[:n].reshape(out_shape + tail)


def _nested(blocks: dict[tuple[int, ...], Any], nb: tuple[int, ...], idx: tuple[int, ...],
            extra: int) -> Any:
    """da.block's nested lists of the blocks (nb per axis) under index prefix idx, with `extra`
    trailing axes of one block each."""
    if len(idx) == len(nb):
        out: Any = blocks[idx]
        for _ in range(extra):
            out = [out]
        return out
    return [_nested(blocks, nb, idx + (i,), extra) for i in range(nb[len(idx)])]


class _FilterBand:
    def __init__(self, options: dict[str, str], height: int, threads: int) -> None:
        self.options, self.height, self.threads = options, height, threads

    def __call__(self, block: Any, first: int, y0: int, y1: int) -> np.ndarray[Any, Any]:
        block = _joined(block)
        if block.dtype not in _NATIVE:
            block = block.astype(np.float32)
        out = np.empty((y1 - y0,) + block.shape[1:], np.float32)
        _upres.spline_filter_band(np.ascontiguousarray(block), first, self.height, out, y0,
                                  self.options, self.threads)
        return out


def _filter(op: str, input: Any, axes: str, output: Any, mode: str, prefilter: Union[bool, str],
            chunk_rows: Optional[int], threads: int) -> Any:
    x = _as_dask(input, op)
    if mode not in _PREFILTER_MODES or _PREFILTER_MODES[mode] == "wrap":
        allowed = [m for m, b in _PREFILTER_MODES.items() if b != "wrap"]
        raise InvalidArgumentError(f"{op}: mode '{mode}' (allowed: " + ", ".join(allowed) +
                                   "; 'grid-wrap' couples the first and the last rows)")
    fir = "iir" if prefilter is True else prefilter
    if not isinstance(fir, str):
        raise InvalidArgumentError(f"{op}: prefilter must be 'iir', 'fir' or 'firK'")
    opts = {"border": _PREFILTER_MODES[mode], "axes": axes,
            "fir_length": "0" if fir == "iir" else str(_fir_length(fir))}
    h, w = int(x.shape[0]), int(x.shape[1])
    c = int(x.shape[2]) if x.ndim == 3 else 1
    edges = _band_edges(h, h, w * c * 4, chunk_rows, op)
    coef = _assemble(x, w, h, np.float32, edges,
                     lambda y0, y1: _upres.spline_filter_source_rows(w, h, opts, y0, y1),
                     _FilterBand(opts, h, threads), "upres-spline-filter")
    dt = np.dtype(output)
    return coef if dt == np.float32 else coef.astype(dt)


def spline_filter(input: Any, order: int = 3, output: Any = np.float64, mode: str = "mirror", *,
                  channel_axis: Optional[int] = None, prefilter: Union[bool, str] = "iir",
                  chunk_rows: Optional[int] = None, threads: int = 1) -> Any:
    """Cubic B-spline coefficients of a dask array, as upres.spline_filter (order 3), band by
    band of rows: the float32 coefficients equal upres.spline_filter's (cpu backend, output
    float32) bit for bit; output: the returned dtype (default float64, scipy's). (H, W, C)
    needs channel_axis=-1 (each channel's plane alone). chunk_rows, threads: as zoom.
    """
    op = "upres.dask.spline_filter"
    if order != 3:
        raise InvalidArgumentError(f"{op}: spline order {order} (allowed: 3)")
    if len(getattr(input, "shape", ())) == 3 and channel_axis not in (-1, 2):
        raise InvalidArgumentError(f"{op}: an (H, W, C) input needs channel_axis=-1 (each "
                                   "channel's plane filtered alone)")
    return _filter(op, input, "both", output, mode, prefilter, chunk_rows, threads)


def spline_filter1d(input: Any, order: int = 3, axis: int = -1, output: Any = np.float64,
                    mode: str = "mirror", *, prefilter: Union[bool, str] = "iir",
                    chunk_rows: Optional[int] = None, threads: int = 1) -> Any:
    """The B-spline prefilter along one axis (0: rows, down the columns; 1 / -1: columns) of a
    2-D dask array, as upres.spline_filter1d, band by band of rows (bit for bit its float32
    result). chunk_rows, threads: as zoom.
    """
    op = "upres.dask.spline_filter1d"
    if order != 3:
        raise InvalidArgumentError(f"{op}: spline order {order} (allowed: 3)")
    if len(getattr(input, "shape", ())) != 2 or int(axis) not in (0, 1, -1):
        raise InvalidArgumentError(f"{op}: a 2-D input and axis 0, 1 or -1")
    axes = "x" if int(axis) % 2 == 1 else "y"
    return _filter(op, input, axes, output, mode, prefilter, chunk_rows, threads)


class _ReadRows:
    def __init__(self, path: str, width: int, channels: int, dtype: Any) -> None:
        self.path, self.width, self.channels, self.dtype = path, width, channels, np.dtype(dtype)

    def __call__(self, y0: int, y1: int) -> np.ndarray[Any, Any]:
        shape = (y1 - y0, self.width) + ((self.channels,) if self.channels > 1 else ())
        out = np.empty(shape, self.dtype)
        _upres.tiff_read_rows(self.path, y0, out)
        return out


def imread_tiff(path: Union[str, "os.PathLike[str]"], chunk_rows: int = 1024) -> Any:
    """A TIFF or BigTIFF of any size (stripped or tiled; u8, u16 or f32; 1-4 channels) as a
    dask array of bands of chunk_rows full rows; each task opens the file by its path and
    decodes only the strips or tiles its rows need."""
    p = os.fspath(path)
    w, h, c, t = _upres.tiff_info(p)
    if int(chunk_rows) < 1:
        raise InvalidArgumentError(f"upres.dask.imread_tiff: chunk_rows {chunk_rows} must be at "
                                   "least 1")
    dtype = {"u8": np.uint8, "u16": np.uint16, "f32": np.float32}[t]
    read = _ReadRows(os.path.abspath(p), w, c, dtype)
    tail = (c,) if c > 1 else ()
    # The chunks are the read tasks themselves (not from_delayed aliases, which Dask's graph
    # optimisation copied into every slice that reads them: a rotation's 64 tiles of an 8192^2
    # TIFF decoded its 16 bands 242 times).
    name = "upres-imread-" + tokenize(read.__dict__, int(chunk_rows), os.stat(p).st_mtime_ns)
    edges = list(range(0, h, int(chunk_rows))) + [h]
    index = (0,) * (1 + len(tail))
    dsk = {(name, i) + index: (read, y0, y1)
           for i, (y0, y1) in enumerate(zip(edges[:-1], edges[1:]))}
    chunks = (tuple(b - a for a, b in zip(edges[:-1], edges[1:])), (w,)) + tuple((v,) for v in tail)
    return da.Array(dsk, name, chunks, dtype=dtype,
                    meta=np.empty((0,) * (2 + len(tail)), dtype))


def local_gpu_cluster(devices: Union[str, Sequence[int]] = "all", *, threads_per_worker: int = 1,
                      memory_limit: Union[str, int] = "auto",
                      dashboard_address: Optional[str] = ":0") -> Any:
    """A ``distributed`` cluster on this host with one worker process per GPU (as dask-cuda's
    LocalCUDACluster): worker i sees only GPU devices[i] (CUDA_VISIBLE_DEVICES, mapped through
    the caller's own), so the tasks of ``zoom(..., backend='cuda')`` it runs use that GPU.

    devices: 'all' or the indices of the GPUs (as the caller sees them); threads_per_worker:
    tasks run at once on each GPU; memory_limit, dashboard_address: as LocalCluster's. Use it
    as ``distributed.Client(local_gpu_cluster())``; close the client and the cluster when done.
    """
    import distributed

    op = "upres.dask.local_gpu_cluster"
    n = int(_upres.cuda_device_count())
    if n == 0:
        raise BackendUnavailableError(f"{op}: no CUDA device (build with CUDA: "
                                      f"{_upres.build_info()['cuda']})")
    if isinstance(devices, str):
        if devices != "all":
            raise InvalidArgumentError(f"{op}: devices {devices!r} (allowed: 'all' or a list of "
                                       "indices)")
        devs = list(range(n))
    else:
        devs = [int(d) for d in devices]
    if not devs or len(set(devs)) != len(devs) or not all(0 <= d < n for d in devs):
        raise InvalidArgumentError(f"{op}: devices {list(devs)}: distinct indices in [0, {n}) "
                                   f"({n} device(s) here)")
    if int(threads_per_worker) < 1:
        raise InvalidArgumentError(f"{op}: threads_per_worker {threads_per_worker} must be at "
                                   "least 1")
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    ids = [v.strip() for v in visible.split(",")] if visible else [str(d) for d in range(n)]
    workers = {
        f"upres-gpu-{d}": {"cls": distributed.Nanny,
                           "options": {"nthreads": int(threads_per_worker),
                                       "memory_limit": memory_limit,
                                       "silence_logs": logging.WARN,
                                       "env": {"CUDA_VISIBLE_DEVICES": ids[d]}}}
        for d in devs}
    scheduler = {"cls": distributed.Scheduler,
                 "options": {"dashboard_address": dashboard_address}}
    return distributed.SpecCluster(workers=workers, scheduler=scheduler,
                                   silence_logs=logging.WARN)
