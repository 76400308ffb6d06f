"""Arrays in, arrays out: NumPy (host), CuPy and PyTorch (CUDA or CPU tensors).

Inputs reach the native module without a copy when they are in upres's image layout: (H, W)
or (H, W, C) with C in 1..4, channels contiguous, pixels packed, rows at any positive stride
(a sub-image view of a larger array qualifies), and of a native dtype (uint8, uint16,
float32). Anything else is copied once into that layout (another dtype, a transposed or
reversed view); float64 and float16 are computed in float32. Outputs are allocated in the
caller's array type, on the input's device, or written in place into ``output=``.

Device arrays run on the caller's CUDA stream: CuPy's current stream or
``torch.cuda.current_stream()``, or ``stream=`` (an int handle, a ``cupy.cuda.Stream`` or a
``torch.cuda.Stream``). Host and device arrays mixed in one call, or a backend forced
against the data's location, raise BackendUnavailableError (never a silent copy).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Optional, Sequence

import numpy as np

from ._errors import BackendUnavailableError, InvalidArgumentError, UnsupportedFormatError

_LIBS: dict[str, Any] = {}


def _lib(name: str) -> Any:
    """CuPy or PyTorch, imported only when an array of theirs is seen (then kept)."""
    m = _LIBS.get(name)
    if m is None:
        m = _LIBS[name] = importlib.import_module(name)
    return m


NATIVE = frozenset((np.dtype(np.uint8), np.dtype(np.uint16), np.dtype(np.float32)))
COMPUTED_IN_F32 = frozenset((np.dtype(np.float64), np.dtype(np.float16)))
F32 = np.dtype(np.float32)
BACKENDS = ("auto", "reference", "cpu", "cuda")


@dataclass(frozen=True)
class Place:
    """Where an array lives and which library made it."""

    lib: str  # "numpy", "cupy" or "torch"
    device: bool  # CUDA memory
    torch_device: Any = None  # the torch.device of a tensor

    def describe(self) -> str:
        if self.lib == "numpy":
            return "a NumPy array (host memory)"
        if self.lib == "cupy":
            return "a CuPy array (CUDA memory)"
        return f"a PyTorch tensor on {self.torch_device}"


_NUMPY = Place("numpy", False)
_CUPY = Place("cupy", True)


def place_of(a: Any) -> Place:
    t = type(a)
    if t is np.ndarray:
        return _NUMPY
    lib = _LIB_OF_TYPE.get(t)
    if lib is None:
        lib = _LIB_OF_TYPE[t] = t.__module__.split(".")[0]
    if lib == "cupy":
        return _CUPY
    if lib == "torch":
        return Place("torch", bool(a.is_cuda), a.device)
    return _NUMPY


_LIB_OF_TYPE: dict[type, str] = {}


def as_array(a: Any, what: str) -> Any:
    """NumPy, CuPy and PyTorch arrays as they are; anything else through numpy.asarray."""
    if type(a) is np.ndarray:
        return a
    mod = type(a).__module__.split(".")[0]
    if isinstance(a, np.ndarray) or mod in ("cupy", "torch"):
        return a
    try:
        return np.asarray(a)
    except Exception as e:  # noqa: BLE001 - name what could not be read
        raise InvalidArgumentError(f"{what}: not an array ({type(a).__name__}): {e}") from e


def np_dtype(a: Any) -> np.dtype[Any]:
    """The NumPy dtype of an array of any of the three libraries."""
    if type(a) is np.ndarray:
        return np.dtype(a.dtype)
    if place_of(a).lib == "torch":
        torch = _lib("torch")

        names = {torch.uint8: "uint8", torch.float32: "float32", torch.float64: "float64",
                 torch.float16: "float16", torch.int16: "int16", torch.int32: "int32",
                 torch.int64: "int64", torch.int8: "int8", torch.bool: "bool"}
        u16 = getattr(torch, "uint16", None)
        if u16 is not None:
            names[u16] = "uint16"
        if a.dtype not in names:
            raise UnsupportedFormatError(f"tensor dtype {a.dtype} is not handled "
                                         "(uint8, uint16, float32; float64/float16 computed "
                                         "in float32)")
        return np.dtype(names[a.dtype])
    return np.dtype(a.dtype)


def check_dtype(a: Any, what: str) -> np.dtype[Any]:
    return check_dtype_of(np_dtype(a), what)


def check_dtype_of(dt: np.dtype[Any], what: str) -> np.dtype[Any]:
    if dt in NATIVE or dt in COMPUTED_IN_F32:
        return dt
    raise UnsupportedFormatError(
        f"{what}: dtype {dt} is not handled (allowed: uint8, uint16, float32; float64 and "
        "float16 are computed in float32)")


def xp_of(p: Place) -> Any:
    if p.lib == "cupy":
        cupy = _lib("cupy")

        return cupy
    if p.lib == "torch":
        torch = _lib("torch")

        return torch
    return np


def empty(p: Place, shape: Sequence[int], dtype: Any) -> Any:
    if p is _NUMPY:
        return np.empty(shape, dtype)
    dt = np.dtype(dtype)
    if p.lib == "torch":
        torch = _lib("torch")

        return torch.empty(tuple(shape), dtype=_torch_dtype(dt), device=p.torch_device)
    return xp_of(p).empty(tuple(int(s) for s in shape), dtype=dt)


def _torch_dtype(dt: np.dtype[Any]) -> Any:
    torch = _lib("torch")

    if dt == np.dtype(np.uint16):
        if not hasattr(torch, "uint16"):
            raise UnsupportedFormatError("this PyTorch has no uint16 tensors")
        return torch.uint16
    return getattr(torch, dt.name)


def astype(a: Any, dtype: Any) -> Any:
    """a converted to dtype (a copy), in a's library."""
    dt = np.dtype(dtype)
    if place_of(a).lib == "torch":
        return a.to(_torch_dtype(dt))
    return a.astype(dt)


def round_into(src: Any, dst: Any) -> None:
    """dst[...] = src, rounded half to even and saturated when dst holds integers."""
    p = place_of(dst)
    dt = np_dtype(dst)
    if dt.kind in "ui":
        info = np.iinfo(dt)
        if p.lib == "torch":
            v = src.round().clamp(info.min, info.max)
        else:
            xp = xp_of(p)
            v = xp.clip(xp.rint(src), info.min, info.max)
        copy_into(v, dst)
    else:
        copy_into(src, dst)


def copy_into(src: Any, dst: Any) -> None:
    if place_of(dst).lib == "torch":
        dst.copy_(src)
    else:
        dst[...] = src


def ptr(a: Any) -> int:
    if place_of(a).lib == "torch":
        return int(a.data_ptr())
    if place_of(a).lib == "cupy":
        return int(a.data.ptr)
    return int(a.__array_interface__["data"][0])


def _layout_ok(a: Any) -> bool:
    """True when a is in upres's image layout (see the module's doc)."""
    if (type(a) is np.ndarray or place_of(a) is _CUPY) and a.flags.c_contiguous and \
            a.ndim in (2, 3):
        return True
    shape = tuple(a.shape)
    if place_of(a).lib == "torch":
        strides = tuple(a.stride())
    else:
        item = a.dtype.itemsize
        strides = tuple(s // item for s in a.strides)
        if any(s % item for s in a.strides):
            return False
    if len(shape) not in (2, 3):
        return False
    c = shape[2] if len(shape) == 3 else 1
    if len(shape) == 3 and c > 1 and strides[2] != 1:
        return False
    if shape[1] > 1 and strides[1] != c:
        return False
    return bool(shape[0] <= 1 or strides[0] >= shape[1] * c)


def native(a: Any, what: str, dtype: Optional[Any] = None) -> Any:
    """a in upres's layout with a native dtype (dtype: that one), without a copy when it is."""
    if type(a) is not np.ndarray and place_of(a).lib == "torch" and a.requires_grad:
        a = a.detach()
    if len(a.shape) not in (2, 3):
        raise InvalidArgumentError(
            f"{what}: {len(a.shape)}-D array; images are (H, W) or (H, W, C) with C in 1..4")
    if len(a.shape) == 3 and not 1 <= a.shape[2] <= 4:
        raise InvalidArgumentError(
            f"{what}: {a.shape[2]} channels on the last axis (1 to 4 allowed)")
    want = np.dtype(dtype) if dtype is not None else check_dtype(a, what)
    if want in COMPUTED_IN_F32:
        want = np.dtype(np.float32)
    if np_dtype(a) != want:
        a = astype(a, want)
    if not _layout_ok(a):
        a = a.contiguous() if place_of(a).lib == "torch" else xp_of(place_of(a)).ascontiguousarray(a)
    return a


_CODES = {np.dtype(np.uint8): 0, np.dtype(np.uint16): 1, np.dtype(np.float32): 2}


def arg(a: Any) -> Any:
    """What the native module takes for an array in upres's layout with a native dtype: host
    arrays themselves; device arrays as (pointer, height, width, channels, row stride in
    elements, dtype code), read from __cuda_array_interface__ (CuPy) or the tensor (PyTorch):
    no DLPack exchange, whose per-array stream handshake costs more than a small kernel."""
    if a is None or type(a) is np.ndarray:
        return a
    p = place_of(a)
    if not p.device:
        return a
    shape = tuple(a.shape)
    c = shape[2] if len(shape) == 3 else 1
    if p.lib == "torch":
        ptr = int(a.data_ptr())
        row = int(a.stride(0)) if len(shape) else 0
    else:
        ptr = int(a.data.ptr)
        row = int(a.strides[0]) // a.dtype.itemsize
    return (ptr, int(shape[0]), int(shape[1]), int(c), row, _CODES[np_dtype(a)])


def cupy_fast(a: Any) -> Any:
    """The cupy module when `a` is a C-contiguous CuPy array of a native dtype on the current
    device (the per-call fast path: nothing to convert or check beyond this), else None."""
    if place_of(a) is not _CUPY or not a.flags.c_contiguous or a.dtype not in NATIVE:
        return None
    cupy = _lib("cupy")
    if int(a.data.device_id) != int(cupy.cuda.runtime.getDevice()):
        return None  # the general path explains the mismatch
    return cupy


def cupy_arg(a: Any) -> tuple[int, int, int, int, int, int]:
    """arg() of a C-contiguous CuPy array of a native dtype (see cupy_fast)."""
    shape = a.shape
    c = shape[2] if len(shape) == 3 else 1
    return (a.data.ptr, shape[0], shape[1], c, shape[1] * c, _CODES[a.dtype])


def same_place(arrays: Sequence[Any], names: Sequence[str]) -> Place:
    """The common place of the arrays; mixed host and device (or libraries) is an error."""
    places = [place_of(a) for a in arrays]
    first = places[0]
    for p, n in zip(places[1:], names[1:]):
        if p.device != first.device or p.lib != first.lib or (
                p.lib == "torch" and p.torch_device != first.torch_device):
            raise BackendUnavailableError(
                f"{names[0]} is {first.describe()} but {n} is {p.describe()}: upres does not "
                "copy between libraries or devices behind your back; move one first")
    return first


def check_backend(backend: str, p: Place, op: str) -> str:
    if backend == "auto":
        return backend
    if backend not in BACKENDS:
        raise InvalidArgumentError(f"{op}: unknown backend '{backend}' (allowed: "
                                   + ", ".join(BACKENDS) + ")")
    if p.device and backend in ("cpu", "reference"):
        raise BackendUnavailableError(
            f"{op}: backend '{backend}' runs on host memory but the input is {p.describe()} "
            "(use backend='cuda' or 'auto', or move the data to the host first)")
    if not p.device and backend == "cuda":
        raise BackendUnavailableError(
            f"{op}: backend 'cuda' needs device arrays (CuPy, PyTorch CUDA tensors) but the input "
            f"is {p.describe()} (move it with cupy.asarray / tensor.cuda(), or use 'cpu')")
    return backend


def stream_handle(p: Place, stream: Any, a: Any = None) -> int:
    """The cudaStream_t to run on: stream= if given, else the caller's current stream. a: the
    input array, checked to be on the current device."""
    if not p.device:
        return 0
    if a is not None:
        check_device(a, p)
    if stream is not None:
        if isinstance(stream, int):
            return stream
        for attr in ("ptr", "cuda_stream"):
            if hasattr(stream, attr):
                return int(getattr(stream, attr))
        raise InvalidArgumentError(
            f"stream: {type(stream).__name__} is not a CUDA stream (an int handle, a "
            "cupy.cuda.Stream or a torch.cuda.Stream)")
    if p.lib == "cupy":
        cupy = _lib("cupy")

        return int(cupy.cuda.get_current_stream().ptr)
    torch = _lib("torch")

    return int(torch.cuda.current_stream(p.torch_device).cuda_stream)


def check_device(a: Any, p: Place) -> None:
    """upres runs on the current CUDA device: an array on another one is an error (switch with
    `with cupy.cuda.Device(n):` / `torch.cuda.device(n)`)."""
    if not p.device:
        return
    if p.lib == "cupy":
        cur = int(_lib("cupy").cuda.runtime.getDevice())
        dev = int(a.data.device_id)
    else:
        cur = int(_lib("torch").cuda.current_device())
        dev = int(a.device.index)
    if dev != cur:
        raise BackendUnavailableError(
            f"the array is on CUDA device {dev} but the current device is {cur}; upres runs on "
            f"the current device (select it with cupy.cuda.Device({dev}) / "
            f"torch.cuda.device({dev}))")


def output_array(output: Any, p: Place, shape: Sequence[int], default_dtype: Any,
                 what: str = "output") -> tuple[Any, Any]:
    """(array to return, native array the kernel writes into).

    output: None (a new array of default_dtype), a dtype, or an array of the right shape in
    the input's place. When the array is not in upres's layout or not of a native dtype, the
    kernel writes a temporary that is copied into it afterwards (finish())."""
    if output is None and p is _NUMPY:
        dt = np.dtype(default_dtype)
        if dt in NATIVE:
            ret = np.empty(shape, dt)
            return ret, ret
    shape = tuple(int(s) for s in shape)
    if output is None or isinstance(output, (type, np.dtype, str)):
        dt = np.dtype(default_dtype if output is None else output)
        check_dtype_of(dt, what)
        ret = empty(p, shape, dt)
    else:
        ret = output
        op = place_of(ret)
        if op != p and not (op.lib == p.lib and op.device == p.device):
            raise BackendUnavailableError(
                f"{what} is {op.describe()} but the input is {p.describe()}")
        if tuple(ret.shape) != shape:
            raise InvalidArgumentError(f"{what} has shape {tuple(ret.shape)}, expected {shape}")
        check_dtype(ret, what)
    dt = np_dtype(ret)
    if dt in NATIVE and _layout_ok(ret):
        return ret, ret
    return ret, empty(p, shape, np.float32 if dt in COMPUTED_IN_F32 else dt)


def finish(ret: Any, work: Any) -> Any:
    if work is not ret:
        round_into(work, ret)
    return ret


def options_text(options: dict[str, Any]) -> dict[str, str]:
    """Keyword values as the option tables read them (True -> "true", 2.5 -> "2.5")."""
    out = {}
    for k, v in options.items():
        if v is None:
            continue
        if isinstance(v, bool):
            out[k] = "true" if v else "false"
        elif isinstance(v, float):
            out[k] = repr(v)
        else:
            out[k] = str(v)
    return out
