"""upscale, srcnn, seabi, fuse, metrics, BRISQUE, colour conversion and image files.

Option keywords are the command line's flags with '_' for '-' (``max_error=`` is
``--max-error``); names, allowed values and ranges come from the same option tables
(upres.option_table(op) lists them), so an unknown keyword or value raises the same
message as the command line.
"""

from __future__ import annotations

import math
import os
from typing import Any, Optional, Sequence, Union

import numpy as np

from . import _arrays as A
from . import _upres
from ._errors import InvalidArgumentError


def _run_upscale(image: Any, options: dict[str, Any], output: Any, backend: str, threads: int,
                 stream: Any, op: str) -> Any:
    a = A.as_array(image, "image")
    p = A.place_of(a)
    A.check_backend(backend, p, op)
    dt = A.check_dtype(a, "image")
    opts = A.options_text(options)
    if len(a.shape) not in (2, 3):
        raise InvalidArgumentError(f"{op}: {len(a.shape)}-D image; (H, W) or (H, W, C) expected")
    h, w = _upscale_shape(a, opts)
    shape = (h, w) + tuple(a.shape[2:])
    ret, work = A.output_array(output, p, shape, dt)
    kdt = A.np_dtype(work)
    src = A.native(a, "image", kdt if A.np_dtype(a) != kdt else None)
    _upres.upscale(A.arg(src), A.arg(work), opts, backend, threads,
                   A.stream_handle(p, stream, src))
    return A.finish(ret, work)


def _upscale_shape(a: Any, opts: dict[str, str]) -> tuple[int, int]:
    h, w = _upres.upscale_shape(int(a.shape[1]), int(a.shape[0]), opts)
    return int(h), int(w)


def upscale(image: Any, scale: float = 2.0, method: str = "auto", *, output: Any = None,
            backend: str = "auto", threads: int = 0, stream: Any = None,
            **options: Any) -> Any:
    """Super-resolve or interpolate an image by `scale` (1..16), as ``upres upscale``.

    Parameters: image (H, W) or (H, W, C) (C 1, 3 or 4; SEABI methods and tap4 / tap6 take
    uint8); scale; method: 'auto' (SRCNN where a bundled model exists, else bicubic),
    'srcnn', 'lseai', 'silseabi', 'lseabi', 'tap4', 'tap6', 'bilinear', 'bicubic', 'nlm'
    (single-image non-local-means SR, scale 2, 3, 4; host arrays), 'bspline' (exact cubic
    B-spline, as warp --zoom); options:
    lattice, iterations, max_error, model, precision, variant (upres.option_table('upscale')).
    The output has the input's dtype and library; shape round(scale n) (co-sited) or
    ceil(scale n) (centre-aligned).

    Example::

        >>> import numpy as np, upres
        >>> img = (np.random.default_rng(1).random((32, 40)) * 255).astype(np.uint8)
        >>> upres.upscale(img, 2, "bicubic").shape
        (64, 80)
    """
    return _run_upscale(image, dict(options, scale=scale, method=method), output, backend,
                        threads, stream, "upscale")


def srcnn(image: Any, scale: int = 2, *, model: Optional[str] = None, precision: str = "fp32",
          variant: str = "auto", output: Any = None, backend: str = "auto", threads: int = 0,
          stream: Any = None) -> Any:
    """SRCNN super-resolution (paper 004): upscale(image, scale, 'srcnn', ...).

    Parameters: scale: a factor with a bundled model (2, 3, 4) or the model file's; model: a
    .srcnn weights file; precision: 'fp32', 'tf32', 'fp16', 'bf16', 'fastest' (CUDA);
    variant: the CUDA kernels ('auto', 'fused', 'cudnn', ...).

    Example::

        >>> import numpy as np, upres
        >>> img = (np.random.default_rng(2).random((24, 24, 3)) * 255).astype(np.uint8)
        >>> upres.srcnn(img, 2).shape
        (48, 48, 3)
    """
    return _run_upscale(image, {"scale": scale, "method": "srcnn", "model": model,
                                "precision": precision, "variant": variant}, output, backend,
                        threads, stream, "srcnn")


def seabi(image: Any, method: str = "silseabi", scale: int = 2, *, iterations: int = 4,
          max_error: float = 0.25, lattice: str = "centered", output: Any = None,
          backend: str = "auto", threads: int = 0, stream: Any = None) -> Any:
    """Edge-adaptive super-resolution of paper 002 (L-SEAI, SIL-SEABI, L-SEABI) on uint8 images.

    Parameters: method: 'lseai', 'silseabi' (default), 'lseabi'; scale: 2, 4, 8 (cascaded
    x2; other factors add a B-spline resize); iterations, max_error: L-SEABI's
    back-projection; lattice: 'centered' (default: output pixel centres as scipy / OpenCV /
    MATLAB resizers put them, right for real images) or 'cosited' (the paper's lattice). Colour
    images go through YCbCr (Y by the method, Cb / Cr bicubic).

    Example::

        >>> import numpy as np, upres
        >>> img = (np.random.default_rng(3).random((20, 30)) * 255).astype(np.uint8)
        >>> upres.seabi(img).shape
        (40, 60)
    """
    if method not in ("lseai", "silseabi", "lseabi"):
        raise InvalidArgumentError(f"seabi: unknown method '{method}' (allowed: lseai, silseabi, "
                                   "lseabi)")
    return _run_upscale(image, {"scale": scale, "method": method, "iterations": iterations,
                                "max_error": max_error, "lattice": lattice}, output, backend,
                        threads, stream, "seabi")


def fuse(frames: Sequence[Any], scale: int = 2, *, output: Any = None, backend: str = "auto",
         threads: int = 0, stream: Any = None, **options: Any) -> Any:
    """Multi-frame non-local-means super-resolution (paper 003), as ``upres fuse``.

    Parameters: frames: a sequence of (H, W) or (H, W, C) arrays of one shape and dtype, all in
    host memory or all on the device (CuPy, PyTorch: the whole call runs there), or one
    (N, H, W[, C]) array; scale: 2, 3 or 4; options: reference, patch, search, sigma, noise
    (the reference frame's noise the weight scales derive from; -1: estimated), iterations, post ('backproject', 'reconstruct': frames from a camera, 'none'),
    back_projections, psf_sigma, reconstructions, model, variant (upres.option_table('fuse')).
    Returns the fused reference frame, scale H x scale W, in the frames' dtype.

    Example::

        >>> import numpy as np, upres
        >>> rng = np.random.default_rng(4)
        >>> frames = [(rng.random((24, 24)) * 255).astype(np.uint8) for _ in range(3)]
        >>> upres.fuse(frames).shape
        (48, 48)
    """
    if hasattr(frames, "shape") and len(frames.shape) in (3, 4):
        frames = [frames[i] for i in range(frames.shape[0])]
    fr = [A.as_array(f, f"frame {i}") for i, f in enumerate(frames)]
    if not fr:
        raise InvalidArgumentError("fuse: no frames")
    p = A.same_place(fr, [f"frame {i}" for i in range(len(fr))])
    A.check_backend(backend, p, "fuse")
    dt = A.check_dtype(fr[0], "frame 0")
    for i, f in enumerate(fr):
        if tuple(f.shape) != tuple(fr[0].shape) or A.np_dtype(f) != A.np_dtype(fr[0]):
            raise InvalidArgumentError(f"fuse: frame {i} is {tuple(f.shape)} {A.np_dtype(f)} but "
                                       f"frame 0 is {tuple(fr[0].shape)} {A.np_dtype(fr[0])}")
    s = int(scale)
    shape = (s * fr[0].shape[0], s * fr[0].shape[1]) + tuple(fr[0].shape[2:])
    ret, work = A.output_array(output, p, shape, dt)
    kdt = A.np_dtype(work)
    src = [A.native(f, f"frame {i}", kdt) for i, f in enumerate(fr)]
    _upres.fuse(src, work, A.options_text(dict(options, scale=s)), backend, threads,
                A.stream_handle(p, stream, src[0]))
    return A.finish(ret, work)


def _metric(which: str, a: Any, b: Any, shave: int, y: bool, data_range: float, backend: str,
            threads: int) -> float:
    x = A.as_array(a, "image 1")
    z = A.as_array(b, "image 2")
    p = A.same_place([x, z], ["image 1", "image 2"])
    A.check_backend(backend, p, which)
    dt = A.check_dtype(x, "image 1")
    if A.np_dtype(z) != A.np_dtype(x):
        raise InvalidArgumentError(f"{which}: images of dtypes {A.np_dtype(x)} and "
                                   f"{A.np_dtype(z)} (they must match)")
    kdt = dt if dt in A.NATIVE else np.dtype(np.float32)
    opts = A.options_text({"shave": shave, "y": y, "data_range": data_range})
    xa = A.native(x, "image 1", kdt)
    return float(_upres.metric(which, A.arg(xa), A.arg(A.native(z, "image 2", kdt)), opts,
                               backend, threads,
                               A.stream_handle(p, None, xa)))


def psnr(a: Any, b: Any, *, shave: int = 0, y: bool = True, data_range: float = 0.0,
         backend: str = "auto", threads: int = 0) -> float:
    """PSNR in dB of two images of one shape and dtype, as ``upres compare``.

    Parameters: shave: pixels removed from every border; y: colour images compared on luma Y
    (BT.601, the super-resolution papers' protocol; False: all channels); data_range: the peak
    (0: 255 for uint8 and Y, 65535 for uint16, 1.0 for float).

    Example::

        >>> import numpy as np, upres
        >>> a = np.zeros((8, 8), np.uint8); b = a.copy(); b[0, 0] = 255
        >>> round(upres.psnr(a, b), 2)
        18.06
    """
    return _metric("psnr", a, b, shave, y, data_range, backend, threads)


def ssim(a: Any, b: Any, *, shave: int = 0, y: bool = True, data_range: float = 0.0,
         backend: str = "auto", threads: int = 0) -> float:
    """Mean SSIM (Wang et al. 2004, Gaussian window 11, sigma 1.5) of two images, as
    ``upres compare``.

    Parameters: shave, y, data_range as in psnr.

    Example::

        >>> import numpy as np, upres
        >>> a = (np.random.default_rng(5).random((32, 32)) * 255).astype(np.uint8)
        >>> upres.ssim(a, a)
        1.0
    """
    return _metric("ssim", a, b, shave, y, data_range, backend, threads)


def _host_image(image: Any, op: str, backend: str) -> Any:
    a = A.as_array(image, "image")
    p = A.place_of(a)
    A.check_backend(backend, p, op)
    return A.native(a, "image", None if A.check_dtype(a, "image") in A.NATIVE else np.float32)


def brisque(image: Any, *, model_dir: Optional[str] = None, backend: str = "auto",
            threads: int = 0) -> float:
    """BRISQUE no-reference quality score (Mittal et al. 2012; lower is better), as
    ``upres quality``. Host memory (reference and cpu backends).

    Parameters: model_dir: folder of brisque_svm.txt and brisque_range.txt (default: the
    bundled LIVE model).

    Example::

        >>> import upres
        >>> score = upres.brisque(upres.imread("examples/data/butterfly.png"))  # doctest: +SKIP
    """
    a = _host_image(image, "brisque", backend)
    return float(_upres.brisque(a, A.options_text({"model_dir": model_dir}), backend, threads))


def brisque_features(image: Any, *, backend: str = "auto", threads: int = 0) -> np.ndarray[Any, Any]:
    """The 36 BRISQUE features (two scales of 18) of an image, as a float64 array.

    Parameters: image (H, W) gray or (H, W, 3) RGB, uint8 / uint16 / float32, host memory.

    Example::

        >>> import numpy as np, upres
        >>> img = (np.random.default_rng(8).random((64, 64)) * 255).astype(np.uint8)
        >>> upres.brisque_features(img).shape
        (36,)
    """
    a = _host_image(image, "brisque_features", backend)
    return np.asarray(_upres.brisque_features(a, backend, threads), dtype=np.float64)


def rgb_to_ycbcr(rgb: Any, *, output: Any = None, backend: str = "auto", threads: int = 0,
                 stream: Any = None) -> Any:
    """BT.601 studio-swing YCbCr (Y in [16, 235]) of an RGB or RGBA image, float32 out.

    Parameters: rgb (H, W, 3 or 4) uint8 / uint16 / float32 ([0, 1]); output: None, a dtype
    or an array; backend, threads, stream.

    Example::

        >>> import numpy as np, upres
        >>> float(upres.rgb_to_ycbcr(np.full((1, 1, 3), 255, np.uint8))[0, 0, 0])
        235.0
    """
    a = A.as_array(rgb, "rgb")
    p = A.place_of(a)
    A.check_backend(backend, p, "rgb_to_ycbcr")
    dt = A.check_dtype(a, "rgb")
    src = A.native(a, "rgb", None if dt in A.NATIVE else np.float32)
    ret, work = A.output_array(output, p, a.shape, np.float32)
    if A.np_dtype(work) != np.float32:
        work = A.empty(p, a.shape, np.float32)
    _upres.color("rgb_to_ycbcr", A.arg(src), A.arg(work), backend, threads,
                 A.stream_handle(p, stream, src))
    return A.finish(ret, work)


def ycbcr_to_rgb(ycbcr: Any, dtype: Any = np.uint8, *, output: Any = None,
                 backend: str = "auto", threads: int = 0, stream: Any = None) -> Any:
    """RGB of a BT.601 YCbCr image (the inverse of rgb_to_ycbcr), in `dtype` (uint8,
    uint16: full range; float32: [0, 1]).

    Parameters: ycbcr (H, W, 3 or 4) float; dtype: of the result; output: None or an array;
    backend, threads, stream.

    Example::

        >>> import numpy as np, upres
        >>> upres.ycbcr_to_rgb(np.array([[[235, 128, 128]]], np.float32))[0, 0].tolist()
        [255, 255, 255]
    """
    a = A.as_array(ycbcr, "ycbcr")
    p = A.place_of(a)
    A.check_backend(backend, p, "ycbcr_to_rgb")
    A.check_dtype(a, "ycbcr")
    src = A.native(a, "ycbcr", np.float32)
    ret, work = A.output_array(output, p, a.shape, dtype)
    _upres.color("ycbcr_to_rgb", A.arg(src), A.arg(work), backend, threads,
                 A.stream_handle(p, stream, src))
    return A.finish(ret, work)


def imread(path: Union[str, os.PathLike[str]], *, format: str = "auto") -> np.ndarray[Any, Any]:
    """Read an image file (PNG, JPEG, TIFF, PFM, PGM/PPM, NPY) into a NumPy array (H, W) or
    (H, W, C) of the file's depth (uint8, uint16 or float32), without scaling.

    Example::

        >>> import upres
        >>> img = upres.imread("examples/data/butterfly.png")  # doctest: +SKIP
    """
    return _upres.imread(os.fspath(path), format)  # type: ignore[no-any-return]


def imwrite(path: Union[str, os.PathLike[str]], image: Any, *, format: str = "auto",
            quality: int = 95, compression: int = 6) -> None:
    """Write an image file; the format from the extension (or format=). The file appears
    whole or not at all (written to a temporary and renamed). quality: JPEG 1..100;
    compression: PNG zlib level 0..9.

    Example::

        >>> import numpy as np, upres
        >>> upres.imwrite("/tmp/upres_doc.png", np.zeros((4, 4), np.uint8))
    """
    a = A.as_array(image, "image")
    if A.place_of(a).device:
        raise InvalidArgumentError(f"imwrite: the image is {A.place_of(a).describe()}; write "
                                   "host arrays (cupy.asnumpy / tensor.cpu())")
    dt = A.check_dtype(a, "image")
    if dt not in A.NATIVE:
        raise InvalidArgumentError(f"imwrite: dtype {dt}; files hold uint8, uint16 or float32")
    _upres.imwrite(os.fspath(path), A.native(a, "image"),
                   A.options_text({"format": format, "quality": quality,
                                   "compression": compression}))


def upscale_tiff(input: Union[str, os.PathLike[str]], output: Union[str, os.PathLike[str]],
                 scale: int = 2, method: str = "auto", *, model: Optional[str] = None,
                 band_rows: int = 0, max_memory_mib: float = 0.0, tile: int = 0,
                 deflate: bool = False, threads: int = 0, backend: str = "cpu",
                 devices: Sequence[int] = (), precision: Optional[str] = None,
                 variant: Optional[str] = None) -> dict[str, float]:
    """Upscale a TIFF or BigTIFF of any size into a tiled TIFF, tile by tile in bounded memory
    (``upres upscale IN OUT --tiled``, docs/scale.md, "Upscaling in tiles").

    Parameters: input, output: file paths; scale: an integer in [1, 16] (srcnn: a factor with
    a model); method: 'auto' (srcnn where a bundled model exists, else bicubic), 'srcnn',
    'bicubic', 'bilinear', 'bspline' (the SEABI family streams instead: ``upres upscale
    --stream``); model: an SRCNN weights file; band_rows, max_memory_mib (0: automatic), tile
    (the output's tile side; 0: 256, less for a smaller output), deflate, threads; backend
    'cpu' or 'cuda' (the tiles on the GPU) and devices, the GPUs to spread the bands over
    (cuda; empty: the current one); precision, variant: srcnn's kernels on cuda (as
    ``upres.upscale``; auto and fastest: the first tile's tuned choice serves every tile). The
    pixels equal ``upres.upscale``'s on the whole image on the same backend (srcnn on cuda: with
    the same kernels). The GIL is released. Returns
    the run's figures (bands, band_rows, rows_read, buffer_bytes, bigtiff). An interrupted call
    leaves no output; the command (``--tiled``) resumes, this function starts over.

    Example::

        >>> import numpy as np, upres
        >>> try:  # (a build without libtiff refuses TIFF files: UnsupportedFormatError)
        ...     upres.imwrite("/tmp/upres_doc_up.tif", np.full((20, 24), 9, np.uint8))
        ...     upres.upscale_tiff("/tmp/upres_doc_up.tif", "/tmp/upres_doc_up2.tif", 2)["bands"]
        ... except upres.UnsupportedFormatError:
        ...     1.0
        1.0
    """
    opts: dict[str, Any] = {"scale": scale, "method": method}
    if model is not None:
        opts["model"] = os.fspath(model)
    if precision is not None:
        opts["precision"] = precision
    if variant is not None:
        opts["variant"] = variant
    return _upres.upscale_tiff(os.fspath(input), os.fspath(output), A.options_text(opts),
                               int(band_rows), float(max_memory_mib), int(tile), bool(deflate),
                               int(threads), str(backend), [int(d) for d in devices])


def fuse_tiff(inputs: Sequence[Union[str, os.PathLike[str]]], output: Union[str, os.PathLike[str]],
              scale: int = 2, *, band_rows: int = 0, max_memory_mib: float = 0.0, tile: int = 0,
              deflate: bool = False, threads: int = 0, backend: str = "cpu",
              devices: Sequence[int] = (), **options: Any) -> dict[str, float]:
    """Fuse TIFF or BigTIFF frames of any size into a tiled TIFF, band by band in bounded memory
    (``upres fuse F1.tif ... OUT.tif --tiled``, docs/scale.md, "NLM-SR in bands").

    Parameters: inputs: the frames' paths (1 to 64, one size, 1 or 3 channels, one dtype);
    output: the path; scale: 2, 3 or 4; options: as upres.fuse (reference, patch, search,
    sigma, noise, iterations, post, ...); band_rows (output rows per band), max_memory_mib (0:
    automatic), tile (the output's tile side; 0: 256, less for a smaller output), deflate,
    threads; backend 'cpu' or 'cuda' (the bands on the GPU) and devices, the GPUs to spread them
    over (cuda; empty: the current one). The pixels equal ``upres.fuse``'s on the whole frames
    on the same backend (and cuda variant). The GIL is released. Returns the run's figures (bands, band_rows, rows_read, buffer_bytes, bigtiff). An
    interrupted call leaves no output; the command (``--tiled``) resumes, this function starts
    over.

    Example::

        >>> import numpy as np, upres
        >>> rng = np.random.default_rng(5)
        >>> paths = [f"/tmp/upres_doc_f{i}.tif" for i in range(3)]
        >>> try:  # (a build without libtiff refuses TIFF files: UnsupportedFormatError)
        ...     for p in paths:
        ...         upres.imwrite(p, (rng.random((40, 30)) * 255).astype(np.uint8))
        ...     upres.fuse_tiff(paths, "/tmp/upres_doc_fused.tif", 2, band_rows=64)["bands"]
        ... except upres.UnsupportedFormatError:
        ...     2.0
        2.0
    """
    return _upres.fuse_tiff([os.fspath(p) for p in inputs], os.fspath(output),
                            A.options_text(dict(options, scale=int(scale))), int(band_rows),
                            float(max_memory_mib), int(tile), bool(deflate), int(threads),
                            str(backend), [int(d) for d in devices])


def zoom_tiff(input: Union[str, os.PathLike[str]], output: Union[str, os.PathLike[str]],
              zoom: Optional[float] = None, *, size: Optional[tuple[int, int]] = None,
              interp: str = "bspline", border: str = "mirror", fill: float = 0.0,
              prefilter: str = "iir", antialias: bool = False, band_rows: int = 0,
              max_memory_mib: float = 0.0, tile: int = 0, deflate: bool = False,
              threads: int = 0, backend: str = "cpu",
              devices: Sequence[int] = ()) -> dict[str, float]:
    """Zoom a TIFF or BigTIFF of any size into a tiled TIFF, band by band in bounded memory
    (``upres warp IN OUT --zoom F --tiled``, docs/scale.md).

    Parameters: input, output: file paths; zoom: factor (output round(F * size)), or
    size=(width, height); interp, border, fill, prefilter, antialias: as the command's
    options; band_rows, max_memory_mib (0: automatic), tile (output tile side; 0: 256, less
    for a smaller output), deflate, threads; backend 'cpu' or 'cuda' (the bands on the GPU;
    not antialias) and devices, the GPUs to spread them over (cuda; empty: the current one).
    The pixels equal the whole-image warp's on the same backend (``upres warp --zoom``: pixel
    edges aligned, as scipy's grid_mode=True). The GIL is released. Returns the run's figures
    (bands, band_rows, rows_read, buffer_bytes, device_bytes, bigtiff). An interrupted call leaves no output; the command (``--tiled``) resumes, this
    function starts over.

    Example::

        >>> import numpy as np, upres
        >>> try:  # (a build without libtiff refuses TIFF files: UnsupportedFormatError)
        ...     upres.imwrite("/tmp/upres_doc_in.tif", np.ones((8, 12), np.uint16))
        ...     upres.zoom_tiff("/tmp/upres_doc_in.tif", "/tmp/upres_doc_out.tif", 2)["bands"]
        ... except upres.UnsupportedFormatError:
        ...     1.0
        1.0
    """
    src, dst = os.fspath(input), os.fspath(output)
    w, h, _, _ = _upres.tiff_info(src)
    if (zoom is None) == (size is None):
        raise InvalidArgumentError("zoom_tiff: give zoom or size (one of them)")
    if size is not None:
        if len(size) != 2:
            raise InvalidArgumentError(f"zoom_tiff: size {size!r} is not (width, height)")
        ow, oh = int(size[0]), int(size[1])
    else:
        f = float(zoom)  # type: ignore[arg-type]
        if not (f > 0 and math.isfinite(f)):
            raise InvalidArgumentError(f"zoom_tiff: zoom {zoom!r} must be a positive number")
        ow, oh = int(round(w * f)), int(round(h * f))
    opts = _upres.warp_options(A.options_text({
        "interp": interp, "border": border, "fill": fill, "prefilter": prefilter,
        "antialias": antialias}))
    return _upres.zoom_tiff(src, dst, ow, oh, opts, int(band_rows), float(max_memory_mib),
                            int(tile), bool(deflate), int(threads), str(backend),
                            [int(d) for d in devices])
