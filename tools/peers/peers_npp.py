"""NVIDIA NPP peers: what a video or vision engineer calls for a GPU resize, rotation or
perspective warp (nppiResize_*, nppiRotate_*, nppiWarpPerspectiveBack_*), on PyTorch's device
memory and stream, timed as every "torch" peer.

NPP comes from the `nvidia-npp` wheel (CUDA 13: libnppig.so.13 for geometry, libnppc.so.13 for
its core). The library is found in $UPRES_NPP_LIB_DIR, else in an installed wheel
(site-packages/nvidia/cu13/lib), else on the loader's path; without it the peers report
"unavailable". The GPU machine has no NPP: carry the two .so files (tools/gpu_check.sh passes
UPRES_NPP_LIB_DIR when .gpu/npp holds them; docs/benchmarks.md says how).

Conventions differ from upres's, so these peers compare time, not values:
* nppiResize maps pixel centres (the output of 2x keeps the half-pixel grid, as upres's resize)
  with NPP's own borders (clamped to the image); NPPI_INTER_CUBIC is NPP's bicubic;
* nppiRotate rotates about the origin and shifts; outputs that map outside the source are left
  as they were (no mirror border), so it does less work than a mirrored rotation at the corners;
  nppiWarpPerspectiveBack takes the output -> input homography, as upres, and also leaves the
  outputs that map outside.
"""
from __future__ import annotations

import ctypes
import glob
import math
import os
import site
import sys

from peerlib import Unavailable, Work, peer
from peers_warp import keystone

NPPI_INTER_LINEAR = 2
NPPI_INTER_CUBIC = 4


class NppiSize(ctypes.Structure):
    _fields_ = [("width", ctypes.c_int), ("height", ctypes.c_int)]


class NppiRect(ctypes.Structure):
    _fields_ = [("x", ctypes.c_int), ("y", ctypes.c_int), ("width", ctypes.c_int),
                ("height", ctypes.c_int)]


class NppStreamContext(ctypes.Structure):
    _fields_ = [("hStream", ctypes.c_void_p), ("nCudaDeviceId", ctypes.c_int),
                ("nMultiProcessorCount", ctypes.c_int),
                ("nMaxThreadsPerMultiProcessor", ctypes.c_int),
                ("nMaxThreadsPerBlock", ctypes.c_int), ("nSharedMemPerBlock", ctypes.c_size_t),
                ("nCudaDevAttrComputeCapabilityMajor", ctypes.c_int),
                ("nCudaDevAttrComputeCapabilityMinor", ctypes.c_int),
                ("nStreamFlags", ctypes.c_uint), ("hWorkspace", ctypes.c_uint)]


_LIB = None


def _npp():
    """libnppig (with libnppc loaded first, globally), or Unavailable."""
    global _LIB
    if _LIB is not None:
        return _LIB
    dirs = []
    if os.environ.get("UPRES_NPP_LIB_DIR"):
        dirs.append(os.environ["UPRES_NPP_LIB_DIR"])
    for sp in site.getsitepackages() + [site.getusersitepackages()] + sys.path:
        dirs += glob.glob(os.path.join(sp, "nvidia", "cu13", "lib"))
    dirs.append("")  # the loader's own path
    errors = []
    for d in dirs:
        try:
            ctypes.CDLL(os.path.join(d, "libnppc.so.13"), mode=ctypes.RTLD_GLOBAL)
            _LIB = ctypes.CDLL(os.path.join(d, "libnppig.so.13"))
            return _LIB
        except OSError as e:
            errors.append(str(e))
    raise Unavailable("NPP (libnppig.so.13) not found: set UPRES_NPP_LIB_DIR or install the "
                      f"nvidia-npp wheel ({errors[-1] if errors else 'no candidates'})")


def _stream_ctx(torch):
    dev = torch.cuda.current_device()
    p = torch.cuda.get_device_properties(dev)
    c = NppStreamContext()
    c.hStream = torch.cuda.current_stream().cuda_stream
    c.nCudaDeviceId = dev
    c.nMultiProcessorCount = p.multi_processor_count
    c.nMaxThreadsPerMultiProcessor = getattr(p, "max_threads_per_multi_processor", 2048)
    c.nMaxThreadsPerBlock = 1024
    c.nSharedMemPerBlock = getattr(p, "shared_memory_per_block", 48 * 1024)
    c.nCudaDevAttrComputeCapabilityMajor = p.major
    c.nCudaDevAttrComputeCapabilityMinor = p.minor
    c.nStreamFlags = 0
    c.hWorkspace = 0
    return c


def _checked(fn, *args):
    status = fn(*args)
    if status < 0:
        raise RuntimeError(f"NPP returned status {status}")
    return status


def _resize(ctx, fname, sw, sh, dw, dh, channels, dtype, interp):
    torch = ctx.need("torch")
    lib = _npp()
    fn = getattr(lib, fname)
    fn.restype = ctypes.c_int
    esize = 1 if dtype == "uint8" else 4
    nbytes = esize * channels * (sw * sh + dw * dh)
    xs = [ctx.torch_random((sh, sw, channels), dtype) for _ in range(ctx.sets(nbytes))]
    outs = [torch.empty((dh, dw, channels), dtype=xs[0].dtype, device="cuda") for _ in xs]
    sctx = _stream_ctx(torch)
    args = (NppiSize(sw, sh), NppiRect(0, 0, sw, sh), NppiSize(dw, dh), NppiRect(0, 0, dw, dh))

    def run(i):
        k = i % len(xs)
        _checked(fn, ctypes.c_void_p(xs[k].data_ptr()), esize * channels * sw, args[0], args[1],
                 ctypes.c_void_p(outs[k].data_ptr()), esize * channels * dw, args[2], args[3],
                 interp, sctx)

    run(0)
    torch.cuda.synchronize()
    return Work(run, pixels=dw * dh, bytes=nbytes, sets=len(xs),
                info={"npp": fname, "interp": interp,
                      "size": f"{sw}x{sh}x{channels} {dtype} -> {dw}x{dh}"})


# upres_bench names (bench/warp_bench.cpp): Cuda_WarpVideo/<mode>/<channels> (1 linear, 2 Keys
# cubic a = -0.75), Cuda_WarpZoom/<mode>/2 (1024^2 -> 2048^2 float), Cuda_WarpRotate/<mode>/2048.
for _c, _fn in ((1, "nppiResize_8u_C1R_Ctx"), (3, "nppiResize_8u_C3R_Ctx")):
    for _interp, _mode, _name in ((NPPI_INTER_LINEAR, 1, "linear"), (NPPI_INTER_CUBIC, 2, "cubic")):
        peer(f"npp_resize_{_name}_x2_1080p_u8_c{_c}", kind="torch",
             ours=f"Cuda_WarpVideo/{_mode}/{_c}/",
             note=f"{_fn}(NPPI_INTER_{_name.upper()}), 1920x1080 -> 3840x2160, {_c} channel(s) "
                  "u8, u8 out")(
            lambda ctx, fn=_fn, c=_c, it=_interp: _resize(ctx, fn, 1920, 1080, 3840, 2160, c,
                                                          "uint8", it))
for _interp, _mode, _name in ((NPPI_INTER_LINEAR, 1, "linear"), (NPPI_INTER_CUBIC, 2, "cubic")):
    peer(f"npp_resize_{_name}_x2_to2048_f32", kind="torch", ours=f"Cuda_WarpZoom/{_mode}/2/",
         note=f"nppiResize_32f_C1R_Ctx(NPPI_INTER_{_name.upper()}), 1024^2 -> 2048^2 float32")(
        lambda ctx, it=_interp: _resize(ctx, "nppiResize_32f_C1R_Ctx", 1024, 1024, 2048, 2048,
                                        1, "float32", it))


def _rotate(ctx, interp, fname="nppiRotate_32f_C1R_Ctx", dtype="float32", channels=1):
    torch = ctx.need("torch")
    lib = _npp()
    fn = getattr(lib, fname)
    fn.restype = ctypes.c_int
    n = 2048
    nbytes = 2 * {"uint8": 1, "uint16": 2, "float32": 4}[dtype] * channels * n * n
    shape = (n, n) if channels == 1 else (n, n, channels)
    xs = [ctx.torch_random(shape, dtype) for _ in range(ctx.sets(nbytes))]
    outs = [torch.zeros_like(x) for x in xs]  # NPP leaves the outputs mapping outside
    sctx = _stream_ctx(torch)
    step = xs[0].element_size() * channels * n
    # About the image centre c: NPP rotates about the origin, then shifts by c - R c.
    a = math.radians(30.0)
    cx = cy = (n - 1) / 2.0
    sx = cx - (math.cos(a) * cx + math.sin(a) * cy)
    sy = cy - (-math.sin(a) * cx + math.cos(a) * cy)
    size, rect = NppiSize(n, n), NppiRect(0, 0, n, n)

    def run(i):
        k = i % len(xs)
        _checked(fn, ctypes.c_void_p(xs[k].data_ptr()), size, step, rect,
                 ctypes.c_void_p(outs[k].data_ptr()), step, rect, ctypes.c_double(30.0),
                 ctypes.c_double(sx), ctypes.c_double(sy), interp, sctx)

    run(0)
    torch.cuda.synchronize()
    return Work(run, pixels=n * n, bytes=nbytes, sets=len(xs),
                info={"npp": fname, "interp": interp, "angle": 30.0,
                      "size": f"{n}x{n}x{channels} {dtype}"})


for _interp, _mode, _name in ((NPPI_INTER_LINEAR, 1, "linear"), (NPPI_INTER_CUBIC, 2, "cubic")):
    peer(f"npp_rotate_{_name}_2048_f32", kind="torch", ours=f"Cuda_WarpRotate/{_mode}/2048",
         note=f"nppiRotate_32f_C1R_Ctx(30 degrees about the centre, NPPI_INTER_{_name.upper()}); "
              "outputs mapping outside are not written")(
        lambda ctx, it=_interp: _rotate(ctx, it))

# Integer and colour images (bench/warp_bench.cpp Cuda_WarpSplitTypes/<case>/0: 2 u16 grey
# linear, 4 u8 grey linear, 5 u8 RGB linear, 6 u16 grey Keys cubic, 8 u8 RGB Keys cubic, 9 float
# RGB linear, 10 u8 RGBA linear, 11 float RGBA linear).
for _fname, _dtype, _c, _case, _interp, _name in (
        ("nppiRotate_16u_C1R_Ctx", "uint16", 1, 2, NPPI_INTER_LINEAR, "linear_2048_u16"),
        ("nppiRotate_8u_C1R_Ctx", "uint8", 1, 4, NPPI_INTER_LINEAR, "linear_2048_u8"),
        ("nppiRotate_8u_C3R_Ctx", "uint8", 3, 5, NPPI_INTER_LINEAR, "linear_2048_u8_c3"),
        ("nppiRotate_16u_C1R_Ctx", "uint16", 1, 6, NPPI_INTER_CUBIC, "cubic_2048_u16"),
        ("nppiRotate_8u_C3R_Ctx", "uint8", 3, 8, NPPI_INTER_CUBIC, "cubic_2048_u8_c3"),
        ("nppiRotate_32f_C3R_Ctx", "float32", 3, 9, NPPI_INTER_LINEAR, "linear_2048_f32_c3"),
        ("nppiRotate_8u_C4R_Ctx", "uint8", 4, 10, NPPI_INTER_LINEAR, "linear_2048_u8_c4"),
        ("nppiRotate_32f_C4R_Ctx", "float32", 4, 11, NPPI_INTER_LINEAR, "linear_2048_f32_c4")):
    peer(f"npp_rotate_{_name}", kind="torch", ours=f"Cuda_WarpSplitTypes/{_case}/0/",
         note=f"{_fname}(30 degrees about the centre, "
              f"NPPI_INTER_{'LINEAR' if _interp == NPPI_INTER_LINEAR else 'CUBIC'}), "
              f"{_c} channel(s) {_dtype}; outputs mapping outside are not written")(
        lambda ctx, f=_fname, d=_dtype, c=_c, it=_interp: _rotate(ctx, it, f, d, c))


def inside(n=2048):
    """bench/warp_bench.cpp's rotation_inside(): the 30-degree rotation about the centre scaled
    by 0.7 (output -> input, rows of a 2 x 3 matrix); every output maps well inside the source."""
    c, s, xc = 0.7 * math.cos(math.pi / 6), 0.7 * math.sin(math.pi / 6), 0.5 * (n - 1)
    return [[c, -s, xc - c * xc + s * xc], [s, c, xc - s * xc - c * xc]]


def _warp_back(ctx, interp, fname, dtype, coeffs, label):
    """nppiWarpAffineBack_* / nppiWarpPerspectiveBack_* on n x n one-channel images: coeffs is
    the output -> input map as upres's (2 rows for an affine map, 3 for a homography)."""
    torch = ctx.need("torch")
    lib = _npp()
    try:
        fn = getattr(lib, fname)
    except AttributeError as e:
        raise Unavailable(f"this NPP has no {fname} ({e})")
    fn.restype = ctypes.c_int
    n = 2048
    esize = {"uint8": 1, "uint16": 2, "float32": 4}[dtype]
    nbytes = 2 * esize * n * n
    xs = [ctx.torch_random((n, n), dtype) for _ in range(ctx.sets(nbytes))]
    outs = [torch.zeros_like(x) for x in xs]  # NPP leaves the outputs mapping outside
    sctx = _stream_ctx(torch)
    c = ((ctypes.c_double * 3) * len(coeffs))(*[(ctypes.c_double * 3)(*row) for row in coeffs])
    size, rect = NppiSize(n, n), NppiRect(0, 0, n, n)

    def run(i):
        k = i % len(xs)
        _checked(fn, ctypes.c_void_p(xs[k].data_ptr()), size, esize * n, rect,
                 ctypes.c_void_p(outs[k].data_ptr()), esize * n, rect, c, interp, sctx)

    run(0)
    torch.cuda.synchronize()
    return Work(run, pixels=n * n, bytes=nbytes, sets=len(xs),
                info={"npp": fname, "interp": interp, "map": label,
                      "size": f"{n}x{n}x1 {dtype}"})


# The same work on both sides: the rotation scaled by 0.7 maps every output inside the source, so
# NPP writes every output as upres does (nppiRotate leaves the ~14% of outputs of the plain
# 30-degree rotation that map outside unwritten, where upres computes the mirrored value).
# upres_bench: Cuda_WarpRotateInside/1/2048 (float), Cuda_WarpSplitTypes/14/0 (u16) and /15/0
# (u8). And nppiWarpAffineBack on the plain rotation, against nppiRotate's kernel.
for _fname, _dtype, _ours, _name in (
        ("nppiWarpAffineBack_32f_C1R_Ctx", "float32", "Cuda_WarpRotateInside/1/2048", "f32"),
        ("nppiWarpAffineBack_16u_C1R_Ctx", "uint16", "Cuda_WarpSplitTypes/14/0/", "u16"),
        ("nppiWarpAffineBack_8u_C1R_Ctx", "uint8", "Cuda_WarpSplitTypes/15/0/", "u8")):
    peer(f"npp_warpaffine_linear_inside_2048_{_name}", kind="torch", ours=_ours,
         note=f"{_fname}(30-degree rotation scaled by 0.7 about the centre, NPPI_INTER_LINEAR): "
              "every output maps inside, so both sides write every output")(
        lambda ctx, f=_fname, d=_dtype: _warp_back(ctx, NPPI_INTER_LINEAR, f, d, inside(),
                                                   "rotation 30 deg x 0.7"))
peer("npp_warpaffine_linear_rot30_2048_f32", kind="torch", ours="Cuda_WarpRotate/1/2048",
     note="nppiWarpAffineBack_32f_C1R_Ctx(the 30-degree rotation about the centre, "
          "NPPI_INTER_LINEAR); outputs mapping outside are not written")(
    lambda ctx: _warp_back(ctx, NPPI_INTER_LINEAR, "nppiWarpAffineBack_32f_C1R_Ctx", "float32",
                           keystone()[:2], "rotation 30 deg"))


# upres_bench: Api_CudaWarp/6 (keystone, bilinear) and /7 (Keys cubic).
for _interp, _case, _name in ((NPPI_INTER_LINEAR, 6, "linear"), (NPPI_INTER_CUBIC, 7, "cubic")):
    peer(f"npp_perspective_{_name}_keystone_2048_f32", kind="torch",
         ours=f"Api_CudaWarp/{_case}/1/",
         note=f"nppiWarpPerspectiveBack_32f_C1R_Ctx(keystone, NPPI_INTER_{_name.upper()}); "
              "outputs mapping outside are not written")(
        lambda ctx, it=_interp: _warp_back(ctx, it, "nppiWarpPerspectiveBack_32f_C1R_Ctx",
                                           "float32", keystone(),
                                           "keystone (tools/peers/peers_warp.py)"))
