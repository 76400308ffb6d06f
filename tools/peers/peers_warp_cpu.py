"""CPU peers of the warp (bench/warp_cpu_bench.cpp): OpenCV on all of the host's cores, the same
work as the upres benchmark each names in `ours` (its threads:0 form, all cores):

* 2048^2 float32 rotation by 30 degrees about the centre (cv2.warpAffine, BORDER_REFLECT_101 =
  upres Mirror): INTER_LINEAR, INTER_NEAREST (INTER_CUBIC is in peers_foundation.py);
* the same image warped by bench_util.hpp's displacement field (cv2.remap with float maps,
  INTER_LINEAR / INTER_CUBIC; the maps are precomputed, not timed) and by its keystone homography
  (cv2.warpPerspective with WARP_INVERSE_MAP);
* 2048^2 grey uint8 rotation (cv2.warpAffine), a 1920 x 1080 RGB uint8 frame rotated and resized
  to 3840 x 2160 (cv2.resize), INTER_LINEAR / INTER_CUBIC.

OpenCV's INTER_CUBIC is Keys a = -0.75 with 1/32-pixel coordinates and its INTER_LINEAR uses
5-bit fixed-point weights on uint8: same work, not the same numbers (upres: exact float).
"""
from __future__ import annotations

from peerlib import Work, peer
from peers_warp import flow_field, keystone

ANGLE = 30.0
N = 2048


def _cv2(ctx):
    cv2 = ctx.need("cv2")
    cv2.setNumThreads(ctx.threads)
    return cv2


def _info(cv2, size, **kw):
    return {"cv2": cv2.__version__, "size": size, "threads": cv2.getNumThreads(), **kw}


def _f32_warp(ctx, flag_name, warp, extra_bytes=0):
    """A 2048^2 float32 warp on all cores: warp(cv2, src, dst, flag) on rotated input sets."""
    np = ctx.need("numpy")
    cv2 = _cv2(ctx)
    nbytes = 2 * N * N * 4 + extra_bytes
    xs = [ctx.numpy_random((N, N)) for _ in range(ctx.sets(nbytes, 4))]
    outs = [np.empty((N, N), np.float32) for _ in xs]
    flag = getattr(cv2, flag_name)

    def run(i):
        k = i % len(xs)
        warp(cv2, xs[k], outs[k], flag)

    return Work(run, pixels=N * N, bytes=nbytes, sets=len(xs),
                info=_info(cv2, f"{N}x{N} float32", flag=flag_name))


def _rotation_f32(ctx, flag_name):
    cv2 = _cv2(ctx)
    m = cv2.getRotationMatrix2D(((N - 1) / 2.0, (N - 1) / 2.0), ANGLE, 1.0)
    return _f32_warp(ctx, flag_name, lambda cv, x, o, f: cv.warpAffine(
        x, m, (N, N), dst=o, flags=f, borderMode=cv.BORDER_REFLECT_101))


@peer("cv2_warpaffine_linear_cpu_allthreads", kind="cpu",
      ours="Warp_CpuRotate/size:2048/threads:0/interp:1/fir:0/",
      note="cv2.warpAffine INTER_LINEAR, 30 degrees, BORDER_REFLECT_101, all cores")
def cv2_rotate_linear(ctx):
    return _rotation_f32(ctx, "INTER_LINEAR")


@peer("cv2_warpaffine_nearest_cpu_allthreads", kind="cpu",
      ours="Warp_CpuRotate/size:2048/threads:0/interp:0/fir:0/",
      note="cv2.warpAffine INTER_NEAREST, 30 degrees, BORDER_REFLECT_101, all cores")
def cv2_rotate_nearest(ctx):
    return _rotation_f32(ctx, "INTER_NEAREST")


def _remap(ctx, flag_name):
    np = ctx.need("numpy")
    x, y, dx, dy = flow_field(np, N)
    mx = (x + dx).astype(np.float32)
    my = (y + dy).astype(np.float32)
    return _f32_warp(ctx, flag_name, lambda cv, s, o, f: cv.remap(
        s, mx, my, f, dst=o, borderMode=cv.BORDER_REFLECT_101), extra_bytes=2 * N * N * 4)


@peer("cv2_remap_linear_flow_cpu_allthreads", kind="cpu",
      ours="Warp_CpuFlow/threads:0/interp:1/",
      note="cv2.remap INTER_LINEAR on the displacement field (float maps), all cores")
def cv2_flow_linear(ctx):
    return _remap(ctx, "INTER_LINEAR")


@peer("cv2_remap_cubic_flow_cpu_allthreads", kind="cpu",
      ours="Warp_CpuFlow/threads:0/interp:2/",
      note="cv2.remap INTER_CUBIC (Keys a=-0.75) on the displacement field, all cores")
def cv2_flow_cubic(ctx):
    return _remap(ctx, "INTER_CUBIC")


def _perspective(ctx, flag_name):
    np = ctx.need("numpy")
    h = np.array(keystone(N), dtype=np.float64)
    return _f32_warp(ctx, flag_name, lambda cv, s, o, f: cv.warpPerspective(
        s, h, (N, N), dst=o, flags=f | cv.WARP_INVERSE_MAP, borderMode=cv.BORDER_REFLECT_101))


@peer("cv2_warpperspective_linear_cpu_allthreads", kind="cpu",
      ours="Warp_CpuPerspective/threads:0/interp:1/",
      note="cv2.warpPerspective INTER_LINEAR | WARP_INVERSE_MAP, the keystone, all cores")
def cv2_persp_linear(ctx):
    return _perspective(ctx, "INTER_LINEAR")


@peer("cv2_warpperspective_cubic_cpu_allthreads", kind="cpu",
      ours="Warp_CpuPerspective/threads:0/interp:2/",
      note="cv2.warpPerspective INTER_CUBIC | WARP_INVERSE_MAP, the keystone, all cores")
def cv2_persp_cubic(ctx):
    return _perspective(ctx, "INTER_CUBIC")


def _rotate_u8(ctx, shape, flag_name):
    np = ctx.need("numpy")
    cv2 = _cv2(ctx)
    h, w = shape[0], shape[1]
    nbytes = 2 * int(np.prod(shape))
    xs = [ctx.numpy_random(shape, "uint8") for _ in range(ctx.sets(nbytes, 4))]
    m = cv2.getRotationMatrix2D(((w - 1) / 2.0, (h - 1) / 2.0), ANGLE, 1.0)
    flag = getattr(cv2, flag_name)

    def run(i):
        cv2.warpAffine(xs[i % len(xs)], m, (w, h), flags=flag, borderMode=cv2.BORDER_REFLECT_101)

    return Work(run, pixels=w * h, bytes=nbytes, sets=len(xs),
                info=_info(cv2, "x".join(map(str, shape)) + " uint8", flag=flag_name))


@peer("cv2_warpaffine_linear_grey_u8_cpu_allthreads", kind="cpu",
      ours="Warp_CpuRotateGreyU8/threads:0/interp:1/",
      note="cv2.warpAffine INTER_LINEAR of a 2048^2 grey uint8 image, 30 degrees, all cores")
def cv2_rotate_grey_linear(ctx):
    return _rotate_u8(ctx, (N, N), "INTER_LINEAR")


@peer("cv2_warpaffine_cubic_grey_u8_cpu_allthreads", kind="cpu",
      ours="Warp_CpuRotateGreyU8/threads:0/interp:2/",
      note="cv2.warpAffine INTER_CUBIC of a 2048^2 grey uint8 image, 30 degrees, all cores")
def cv2_rotate_grey_cubic(ctx):
    return _rotate_u8(ctx, (N, N), "INTER_CUBIC")


@peer("cv2_warpaffine_linear_rgb_u8_1080p_cpu_allthreads", kind="cpu",
      ours="Warp_CpuRotateRgbU8/threads:0/interp:1/",
      note="cv2.warpAffine INTER_LINEAR of a 1920 x 1080 RGB uint8 frame, 30 degrees, all cores")
def cv2_rotate_rgb_linear(ctx):
    return _rotate_u8(ctx, (1080, 1920, 3), "INTER_LINEAR")


@peer("cv2_warpaffine_cubic_rgb_u8_1080p_cpu_allthreads", kind="cpu",
      ours="Warp_CpuRotateRgbU8/threads:0/interp:2/",
      note="cv2.warpAffine INTER_CUBIC of a 1920 x 1080 RGB uint8 frame, 30 degrees, all cores")
def cv2_rotate_rgb_cubic(ctx):
    return _rotate_u8(ctx, (1080, 1920, 3), "INTER_CUBIC")


def _resize_rgb(ctx, flag_name):
    cv2 = _cv2(ctx)
    nbytes = 1920 * 1080 * 3 + 3840 * 2160 * 3
    xs = [ctx.numpy_random((1080, 1920, 3), "uint8") for _ in range(ctx.sets(nbytes, 4))]
    flag = getattr(cv2, flag_name)

    def run(i):
        cv2.resize(xs[i % len(xs)], (3840, 2160), interpolation=flag)

    return Work(run, pixels=3840 * 2160, bytes=nbytes, sets=len(xs),
                info=_info(cv2, "1920x1080x3 uint8 -> 3840x2160", flag=flag_name))


@peer("cv2_resize_linear_rgb_u8_1080p_to_4k_cpu_allthreads", kind="cpu",
      ours="Warp_CpuResizeRgbU8/threads:0/interp:1/",
      note="cv2.resize INTER_LINEAR, 1920 x 1080 RGB uint8 -> 3840 x 2160, all cores")
def cv2_resize_linear(ctx):
    return _resize_rgb(ctx, "INTER_LINEAR")


@peer("cv2_resize_cubic_rgb_u8_1080p_to_4k_cpu_allthreads", kind="cpu",
      ours="Warp_CpuResizeRgbU8/threads:0/interp:2/",
      note="cv2.resize INTER_CUBIC (Keys a=-0.75), 1920 x 1080 RGB uint8 -> 3840 x 2160, all cores")
def cv2_resize_cubic(ctx):
    return _resize_rgb(ctx, "INTER_CUBIC")
