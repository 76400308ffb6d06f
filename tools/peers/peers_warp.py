"""Warp peers of bench/warp_bench.cpp (paper Table 3): cupyx.scipy.ndimage.zoom x2..x16 to a
2048^2 float32 output, order 1 (bilinear) and 3 (cubic B-spline, prefilter included),
mode='mirror', grid_mode=True (upres's resize convention). The 2048^2 rotations are in
peers_foundation.py. tools/peers/warp_peers.py times the same cases standalone.
"""
from __future__ import annotations

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
