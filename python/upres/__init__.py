"""upres: fast, exact image resampling, super-resolution and stereo on GPUs and CPUs.

scipy.ndimage's resampling functions with the same signatures and numbers (``upres.zoom``,
``rotate``, ``shift``, ``affine_transform``, ``map_coordinates``, ``spline_filter``,
``spline_filter1d``), and every other upres operation (``upscale``, ``srcnn``, ``seabi``,
``fuse``, ``stereo.disparity``, ``psnr``, ``ssim``, ``brisque``, ``rgb_to_ycbcr``,
``ycbcr_to_rgb``, ``imread``, ``imwrite``) as one call on NumPy arrays (CPU backends), CuPy
arrays and PyTorch tensors (CUDA on the caller's stream, no host round trip). Results come
back in the caller's array type. docs/python.md has the API table against scipy.ndimage.

    >>> import numpy as np, upres
    >>> img = np.random.default_rng(0).random((480, 640), dtype=np.float32)
    >>> upres.rotate(img, 30, reshape=False, mode="mirror").shape
    (480, 640)
"""

from __future__ import annotations

import os as _os

# The bundled models (SRCNN weights, the BRISQUE SVR) of an installed wheel, unless the user
# points elsewhere with UPRES_MODEL_DIR.
_models = _os.path.join(_os.path.dirname(__file__), "models")
if _os.path.isdir(_models) and not _os.environ.get("UPRES_MODEL_DIR"):
    _os.environ["UPRES_MODEL_DIR"] = _models

from . import _upres  # noqa: E402
from . import stereo  # noqa: E402
from ._errors import (BackendUnavailableError, CorruptDataError, CudaError,  # noqa: E402
                      Error, FileError, InternalError, InvalidArgumentError, OutOfMemoryError,
                      UnsupportedFormatError)
from ._ops import (brisque, brisque_features, fuse, fuse_tiff, imread, imwrite, psnr,  # noqa: E402
                   rgb_to_ycbcr, seabi, srcnn, ssim, upscale, upscale_tiff, ycbcr_to_rgb, zoom_tiff)
from .ndimage import (affine_transform, map_coordinates, rotate, shift,  # noqa: E402
                      spline_filter, spline_filter1d, spline_filter_tiff, zoom)

__version__: str = str(_upres.build_info()["version"])


def option_table(op: str) -> list[dict[str, object]]:
    """The options of operation `op` ('upscale', 'fuse', 'stereo', 'warp', 'prefilter',
    'compare', 'quality', ...), as the command line's ``upres info --options`` lists them:
    dicts with name (the keyword: '-' as '_'), kind, values, default, min, max, doc.

    Example::

        >>> import upres
        >>> [o["name"] for o in upres.option_table("fuse")][:3]
        ['scale', 'reference', 'patch']
    """
    tables = _upres.option_tables()
    if op not in tables:
        raise InvalidArgumentError(f"unknown operation '{op}' (allowed: "
                                   + ", ".join(tables) + ")")
    keys = ("name", "kind", "values", "default", "min", "max", "doc")
    out = []
    for row in tables[op]:
        d = dict(zip(keys, row))
        d["name"] = str(d["name"]).replace("-", "_")
        out.append(d)
    return out


def cuda_available() -> bool:
    """True when upres was built with CUDA and a CUDA device is present."""
    return bool(_upres.cuda_available())


def build_info() -> dict[str, object]:
    """Version, CUDA build (architectures, runtime), OpenMP and compiler of this build."""
    return dict(_upres.build_info())


__all__ = [
    "Error", "InvalidArgumentError", "UnsupportedFormatError", "FileError", "CorruptDataError",
    "OutOfMemoryError", "BackendUnavailableError", "CudaError", "InternalError",
    "zoom", "rotate", "shift", "affine_transform", "map_coordinates", "spline_filter",
    "spline_filter1d", "upscale", "srcnn", "seabi", "fuse", "stereo", "psnr", "ssim", "brisque",
    "brisque_features", "rgb_to_ycbcr", "ycbcr_to_rgb", "imread", "imwrite", "zoom_tiff", "upscale_tiff", "fuse_tiff",
    "spline_filter_tiff", "option_table",
    "cuda_available", "build_info",
]
