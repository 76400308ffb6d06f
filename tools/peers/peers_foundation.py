"""Foundation peers: memory floor, cubic/linear B-spline rotation, spline prefilter, bicubic x2.

Each peer is one function (see peerlib.py); `ours` names the upres_bench benchmark doing the
same work, where one exists yet.
"""
from __future__ import annotations

import math

from peerlib import Work, peer

N2048 = 2048
ANGLE = 30.0  # degrees, about the image centre


# ---------------------------------------------------------------- memory floor
@peer("torch_copy_d2d_1GiB", kind="torch", ours="Floor_CudaMemcpyD2D/MiB:1024",
      note="dst.copy_(src), bytes = read + written (same definition as upres_bench)")
def torch_copy(ctx):
    n = 1 << 30
    src = ctx.torch_random((n,), "uint8")
    dst = ctx.torch_random((n,), "uint8")
    return Work(lambda i: dst.copy_(src), bytes=2.0 * n)


# ---------------------------------------------------------------- rotation (cupyx, GPU)
def _cupy_rotate(ctx, order, dtype="float32"):
    cp = ctx.need("cupy")
    ndi = ctx.need("cupyx.scipy.ndimage")
    nbytes = 2 * N2048 * N2048 * cp.dtype(dtype).itemsize
    xs = [ctx.cupy_random((N2048, N2048), dtype) for _ in range(ctx.sets(nbytes))]
    outs = [cp.empty((N2048, N2048), dtype) for _ in xs]

    def run(i):
        k = i % len(xs)
        ndi.rotate(xs[k], ANGLE, order=order, mode="mirror", reshape=False, output=outs[k])

    return Work(run, pixels=N2048 * N2048, bytes=nbytes, sets=len(xs),
                info={"cupy": cp.__version__, "size": f"{N2048}x{N2048} {dtype}",
                      "angle": ANGLE, "order": order, "mode": "mirror"})


@peer("cupyx_rotate_order3_mirror_2048", kind="cupy",
      note="cupyx.scipy.ndimage.rotate(order=3, mode='mirror', reshape=False), prefilter included")
def cupy_rotate3(ctx):
    return _cupy_rotate(ctx, 3)


@peer("cupyx_rotate_order1_mirror_2048", kind="cupy",
      note="cupyx.scipy.ndimage.rotate(order=1, mode='mirror', reshape=False)")
def cupy_rotate1(ctx):
    return _cupy_rotate(ctx, 1)


@peer("cupyx_rotate_order1_mirror_2048_u16", kind="cupy", ours="Cuda_WarpSplitTypes/2/0/",
      note="cupyx.scipy.ndimage.rotate(order=1, mode='mirror', reshape=False) of a uint16 image, "
           "uint16 out")
def cupy_rotate1_u16(ctx):
    return _cupy_rotate(ctx, 1, "uint16")


@peer("cupyx_spline_filter_order3_mirror_2048", kind="cupy",
      note="cupyx.scipy.ndimage.spline_filter(order=3, mode='mirror'), float32 out")
def cupy_spline_filter(ctx):
    cp = ctx.need("cupy")
    ndi = ctx.need("cupyx.scipy.ndimage")
    nbytes = 2 * N2048 * N2048 * 4
    xs = [ctx.cupy_random((N2048, N2048)) for _ in range(ctx.sets(nbytes))]
    outs = [cp.empty((N2048, N2048), cp.float32) for _ in xs]

    def run(i):
        k = i % len(xs)
        ndi.spline_filter(xs[k], order=3, output=outs[k], mode="mirror")

    return Work(run, pixels=N2048 * N2048, bytes=nbytes, sets=len(xs),
                info={"cupy": cp.__version__, "size": f"{N2048}x{N2048} float32"})


# ---------------------------------------------------------------- rotation (torch, GPU)
# What a PyTorch user writes for the same 30-degree rotation of a 2048^2 float32 image:
# affine_grid (the coordinate map, align_corners=True: the corner pixels' centres at +-1, as
# scipy's pixel centres) then grid_sample, both timed; padding_mode='reflection' is the nearest
# of its modes to mirror. Bilinear, and bicubic (Keys a = -0.75: an interpolating cubic
# convolution, not a B-spline, so no prefilter). Not bit-compatible with scipy, the same work.
def _torch_rotate(ctx, mode):
    torch = ctx.need("torch")
    F = ctx.need("torch.nn.functional")
    nbytes = 2 * N2048 * N2048 * 4
    xs = [ctx.torch_random((1, 1, N2048, N2048)) for _ in range(ctx.sets(nbytes))]
    c, s = math.cos(math.radians(ANGLE)), math.sin(math.radians(ANGLE))
    theta = torch.tensor([[[c, -s, 0.0], [s, c, 0.0]]], dtype=torch.float32, device="cuda")

    def run(i):
        grid = F.affine_grid(theta, (1, 1, N2048, N2048), align_corners=True)
        F.grid_sample(xs[i % len(xs)], grid, mode=mode, padding_mode="reflection",
                      align_corners=True)

    return Work(run, pixels=N2048 * N2048, bytes=nbytes, sets=len(xs),
                info={"torch": torch.__version__, "size": f"{N2048}x{N2048} float32",
                      "angle": ANGLE, "mode": mode, "grid": "affine_grid per call"})


@peer("torch_grid_sample_bilinear_rotate_2048", kind="torch", ours="Cuda_WarpRotate/1/2048",
      note="F.affine_grid + F.grid_sample(mode='bilinear', padding_mode='reflection', "
           "align_corners=True), 30-degree rotation")
def torch_rotate_bilinear(ctx):
    return _torch_rotate(ctx, "bilinear")


@peer("torch_grid_sample_bicubic_rotate_2048", kind="torch", ours="Cuda_WarpRotate/2/2048",
      note="F.affine_grid + F.grid_sample(mode='bicubic', padding_mode='reflection', "
           "align_corners=True), 30-degree rotation (Keys a=-0.75; ours: Keys a=-0.5)")
def torch_rotate_bicubic(ctx):
    return _torch_rotate(ctx, "bicubic")


# ---------------------------------------------------------------- bicubic / bilinear x2 (torch, GPU)
W1080, H1080 = 1920, 1080


def _torch_x2_u8(ctx, mode):
    """F.interpolate(x2, mode) of a 1080p RGB u8 frame, converted to float first (PyTorch's
    bilinear / bicubic take float on the GPU); float out."""
    torch = ctx.need("torch")
    F = ctx.need("torch.nn.functional")
    n_in, n_out = 3 * W1080 * H1080, 3 * 4 * W1080 * H1080
    nbytes = n_in * 1 + n_out * 4
    xs = [ctx.torch_random((1, 3, H1080, W1080), "uint8") for _ in range(ctx.sets(nbytes))]

    def run(i):
        F.interpolate(xs[i % len(xs)].float(), scale_factor=2, mode=mode, align_corners=False)

    return Work(run, pixels=4 * W1080 * H1080, bytes=nbytes, sets=len(xs),
                info={"torch": torch.__version__, "size": "1920x1080x3 u8 -> 3840x2160x3 f32"})


@peer("torch_bicubic_x2_1080p_u8", kind="torch", ours="Cuda_WarpVideo/2/3",
      note="F.interpolate(x_u8.float(), scale_factor=2, mode='bicubic', align_corners=False), "
           "RGB NCHW, u8->float conversion included (Keys a=-0.75, not a B-spline); float out, "
           "ours (Keys a=-0.75, u8 RGB interleaved) writes u8")
def torch_bicubic_u8(ctx):
    return _torch_x2_u8(ctx, "bicubic")


@peer("torch_bilinear_x2_1080p_u8", kind="torch", ours="Cuda_WarpVideo/1/3",
      note="F.interpolate(x_u8.float(), scale_factor=2, mode='bilinear', align_corners=False), "
           "RGB NCHW, u8->float conversion included; float out, ours (u8 RGB interleaved) "
           "writes u8")
def torch_bilinear_u8(ctx):
    return _torch_x2_u8(ctx, "bilinear")


@peer("torch_bicubic_x2_1080p_luma_u8", kind="torch", ours="Cuda_Seabi/silseabi_kernels",
      note="F.interpolate(x_u8.float(), scale_factor=2, mode='bicubic', align_corners=False) of "
           "one 1920x1080 u8 plane (the SEABI frame), conversion included; float out")
def torch_bicubic_luma_u8(ctx):
    torch = ctx.need("torch")
    F = ctx.need("torch.nn.functional")
    nbytes = W1080 * H1080 * (1 + 4 * 4)
    xs = [ctx.torch_random((1, 1, H1080, W1080), "uint8") for _ in range(ctx.sets(nbytes))]

    def run(i):
        F.interpolate(xs[i % len(xs)].float(), scale_factor=2, mode="bicubic", align_corners=False)

    return Work(run, pixels=4 * W1080 * H1080, bytes=nbytes, sets=len(xs),
                info={"torch": torch.__version__, "size": "1920x1080x1 u8 -> 3840x2160x1 f32"})


@peer("torch_bicubic_x2_1080p_f32", kind="torch",
      note="F.interpolate(x, scale_factor=2, mode='bicubic', align_corners=False) on a float "
           "RGB NCHW frame")
def torch_bicubic_f32(ctx):
    torch = ctx.need("torch")
    F = ctx.need("torch.nn.functional")
    n_in, n_out = 3 * W1080 * H1080, 3 * 4 * W1080 * H1080
    nbytes = (n_in + n_out) * 4
    xs = [ctx.torch_random((1, 3, H1080, W1080)) for _ in range(ctx.sets(nbytes))]

    def run(i):
        F.interpolate(xs[i % len(xs)], scale_factor=2, mode="bicubic", align_corners=False)

    return Work(run, pixels=4 * W1080 * H1080, bytes=nbytes, sets=len(xs),
                info={"torch": torch.__version__, "size": "1920x1080x3 f32 -> 3840x2160x3 f32"})


# ---------------------------------------------------------------- CPU peers
@peer("scipy_rotate_order3_mirror_cpu_1thread", kind="cpu",
      note="scipy.ndimage.rotate(order=3, mode='mirror', reshape=False), single-threaded")
def scipy_rotate3(ctx):
    np = ctx.need("numpy")
    scipy = ctx.need("scipy")
    ndi = ctx.need("scipy.ndimage")
    n = ctx.args.cpu_size
    nbytes = 2 * n * n * 4
    xs = [ctx.numpy_random((n, n)) for _ in range(ctx.sets(nbytes, 4))]
    outs = [np.empty((n, n), np.float32) for _ in xs]

    def run(i):
        k = i % len(xs)
        ndi.rotate(xs[k], ANGLE, order=3, mode="mirror", reshape=False, output=outs[k])

    return Work(run, pixels=n * n, bytes=nbytes, sets=len(xs),
                info={"scipy": scipy.__version__, "size": f"{n}x{n} float32", "threads": 1})


def _cv2_warp(ctx, threads):
    np = ctx.need("numpy")
    cv2 = ctx.need("cv2")
    n = ctx.args.cpu_size
    nbytes = 2 * n * n * 4
    xs = [ctx.numpy_random((n, n)) for _ in range(ctx.sets(nbytes, 4))]
    outs = [np.empty((n, n), np.float32) for _ in xs]
    m = cv2.getRotationMatrix2D(((n - 1) / 2.0, (n - 1) / 2.0), ANGLE, 1.0)
    cv2.setNumThreads(threads)

    def run(i):
        k = i % len(xs)
        cv2.warpAffine(xs[k], m, (n, n), dst=outs[k], flags=cv2.INTER_CUBIC,
                       borderMode=cv2.BORDER_REFLECT_101)

    return Work(run, pixels=n * n, bytes=nbytes, sets=len(xs),
                info={"cv2": cv2.__version__, "size": f"{n}x{n} float32",
                      "threads": cv2.getNumThreads()})


@peer("cv2_warpaffine_cubic_cpu_1thread", kind="cpu",
      note="cv2.warpAffine INTER_CUBIC (Keys a=-0.75, not a B-spline), BORDER_REFLECT_101, "
           "cv2.setNumThreads(1)")
def cv2_warp_1(ctx):
    return _cv2_warp(ctx, 1)


@peer("cv2_warpaffine_cubic_cpu_allthreads", kind="cpu",
      note="cv2.warpAffine INTER_CUBIC, BORDER_REFLECT_101, cv2.setNumThreads(os.cpu_count())")
def cv2_warp_all(ctx):
    return _cv2_warp(ctx, ctx.threads)

