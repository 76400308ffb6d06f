"""upres's exceptions: one class per C++ ErrorCode (include/upres/error.hpp).

Each is an :class:`upres.Error` and also the built-in exception Python code expects for that
kind of failure, so ``except ValueError`` works as it does with scipy::

    try:
        upres.zoom(img, 2, mode="bogus")
    except ValueError as e:          # upres.InvalidArgumentError
        print(e)                     # names the value and what is allowed
"""

from __future__ import annotations

from . import _upres


class Error(Exception):
    """Base class of every error upres raises (the C++ upres::Error)."""

    code: str = ""


class InvalidArgumentError(Error, ValueError):
    """A value, size, type or option the operation does not accept."""

    code = "invalid_argument"


class UnsupportedFormatError(Error, TypeError):
    """A dtype, file format, pixel depth or channel layout upres does not handle."""

    code = "unsupported_format"


class FileError(Error, OSError):
    """A file cannot be opened, read, written or renamed."""

    code = "io_error"


class CorruptDataError(Error, OSError):
    """A file is truncated, malformed or inconsistent."""

    code = "corrupt_data"


class OutOfMemoryError(Error, MemoryError):
    """Host or device memory could not be allocated."""

    code = "out_of_memory"


class BackendUnavailableError(Error, RuntimeError):
    """The requested backend is not built in, has no device, or does not fit the data."""

    code = "backend_unavailable"


class CudaError(Error, RuntimeError):
    """A CUDA runtime call or kernel launch failed."""

    code = "cuda_error"


class InternalError(Error, RuntimeError):
    """A broken invariant inside upres (a bug: please report it)."""

    code = "internal"


_CLASSES = (InvalidArgumentError, UnsupportedFormatError, FileError, CorruptDataError,
            OutOfMemoryError, BackendUnavailableError, CudaError, InternalError)


def _register() -> None:
    codes = _upres.error_codes()
    by_name = {c.code: c for c in _CLASSES}
    for name, value in codes.items():
        _upres._set_error_class(value, by_name[name])


_register()
