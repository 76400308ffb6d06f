"""Warp peers of bench/warp_bench.cpp (paper Table 3): cupyx.scipy.ndimage.zoom x2..x16 to a
2048^2 float32 output, order 1 (bilinear) and 3 (cubic B-spline, prefilter included),
mode='mirror', grid_mode=True (upres's resize convention); the 1080p -> 4K RGB u8 video zoom;
and the warp of a 2048^2 float32 image by a displacement field (optical flow, PIV):
cupyx.scipy.ndimage.map_coordinates order 3 and 1, and PyTorch's grid_sample bilinear and bicubic. The
2048^2 rotations are in peers_foundation.py, the CPU warps' peers in peers_warp_cpu.py.
"""
from __future__ import annotations

import math

from peerlib import Work, peer

N = 2048


def _cupy_zoom(ctx, z, order):
    cp = ctx.need("cupy")
    ndi = ctx.need("cupyx.scipy.ndimage")
    m = N // z
    nbytes = 4 * (m * m + N * N)
    xs = [ctx.cupy_random((m, m)) for _ in range(ctx.sets(nbytes))]
    outs = [cp.empty((N, N), cp.float32) for _ in xs]

    def run(i):
        k = i % len(xs)
        ndi.zoom(xs[k], z, order=order, mode="mirror", grid_mode=True, output=outs[k])

    return Work(run, pixels=N * N, bytes=nbytes, sets=len(xs),
                info={"cupy": cp.__version__, "input": f"{m}x{m} float32", "zoom": z,
                      "order": order, "mode": "mirror", "grid_mode": True})


# upres_bench names: Cuda_WarpZoom/<mode>/<zoom>, mode 1 = linear, 3 = bspline_iir
# (bench/warp_bench.cpp).
for _z in (2, 4, 8, 16):
    for _order, _mode in ((1, 1), (3, 3)):
        peer(f"cupyx_zoom_x{_z}_order{_order}_mirror_to2048", kind="cupy",
             ours=f"Cuda_WarpZoom/{_mode}/{_z}/",
             note=f"cupyx.scipy.ndimage.zoom(x{_z}, order={_order}, mode='mirror', "
                  "grid_mode=True)")(lambda ctx, z=_z, o=_order: _cupy_zoom(ctx, z, o))


# The video case of Api_CudaWarp (bench/warp_bench.cpp, case 2): a 1920 x 1080 RGB u8 frame to
# 3840 x 2160, cubic B-spline (prefilter included), mode='mirror', grid_mode=True; zoom (2, 2, 1)
# keeps the channels apart, as upres does.
@peer("cupyx_zoom_rgb_u8_1080p_to_4k_order3_mirror", kind="cupy",
      ours="Api_CudaWarp/2/1/",
      note="cupyx.scipy.ndimage.zoom((1080, 1920, 3) uint8, (2, 2, 1), order=3, mode='mirror', "
           "grid_mode=True), uint8 out")
def cupy_zoom_rgb_video(ctx):
    cp = ctx.need("cupy")
    ndi = ctx.need("cupyx.scipy.ndimage")
    h, w = 1080, 1920
    nbytes = 3 * (h * w + 4 * h * w)
    xs = [ctx.cupy_random((h, w, 3), "uint8") for _ in range(ctx.sets(nbytes))]
    outs = [cp.empty((2 * h, 2 * w, 3), cp.uint8) for _ in xs]

    def run(i):
        k = i % len(xs)
        ndi.zoom(xs[k], (2, 2, 1), order=3, mode="mirror", grid_mode=True, output=outs[k])

    return Work(run, pixels=4 * h * w, bytes=nbytes, sets=len(xs),
                info={"cupy": cp.__version__, "input": f"{w}x{h} RGB uint8", "zoom": "(2, 2, 1)",
                      "order": 3, "mode": "mirror", "grid_mode": True})


# ---------------------------------------------------------------- displacement-field warps
# The optical-flow / PIV warp of Api_CudaWarp cases 4, 5 and 9 (bench/warp_bench.cpp): output (x, y)
# samples the 2048^2 float32 input at (x + dx, y + dy), the field flow_field() of the bench
# (a few pixels: dx = 2.5 sin(2 pi y / 211) + 1.5 cos(2 pi x / 157) + 0.3, dy = 2.0 cos(2 pi x /
# 173) - 1.2 sin(2 pi y / 139) - 0.2), mode 'mirror'. Bytes: input + output + the 2-float field.
def flow_field(xp, n=N):
    """(x, y, dx, dy) on an n x n grid; xp: numpy or cupy (also used by peers_warp_cpu.py)."""
    y, x = xp.mgrid[0:n, 0:n].astype(xp.float64)
    tau = 2.0 * math.pi
    dx = 2.5 * xp.sin(tau * y / 211) + 1.5 * xp.cos(tau * x / 157) + 0.3
    dy = 2.0 * xp.cos(tau * x / 173) - 1.2 * xp.sin(tau * y / 139) - 0.2
    return x, y, dx.astype(xp.float32), dy.astype(xp.float32)


def keystone(n=N):
    """bench_util.hpp's keystone(): output -> input homography (row-major 3 x 3), the 30-degree
    rotation about the centre with w' = 1 + 3e-5 (x - c) - 2e-5 (y - c), c = (n - 1) / 2."""
    c, s = math.cos(2 * math.pi / 12), math.sin(2 * math.pi / 12)
    xc, p, q = 0.5 * (n - 1), 3e-5, -2e-5
    return [[c, -s, xc - c * xc + s * xc], [s, c, xc - s * xc - c * xc],
            [p, q, 1.0 - p * xc - q * xc]]


def _cupy_flow(ctx, order):
    cp = ctx.need("cupy")
    ndi = ctx.need("cupyx.scipy.ndimage")
    x, y, dx, dy = flow_field(cp)
    # map_coordinates takes the sample positions (row, column): the caller adds the field to the
    # grid, in float32 as the field.
    coords = cp.stack([(y + dy).astype(cp.float32), (x + dx).astype(cp.float32)])
    nbytes = N * N * (4 + 4 + 8)
    xs = [ctx.cupy_random((N, N)) for _ in range(ctx.sets(nbytes))]
    outs = [cp.empty((N, N), cp.float32) for _ in xs]

    def run(i):
        k = i % len(xs)
        ndi.map_coordinates(xs[k], coords, output=outs[k], order=order, mode="mirror")

    return Work(run, pixels=N * N, bytes=nbytes, sets=len(xs),
                info={"cupy": cp.__version__, "size": f"{N}x{N} float32", "order": order,
                      "mode": "mirror", "coordinates": "(2, 2048, 2048) float32, precomputed"})


@peer("cupyx_map_coordinates_order3_mirror_flow_2048", kind="cupy", ours="Api_CudaWarp/4/1/",
      note="cupyx.scipy.ndimage.map_coordinates(order=3, mode='mirror') at (y + dy, x + dx), "
           "prefilter included, coordinates precomputed (not timed)")
def cupy_flow3(ctx):
    return _cupy_flow(ctx, 3)


@peer("cupyx_map_coordinates_order1_mirror_flow_2048", kind="cupy", ours="Api_CudaWarp/5/1/",
      note="cupyx.scipy.ndimage.map_coordinates(order=1, mode='mirror') at (y + dy, x + dx), "
           "coordinates precomputed (not timed)")
def cupy_flow1(ctx):
    return _cupy_flow(ctx, 1)


# What a PyTorch optical-flow user writes (as RAFT-style warps do): the normalised sampling grid
# from a fixed base grid plus the flow (one add, timed), then grid_sample, align_corners=True,
# padding_mode='reflection' (scipy's mirror at align_corners=True). grid_sample's bicubic is Keys
# a = -0.75, which Api_CudaWarp/9 sets too (not a B-spline).
def _torch_flow(ctx, mode):
    torch = ctx.need("torch")
    F = ctx.need("torch.nn.functional")
    import numpy as np

    x, y, dx, dy = flow_field(np)
    s = 2.0 / (N - 1)
    base = torch.from_numpy(np.stack([x * s - 1, y * s - 1], -1)[None].astype(np.float32)).cuda()
    flow = torch.from_numpy(np.stack([dx * s, dy * s], -1)[None].astype(np.float32)).cuda()
    nbytes = N * N * (4 + 4 + 8)
    xs = [ctx.torch_random((1, 1, N, N)) for _ in range(ctx.sets(nbytes))]

    def run(i):
        F.grid_sample(xs[i % len(xs)], base + flow, mode=mode, padding_mode="reflection",
                      align_corners=True)

    return Work(run, pixels=N * N, bytes=nbytes, sets=len(xs),
                info={"torch": torch.__version__, "size": f"{N}x{N} float32", "mode": mode})


@peer("torch_grid_sample_bilinear_flow_2048", kind="torch", ours="Api_CudaWarp/5/1/",
      note="base grid + normalised flow, then F.grid_sample(mode='bilinear', "
           "padding_mode='reflection', align_corners=True), the grid add timed")
def torch_flow_bilinear(ctx):
    return _torch_flow(ctx, "bilinear")


@peer("torch_grid_sample_bicubic_flow_2048", kind="torch", ours="Api_CudaWarp/9/1/",
      note="base grid + normalised flow, then F.grid_sample(mode='bicubic', "
           "padding_mode='reflection', align_corners=True), the grid add timed (Keys a = -0.75, "
           "as ours in this case)")
def torch_flow_bicubic(ctx):
    return _torch_flow(ctx, "bicubic")


# The keystone perspective warp of Api_CudaWarp/6 (bilinear) as a PyTorch user writes it: the
# sampling grid of keystone() precomputed once (not timed; a rectification map reused across
# frames), then grid_sample, align_corners=True, padding_mode='reflection'.
@peer("torch_grid_sample_bilinear_keystone_2048", kind="torch", ours="Api_CudaWarp/6/1/",
      note="precomputed keystone grid (not timed), then F.grid_sample(mode='bilinear', "
           "padding_mode='reflection', align_corners=True)")
def torch_keystone_bilinear(ctx):
    torch = ctx.need("torch")
    F = ctx.need("torch.nn.functional")
    import numpy as np

    h = np.array(keystone(N), dtype=np.float64)
    y, x = np.mgrid[0:N, 0:N].astype(np.float64)
    w = h[2, 0] * x + h[2, 1] * y + h[2, 2]
    u = (h[0, 0] * x + h[0, 1] * y + h[0, 2]) / w
    v = (h[1, 0] * x + h[1, 1] * y + h[1, 2]) / w
    s = 2.0 / (N - 1)
    grid = torch.from_numpy(np.stack([u * s - 1, v * s - 1], -1)[None].astype(np.float32)).cuda()
    nbytes = N * N * (4 + 4 + 8)
    xs = [ctx.torch_random((1, 1, N, N)) for _ in range(ctx.sets(nbytes))]

    def run(i):
        F.grid_sample(xs[i % len(xs)], grid, mode="bilinear", padding_mode="reflection",
                      align_corners=True)

    return Work(run, pixels=N * N, bytes=nbytes, sets=len(xs),
                info={"torch": torch.__version__, "size": f"{N}x{N} float32", "mode": "bilinear"})
