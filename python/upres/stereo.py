"""Stereo disparity on rectified pairs (paper 002 section 6, and semi-global matching)."""

from __future__ import annotations

import os
from typing import Any, Sequence, Union

import numpy as np

from . import _arrays as A
from . import _upres
from ._errors import InvalidArgumentError


def disparity(left: Any, right: Any, *, disparities: int = 64, min_disparity: int = 0,
              right_map: bool = False, valid_mask: bool = False, output: Any = None,
              backend: str = "auto", threads: int = 0, stream: Any = None,
              **options: Any) -> Union[Any, tuple[Any, ...]]:
    """Left-based disparity map of a rectified pair, as ``upres stereo``.

    Parameters: left, right: (H, W) or (H, W, C) arrays of one shape and dtype (uint8,
    uint16, float32), NumPy (cpu) or CUDA (cuda); disparities: how many are searched;
    min_disparity: the smallest; options: cost ('ad', 'census'), aggregate ('gauss7',
    'gauss13', 'box', 'sgm4', 'sgm8'), box_size, max_cost, lr_check, subpixel (True),
    uniqueness, invalid (NaN), p1, p2, sgm_window, median, speckle_size, speckle_range,
    variant (upres.option_table('stereo')); right_map / valid_mask: also return the
    right-based map and the validity mask (uint8, 255 valid).
    Returns the float32 (H, W) map, or (map, right map[, mask]) / (map, mask).

    Example::

        >>> import numpy as np, upres
        >>> rng = np.random.default_rng(6)
        >>> right = (rng.random((40, 80)) * 255).astype(np.uint8)
        >>> left = np.roll(right, 5, axis=1)
        >>> d = upres.stereo.disparity(left, right, disparities=16, aggregate="box")
        >>> round(float(np.nanmedian(d[:, 20:])), 2)
        5.0
    """
    l_arr = A.as_array(left, "left")
    r_arr = A.as_array(right, "right")
    p = A.same_place([l_arr, r_arr], ["left", "right"])
    A.check_backend(backend, p, "stereo")
    dt = A.check_dtype(l_arr, "left")
    if tuple(l_arr.shape) != tuple(r_arr.shape) or A.np_dtype(r_arr) != dt:
        raise InvalidArgumentError(f"stereo: left is {tuple(l_arr.shape)} {dt} but right is "
                                   f"{tuple(r_arr.shape)} {A.np_dtype(r_arr)} (they must match)")
    kdt = dt if dt in A.NATIVE else np.dtype(np.float32)
    shape = tuple(l_arr.shape[:2])
    ret, work = A.output_array(output, p, shape, np.float32, "output")
    if A.np_dtype(work) != np.float32:
        work = A.empty(p, shape, np.float32)
    rmap = A.empty(p, shape, np.float32) if right_map else None
    mask = A.empty(p, shape, np.uint8) if valid_mask else None
    opts = A.options_text(dict(options, disparities=disparities, min_disparity=min_disparity))
    _upres.stereo(A.arg(A.native(l_arr, "left", kdt)), A.arg(A.native(r_arr, "right", kdt)),
                  A.arg(work), A.arg(rmap), A.arg(mask), opts, backend, threads,
                  A.stream_handle(p, stream, l_arr))
    out = A.finish(ret, work)
    extra = tuple(x for x in (rmap, mask) if x is not None)
    return (out,) + extra if extra else out


def disparity_tiff(left: Union[str, os.PathLike[str]], right: Union[str, os.PathLike[str]],
                   output: Union[str, os.PathLike[str]], *, disparities: int = 64,
                   min_disparity: int = 0, band_rows: int = 0, max_memory_mib: float = 0.0,
                   tile: int = 0, deflate: bool = False, threads: int = 0, backend: str = "cpu",
                   devices: Sequence[int] = (), **options: Any) -> dict[str, float]:
    """Left-based disparity map of a rectified TIFF / BigTIFF pair of any size into a tiled
    float TIFF, band by band in bounded memory (``upres stereo L R OUT --tiled``, docs/scale.md,
    "Stereo in bands").

    Parameters: left, right, output: file paths; disparities, min_disparity and options as
    ``disparity`` (the window matcher: aggregate 'gauss7', 'gauss13' or 'box'; not the
    semi-global paths or speckle removal); band_rows, max_memory_mib (0: automatic), tile (the
    output's tile side; 0: 256, less for a smaller output), deflate, threads; backend 'cpu' or
    'cuda' (the bands on the GPU) and devices, the GPUs to spread them over (cuda; empty: the
    current one). The map equals ``disparity``'s on the whole pair (either backend). The GIL is
    released. Returns the run's figures (bands, band_rows, rows_read, buffer_bytes, bigtiff). An
    interrupted call leaves no output; the command (``--tiled``) resumes, this function starts
    over.

    Example::

        >>> import numpy as np, upres
        >>> rng = np.random.default_rng(6)
        >>> right = (rng.random((40, 80)) * 255).astype(np.uint8)
        >>> try:  # (a build without libtiff refuses TIFF files: UnsupportedFormatError)
        ...     upres.imwrite("/tmp/upres_doc_l.tif", np.roll(right, 5, axis=1))
        ...     upres.imwrite("/tmp/upres_doc_r.tif", right)
        ...     upres.stereo.disparity_tiff("/tmp/upres_doc_l.tif", "/tmp/upres_doc_r.tif",
        ...                                 "/tmp/upres_doc_d.tif", disparities=16,
        ...                                 band_rows=16)["bands"]
        ... except upres.UnsupportedFormatError:
        ...     3.0
        3.0
    """
    opts = A.options_text(dict(options, disparities=disparities, min_disparity=min_disparity))
    return _upres.stereo_tiff(os.fspath(left), os.fspath(right), os.fspath(output), opts,
                              int(band_rows), float(max_memory_mib), int(tile), bool(deflate),
                              int(threads), str(backend), [int(d) for d in devices])
