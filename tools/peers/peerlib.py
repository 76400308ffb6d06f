"""Peer-timing framework: a registry of peers and the timers they share.

A peer is one function, registered with @peer, that prepares its inputs and returns a Work
(the callable to time, plus the pixels and bytes of one run). The framework times it the same
way upres_bench times device work (docs/benchmarks.md):

* GPU peers ("torch", "cupy"): device events around each run (torch.cuda.Event /
  cupy.cuda.Event on the current stream), after warm-up runs; a short spin kernel queued before
  each start event keeps the host's launch latency out of the interval (as upres_bench does);
  the reported time is the median of many runs.
* CPU peers ("cpu"): time.perf_counter around each run, warm-up first, median of the runs that
  fit in the time budget (at least 3).
* Inputs: fresh, never-zero random data; when one input/output set fits in the cache (L2 on
  the device, the last-level cache on the host) several sets are made and rotated
  (ctx.sets(bytes_per_set)).

A peer whose package is missing (ctx.need raises Unavailable) or that has no device reports
status "unavailable"; any other exception reports "error" with the message. Neither stops the
script.

Adding a peer (one function, in any tools/peers/peers_*.py module):

    @peer("cupy_rotate_order3_2048", kind="cupy", ours="Rotate_Cuda/2048")
    def _(ctx):
        cp = ctx.need("cupy")
        ndi = ctx.need("cupyx.scipy.ndimage")
        xs = [ctx.cupy_random((2048, 2048)) for _ in range(ctx.sets(2 * 2048 * 2048 * 4))]
        out = cp.empty((2048, 2048), cp.float32)
        return Work(lambda i: ndi.rotate(xs[i % len(xs)], 30.0, order=3, output=out),
                    pixels=2048 * 2048, bytes=2 * 2048 * 2048 * 4)
"""
from __future__ import annotations

import importlib
import math
import os
import statistics
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable

KINDS = ("torch", "cupy", "cpu")


class Unavailable(Exception):
    """The peer cannot run here (missing package, no device)."""


@dataclass
class Work:
    run: Callable[[int], Any]  # run(i): one timed run on input set i % sets
    pixels: float = 0.0  # pixels produced by one run
    bytes: float = 0.0  # fewest bytes one run must move: inputs read once + outputs written once
    sets: int = 1
    info: dict = field(default_factory=dict)  # parameters, versions, notes


@dataclass
class Peer:
    name: str
    kind: str
    setup: Callable[["Ctx"], Work]
    ours: str | None = None  # prefix of the upres_bench run name that does the same work
    note: str = ""


REGISTRY: list[Peer] = []


def peer(name: str, *, kind: str, ours: str | None = None, note: str = ""):
    """Registers a peer. kind: 'torch' | 'cupy' (GPU, event-timed) or 'cpu' (host clock)."""
    if kind not in KINDS:
        raise ValueError(f"peer {name}: kind must be one of {KINDS}")

    def deco(fn):
        REGISTRY.append(Peer(name, kind, fn, ours, note))
        return fn

    return deco


def host_cache_bytes() -> int:
    try:
        v = os.sysconf("SC_LEVEL3_CACHE_SIZE")
        if v and v > 0:
            return int(v)
    except (ValueError, OSError, AttributeError):
        pass
    return 64 << 20


def rotation_count(bytes_per_set: float, cache_bytes: int, max_sets: int = 32) -> int:
    """Same rule as bench_util.cpp: sets together >= 4 x cache, 1 if one set >= 2 x cache."""
    if bytes_per_set <= 0 or cache_bytes <= 0 or bytes_per_set >= 2 * cache_bytes:
        return 1
    return max(1, min(max_sets, math.ceil(4 * cache_bytes / bytes_per_set)))


class Ctx:
    def __init__(self, kind: str, args):
        self.kind = kind
        self.args = args
        self.threads = os.cpu_count() or 1
        self._l2 = None

    def need(self, module: str):
        try:
            return importlib.import_module(module)
        except Exception as e:  # ImportError, or a broken install
            raise Unavailable(f"{module} not importable ({type(e).__name__}: {e})") from None

    def l2_bytes(self) -> int:
        if self._l2 is None:
            self._l2 = 0
            try:
                if self.kind == "torch":
                    torch = self.need("torch")
                    self._l2 = int(getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 0))
                elif self.kind == "cupy":
                    cp = self.need("cupy")
                    self._l2 = int(cp.cuda.Device().attributes.get("L2CacheSize", 0))
            except Unavailable:
                raise
            except Exception:
                self._l2 = 0
            if not self._l2:
                self._l2 = 64 << 20  # unknown: assume a large L2
        return self._l2

    def sets(self, bytes_per_set: float, max_sets: int = 32) -> int:
        cache = host_cache_bytes() if self.kind == "cpu" else self.l2_bytes()
        return rotation_count(bytes_per_set, cache, max_sets)

    # Fresh, never-zero random inputs, one seed per call.
    _seed = 1234

    def _next_seed(self) -> int:
        Ctx._seed += 1
        return Ctx._seed

    def numpy_random(self, shape, dtype="float32"):
        np = self.need("numpy")
        rng = np.random.default_rng(self._next_seed())
        if np.dtype(dtype).kind == "u":
            return rng.integers(1, np.iinfo(dtype).max, size=shape, endpoint=True).astype(dtype)
        return (0.05 + rng.random(shape, dtype=np.float32)).astype(dtype)

    def cupy_random(self, shape, dtype="float32"):
        cp = self.need("cupy")
        rs = cp.random.RandomState(self._next_seed())
        if cp.dtype(dtype).kind == "u":
            hi = int(cp.iinfo(dtype).max)
            return rs.randint(1, hi + 1, size=shape).astype(dtype)
        return (0.05 + rs.random_sample(shape, dtype=cp.float32)).astype(dtype)

    def torch_random(self, shape, dtype="float32"):
        torch = self.need("torch")
        g = torch.Generator(device="cuda")
        g.manual_seed(self._next_seed())
        if dtype == "uint8":
            return torch.randint(1, 256, shape, dtype=torch.uint8, device="cuda", generator=g)
        if dtype == "uint16":  # the bits of uint16 samples in int16 (for peers given raw memory)
            v = torch.randint(1, 65536, shape, dtype=torch.int32, device="cuda", generator=g)
            return v.to(torch.int16)
        return 0.05 + torch.rand(shape, dtype=getattr(torch, dtype), device="cuda", generator=g)


# ---------------------------------------------------------------- timers
SPIN_US = 50.0  # spin queued before each start event on the GPU


class _TorchTimer:
    def __init__(self, ctx: Ctx):
        torch = ctx.need("torch")
        if not torch.cuda.is_available():
            raise Unavailable("torch sees no CUDA device")
        self.torch = torch
        self.cycles_per_us = self._calibrate()

    def _calibrate(self) -> float:
        torch = self.torch
        if not hasattr(torch.cuda, "_sleep"):
            return 0.0
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(1000)  # warm-up
        a.record()
        torch.cuda._sleep(2_000_000)
        b.record()
        b.synchronize()
        ms = a.elapsed_time(b)
        return 2_000_000 / (ms * 1e3) if ms > 0 else 0.0

    def spin(self):
        if self.cycles_per_us:
            self.torch.cuda._sleep(int(SPIN_US * self.cycles_per_us))

    def time_runs(self, run, first: int, n: int) -> list[float]:
        torch = self.torch
        out = []
        for i in range(first, first + n):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            self.spin()
            a.record()
            run(i)
            b.record()
            b.synchronize()
            out.append(a.elapsed_time(b))
        return out

    def sync(self):
        self.torch.cuda.synchronize()


_SPIN_SRC = r"""
extern "C" __global__ void upres_spin(unsigned long long ns) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do { __nanosleep(1000); asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); }
    while (t - t0 < ns);
}
"""


class _CupyTimer:
    def __init__(self, ctx: Ctx):
        cp = ctx.need("cupy")
        try:
            if cp.cuda.runtime.getDeviceCount() < 1:
                raise Unavailable("cupy sees no CUDA device")
        except cp.cuda.runtime.CUDARuntimeError as e:
            raise Unavailable(f"cupy sees no CUDA device ({e})") from None
        self.cp = cp
        try:
            self.kernel = cp.RawKernel(_SPIN_SRC, "upres_spin")
            self.kernel((1,), (1,), (cp.uint64(1000),))
        except Exception:
            self.kernel = None

    def spin(self):
        if self.kernel is not None:
            self.kernel((1,), (1,), (self.cp.uint64(int(SPIN_US * 1000)),))

    def time_runs(self, run, first: int, n: int) -> list[float]:
        cp = self.cp
        out = []
        for i in range(first, first + n):
            a, b = cp.cuda.Event(), cp.cuda.Event()
            self.spin()
            a.record()
            run(i)
            b.record()
            b.synchronize()
            out.append(cp.cuda.get_elapsed_time(a, b))
        return out

    def sync(self):
        self.cp.cuda.Stream.null.synchronize()
        self.cp.cuda.runtime.deviceSynchronize()


class _CpuTimer:
    def __init__(self, ctx: Ctx):
        pass

    def time_runs(self, run, first: int, n: int) -> list[float]:
        out = []
        for i in range(first, first + n):
            t0 = time.perf_counter()
            run(i)
            out.append((time.perf_counter() - t0) * 1e3)
        return out

    def sync(self):
        pass


_TIMERS = {"torch": _TorchTimer, "cupy": _CupyTimer, "cpu": _CpuTimer}


def run_peer(p: Peer, args) -> dict:
    """Times one peer; never raises."""
    res: dict[str, Any] = {"name": p.name, "kind": p.kind, "ours": p.ours, "note": p.note}
    try:
        ctx = Ctx(p.kind, args)
        timer = _TIMERS[p.kind](ctx)
        work = p.setup(ctx)
        timer.sync()
        gpu = p.kind != "cpu"
        warm = args.warmup if gpu else max(1, min(args.warmup, 2))
        # Warm-up: module load, kernel compilation (cupy JIT), allocator pools.
        timer.time_runs(work.run, 0, warm)
        first = warm
        if gpu:
            times = timer.time_runs(work.run, first, args.runs)
        else:
            times, t_start = [], time.perf_counter()
            while len(times) < args.runs and (
                len(times) < 3 or time.perf_counter() - t_start < args.cpu_seconds
            ):
                times += timer.time_runs(work.run, first + len(times), 1)
        med = statistics.median(times)
        res.update(
            status="ok",
            median_ms=med,
            min_ms=min(times),
            max_ms=max(times),
            runs=len(times),
            warmup=warm,
            sets=work.sets,
            pixels=work.pixels,
            bytes=work.bytes,
            mpix_s=(work.pixels / (med * 1e-3) / 1e6) if work.pixels else None,
            gb_s=(work.bytes / (med * 1e-3) / 1e9) if work.bytes else None,
            info=work.info,
        )
    except Unavailable as e:
        res.update(status="unavailable", message=str(e))
    except Exception as e:  # a peer's failure is a result, not a crash
        res.update(status="error", message=f"{type(e).__name__}: {e}",
                   traceback=traceback.format_exc(limit=4))
    return res
